"""Data containers, validation, readers and splits (no model code)."""

from topiclink.data.checks import DataError
from topiclink.data.corpus import Corpus, TokenArrays, as_corpus
from topiclink.data.links import Links, as_links
from topiclink.data.shards import ShardSet, write_shards
from topiclink.data.tensor import RelationalTensor

__all__ = ["Corpus", "DataError", "Links", "RelationalTensor", "ShardSet", "TokenArrays",
           "as_corpus", "as_links", "write_shards"]
