"""Data set loaders: the papers' data sets, fetched from their sources on first use.

``load_dataset("cora")`` needs no data: a small real corpus is bundled in the package.
Every data set is one :class:`DatasetSpec` in the registry (:func:`register_dataset`,
:func:`dataset_specs`); ``load_dataset(data_dir=DIR)`` without a name detects the format
of a folder (:func:`detect_format`, :func:`load_folder`).  A data set of the data home
(:mod:`topiclink.datasets.home`: ``TOPICLINK_DATA``, else ``~/topiclink_data``) that is
missing is downloaded from the sources of :func:`dataset_sources`, verified and cached
(:func:`fetch_dataset`; ``topiclink datasets fetch NAME``).
"""

from topiclink.datasets.base import Dataset
from topiclink.datasets.bundled_cora import load_bundled_cora
from topiclink.datasets.detect import FORMATS, detect_format, load_folder
from topiclink.datasets.fetch import (
    ChecksumError,
    DatasetUnavailableError,
    FetchError,
    fetch_dataset,
)
from topiclink.datasets.hepth import hepth_kdd_split, read_hepth_abstracts
from topiclink.datasets.home import DATA_HOME_ENV, data_home, dataset_dir
from topiclink.datasets.linqs import load_cora_linqs, load_webkb
from topiclink.datasets.loaders import (
    LOADERS,
    list_datasets,
    load_20newsgroups,
    load_cora_rlda,
    load_dataset,
    load_fb15k237,
    load_hepth,
    load_nations,
    load_poliblog,
    load_sampson,
    load_sotu,
    load_umls,
    load_wn18rr,
)
from topiclink.datasets.registry import (
    DatasetSpec,
    dataset_specs,
    register_dataset,
    unregister_dataset,
)
from topiclink.datasets.sources import dataset_sources
from topiclink.datasets.synthetic import make_lda_data
from topiclink.registry import exports, public_names

__all__ = [
    "DATA_HOME_ENV", "FORMATS", "LOADERS", "ChecksumError", "Dataset", "DatasetSpec",
    "DatasetUnavailableError", "FetchError", "data_home", "dataset_dir", "dataset_sources",
    "dataset_specs", "fetch_dataset", "detect_format", "list_datasets", "load_20newsgroups",
    "load_bundled_cora", "load_cora_linqs", "load_cora_rlda", "hepth_kdd_split",
    "load_dataset", "load_fb15k237", "load_folder", "load_hepth", "load_nations",
    "load_poliblog", "load_sampson", "load_sotu", "load_umls", "load_webkb", "load_wn18rr",
    "make_lda_data",
    "read_hepth_abstracts", "register_dataset", "unregister_dataset"]
__getattr__, __dir__ = exports(__name__, __all__)
__all__ += public_names(__name__)   # the families' names
