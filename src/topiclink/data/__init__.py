"""Data containers, validation, readers and splits (no model code)."""

from topiclink.data.analyzer import TextAnalyzer
from topiclink.data.checks import DataError
from topiclink.data.corpus import Corpus, TokenArrays, as_corpus
from topiclink.data.dates import parse_times
from topiclink.data.ids import normalize_ids
from topiclink.data.io.documents import DocumentTable, EdgeList, read_documents, read_edges
from topiclink.data.linked import LinkedCorpus, linked_corpus
from topiclink.data.links import Links, as_links
from topiclink.data.shards import ShardSet, write_shards
from topiclink.data.tensor import RelationalTensor
from topiclink.data.time_split import TimeSplit, split_by_time

__all__ = ["Corpus", "DataError", "DocumentTable", "EdgeList", "LinkedCorpus", "Links",
           "RelationalTensor", "ShardSet", "TextAnalyzer", "TimeSplit", "TokenArrays",
           "as_corpus", "as_links", "linked_corpus", "normalize_ids", "parse_times",
           "read_documents", "read_edges", "split_by_time", "write_shards"]
