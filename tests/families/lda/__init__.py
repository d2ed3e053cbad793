"""Tests of the lda family (src/topiclink/families/lda)."""
