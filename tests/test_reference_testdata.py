"""Every end-to-end golden of testdata/goldens.json, on every backend.

Goldens: libvmaf 3.2.0, Netflix/vmaf f85a8536 (2026-08-14), scalar C path, through
``../shared/tools/libvmaf_oracle.py`` by ``testdata/make_goldens.py``; the file's
``provenance`` holds the build, the command, the date of each case and the sha256 of
every pair. Fields libvmaf computed from memory whose content changes from process to
process are null and listed in ``unstable_fields``: not compared. ``heap_fields`` (the
same in every fresh process, libvmaf reading never-written heap memory as zeros) are
compared, like everything else, with ``==``. NaN is null and listed in ``nan_fields``.

The ``backend`` fixture runs each case on ``cpu`` (the NumPy reference) and, where CuPy
sees a GPU, on ``cuda`` (``CudaAdm`` at batch sizes 1, 7 and 64; marked ``cuda``).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable

import numpy as np
import pytest
from _frames import luma_frames
from admcuda.reference import compute_adm
from conftest import TESTDATA

sys.path.insert(0, str(TESTDATA))
from generate import generate  # noqa: E402

from admcuda.options import AdmOptions  # noqa: E402

GOLDENS = json.loads((TESTDATA / "goldens.json").read_text())["cases"]
CUDA_BATCHES = (1, 7, 64)

Runner = Callable[[dict, list, list, AdmOptions], list[tuple[str, list[dict]]]]


def _run_cpu(case, refs, diss, opts):
    frames = [compute_adm(r, d, case["bitdepth"], opts) for r, d in zip(refs, diss, strict=True)]
    return [("reference", frames)]


def _run_cuda(case, refs, diss, opts):
    from admcuda.backends import cuda

    runs = []
    for batch in CUDA_BATCHES:
        with cuda.CudaAdm(case["w"], case["h"], case["bitdepth"], opts, batch=batch) as engine:
            runs.append((f"CudaAdm batch={batch}", engine.scores(np.stack(refs), np.stack(diss))))
    return runs


@pytest.fixture(
    params=[pytest.param("cpu"), pytest.param("cuda", marks=pytest.mark.cuda)],
    scope="module",
)
def backend(request) -> Runner:
    """Scores a case's frames on one backend: a list of (label, per-frame outputs)."""
    if request.param == "cuda":
        cuda = pytest.importorskip("admcuda.backends.cuda")
        if not cuda.cuda_available():
            pytest.skip("no CUDA device")
        return _run_cuda
    return _run_cpu


@pytest.fixture(scope="module")
def pair_paths():
    committed = [n for n, c in GOLDENS.items() if c["case"]["committed"]]
    paths = generate(str(TESTDATA / "pairs"), committed)
    big = [n for n, c in GOLDENS.items() if not c["case"]["committed"]]
    paths.update(generate(str(TESTDATA / "cache"), big))
    return paths


def differences(entry: dict, got: list[dict]) -> list[tuple]:
    """(frame, name, ours, libvmaf, abs diff) for every compared value that is not equal."""
    unstable, nans = set(entry["unstable_fields"]), set(entry["nan_fields"])
    assert len(got) == len(entry["frames"])
    bad = []
    for n, (out, gold) in enumerate(zip(got, entry["frames"], strict=True)):
        for k, v in gold.items():
            if k in unstable:
                continue
            if v is None:
                ok = k in nans and out[k] != out[k]
            else:
                ok = out[k] == v
            if not ok:
                diff = abs(out[k] - v) if v is not None else math.nan
                bad.append((n, k, out[k], v, diff))
    return bad


def report(label: str, entry: dict, bad: list[tuple]) -> str:
    worst = max((b[4] for b in bad if b[4] == b[4]), default=math.nan)
    heap = sorted({b[1] for b in bad} & set(entry["heap_fields"]))
    note = f"; heap-dependent fields among them: {heap}" if heap else ""
    return (
        f"{label}: {len(bad)} values differ from libvmaf, max abs diff {worst!r}{note}; "
        f"(frame, name, ours, libvmaf, abs diff): {bad[:3]}"
    )


@pytest.mark.parametrize("name", list(GOLDENS))
def test_project_golden(name, pair_paths, backend):
    entry = GOLDENS[name]
    case = entry["case"]
    args = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    ref_path, dis_path = pair_paths[name]
    refs, diss = luma_frames(ref_path, *args), luma_frames(dis_path, *args)
    assert len(refs) == len(diss) == len(entry["frames"]) == case["frames"]
    opts = AdmOptions.from_mapping(case["options"])
    problems = []
    for label, got in backend(case, refs, diss, opts):
        bad = differences(entry, got)
        if bad:
            problems.append(report(label, entry, bad))
    assert not problems, "\n".join(problems)
