"""Tests of the lmv family (src/topiclink/families/lmv)."""
