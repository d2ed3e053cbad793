"""CLI cases: every command with bad options, missing or malformed inputs and outputs."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from tests.fuzz.harness import Case


@functools.cache
def folder() -> Path:
    root = Path(tempfile.mkdtemp(prefix="topiclink-fuzz-cli-"))
    (root / "empty.txt").write_text("")
    (root / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (root / "texts.txt").write_text("graph citation network\ntopic model of words\n\n")
    (root / "a-file").write_text("x")
    (root / "emptydir").mkdir()
    (root / "bad.npz").write_bytes(b"PK\x03\x04 truncated")
    return root


@functools.cache
def model_file() -> Path:
    from tests.fuzz.cases_api import fitted

    return fitted("RelationalTopicModel").save(folder() / "rtm.npz")


@functools.cache
def class_model_file(name: str) -> Path:
    """A model of the registered class ``name`` fitted cheaply, saved."""
    from tests.fuzz.cases_models import fitted

    return fitted(name).save(folder() / f"class-{name}.npz")


#: real words (the default analyser keeps words of two or more letters, no digits)
WORDS = ("graph citation network topic model words linked data bayesian inference sampler "
         "gibbs paper author journal review").split()


def word_texts(n: int, per: int = 6, offset: int = 0) -> list[str]:
    """``n`` texts of ``per`` words of :data:`WORDS` each."""
    return [" ".join(WORDS[(i + j + offset) % len(WORDS)] for j in range(per))
            for i in range(n)]


@functools.cache
def text_model_file() -> Path:
    """A relational topic model of :data:`WORDS` (so that query texts have known words)."""
    import numpy as np

    from topiclink.data import Links
    from topiclink.data.io import corpus_from_texts
    from topiclink.estimators.base import registered_estimators

    texts = word_texts(30)
    corpus = corpus_from_texts(texts, min_df=1)
    pairs = np.array([(i, (i + 1) % 30) for i in range(30)])
    links = Links.from_pairs(pairs, 30, directed=True)
    model = registered_estimators()["RelationalTopicModel"](n_topics=2, max_iter=3,
                                                            random_state=0)
    return model.fit(corpus, links=links).save(folder() / "rtm-words.npz")


#: the characters :meth:`str.splitlines` ends a line at that are not a newline
LINE_LIKE = {"vt": "\v", "ff": "\f", "fs": "\x1c", "gs": "\x1d", "rs": "\x1e",
             "nel": "\x85", "ls": "\u2028", "ps": "\u2029", "cr": "\r"}


def separator_file(label: str, n: int = 12) -> Path:
    """``n`` lines of words, each with the separator ``label`` inside (CRLF line ends
    for ``cr``: a lone CR inside a line stays; the CR of CRLF ends it)."""
    sep = LINE_LIKE[label]
    left, right = word_texts(n, 3), word_texts(n, 3, offset=5)
    end = "\r\n" if label == "cr" else "\n"
    path = folder() / f"sep-{label}.txt"
    text = end.join(f"{a}{sep}{b}" for a, b in zip(left, right, strict=True)) + end
    path.write_bytes(text.encode("utf-8"))
    return path


def n_documents_in(path: str) -> int:
    from topiclink.estimators.base import load

    return int(load(path).doc_topic_.shape[0])


def n_queries_in(result: Any) -> int:
    """The queries of a ``suggest --top 1`` table (one row each)."""
    rows = [line for line in result.stdout.splitlines() if line.strip()]
    return len(rows) - 1


def command_tree() -> list[tuple[tuple[str, ...], Any]]:
    """(command path, click command) of every command of ``topiclink`` (the generated
    ``fit`` and ``experiment`` commands included)."""
    import typer
    from typer._click import core

    from topiclink.cli.app import app

    root = typer.main.get_command(app)
    found: list[tuple[tuple[str, ...], Any]] = []

    def walk(cmd: Any, path: tuple[str, ...], ctx: Any) -> None:
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, (*path, name), core.Context(sub, parent=ctx, info_name=name))
        else:
            found.append((path, cmd))

    walk(root, (), core.Context(root, info_name="topiclink"))
    return found


def _is_path(param: Any) -> bool:
    import typing

    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    return Path in (annotation, *typing.get_args(annotation))


def path_parameters(cmd: Any) -> list[tuple[str, bool]]:
    """(flag or argument name, is an argument) of each file or folder parameter."""
    return [(p.opts[0], not p.opts[0].startswith("-")) for p in cmd.params if _is_path(p)]


def seed_flags(cmd: Any) -> list[str]:
    return [p.opts[0] for p in cmd.params
            if p.opts and p.opts[0].startswith("--") and "seed" in p.name]


def required_arguments(cmd: Any, value: str = "x", skip: str | None = None) -> list[str]:
    """A value for each required argument (a model file, a model name) but ``skip``."""
    return [value for p in cmd.params
            if not p.opts[0].startswith("-") and p.required and p.opts[0] != skip]


def _expand(arg: str) -> str:
    """``{tmp}`` (the cases' folder), ``{model}`` (an RTM file), ``{model:NAME}`` (a
    fitted model of the registered class NAME), ``{text-model}`` (an RTM of real words)."""
    arg = arg.replace("{tmp}", str(folder()))
    if "{model}" in arg:
        arg = arg.replace("{model}", str(model_file()))
    if "{text-model}" in arg:
        arg = arg.replace("{text-model}", str(text_model_file()))
    if arg.startswith("{model:") and arg.endswith("}"):
        arg = str(class_model_file(arg[len("{model:"):-1]))
    return arg


def judge(args: list[str], expect: str, check: Any = None,
          must_say: tuple[str, ...] = ()) -> tuple[str, str]:
    """Run the command line on ``args``: a clean error is one ``error:`` line on stderr
    (naming each of ``must_say``); an acceptance exits 0 (and passes ``check(result)``)."""
    from typer.testing import CliRunner

    from topiclink.cli.app import app

    args = [_expand(a) for a in args]
    result = CliRunner().invoke(app, args, catch_exceptions=True)
    stderr = result.stderr if result.stderr_bytes is not None else result.output
    text = f"{result.stdout}\n{stderr}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return "traceback", f"{type(result.exception).__name__}: {result.exception}"[:300]
    if "Traceback" in text:
        return "traceback", text.strip().splitlines()[-1][:300]
    if result.exit_code == 0:
        if expect == "error":
            return "silent wrong", f"exit 0: {result.stdout.strip()[-150:]}"
        if check is not None and not check(result):
            return "silent wrong", f"check failed: {result.stdout.strip()[-150:]}"
        return "correct acceptance", ""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    clean = len(lines) == 1 and lines[0].startswith("error:")
    if clean and expect != "accept":
        missing = [word for word in must_say if _expand(word) not in lines[0]]
        if missing:
            return "traceback", f"the error does not say {missing[0]!r}: {lines[0][:200]}"
        return "clean error", lines[0][:200]
    return "traceback", f"exit {result.exit_code}: {' | '.join(lines)[:300]}"


def judge_in_empty_folder(args: list[str], expect: str, check: Any = None,
                          must_say: tuple[str, ...] = ()) -> tuple[str, str]:
    """:func:`judge` run from a new empty current folder: a command that wrote into it
    (e.g. an empty ``--out`` read as the current folder) is silently wrong."""
    import os

    here = os.getcwd()
    cwd = Path(tempfile.mkdtemp(prefix="topiclink-fuzz-cwd-"))
    os.chdir(cwd)
    try:
        outcome = judge(args, expect, check, must_say)
    finally:
        os.chdir(here)
    written = sorted(p.name for p in cwd.iterdir())
    if written:
        return "silent wrong", f"wrote {', '.join(written[:3])} into the current folder"
    return outcome


def cli_case(case_id: str, args: list[str], expect: str = "error", check: Any = None,
             must_say: tuple[str, ...] = (), empty_cwd: bool = False) -> Case:
    case = Case(case_id, "cli", lambda: None, expect)
    run = judge_in_empty_folder if empty_cwd else judge
    case.judge = lambda: run(args, expect, check, must_say)  # type: ignore[attr-defined]
    return case


FIT_DATA = ["--dataset", "cora"]
BAD_INPUTS = {
    "input-missing": ["--input", "{tmp}/none.txt"], "input-dir": ["--input", "{tmp}/emptydir"],
    "input-empty": ["--input", "{tmp}/empty.txt"], "input-binary": ["--input",
                                                                     "{tmp}/binary.txt"],
    "dataset-unknown": ["--dataset", "nope"], "dataset-blank": ["--dataset", ""],
    "data-missing": ["--data", "{tmp}/none"], "data-empty": ["--data", "{tmp}/emptydir"],
    "data-file": ["--data", "{tmp}/a-file"], "no-data": [],
}
BAD_FIT_OPTIONS = {
    "k0": ["-k", "0"], "k1": ["-k", "1"], "kneg": ["-k", "-3"], "ktext": ["-k", "abc"],
    "khuge": ["-k", "1000000000000"], "kfloat": ["-k", "2.5"], "n0": ["-n", "0"],
    "nneg": ["-n", "-1"], "ntext": ["-n", "x"], "seedneg": ["--seed", "-1"],
    "seedtext": ["--seed", "x"], "out-blank": ["--out", ""], "out-dir": ["--out", "{tmp}"],
    "out-under-file": ["--out", "{tmp}/a-file/sub/m.npz"], "out-proc": ["--out",
                                                                         "/proc/x/m.npz"],
    "unknown-option": ["--bogus", "1"],
}


def fit_cases() -> list[Case]:
    out = []
    for command in ("lda", "rtm", "slda"):
        for label, extra in BAD_INPUTS.items():
            out.append(cli_case(f"cli/fit-{command}/{label}", ["fit", command, *extra,
                                                              "-n", "1"]))
        for label, extra in BAD_FIT_OPTIONS.items():
            out.append(cli_case(f"cli/fit-{command}/{label}", ["fit", command, *FIT_DATA,
                                                              *extra]))
    rtm = {"c0": ["--c", "0"], "cneg": ["--c", "-1"], "ctext": ["--c", "x"],
           "cnan": ["--c", "nan"], "model-bogus": ["--model", "Bogus"],
           "holdout-1": ["--holdout", "1"], "holdout-neg": ["--holdout", "-0.1"]}
    for label, extra in rtm.items():
        out.append(cli_case(f"cli/fit-rtm/{label}", ["fit", "rtm", *FIT_DATA, *extra]))
    slda = {"loss": ["--loss", "square"], "njobs0": ["--n-jobs", "0"], "c0": ["--c", "0"]}
    for label, extra in slda.items():
        out.append(cli_case(f"cli/fit-slda/{label}", ["fit", "slda", "--dataset",
                                                      "poliblog-rlda", *extra]))
    model = {"unknown": ["Bogus"], "param-no-equals": ["LDA", "--param", "x"],
             "param-unknown": ["LDA", "--param", "bogus=1"],
             "param-bad-value": ["LDA", "--param", "topic_word_prior=-1"],
             "param-text": ["LDA", "--param", "max_iter=many"]}
    for label, extra in model.items():
        out.append(cli_case(f"cli/fit-model/{label}", ["fit", "model", *extra, *FIT_DATA,
                                                       "-n", "1"]))
    out.append(cli_case("cli/fit-lda/valid", ["fit", "lda", *FIT_DATA, "-k", "2", "-n", "2",
                                              "--out", "{tmp}/ok.npz", "--force"], "accept"))
    out.append(cli_case("cli/fit-lda/valid-texts", ["fit", "lda", "--input",
                                                    "{tmp}/texts.txt", "-k", "2", "-n", "2"],
                        "any"))
    out.append(cli_case("cli/fit-lda/exists", ["fit", "lda", *FIT_DATA, "-k", "2", "-n", "1",
                                               "--out", "{tmp}/a-file"], "any"))
    out.append(cli_case("cli/fit-lda/exists-npz", ["fit", "lda", *FIT_DATA, "-k", "2", "-n",
                                                   "1", "--out", "{tmp}/bad.npz"]))
    return out


BAD_MODEL_FILES = {"missing": "{tmp}/none.npz", "directory": "{tmp}/emptydir",
                   "truncated": "{tmp}/bad.npz", "text": "{tmp}/a-file",
                   "binary": "{tmp}/binary.txt", "empty": "{tmp}/empty.txt"}


def model_file_cases() -> list[Case]:
    out = []
    for label, path in BAD_MODEL_FILES.items():
        out.append(cli_case(f"cli/info/{label}", ["info", path]))
        out.append(cli_case(f"cli/suggest/{label}", ["suggest", path, "--text", "graph"]))
        out.append(cli_case(f"cli/evaluate/{label}", ["evaluate", path, *FIT_DATA]))
    for label, extra in {"top-neg": ["--top", "-1"], "top-zero": ["--top", "0"],
                         "top-text": ["--top", "x"], "no-text": [],
                         "direction": ["--direction", "up"]}.items():
        out.append(cli_case(f"cli/suggest/{label}", ["suggest", "{model}",
                                                     *(["--text", "graph"] if label != "no-text"
                                                       else []), *extra]))
    for label, extra in BAD_INPUTS.items():
        if label != "no-data":
            out.append(cli_case(f"cli/evaluate/{label}", ["evaluate", "{model}", *extra]))
    out.append(cli_case("cli/info/valid", ["info", "{model}"], "accept"))
    out.append(cli_case("cli/suggest/unknown-words", ["suggest", "{model}", "--text",
                                                      "graph words"]))
    return out


def experiment_cases() -> list[Case]:
    out = []
    bad = {"topics-blank": ["--topics", ""], "topics-text": ["--topics", "a"],
           "topics-zero": ["--topics", "0"], "topics-one": ["--topics", "1"],
           "topics-gap": ["--topics", "2,,3"], "c-blank": ["--c", ""], "c-text": ["--c", "x"],
           "c-neg": ["--c", "-1"], "models-blank": ["--models", ""],
           "models-bogus": ["--models", "Bogus"], "iterations0": ["--iterations", "0"],
           "workers0": ["--workers", "0"], "out-file": ["--out", "{tmp}/a-file"],
           "data-missing": ["--data", "{tmp}/none"], "dataset-unknown": ["--dataset", "x"]}
    for protocol in ("grtm", "slda"):
        for label, extra in bad.items():
            out.append(cli_case(f"cli/experiment-{protocol}/{label}",
                                ["experiment", protocol, "--out", f"{{tmp}}/exp-{label}",
                                 *extra]))
    grtm = {"folds0": ["--folds", "0"], "folds1": ["--folds", "1"],
            "only-folds-out": ["--only-folds", "9"], "only-folds-text": ["--only-folds", "x"],
            "alpha-neg": ["--alpha", "-1"]}
    for label, extra in grtm.items():
        out.append(cli_case(f"cli/experiment-grtm/{label}", ["experiment", "grtm", "--out",
                                                             "{tmp}/exp-g", *extra]))
    slda = {"task": ["--task", "regression"], "runs0": ["--runs", "0"],
            "njobs0": ["--n-jobs", "0"]}
    for label, extra in slda.items():
        out.append(cli_case(f"cli/experiment-slda/{label}", ["experiment", "slda", "--out",
                                                             "{tmp}/exp-s", *extra]))
    return out


def other_cases() -> list[Case]:
    return [
        cli_case("cli/datasets/data-missing", ["datasets", "--data", "{tmp}/none"]),
        cli_case("cli/datasets/data-file", ["datasets", "--data", "{tmp}/a-file"]),
        cli_case("cli/root/unknown-command", ["frobnicate"]),
        cli_case("cli/demo/k1", ["demo", "-k", "1"]),
        cli_case("cli/demo/out-file", ["demo", "--out", "{tmp}/a-file"]),
        cli_case("cli/models/valid", ["models"], "accept"),
    ]


def every_command_cases() -> list[Case]:
    """Each seed option of each command given a negative seed, each file or folder
    option and argument given an empty name (run from an empty current folder: nothing
    may be written there)."""
    out = []
    for path, cmd in command_tree():
        name = "-".join(path)
        for flag in seed_flags(cmd):
            out.append(cli_case(f"cli/seed-negative/{name}/{flag}",
                                [*path, *required_arguments(cmd), flag, "-1"],
                                must_say=(flag, ">= 0"), empty_cwd=True))
            out.append(cli_case(f"cli/seed-text/{name}/{flag}",
                                [*path, *required_arguments(cmd), flag, "1.5"],
                                must_say=(flag,), empty_cwd=True))
        for flag, is_argument in path_parameters(cmd):
            rest = required_arguments(cmd, skip=flag if is_argument else None)
            given = ["", *rest] if is_argument else [*rest, flag, ""]
            for label, blank in (("empty", ""), ("blank", "  ")):
                args = [*path, *[blank if a == "" else a for a in given]]
                out.append(cli_case(f"cli/path-{label}/{name}/{flag}", args,
                                    must_say=("empty name",), empty_cwd=True))
    return out


def info_cases() -> list[Case]:
    """``info`` on a model of every registered class, with and without ``--words``
    (which must change what is listed)."""
    from typer.testing import CliRunner

    from tests.fuzz.cases_models import names
    from topiclink.cli.app import app

    def words_matter(name: str) -> Any:
        def check(result: Any) -> bool:
            other = CliRunner().invoke(app, ["info", str(class_model_file(name)), "--words",
                                             "5"])
            return other.exit_code == 0 and other.stdout != result.stdout
        return check

    out = []
    for name in names():
        model = f"{{model:{name}}}"
        out.append(cli_case(f"cli/info-class/{name}", ["info", model], "accept"))
        out.append(cli_case(f"cli/info-class/{name}/words", ["info", model, "--words", "1"],
                            "accept", check=words_matter(name)))
        out.append(cli_case(f"cli/info-class/{name}/words0", ["info", model, "--words", "0"],
                            must_say=("--words",)))
    return out


#: query and document files that are not UTF-8 text: (bytes, what the error must say)
ENCODED: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "latin1": ("café graph network\n".encode("latin-1"),
               (":1:", "not valid UTF-8", "byte offset 3")),
    "latin1-line3": (b"graph network\ntopic model\ncaf\xe9 graph\n",
                     (":3:", "not valid UTF-8", "byte offset 29")),
    "cp1252": ("\u201cgraph\u201d network\n".encode("cp1252"),
               (":1:", "not valid UTF-8", "byte offset 0")),
    "utf16": ("graph network\n".encode("utf-16"), (":1:", "NUL byte")),
    "nul": (b"graph network\ncita\x00tion\n", (":2:", "NUL byte", "byte offset 18")),
    "truncated-utf8": ("graph caf\u00e9".encode()[:-1] + b"\n", (":1:", "not valid UTF-8")),
}


def text_file_cases() -> list[Case]:
    """Text files of one document (``fit --input``) or query (``suggest --file``) per
    line: a line-like character inside a line keeps the 12 lines 12 documents; a file
    that is not UTF-8 is refused naming the file, line and byte offset."""
    out = []
    for label in LINE_LIKE:
        path = str(separator_file(label))
        model = str(folder() / f"lines-{label}.npz")
        out.append(cli_case(f"cli/lines/fit-lda/{label}",
                            ["fit", "lda", "--input", path, "-k", "2", "-n", "1", "--out",
                             model, "--force", "-q"], "accept",
                            check=lambda r, m=model: n_documents_in(m) == 12))
        out.append(cli_case(f"cli/lines/suggest/{label}",
                            ["suggest", "{text-model}", "--file", path, "--top", "1"],
                            "accept", check=lambda r: n_queries_in(r) == 12))
    for label, (raw, says) in ENCODED.items():
        path = folder() / f"enc-{label}.txt"
        path.write_bytes(raw)
        out.append(cli_case(f"cli/encoding/suggest/{label}",
                            ["suggest", "{text-model}", "--file", str(path)],
                            must_say=(path.name, *says)))
        out.append(cli_case(f"cli/encoding/fit-lda/{label}",
                            ["fit", "lda", "--input", str(path), "-k", "2", "-n", "1"],
                            must_say=(path.name, *says)))
    return out


def _data_folder(label: str, files: dict[str, str]) -> str:
    root = folder() / f"data-{label}"
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return str(root)


def _linqs_content(n: int = 8) -> str:
    return "".join(f"d{i}\t" + "\t".join("1" if (i + j) % 3 == 0 else "0" for j in range(6))
                   + f"\t{'ab'[i % 2]}\n" for i in range(n))


TRIPLES = "a\tr\tb\nb\tr\tc\nc\ts\ta\nb\ts\ta\n"


def data_folder_cases() -> list[Case]:
    """Valid folders that were refused: a LINQS folder whose ``.cites`` is empty (an LDA
    fit accepts it, a model of links refuses it), triples without valid/test, or with a
    4th column of counts; and a 4th column that is not a count (refused, naming
    file:line)."""
    out = []
    for label, cites in (("empty", ""), ("blank", "\n  \n")):
        root = _data_folder(f"linqs-cites-{label}", {"toy.content": _linqs_content(),
                                                     "toy.cites": cites})
        out.append(cli_case(f"cli/linqs-cites-{label}/fit-lda",
                            ["fit", "lda", "--data", root, "-k", "2", "-n", "1", "-q"],
                            "accept"))
        for command in ("rtm", "lmv"):
            out.append(cli_case(f"cli/linqs-cites-{label}/fit-{command}",
                                ["fit", command, "--data", root, "-k", "2", "-n", "1", "-q"],
                                must_say=("no links",)))
    counts = "a\tr\tb\t2\nb\tr\tc\t1\nc\ts\ta\t3\nb\ts\ta\t1\n"
    folders = {
        "train-only": ({"train.txt": TRIPLES}, "accept", "4 train triples", ()),
        "empty-valid-test": ({"train.txt": TRIPLES, "valid.txt": "", "test.txt": "\n"},
                             "accept", "4 train triples", ()),
        "counts": ({"train.txt": counts}, "accept", "4 train triples", ()),
        "counts-splits": ({"train.txt": counts, "valid.txt": "a\tr\tc\t5\n",
                           "test.txt": "c\tr\ta\t1\n"}, "accept", "not used: 1 valid", ()),
        "counts-crlf": ({"train.txt": counts.replace("\n", "\r\n")}, "accept",
                        "4 train triples", ()),
        "count-text": ({"train.txt": "a\tr\tb\t2\nb\tr\tc\tmany\n"}, "error", "",
                       ("train.txt:2", "not a number")),
        "count-negative": ({"train.txt": "a\tr\tb\t-2\n"}, "error", "",
                           ("train.txt:1", "negative")),
        "count-fraction": ({"train.txt": "a\tr\tb\t2.5\n"}, "error", "",
                           ("train.txt:1", "not an integer")),
        "count-some-lines": ({"train.txt": "a\tr\tb\t2\nb\tr\tc\n"}, "error", "",
                             ("train.txt:2",)),
        "count-in-test": ({"train.txt": TRIPLES, "test.txt": "a\tr\tc\tx\n"}, "error", "",
                          ("test.txt:1",)),
    }
    for label, (files, expect, shown, says) in folders.items():
        root = _data_folder(f"triples-{label}", files)
        out.append(cli_case(f"cli/triples-{label}/fit-bpbfm",
                            ["fit", "bpbfm", "--data", root, "-k", "2", "-n", "2", "-q"],
                            expect, check=lambda r, s=shown: s in r.stdout, must_say=says))
    return out


def cases() -> list[Case]:
    return (fit_cases() + model_file_cases() + experiment_cases() + other_cases()
            + every_command_cases() + info_cases() + text_file_cases()
            + data_folder_cases())


def run_judged(case: Any) -> tuple[str, str]:
    return case.judge()
