"""The CUDA backend against the project's libvmaf goldens (testdata/goldens.json).

Same comparison as test_reference_testdata.py (unstable fields skipped, NaN == NaN),
through ``CudaAdm`` at batch sizes 1, 7 and 64 and through ``--backend cuda``.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from _frames import luma_frames
from conftest import TESTDATA

pytestmark = pytest.mark.cuda
cuda = pytest.importorskip("admcuda.backends.cuda")
if not cuda.cuda_available():
    pytest.skip("no CUDA device", allow_module_level=True)

sys.path.insert(0, str(TESTDATA))
from generate import generate  # noqa: E402

from admcuda.options import AdmOptions  # noqa: E402

GOLDENS = json.loads((TESTDATA / "goldens.json").read_text())["cases"]


@pytest.fixture(scope="module")
def pair_paths():
    committed = [n for n, c in GOLDENS.items() if c["case"]["committed"]]
    paths = generate(str(TESTDATA / "pairs"), committed)
    big = [n for n, c in GOLDENS.items() if not c["case"]["committed"]]
    paths.update(generate(str(TESTDATA / "cache"), big))
    return paths


@pytest.mark.parametrize("batch", [1, 7, 64])
@pytest.mark.parametrize("name", list(GOLDENS))
def test_cuda_matches_project_golden(name, batch, pair_paths):
    entry = GOLDENS[name]
    case = entry["case"]
    args = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    refs, diss = (np.stack(luma_frames(p, *args)) for p in pair_paths[name])
    opts = AdmOptions.from_mapping(case["options"])
    with cuda.CudaAdm(case["w"], case["h"], case["bitdepth"], opts, batch=batch) as engine:
        got = engine.scores(refs, diss)
    unstable, bad = set(entry["unstable_fields"]), []
    for n, (out, gold) in enumerate(zip(got, entry["frames"], strict=True)):
        for k, v in gold.items():
            if k in unstable:
                continue
            ok = (out[k] != out[k]) if v is None else out[k] == v
            if not ok:
                bad.append((n, k, out[k], v))
    assert not bad, f"{len(bad)} values differ: {bad[:3]}"
