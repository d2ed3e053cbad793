"""Readers for real data formats: LINQS, R save files, triples, raw text, UCI bag-of-words,
users' own documents (CSV, TSV, JSON lines, Parquet, folders, tarballs) and edge lists.

Every reader raises :class:`~topiclink.data.checks.DataError` with a one-line message naming
the file and line (or the document) of the first problem, and
:class:`~topiclink.data.io.rda.DataFileNotFoundError` (also a ``FileNotFoundError``) for a
missing file.
"""

from topiclink.data.io.documents import (
    DOCUMENT_FORMATS,
    DocumentTable,
    EdgeList,
    read_documents,
    read_edges,
)
from topiclink.data.io.linqs import (
    read_linqs,
    read_linqs_cites,
    read_linqs_content,
    read_linqs_dir,
)
from topiclink.data.io.rda import (
    DataFileNotFoundError,
    check_file,
    lda_link_pairs,
    read_lda_documents,
    read_rda_object,
)
from topiclink.data.io.text import (
    TOKEN_PATTERN,
    corpus_from_newsgroups_tar,
    corpus_from_texts,
    default_vectorizer,
    read_newsgroups_tar,
    read_text_lines,
    text_lines,
)
from topiclink.data.io.triples import read_triples, read_triples_archive
from topiclink.data.io.uci_bow import read_uci_bow

__all__ = [
    "DOCUMENT_FORMATS",
    "TOKEN_PATTERN",
    "DataFileNotFoundError",
    "DocumentTable",
    "EdgeList",
    "check_file",
    "corpus_from_newsgroups_tar",
    "corpus_from_texts",
    "default_vectorizer",
    "lda_link_pairs",
    "read_documents",
    "read_edges",
    "read_lda_documents",
    "read_linqs",
    "read_linqs_cites",
    "read_linqs_content",
    "read_linqs_dir",
    "read_newsgroups_tar",
    "read_rda_object",
    "read_text_lines",
    "read_triples",
    "read_triples_archive",
    "read_uci_bow",
    "text_lines",
]
