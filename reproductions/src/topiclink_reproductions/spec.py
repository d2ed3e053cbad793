"""A paper's protocol as data: one TOML file per paper, read into frozen dataclasses.

A paper file (``papers/<name>.toml``) has these tables; every key not listed is refused
with a one-line error naming the file and the key::

    [paper]                       # required
    name = "grtm"                 # the command: topiclink experiment NAME
    title = "..."                 # one line
    citation = "Chen et al., TPAMI 2015, Sec. 5.1"
    dataset = "cora-linqs"        # the default data set of the command
    metrics = ["link_rank", "auc"]  # the columns each row reports (in this order)

    [split]                       # how the data are split (read by the protocol module)
    kind = "kfold-documents"      # free text: the module that runs the paper knows it
    folds = 5                     # any further keys: the split's settings

    [grid]                        # the default values of each axis of the grid
    K = [5, 10, 15, 20, 25]
    seed_axes = ["fold", "K"]     # the coordinates a cell's seed comes from

    [settings]                    # protocol settings (the module gives the models theirs)
    doc_topic_prior = 0.5

    [models.Gibbs-gRTM]           # one table per model, in the command's default order:
    c = 4.0                       # its own constructor settings (over [settings])

    [[claims]]                    # the paper's claims (:mod:`topiclink_reproductions.claims`)
    name = "Gibbs-gRTM beats Gibbs-RTM"
    kind = "compare"
    ...

:func:`load_paper` reads one by name (a file of this package) or by path.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["ClaimSpec", "ModelSpec", "PaperSpec", "SpecError", "SplitSpec", "load_paper",
           "paper_names", "PAPERS"]

#: the folder of the papers' TOML files
PAPERS = Path(__file__).with_name("papers")

_TABLES = ("paper", "split", "grid", "settings", "models", "claims")
_PAPER_KEYS = ("name", "title", "citation", "dataset", "metrics")
_CLAIM_KINDS = ("compare", "ratio", "range")
_CLAIM_KEYS = ("name", "kind", "metric", "a", "b", "op", "factor", "on", "agree",
               "statistic", "low", "high", "note")
_OPS = (">", "<", ">=", "<=")


class SpecError(ValueError):
    """A paper file that cannot be read: the message names the file and the key."""


def _frozen(value: Any) -> Any:
    """TOML values made immutable (tables as read-only mappings, arrays as tuples)."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


@dataclass(frozen=True)
class SplitSpec:
    """How a paper splits its data: ``kind`` and its settings (e.g. ``folds = 5``)."""

    kind: str
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def get(self, key: str, default: Any = None) -> Any:
        """A setting of the split (``default`` when the file does not give it)."""
        return self.settings.get(key, default)


@dataclass(frozen=True)
class ModelSpec:
    """One model of a paper: its name (an estimator's paper name or a model the module
    registers) and its own constructor settings."""

    name: str
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a paper, checked on a results table by
    :func:`topiclink_reproductions.claims.check_claims`.

    Parameters
    ----------
    name : str
        The claim as the report prints it.
    kind : {"compare", "ratio", "range"}
        ``compare``: rows ``a`` against rows ``b`` paired on ``on``, ``a op factor * b``
        per pair; ``ratio``: the mean of ``a`` over the mean of ``b`` within
        ``[low, high]``; ``range``: the values of ``a`` within ``[low, high]``.
    metric : str
        The column compared.
    a, b : mapping
        Row selections: column -> value (``model = "LMV"``, ``eta = 0.5``); ``b`` is
        unused by ``range``.
    op : str
        ``>``, ``<``, ``>=`` or ``<=`` (``compare``).
    factor : float
        ``b``'s multiplier in ``compare`` (``a < 0.7 * b``: a is 30 % lower).
    on : tuple of str
        The columns that pair the rows of ``a`` and ``b`` (``compare``, ``ratio``).
    agree : float
        ``compare``: the share of pairs for which the relation must hold for AGREES
        (PARTLY when it holds for some, DISAGREES for none).
    statistic : {"cells", "mean"}
        ``compare``: judge each pair (``cells``) or the means over the pairs (``mean``).
    low, high : float
        The interval of ``ratio`` and ``range`` (either may be omitted: unbounded).
    note : str
        Printed after the verdict (where the numbers come from).
    """

    name: str
    kind: str
    metric: str
    a: Mapping[str, Any]
    b: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    op: str = ">"
    factor: float = 1.0
    on: tuple[str, ...] = ()
    agree: float = 1.0
    statistic: str = "cells"
    low: float | None = None
    high: float | None = None
    note: str = ""


@dataclass(frozen=True)
class PaperSpec:
    """A paper's protocol as read from its TOML file (:func:`load_paper`)."""

    name: str
    title: str
    citation: str
    dataset: str | None
    split: SplitSpec
    grid: Mapping[str, tuple[Any, ...]]
    seed_axes: tuple[str, ...]
    settings: Mapping[str, Any]
    models: Mapping[str, ModelSpec]
    metrics: tuple[str, ...]
    claims: tuple[ClaimSpec, ...]
    source: Path

    @property
    def model_names(self) -> tuple[str, ...]:
        """The models in the file's order."""
        return tuple(self.models)

    def axis(self, name: str) -> tuple[Any, ...]:
        """The default values of grid axis ``name``."""
        try:
            return self.grid[name]
        except KeyError:
            raise SpecError(f"{self.source}: [grid] has no axis {name!r}") from None

    def model_settings(self, name: str) -> dict[str, Any]:
        """Model ``name``'s own settings (empty for a model the file does not list)."""
        spec = self.models.get(name)
        return {} if spec is None else dict(spec.settings)

    def joined(self, values: tuple[Any, ...]) -> str:
        """Axis values as a command-line default (``"5,10,15"``)."""
        return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


