"""Shared by the benchmarks: ``--cpu-time`` means one BLAS thread, set before numpy is imported."""

from __future__ import annotations

import os
import sys


def single_thread_blas() -> None:
    """Make BLAS use one thread; must run before numpy is imported (exits otherwise)."""
    if "numpy" in sys.modules:
        raise SystemExit("--cpu-time must set the BLAS thread count before numpy is imported")
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
