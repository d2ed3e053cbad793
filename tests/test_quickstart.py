"""The quick starts of README.md and docs/getting-started.md run as a user runs them.

The section's blocks are written, as one script, to ``quickstart.py`` in an empty
temporary folder and run there by ``python -W default quickstart.py`` in a child process
(a fresh interpreter, every warning shown once): it must exit 0, print no warning (a
user could not act on it) and report the LMV fit stopped by its tolerance, not by
``max_iter``.  The time is printed (``pytest -s``), not asserted: the pages' claims were
measured by hand (``time python quickstart.py``, warm and cold Numba cache); a shared
machine's other load can triple them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECTION = re.compile(r"^## Quick start\n(.*?)(?=^## |\Z)", re.S | re.M)
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def quick_start(path: Path) -> str:
    """The ```python blocks of the ``## Quick start`` section of ``path``, in order, as
    one script."""
    section = SECTION.search(path.read_text(encoding="utf-8"))
    assert section, f"{path.name}: no '## Quick start' section"
    blocks = FENCE.findall(section.group(1))
    assert blocks, f"{path.name}: no ```python block under '## Quick start'"
    return "\n".join(blocks)


@pytest.mark.slow  # 20-45 s each on two idle cores
@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_quick_start_runs_without_warnings(page, tmp_path):
    code = quick_start(ROOT / page)
    if 'load_dataset("umls")' in code and not os.environ.get("TOPICLINK_DATA"):
        pytest.skip("the UMLS triples come from the data home: set TOPICLINK_DATA")
    (tmp_path / "quickstart.py").write_text(code, encoding="utf-8")
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                        os.environ.get("PYTHONPATH")])))
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-W", "default", "quickstart.py"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr[-3000:]
    warned = [line for line in proc.stderr.splitlines() if "Warning" in line]
    assert not warned, "\n".join(warned)
    assert re.search(r"^tolerance at iteration \d+: relative change of L\*", proc.stdout,
                     re.M), proc.stdout[-3000:]
    assert (tmp_path / "cora-grtm.npz").is_file()
    print(f"{page} quick start: {seconds:.1f} s")
