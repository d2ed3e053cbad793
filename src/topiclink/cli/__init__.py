"""Command-line interface (``topiclink``)."""
