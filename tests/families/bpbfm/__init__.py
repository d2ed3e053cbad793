"""Tests of the bpbfm family (src/topiclink/families/bpbfm)."""
