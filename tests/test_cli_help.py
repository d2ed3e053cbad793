"""The command line's help pages: short, plain text, one meaning per flag.

Every command of the app is walked (click introspection, the generated ``fit NAME`` and
``experiment NAME`` commands included): no page shows reStructuredText markup, the
largest ``fit`` page stays short (the rest is behind ``--help-all``), a short flag means
one long option everywhere and an option name one thing everywhere."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.cli.help import first_sentence, option_help, plain_text

runner = CliRunner()

#: markup a terminal must never show
MARKUP = re.compile(r":(?:class|func|meth|mod|attr|data|math|obj|ref|exc):`|``|\*\*\w")


def _commands() -> Iterator[tuple[str, Any]]:
    """(path, click command) of every command of the app, groups included."""
    from typer._click.core import Context

    def walk(command: Any, path: list[str], parent: Any) -> Iterator[tuple[str, Any]]:
        ctx = Context(command, info_name=path[-1], parent=parent)
        yield " ".join(path[1:]), command
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None:
                    yield from walk(sub, [*path, name], ctx)

    yield from walk(typer.main.get_command(app), ["topiclink"], None)


@pytest.fixture(scope="module")
def commands() -> dict[str, Any]:
    return dict(_commands())


# ---------------------------------------------------------------------- plain text
def test_plain_text_drops_the_markup_of_docstrings():
    assert plain_text(":class:`~topiclink.families.lda.LDA` and :func:`topiclink.load`") \
        == "LDA and topiclink.load"
    assert plain_text(":meth:`fitting <topiclink.LDA.fit>` of ``X`` (:math:`K \\times V`)") \
        == "fitting of X (K times V)"
    assert plain_text("*emphasis*, **strong**, `a link <https://x.org>`_ [1]_ and\n  `x`") \
        == "emphasis, strong, a link (https://x.org) and x"
    assert plain_text("a * b and 2*x") == "a * b and 2*x"        # no emphasis there


def test_first_sentence_skips_abbreviations_and_parentheses():
    assert first_sentence("Threads (e.g. 4. Or more). Then more.") == \
        "Threads (e.g. 4. Or more)."
    assert first_sentence("Keep terms, e.g. the rare ones. Not this.") == \
        "Keep terms, e.g. the rare ones."
    assert first_sentence("One sentence without a stop") == "One sentence without a stop"


def test_option_help_is_one_short_plain_sentence():
    assert option_help("Iterations per call of ``fit``. ``resume=True`` adds more.") == \
        "Iterations per call of fit."
    long = ('Sampler of the draws: "reference" (the ``polyagamma`` package, per chunk '
            'of pairs from Python) or "numba" (every pair of an iteration in Numba, '
            ':mod:`topiclink.relational.kernels.augment`: exact draws).')
    assert option_help(long) == 'Sampler of the draws: "reference" or "numba".'
    assert option_help("The rate of the prior, d_k ~ Ga(gamma0 / K, rate c0), of every "
                       "factor weight of the gamma process, and more words here") == \
        "The rate of the prior, d_k ~ Ga(gamma0 / K, rate c0)."
    assert option_help("Batch Gibbs sampling, or online Gibbs by Bayesian conditional "
                       "density filtering (supplement section 2): minibatches of entries") \
        == "Batch Gibbs sampling, or online Gibbs by Bayesian conditional density filtering."
    assert option_help("None: BPBFM-1 (a K x K matrix per relation); M: BPBFM-2 (M shared "
                       "K x K matrices, ``Lambda^r = sum_m eta_mr G^m``).") == \
        "None: BPBFM-1; M: BPBFM-2."
    assert option_help("") == ""


# ---------------------------------------------------------------------- pages
def test_no_help_page_shows_markup(commands):
    shown = {}
    for path in commands:
        for flag in ("--help", "--help-all"):
            result = runner.invoke(app, [*path.split(), flag], terminal_width=80)
            if result.exit_code == 0:
                shown[f"{path} {flag}"] = result.output
    assert any("fit rtm" in key for key in shown)
    bad = {key: MARKUP.findall(text) for key, text in shown.items() if MARKUP.search(text)}
    assert not bad, bad


def test_fit_pages_are_short_and_the_rest_is_behind_help_all():
    from topiclink.cli.fit import generated_commands

    lengths = {}
    for name in ("model", *generated_commands()):
        short = runner.invoke(app, ["fit", name, "--help"], terminal_width=80)
        full = runner.invoke(app, ["fit", name, "--help-all"], terminal_width=80)
        assert short.exit_code == 0 and full.exit_code == 0, (short.output, full.output)
        lengths[name] = len(short.output.splitlines())
        if name.startswith("bpbfm"):     # a knowledge graph's triples: no --documents
            continue
        assert "--id-column" not in short.output and "--id-column" in full.output, name
        assert "Options of --documents" in full.output, name
    assert max(lengths.values()) <= 70, lengths
    rtm = runner.invoke(app, ["fit", "rtm", "--help-all"], terminal_width=80).output
    assert "--checkpoint-every" in rtm and "--transform-iter" in rtm
    assert "--transform-iter" not in runner.invoke(app, ["fit", "rtm", "--help"]).output


def test_each_prior_option_has_its_own_meaning():
    """BPBFM's eight prior fields: one help each (their own first sentence), and the
    field named like a glossary symbol (beta: the topic-word prior elsewhere) is
    --priors-beta."""
    from topiclink.cli.estimator_commands import estimator_options
    from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel

    fields = [o for o in estimator_options(BilinearPoissonFactorModel)[0]
              if o.config is not None]
    assert len(fields) == 8
    assert len({o.help for o in fields}) == 8
    assert all(len(o.help) < 140 and not MARKUP.search(o.help) for o in fields)
    assert {o.flags[0] for o in fields} >= {"--a", "--gamma0", "--q0", "--priors-beta"}


# ---------------------------------------------------------------------- one meaning
#: command-line spellings of the glossary's parameters
_CLI_SPELLINGS = {"topics": "n_topics", "iterations": "max_iter", "negatives": "negative_ratio"}
#: option names whose help says what this command does with it (one meaning: the file
#: written, what is overwritten, the seed of what the command draws)
_PER_COMMAND_HELP = {"--out", "--force", "--seed"}


def _meaning(help_text: str) -> str:
    """What an option's help says it is: the text before a list of this command's values
    (``A paper's model: Gibbs-gRTM, ...``)."""
    return help_text.split(": ", 1)[0].rstrip(".")


def _destination(name: str) -> str:
    from topiclink.parameters import ALIASES

    name = name.removeprefix("param_").replace("__", ".")
    name = _CLI_SPELLINGS.get(name, name)
    return ALIASES.get(name, name)


def _parameter_names() -> set[str]:
    """The models' and the protocols' own parameters (their help is the model's or the
    protocol's documentation: one meaning is one destination)."""
    import inspect

    from topiclink.estimators.base import registered_estimators
    from topiclink.experiments.registry import commands, option_fields

    names = {p for cls in registered_estimators().values()
             for p in inspect.signature(cls).parameters}
    for spec in commands():
        if spec.options is not None:
            names |= {f.name for f, info, _ in option_fields(spec.options)
                      if info.shared is None and not info.documents}
    return {_destination(n) for n in names}


def test_a_flag_means_one_option_on_every_command(commands):
    shorts: dict[str, dict[frozenset[str], list[str]]] = defaultdict(lambda: defaultdict(list))
    longs: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    helps: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    parameters = _parameter_names()
    for path, command in commands.items():
        for param in command.params:
            if param.param_type_name != "option":
                continue
            names = [*param.opts, *param.secondary_opts]
            long_names = frozenset(n for n in param.opts if n.startswith("--"))
            destination = _destination(param.name)
            for name in names:
                if name.startswith("--"):
                    longs[name][destination].append(path)
                    if destination not in parameters and name not in _PER_COMMAND_HELP:
                        helps[name][_meaning(param.help or "")].append(path)
                elif name in param.opts:
                    shorts[name][long_names].append(path)
    problems = []
    for flag, meanings in sorted(shorts.items()):
        if not frozenset.intersection(*meanings):
            problems.append(f"{flag}: " + "; ".join(
                f"{'/'.join(sorted(k))} in {', '.join(v[:3])}" for k, v in meanings.items()))
    for table in (longs, helps):
        for flag, meanings in sorted(table.items()):
            if len(meanings) > 1:
                problems.append(f"{flag}: " + "; ".join(
                    f"{k[:50]!r} in {', '.join(v[:3])}" for k, v in meanings.items()))
    assert not problems, "\n".join(problems)


def test_a_warning_is_one_line_in_the_command_lines_words(tmp_path):
    """A library warning during a command (here LMV's ConvergenceWarning) is printed as
    ``warning: ...`` in option names, without the Python file and line, and Python's
    display is restored after the command."""
    import warnings

    before = warnings.showwarning
    result = runner.invoke(app, ["fit", "lmv", "--dataset", "cora", "-k", "2", "-n", "1",
                                 "--out", str(tmp_path / "m.npz"), "--quiet"])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if "warning" in ln.lower()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("warning: LMV: the iterations ran out before the tolerance "
                               "(1 iterations of --iterations 1"), lines[0]
    assert lines[0].endswith("raise --iterations, or set a looser --tol"), lines[0]
    assert ".py:" not in result.stderr and "max_iter" not in lines[0]
    assert warnings.showwarning is before
