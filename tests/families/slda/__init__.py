"""Tests of the slda family (src/topiclink/families/slda)."""
