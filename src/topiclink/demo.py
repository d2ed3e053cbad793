"""The ``topiclink demo``: a complete run on the bundled Cora corpus, no download needed."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["run_demo"]


def run_demo(topics: int = 20, iterations: int = 300, seed: int = 0, out: Path | None = None,
             verbose: bool = False, echo: Callable[[str], None] = print) -> dict[str, float]:
    """Fit LDA to 90% of the bundled Cora abstracts, report topics and held-out perplexity.

    Returns the figures it printed (for tests).
    """
    from topiclink.data.splits import train_test_split_documents
    from topiclink.datasets import load_bundled_cora
    from topiclink.kernels.lda import token_log_likelihood
    from topiclink.metrics import perplexity
    from topiclink.models.lda import LDA, completion_split

    t_start = time.perf_counter()
    ds = load_bundled_cora()
    fold = train_test_split_documents(ds.corpus, ds.links, test_size=0.1, random_state=seed)
    train, test = fold.train_corpus, fold.test_corpus
    echo(f"Cora (R lda package, bundled): {ds.corpus.n_docs} abstracts, "
         f"{ds.corpus.n_words} words, {ds.corpus.n_tokens} tokens, {ds.links.n_links} links")
    echo(f"training on {train.n_docs} documents, holding out {test.n_docs}")
    model = LDA(n_topics=topics, doc_topic_prior=0.1, topic_word_prior=0.01,
                max_iter=iterations, random_state=seed, verbose=verbose)
    t0 = time.perf_counter()
    model.fit(train)
    fit_s = time.perf_counter() - t0
    echo(f"\nLDA, K={topics}, {iterations} Gibbs sweeps in {fit_s:.1f} s "
         f"({train.n_tokens * iterations / fit_s / 1e6:.1f} M tokens/s)\n")
    echo(model.summary(n_words=8))
    # document completion: half of each held-out document's tokens estimate its topics,
    # the other half is scored; the unigram baseline is scored on the same tokens
    observed, held = completion_split(test, np.random.default_rng(seed))
    theta = model.transform(observed)
    phi_wk = np.ascontiguousarray(model.components_.T)
    tok = held.tokens()
    ll = token_log_likelihood(tok.words, tok.offsets, theta, phi_wk)
    ppl = perplexity(ll, tok.words.size)
    unigram = np.asarray(train.counts.sum(axis=0)).ravel() + model.topic_word_prior
    unigram /= unigram.sum()
    unigram_ppl = perplexity(float(np.log(unigram)[tok.words].sum()), tok.words.size)
    echo(f"\nheld-out perplexity (document completion on {test.n_docs} unseen abstracts, "
         f"{tok.words.size} scored tokens): LDA {ppl:.1f}")
    echo(f"  baselines on the same tokens: unigram {unigram_ppl:.1f}, "
         f"uniform {train.n_words}")
    if out is not None:
        from topiclink.plotting import plot_top_words, plot_trace

        out.mkdir(parents=True, exist_ok=True)
        ax = plot_trace(model)
        ax.figure.savefig(out / "demo_trace.png", dpi=120, bbox_inches="tight")
        ax = plot_top_words(model, n_words=6)
        ax.figure.savefig(out / "demo_topics.png", dpi=120, bbox_inches="tight")
        model.save(out / "demo_lda.npz")
        echo(f"figures and model written to {out}/")
    total = time.perf_counter() - t_start
    echo(f"\ndemo finished in {total:.1f} s")
    return {"perplexity": ppl, "unigram_perplexity": unigram_ppl, "fit_seconds": fit_s,
            "seconds": total}
