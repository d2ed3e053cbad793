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


def judge(args: list[str], expect: str) -> tuple[str, str]:
    from typer.testing import CliRunner

    from topiclink.cli.app import app

    args = [a.replace("{tmp}", str(folder())).replace("{model}", str(model_file()))
            for a in args]
    result = CliRunner().invoke(app, args, catch_exceptions=True)
    stderr = result.stderr if result.stderr_bytes is not None else result.output
    text = f"{result.stdout}\n{stderr}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return "traceback", f"{type(result.exception).__name__}: {result.exception}"[:300]
    if "Traceback" in text:
        return "traceback", text.strip().splitlines()[-1][:300]
    if result.exit_code == 0:
        return ("correct acceptance", "") if expect != "error" else (
            "silent wrong", f"exit 0: {result.stdout.strip()[-150:]}")
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    clean = len(lines) == 1 and lines[0].startswith("error:")
    if clean and expect != "accept":
        return "clean error", lines[0][:200]
    return "traceback", f"exit {result.exit_code}: {' | '.join(lines)[:300]}"


def cli_case(case_id: str, args: list[str], expect: str = "error") -> Case:
    case = Case(case_id, "cli", lambda: None, expect)
    case.judge = lambda a=args, e=expect: judge(a, e)  # type: ignore[attr-defined]
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


def cases() -> list[Case]:
    return fit_cases() + model_file_cases() + experiment_cases() + other_cases()


def run_judged(case: Any) -> tuple[str, str]:
    return case.judge()
