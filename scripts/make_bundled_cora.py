"""Write ``src/topiclink/datasets/bundled/cora_rlda.npz`` from the R ``lda`` package's Cora.

Usage::

    python scripts/make_bundled_cora.py [--source /path/to/cora-rlda] [--out path.npz]

Reads ``cora.documents.rda``, ``cora.vocab.rda``, ``cora.titles.rda`` and ``cora.cites.rda``
(CRAN package ``lda`` 1.5.2, ``data/``) and stores, pickle-free (``np.load(...,
allow_pickle=False)`` works):

- ``indptr`` / ``indices`` / ``data``: the int32 CSR document-term counts, ``shape`` (2,);
- ``vocab_utf8`` + ``vocab_offsets``, ``titles_utf8`` + ``titles_offsets``: strings as
  concatenated UTF-8 bytes (uint8) and int64 offsets (smaller than fixed-width unicode);
- ``cites``: int32 (n, 2) pairs ``(i, j)``, j listed in ``cora.cites[[i]]``, in R order;
- ``format_version``.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import numpy as np

from topiclink.data.io.rda import lda_link_pairs, read_lda_documents, read_rda_object
from topiclink.datasets.bundled_cora import (
    BUNDLED_CORA_FILE,
    BUNDLED_FORMAT_VERSION,
    encode_strings,
)
from topiclink.datasets.home import data_home

logger = logging.getLogger("make_bundled_cora")

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=data_home() / "cora-rlda")
    parser.add_argument("--out", type=Path,
                        default=REPO / "src/topiclink/datasets/bundled" / BUNDLED_CORA_FILE)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    src = args.source
    vocab = read_rda_object(src / "cora.vocab.rda", "cora.vocab")
    titles = read_rda_object(src / "cora.titles.rda", "cora.titles")
    docs = read_rda_object(src / "cora.documents.rda", "cora.documents")
    cites = read_rda_object(src / "cora.cites.rda", "cora.cites")
    corpus = read_lda_documents(docs, vocabulary=vocab, titles=titles,
                                what="cora.documents.rda")
    pairs = lda_link_pairs(cites, corpus.n_docs, what="cora.cites.rda")
    M = corpus.counts
    v_data, v_off = encode_strings(corpus.vocabulary)
    t_data, t_off = encode_strings(corpus.titles)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        format_version=np.array(BUNDLED_FORMAT_VERSION, dtype=np.int32),
        shape=np.array(M.shape, dtype=np.int32),
        indptr=M.indptr.astype(np.int32),
        indices=M.indices.astype(np.int32),
        data=M.data.astype(np.int32),
        vocab_utf8=v_data, vocab_offsets=v_off,
        titles_utf8=t_data, titles_offsets=t_off,
        cites=pairs.astype(np.int32),
    )
    logger.info("wrote %s (%d bytes): %d documents, %d words, %d tokens, %d entries, "
                "%d link pairs", args.out, args.out.stat().st_size, corpus.n_docs,
                corpus.n_words, corpus.n_tokens, M.nnz, len(pairs))


if __name__ == "__main__":
    main()
