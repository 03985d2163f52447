"""The reference against the project's own libvmaf goldens (testdata/goldens.json).

Provenance is in the goldens file: libvmaf 3.2.0, Netflix/vmaf f85a8536, scalar C
path, via ../shared/tools/libvmaf_oracle.py, 2026-11-29. Fields libvmaf computed from
uninitialised memory (frames 17..32 high) are null and listed in ``unstable_fields``;
they are not compared. NaN is null and listed in ``nan_fields``.
"""

from __future__ import annotations

import json
import sys

import pytest
from _frames import luma_frames
from admcuda.reference import compute_adm
from conftest import TESTDATA

sys.path.insert(0, str(TESTDATA))
from generate import generate  # noqa: E402

GOLDENS = json.loads((TESTDATA / "goldens.json").read_text())["cases"]


@pytest.fixture(scope="module")
def pair_paths():
    committed = [n for n, c in GOLDENS.items() if c["case"]["committed"]]
    paths = generate(str(TESTDATA / "pairs"), committed)
    big = [n for n, c in GOLDENS.items() if not c["case"]["committed"]]
    paths.update(generate(str(TESTDATA / "cache"), big))
    return paths


def _opts(case):
    from admcuda.options import AdmOptions

    return AdmOptions.from_mapping(case["options"])


@pytest.mark.parametrize("name", list(GOLDENS))
def test_project_golden(name, pair_paths):
    entry = GOLDENS[name]
    case = entry["case"]
    args = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    ref_path, dis_path = pair_paths[name]
    refs, diss = luma_frames(ref_path, *args), luma_frames(dis_path, *args)
    assert len(refs) == len(entry["frames"]) == case["frames"]
    unstable, nans = set(entry["unstable_fields"]), set(entry["nan_fields"])
    opts = _opts(case)
    bad = []
    for n, (r, d, gold) in enumerate(zip(refs, diss, entry["frames"], strict=False)):
        out = compute_adm(r, d, case["bitdepth"], opts)
        for k, v in gold.items():
            if k in unstable:
                continue
            if v is None:
                assert k in nans
                ok = out[k] != out[k]
            else:
                ok = out[k] == v
            if not ok:
                bad.append((n, k, out[k], v, abs(out[k] - v) if v is not None else None))
    assert not bad, f"{len(bad)} values differ (frame, name, ours, libvmaf, abs diff): {bad[:3]}"
