#!/usr/bin/env bash
# The LMV paper's hep-th grid (Sec. 7.2, Figure 7) for the paper's four models, resumable:
# the grid's checkpoint (grid.json, cells.jsonl: the finished cells) is kept in the repo,
# so a run on another machine goes on where the last one stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
G=benchmarks/results/experiments/lmv_hepth_kdd_grid
exec env NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
    nice -n 10 "${PYTHON:-python}" -m topiclink.cli.app experiment lmv --dataset hepth \
    --protocol kdd --models "LMVS(t),LMVS,PLLDA,RTM" --workers 1 --n-jobs 1 \
    --checkpoint-dir "$G/checkpoint" --checkpoint-every 10min --out "$G" "$@"
