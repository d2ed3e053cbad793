"""Tests of the lda_regression family (src/topiclink/families/lda_regression)."""
