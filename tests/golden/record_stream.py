"""Fixed-seed outputs of the streaming estimators, recorded before issue 25's item 3
(``partial_fit`` through the engine).

``python tests/golden/record_stream.py [PATH]`` writes ``tests/golden/stream_outputs.npz``
(or PATH);
``tests/test_streams.py`` replays every configuration and compares.  The configurations
cover each streaming path: LMVS chunk sequences (with and without publication times),
LMVS fit then partial_fit, an ordinary LMVS fit, online BPBFM-1 / BPBFM-2 chunk
sequences (growing entities and relations, a replayed chunk whose triples are dropped),
online BPBFM fit then partial_fit, and an ordinary online fit.

The BPBFM configurations were re-recorded (only they) when the Gibbs sweep began to group
each relation's entries by the entity they share on one side (``kernels.sweep_groups``):
its draws use other random numbers, so the chains differ, with the same law (the kernel
twin and the allocation-law tests in ``tests/families/bpbfm/test_bpbfm.py``).

The recorder only uses constructor keywords and verbs that exist before and after the
change (``partial_fit``, ``fit``, the fitted attributes and ``state_``), so the same file
checks the new code.  ``trace_["seconds"]`` (wall-clock) is never recorded.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "stream_outputs.npz"

LMV_ATTRS = ("components_", "doc_topic_", "blockmodel_", "visibility_", "citation_topics_",
             "n_iter_", "n_links_")
LMV_STATE = ("gamma", "lam", "a", "b", "g", "h", "previous_diagonal", "updates",
             "iteration")
BPBFM_ATTRS = ("embedding_", "relation_matrices_", "samples_embedding_", "entity_names_",
               "relation_names_", "n_iter_")
BPBFM_STATE = ("g", "g_total", "G", "eta", "d", "eps", "stat_entity", "stat_cells",
               "stat_rm", "stat_scale", "n_items", "updates", "iteration")


# ---------------------------------------------------------------------- data
def lmv_data(timed: bool = False) -> tuple[Any, np.ndarray, np.ndarray | None]:
    from topiclink.datasets import make_lmv_data

    (corpus, links), truth = make_lmv_data(n_docs=90, n_words=40, n_topics=6,
                                           doc_length=30, publication_time=timed,
                                           random_state=21)
    times = np.asarray(truth.publication_time) if timed else None
    return corpus, np.asarray(links.pairs, dtype=np.int64), times


def lmv_chunks(timed: bool = False) -> list[tuple[Any, np.ndarray, np.ndarray | None]]:
    """(documents, links so far in the global numbering, their times) per chunk."""
    corpus, pairs, times = lmv_data(timed)
    out = []
    for lo, hi in ((0, 40), (40, 65), (65, 90)):
        among = pairs[(pairs < hi).all(axis=1)]
        out.append((corpus.subset(np.arange(lo, hi)), among,
                    None if times is None else times[lo:hi]))
    return out


def bpbfm_tensor() -> Any:
    from topiclink.families.bpbfm.synthetic import make_bpbfm_data

    tensor, _ = make_bpbfm_data(48, 4, 3, random_state=5, density=0.06)
    return tensor


def bpbfm_chunks(n: int = 4, seed: int = 0) -> list[Any]:
    """Chunks of the tensor's entries, shuffled; named (entity e<i>, relation r<j>) and
    restricted to the entities/relations they use, so later chunks add names."""
    from topiclink.data.tensor import RelationalTensor

    t = bpbfm_tensor()
    order = np.random.default_rng(seed).permutation(t.n_entries)
    names_e = np.array([f"e{i}" for i in range(t.n_entities)])
    names_r = np.array([f"r{i}" for i in range(t.n_relations)])
    chunks = []
    for part in np.array_split(order, n):
        h, r, tl = t.heads[part], t.relations[part], t.tails[part]
        ents, inv = np.unique(np.concatenate([h, tl]), return_inverse=True)
        rels, rinv = np.unique(r, return_inverse=True)
        chunks.append(RelationalTensor(inv[:part.size], rinv, inv[part.size:],
                                       t.values[part], ents.size, rels.size,
                                       names_e[ents], names_r[rels]))
    return chunks


# ---------------------------------------------------------------------- runs
def _lmvs(**kw: Any) -> Any:
    from topiclink.families.lmv.estimator import VisibilityTopicModel

    base = dict(inference="stochastic", batch_size=16, n0=20, tol=0.0, random_state=3)
    return VisibilityTopicModel(4, **{**base, **kw})


def _bpbfm(**kw: Any) -> Any:
    from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel

    base = dict(inference="online", batch_size=64, random_state=2)
    return BilinearPoissonFactorModel(3, **{**base, **kw})


def run_config(name: str) -> Any:
    """The model after configuration ``name``'s calls."""
    if name == "lmvs_stream":
        m = _lmvs()
        for docs, links, _ in lmv_chunks():
            m.partial_fit(docs, links=links)
        return m
    if name == "lmvs_stream_timed":
        m = _lmvs(visibility=True)
        for docs, links, times in lmv_chunks(timed=True):
            m.partial_fit(docs, links=links, publication_time=times)
        return m
    if name == "pllda_stream":
        m = _lmvs(visibility=False, batch_size=30)
        for docs, links, _ in lmv_chunks():
            m.partial_fit(docs, links=links)
        return m
    if name == "lmvs_fit_stream":
        chunks = lmv_chunks()
        corpus, pairs, _ = lmv_data()
        m = _lmvs(max_iter=3).fit(corpus.subset(np.arange(40)), links=chunks[0][1])
        for docs, links, _ in chunks[1:]:
            m.partial_fit(docs, links=links)
        return m
    if name == "lmvs_fit":
        corpus, pairs, _ = lmv_data()
        return _lmvs(max_iter=4).fit(corpus, links=pairs)
    if name in ("bpbfm_stream", "bpbfm2_stream"):
        m = _bpbfm(n_dictionary=2 if name == "bpbfm2_stream" else None)
        chunks = bpbfm_chunks()
        for chunk in chunks:
            m.partial_fit(chunk)
        m.partial_fit(chunks[1])             # replayed: every triple dropped
        return m
    if name == "bpbfm_fit_stream":
        t = bpbfm_tensor()
        m = _bpbfm(max_iter=2, burn_in=1).fit(t)
        from topiclink.data.tensor import RelationalTensor

        for chunk in bpbfm_chunks(3, seed=1)[:2]:   # unnamed: matched by index
            m.partial_fit(RelationalTensor(chunk.heads, chunk.relations, chunk.tails,
                                           chunk.values, t.n_entities, t.n_relations))
        return m
    if name == "bpbfm_fit":
        return _bpbfm(max_iter=3, burn_in=1).fit(bpbfm_tensor())
    raise KeyError(name)


