"""The one registry of data sets: a :class:`DatasetSpec` per name.

Adding a data set is one :func:`register_dataset` call (next to its loader in
:mod:`topiclink.datasets.loaders`); :data:`~topiclink.datasets.loaders.LOADERS`,
``REQUIRED_FILES``, ``SOURCES``, :func:`~topiclink.datasets.loaders.list_datasets` and
:func:`~topiclink.datasets.loaders.load_dataset` all read this registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from topiclink.datasets.base import Dataset

__all__ = ["DatasetSpec", "RegistryView", "dataset_specs", "get_spec", "register_dataset",
           "unregister_dataset"]

Location = Literal["home", "bundled", "user"]
_LOCATIONS = ("home", "bundled", "user")

#: Names that :func:`~topiclink.datasets.loaders.load_dataset` gives another meaning.
RESERVED_NAMES = frozenset({"auto"})


@dataclass(frozen=True)
class DatasetSpec:
    """Everything topiclink knows about one data set.

    Attributes
    ----------
    name : str
        Registry name; for ``location="home"`` also the folder name under the data home.
    loader : callable
        ``loader(data_dir=None, **options) -> Dataset``.
    required_files : tuple of str
        Files that must exist in the data set's folder (``location="home"``); the
        listing uses them to say whether the data set is found.
    source : str
        Citation / provenance.
    description : str
        One line for listings (e.g. ``"2708 papers x 1433 binary words, 5429 citations"``).
    kind : str
        What the :class:`Dataset` holds: ``"documents"``, ``"documents+links"``,
        ``"documents+labels"``, ``"documents+links+labels"``, ``"triples"``...
    location : {"home", "bundled", "user"}
        ``"home"``: a folder ``data_home() / name`` (listed); ``"bundled"``: shipped in
        the package (listed, no ``data_dir``); ``"user"``: a generic reader of the
        user's own folder in a known format (``data_dir`` required; not listed).
    bundled_path : callable, optional
        ``location="bundled"``: returns the bundled file (a path or an
        :mod:`importlib.resources` traversable) for the listing.
    counter : callable, optional
        ``counter(folder) -> dict``: the listing's counts (keys of
        :data:`~topiclink.datasets.base.SUMMARY_KEYS`, those it cannot count left out)
        without loading the data set, for data sets whose load is slow (text analysis).
    """

    name: str
    loader: Callable[..., Dataset]
    required_files: tuple[str, ...] = ()
    source: str = ""
    description: str = ""
    kind: str = "documents"
    location: Location = "home"
    bundled_path: Callable[[], Any] | None = None
    counter: Callable[[Any], dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"DatasetSpec name must be a non-empty string, got {self.name!r}")
        if not callable(self.loader):
            raise TypeError(f"DatasetSpec {self.name!r}: loader must be callable")
        if self.location not in _LOCATIONS:
            raise ValueError(f"DatasetSpec {self.name!r}: location must be one of "
                             f"{', '.join(_LOCATIONS)}, got {self.location!r}")
        if isinstance(self.required_files, str):
            raise TypeError(f"DatasetSpec {self.name!r}: required_files must be a sequence "
                            f"of file names, not a string")
        object.__setattr__(self, "required_files", tuple(self.required_files))

    @property
    def listed(self) -> bool:
        """Shown by ``list_datasets`` and ``LOADERS`` (home and bundled data sets)."""
        return self.location != "user"


_REGISTRY: dict[str, DatasetSpec] = {}


def register_dataset(spec: DatasetSpec, replace: bool = False) -> DatasetSpec:
    """Add ``spec`` to the registry (listing order = registration order).

    Raises
    ------
    ValueError
        The name is taken (unless ``replace``) or reserved (``"auto"``).
    """
    if not isinstance(spec, DatasetSpec):
        raise TypeError(f"expected a DatasetSpec, got {type(spec).__name__}")
    if spec.name in RESERVED_NAMES:
        raise ValueError(f"data set name {spec.name!r} is reserved")
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"data set {spec.name!r} is already registered (replace=True "
                         f"overrides it)")
    _REGISTRY[spec.name] = spec
    return spec


def unregister_dataset(name: str) -> DatasetSpec:
    """Remove a data set from the registry and return its spec (``KeyError`` if absent)."""
    return _REGISTRY.pop(name)


def dataset_specs() -> dict[str, DatasetSpec]:
    """A copy of the registry: name -> :class:`DatasetSpec`, in registration order."""
    return dict(_REGISTRY)


def get_spec(name: str) -> DatasetSpec:
    """The spec of ``name``; ``ValueError`` listing the known names when unknown."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(_REGISTRY)}") from None


V = TypeVar("V")


class RegistryView(Mapping[str, V]):
    """A live, read-only mapping name -> one field of the registered specs.

    ``LOADERS``, ``REQUIRED_FILES`` and ``SOURCES`` are such views, so a data set
    registered later appears in them too.
    """

    def __init__(self, field: str, where: Callable[[DatasetSpec], bool] = lambda s: True,
                 doc: str = "") -> None:
        self._field = field
        self._where = where
        self.__doc__ = doc or f"name -> DatasetSpec.{field} of the registered data sets"

    def _specs(self) -> dict[str, DatasetSpec]:
        return {n: s for n, s in _REGISTRY.items() if self._where(s)}

    def __getitem__(self, name: str) -> V:
        spec = _REGISTRY.get(name)
        if spec is None or not self._where(spec):
            raise KeyError(name)
        return getattr(spec, self._field)

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs())

    def __len__(self) -> int:
        return len(self._specs())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self)!r})"
