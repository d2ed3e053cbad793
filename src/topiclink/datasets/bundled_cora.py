"""The Cora abstracts of the R ``lda`` package, bundled with topiclink (no data home needed).

The file ``bundled/cora_rlda.npz`` is written by ``scripts/make_bundled_cora.py`` from the
package's ``cora.*.rda``; see ``bundled/cora_rlda.README.md`` for provenance and licence.
It is read with ``np.load(allow_pickle=False)`` (no object arrays).  The data set is
registered here as ``"cora"`` (:func:`~topiclink.datasets.load_dataset`), the first of the
registry.
"""

from __future__ import annotations

import logging
import os
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import DataError
from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.datasets.base import Dataset
from topiclink.datasets.registry import DatasetSpec, register_dataset

__all__ = ["BUNDLED_CORA_FILE", "CORA_RLDA_SOURCE", "BUNDLED_FORMAT_VERSION",
           "bundled_cora_path", "cora_rlda_dataset", "decode_strings", "encode_strings",
           "load_bundled_cora"]

logger = logging.getLogger(__name__)

BUNDLED_CORA_FILE = "cora_rlda.npz"
BUNDLED_FORMAT_VERSION = 1

CORA_RLDA_SOURCE = (
    "Cora abstracts of the CRAN package lda 1.5.2 (J. Chang; cran/lda mirror, LGPL >= 2.1); "
    "McCallum, Nigam, Rennie & Seymore, Automating the construction of internet portals "
    "with machine learning, Information Retrieval 3(2), 2000"
)


def encode_strings(strings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes (uint8) and int64 offsets (n + 1) of a string array: pickle-free storage."""
    encoded = [s.encode("utf-8") for s in np.asarray(strings, dtype=str).tolist()]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets


def decode_strings(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Inverse of :func:`encode_strings`."""
    raw = data.tobytes()
    return np.array([raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:],
                                                              strict=True)], dtype=str)


def bundled_cora_path() -> Traversable:
    """The bundled ``.npz`` file as an :mod:`importlib.resources` traversable."""
    return resources.files("topiclink.datasets").joinpath("bundled", BUNDLED_CORA_FILE)


def cora_rlda_dataset(corpus: Corpus, pairs: np.ndarray, directed: bool = False,
                      path: Path | None = None, name: str = "cora-rlda") -> Dataset:
    """The Cora (R ``lda``) :class:`Dataset` from its corpus and raw ``(i, j)`` link pairs.

    ``(i, j)`` means "``j`` is listed in ``cora.cites[[i]]``": ``cora.cites[[i]]`` lists
    the documents that CITE ``i`` (Goldberg's 1989 genetic-algorithms book has 140 entries
    and is listed in at most 5 lists; read the other way it would cite 140 Cora papers),
    so the directed reading is ``j -> i`` (``j`` cites ``i``).  Undirected (the ``lda``
    package's RTM reading): the 125 reciprocal pairs become duplicates, which are dropped
    with a logged count (4356 -> 4231 links).
    """
    pairs = np.asarray(pairs)
    if directed and pairs.size:
        pairs = pairs[:, ::-1]
    links = Links.from_pairs(pairs, corpus.n_docs, directed=directed, self_links="drop",
                             duplicates="drop", source_name=f"{name} cora.cites")
    return Dataset(name=name, corpus=corpus, links=links, source=CORA_RLDA_SOURCE, path=path)


def load_bundled_cora(directed: bool = False) -> Dataset:
    """Load the bundled Cora: 2410 abstracts, 2961 words, citation links, titles.

    The same corpus and links as ``load_cora_rlda`` (the ``cora-rlda`` data folder) but
    shipped inside the package, so it works without any data home or network.

    Parameters
    ----------
    directed : bool
        Read ``cora.cites[[i]]`` (the documents citing ``i``) as links ``j -> i``
        (4356 links), or as undirected pairs
        (default, as the ``lda`` package's RTM does: 4231 links).

    Returns
    -------
    Dataset
        ``name="cora"``; ``corpus`` (with ``titles``) and ``links``; no labels.
    """
    ref = bundled_cora_path()
    try:
        with ref.open("rb") as f, np.load(f, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise DataError(f"bundled file {BUNDLED_CORA_FILE} is missing or unreadable "
                        f"({exc}); reinstall topiclink") from None
    version = int(arrays["format_version"])
    if version != BUNDLED_FORMAT_VERSION:
        raise DataError(f"bundled file {BUNDLED_CORA_FILE} has format version {version}, "
                        f"this topiclink reads {BUNDLED_FORMAT_VERSION}")
    n_docs, n_words = (int(x) for x in arrays["shape"])
    counts = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                           shape=(n_docs, n_words))
    corpus = Corpus(counts,
                    vocabulary=decode_strings(arrays["vocab_utf8"], arrays["vocab_offsets"]),
                    titles=decode_strings(arrays["titles_utf8"], arrays["titles_offsets"]),
                    name="cora")
    ds = cora_rlda_dataset(corpus, arrays["cites"], directed=directed, name="cora")
    ds.path = Path(str(ref))
    return ds


def _load_bundled(data_dir: str | os.PathLike[str] | None = None,
                  directed: bool = False) -> Dataset:
    if data_dir is not None:
        raise ValueError("the bundled 'cora' data set has no data_dir; "
                         "load 'cora-rlda' to read the .rda files from a folder")
    return load_bundled_cora(directed=directed)


register_dataset(DatasetSpec(
    "cora", _load_bundled, source=CORA_RLDA_SOURCE, kind="documents+links",
    description="R lda package Cora bundled in topiclink: 2410 abstracts, 2961 words, "
                "4231 links", location="bundled", bundled_path=bundled_cora_path))
