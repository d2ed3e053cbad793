"""Tests of the dmr family (src/topiclink/families/dmr)."""
