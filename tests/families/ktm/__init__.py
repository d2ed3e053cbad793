"""Tests of the ktm family (src/topiclink/families/ktm)."""