def _table(source: Path, raw: Mapping[str, Any], key: str, required: bool = False
           ) -> dict[str, Any]:
    value = raw.get(key)
    if value is None:
        if required:
            raise SpecError(f"{source}: missing table [{key}]")
        return {}
    if not isinstance(value, dict):
        raise SpecError(f"{source}: [{key}] must be a table")
    return value


def _unknown(source: Path, where: str, given: Mapping[str, Any], known: tuple[str, ...]
             ) -> None:
    extra = sorted(set(given) - set(known))
    if extra:
        raise SpecError(f"{source}: unknown key {where}{extra[0]!r}; known: "
                        f"{', '.join(known)}")


def _claim(source: Path, i: int, raw: Any) -> ClaimSpec:
    where = f"claims[{i}]"
    if not isinstance(raw, dict):
        raise SpecError(f"{source}: {where} must be a table")
    _unknown(source, f"{where}.", raw, _CLAIM_KEYS)
    for key in ("name", "kind", "metric", "a"):
        if key not in raw:
            raise SpecError(f"{source}: {where} needs {key!r}")
    kind = raw["kind"]
    if kind not in _CLAIM_KINDS:
        raise SpecError(f"{source}: {where}.kind must be one of {', '.join(_CLAIM_KINDS)}, "
                        f"got {kind!r}")
    if kind != "range" and "b" not in raw:
        raise SpecError(f"{source}: {where} ({kind}) needs 'b'")
    if raw.get("op", ">") not in _OPS:
        raise SpecError(f"{source}: {where}.op must be one of {' '.join(_OPS)}, got "
                        f"{raw['op']!r}")
    if raw.get("statistic", "cells") not in ("cells", "mean"):
        raise SpecError(f"{source}: {where}.statistic must be cells or mean, got "
                        f"{raw['statistic']!r}")
    if kind in ("ratio", "range") and "low" not in raw and "high" not in raw:
        raise SpecError(f"{source}: {where} ({kind}) needs 'low' or 'high'")
    for key in ("a", "b"):
        if key in raw and not isinstance(raw[key], dict):
            raise SpecError(f"{source}: {where}.{key} must be a table (column = value)")
    agree = float(raw.get("agree", 1.0))
    if not 0.0 < agree <= 1.0:
        raise SpecError(f"{source}: {where}.agree must be in (0, 1], got {agree:g}")
    return ClaimSpec(
        name=str(raw["name"]), kind=kind, metric=str(raw["metric"]),
        a=_frozen(raw["a"]), b=_frozen(raw.get("b", {})), op=raw.get("op", ">"),
        factor=float(raw.get("factor", 1.0)), on=tuple(raw.get("on", ())), agree=agree,
        statistic=raw.get("statistic", "cells"),
        low=None if "low" not in raw else float(raw["low"]),
        high=None if "high" not in raw else float(raw["high"]), note=str(raw.get("note", "")))


def paper_names() -> list[str]:
    """The papers this package holds (the stems of ``papers/*.toml``)."""
    return sorted(p.stem for p in PAPERS.glob("*.toml"))


def load_paper(name: str | Path) -> PaperSpec:
    """Read and check a paper file: a name of this package's ``papers/`` (``"grtm"``,
    ``"ktm_graph"``) or the path of a TOML file.

    Raises
    ------
    SpecError
        One line naming the file and the key: a missing or unknown table or key, a
        value of the wrong kind, a claim that cannot be checked.
    """
    source = Path(name) if str(name).endswith(".toml") else PAPERS / f"{name}.toml"
    try:
        with source.open("rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError(f"no paper file {source} (papers: {', '.join(paper_names())})"
                        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{source}: not valid TOML: {exc}") from None
    _unknown(source, "", raw, _TABLES)
    paper = _table(source, raw, "paper", required=True)
    _unknown(source, "paper.", paper, _PAPER_KEYS)
    for key in ("name", "title"):
        if not isinstance(paper.get(key), str) or not paper[key]:
            raise SpecError(f"{source}: paper.{key} must be a non-empty string")
    split = dict(_table(source, raw, "split"))
    kind = split.pop("kind", "none")
    grid = dict(_table(source, raw, "grid"))
    seed_axes = grid.pop("seed_axes", ())
    for axis, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SpecError(f"{source}: grid.{axis} must be a non-empty array")
    models_raw = _table(source, raw, "models")
    models: dict[str, ModelSpec] = {}
    for model, settings in models_raw.items():
        if not isinstance(settings, dict):
            raise SpecError(f"{source}: models.{model} must be a table")
        models[model] = ModelSpec(model, _frozen(settings))
    claims_raw = raw.get("claims", [])
    if not isinstance(claims_raw, list):
        raise SpecError(f"{source}: claims must be an array of tables ([[claims]])")
    metrics = paper.get("metrics", [])
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise SpecError(f"{source}: paper.metrics must be an array of strings")
    return PaperSpec(
        name=paper["name"], title=paper["title"], citation=str(paper.get("citation", "")),
        dataset=paper.get("dataset"), split=SplitSpec(str(kind), _frozen(split)),
        grid=_frozen(grid), seed_axes=tuple(seed_axes),
        settings=_frozen(_table(source, raw, "settings")),
        models=MappingProxyType(models), metrics=tuple(metrics),
        claims=tuple(_claim(source, i, c) for i, c in enumerate(claims_raw)), source=source)
