"""tools/nbval_elsewhere.py: the second nbval pass runs under a setting that really takes effect."""
from __future__ import annotations

import importlib.util
import os
import platform
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs nbval in subprocesses: make check leaves it out

TOOL = Path(__file__).resolve().parents[1] / "tools" / "nbval_elsewhere.py"
spec = importlib.util.spec_from_file_location("nbval_elsewhere", TOOL)
elsewhere = importlib.util.module_from_spec(spec)
spec.loader.exec_module(elsewhere)


def clean_env(**extra):
    # an OPENBLAS_CORETYPE the machine sets for itself stays (its CPU may need it)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "NPY_DISABLE_CPU_FEATURES")}
    return {**env, **extra}


def test_every_part_chosen_takes_effect():
    chosen, notes = elsewhere.setting(clean_env())
    now = elsewhere.probe(clean_env())
    after = elsewhere.probe(clean_env(**chosen))
    assert notes[0].startswith("this machine:")
    if any(b.get("internal_api") == "openblas" for b in now["blas"]):
        assert chosen.get("OPENBLAS_NUM_THREADS") == "1"
        assert all(b["num_threads"] == 1 for b in after["blas"] if b["internal_api"] == "openblas")
    if "OPENBLAS_CORETYPE" in chosen:   # the kernel really changed
        assert [b["architecture"] for b in after["blas"]] != [b["architecture"] for b in now["blas"]]
    if now["simd"]:
        assert chosen.get("NPY_DISABLE_CPU_FEATURES") and after["simd"] == []
    # what is not chosen is explained
    for name in ("OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES"):
        assert name in chosen or any(name in n for n in notes), (name, notes)


def test_a_kernel_the_machine_sets_itself_is_left_alone():
    if not any(b.get("internal_api") == "openblas" for b in elsewhere.probe(clean_env())["blas"]):
        pytest.skip("numpy here is not built on OpenBLAS")
    if not os.environ.get("OPENBLAS_CORETYPE") and platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("Prescott is an x86-64 kernel")
    kernel = os.environ.get("OPENBLAS_CORETYPE") or "Prescott"
    chosen, notes = elsewhere.setting(clean_env(OPENBLAS_CORETYPE=kernel))
    assert "OPENBLAS_CORETYPE" not in chosen
    assert any(f"kept OPENBLAS_CORETYPE={kernel}" in n for n in notes)


def test_show_prints_the_setting(capsys):
    assert elsewhere.main(["--show"]) == 0
    out = capsys.readouterr().out
    assert "nbval elsewhere: running under" in out


def test_the_scan_grid_runs_what_it_says():
    """make nbval-scan: every setting of its grid takes effect (kernel, threads, SIMD), none twice."""
    grid, notes = elsewhere.scan_settings(clean_env())
    labels = [label for label, _ in grid]
    assert labels[0] == "own kernel, its threads, SIMD on" and len(set(labels)) == len(labels)
    assert len({tuple(sorted(v.items())) for _, v in grid}) == len(grid)
    for label, variables in grid:
        took = elsewhere.probe(clean_env(**variables))
        openblas = [b for b in took["blas"] if b.get("internal_api") == "openblas"]
        if "one thread" in label:
            assert all(b["num_threads"] == 1 for b in openblas), (label, openblas)
        if "SIMD off" in label:
            assert took["simd"] == [], (label, took["simd"])
        kernel = variables.get("OPENBLAS_CORETYPE")
        if kernel:  # OpenBLAS names its generic kernel after the build (Katmai in numpy's wheels)
            names = {kernel.lower()} | ({"katmai"} if kernel == "Prescott" else set())
            assert all(str(b["architecture"]).lower() in names for b in openblas), (label, openblas)


def test_scan_show_prints_the_grid(capsys):
    assert elsewhere.main(["--scan", "--show"]) == 0
    out = capsys.readouterr().out
    assert "nbval scan: own kernel, its threads, SIMD on: BLAS" in out