CONFIGS = ("lmvs_stream", "lmvs_stream_timed", "pllda_stream", "lmvs_fit_stream",
           "lmvs_fit", "bpbfm_stream", "bpbfm2_stream", "bpbfm_fit_stream", "bpbfm_fit")


def outputs(name: str, model: Any | None = None) -> dict[str, np.ndarray]:
    """The recorded arrays of configuration ``name`` (of ``model`` when given)."""
    m = run_config(name) if model is None else model
    lmv = name.startswith(("lmvs", "pllda"))
    out: dict[str, np.ndarray] = {}
    for attr in (LMV_ATTRS if lmv else BPBFM_ATTRS):
        out[attr] = np.asarray(getattr(m, attr))
    for field in (LMV_STATE if lmv else BPBFM_STATE):
        out[f"state.{field}"] = np.asarray(getattr(m.state_, field))
    for key, values in sorted(m.trace_.items()):
        if key != "seconds":
            out[f"trace.{key}"] = np.asarray(values, dtype=float)
    return out


def main(path: Path = OUTPUT) -> None:
    arrays: dict[str, np.ndarray] = {}
    for name in CONFIGS:
        for key, value in outputs(name).items():
            arrays[f"{name}/{key}"] = value
        print(name, "recorded", file=sys.stderr)
    np.savez_compressed(path, **arrays)
    print(f"wrote {path} ({len(arrays)} arrays)", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT)
