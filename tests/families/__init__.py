"""Tests of the model families, one folder each (mirroring src/topiclink/families)."""
