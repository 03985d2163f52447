"""admcuda.quirks (libvmaf's undefined outputs for frames 17..32 high) and the zero
denominator, against the goldens' measured instability and, where a libvmaf library is
named by ``ADMCUDA_LIBVMAF``, against libvmaf itself through the shared oracle.

The goldens' ``unstable_fields`` and ``heap_fields`` are what changed between libvmaf
runs (testdata/make_goldens.py: three plain runs and two under ``MALLOC_PERTURB_``, with
libvmaf 3.2.0, Netflix/vmaf f85a8536, scalar C, 2026-12-01).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import types

import numpy as np
import pytest
from _frames import same
from admcuda.reference import compute_adm
from conftest import ROOT, TESTDATA, plain_opts

from admcuda.libvmaf import find_libvmaf
from admcuda.options import AdmOptions
from admcuda.quirks import small_height_outputs, small_height_warning

GOLDENS = json.loads((TESTDATA / "goldens.json").read_text())["cases"]
ORACLE = ROOT.parent / "shared" / "tools" / "libvmaf_oracle.py"
NUM3 = {
    "integer_adm2",
    "integer_adm3",
    "integer_aim",
    "integer_adm_scale3",
    "integer_adm",
    "integer_adm_num",
    "integer_adm_num_scale3",
}
DEN3 = {"integer_adm_den", "integer_adm_den_scale3"}


@pytest.mark.parametrize("height", [17, 18, 24, 25, 31, 32])
def test_heights_17_to_32_warn(height):
    msg = small_height_warning(40, height, AdmOptions())
    assert msg is not None and "\n" not in msg
    assert f"height {height}" in msg
    for name in NUM3:
        assert name in msg
    assert "integer_adm_den" not in msg  # 40 wide: the reference side reads written memory


@pytest.mark.parametrize("height", [16, 33, 34, 64, 1080])
def test_other_heights_do_not_warn(height):
    assert small_height_warning(1920, height, AdmOptions()) is None
    assert small_height_outputs(1920, height, AdmOptions()) == ()


@pytest.mark.parametrize(
    ("width", "options", "want"),
    [
        (17, {}, NUM3),
        (48, {}, NUM3),
        (49, {}, NUM3 | DEN3),
        (1920, {}, NUM3 | DEN3),
        (40, {"adm_skip_scale0": True}, NUM3 | DEN3),
        (40, {"adm_skip_aim": True}, NUM3 - {"integer_aim"}),
        (200, {"adm_skip_aim": True}, (NUM3 | DEN3) - {"integer_aim"}),
    ],
)
def test_affected_outputs(width, options, want):
    assert set(small_height_outputs(width, 24, AdmOptions(**options))) == want
    msg = small_height_warning(width, 24, AdmOptions(**options))
    assert all(name in msg for name in want)


def test_any_options_object():
    opts = types.SimpleNamespace(adm_skip_aim=True, adm_skip_scale0=False)
    assert "integer_aim" not in small_height_outputs(20, 20, opts)
    assert set(small_height_outputs(20, 20, None)) == NUM3


@pytest.mark.parametrize("name", list(GOLDENS))
def test_warning_names_what_varied_in_libvmaf(name):
    """Every output that changed between libvmaf runs of a golden case is one that
    small_height_outputs names, and the other way round (AIM aside where den == 0)."""
    entry = GOLDENS[name]
    case = entry["case"]
    varied = set(entry["unstable_fields"]) | set(entry["heap_fields"])
    if any(f["integer_adm_den"] == 0.0 for f in entry["frames"]):
        assert "integer_aim" in varied  # never assigned by libvmaf: a leftover stack value
        varied.discard("integer_aim")
    opts = AdmOptions.from_mapping(case["options"])
    assert varied == set(small_height_outputs(case["w"], case["h"], opts))


def test_goldens_cover_both_small_height_kinds():
    kinds = {
        frozenset(small_height_outputs(c["case"]["w"], c["case"]["h"], None)) - {"integer_aim"}
        for c in GOLDENS.values()
    }
    assert frozenset(NUM3 - {"integer_aim"}) in kinds
    assert frozenset((NUM3 | DEN3) - {"integer_aim"}) in kinds


# --- against libvmaf itself ---------------------------------------------------------------

SO = find_libvmaf()
needs_oracle = pytest.mark.skipif(
    SO is None or not ORACLE.exists(),
    reason="ADMCUDA_LIBVMAF names no libvmaf library, or ../shared/tools is absent",
)


def _oracle(tmp_path, refs, diss, bitdepth, options, env=None):
    h, w = refs[0].shape
    dt = np.uint8 if bitdepth == 8 else np.dtype("<u2")
    paths = []
    for role, frames in (("ref", refs), ("dis", diss)):
        p = tmp_path / f"{role}.yuv"
        p.write_bytes(b"".join(np.asarray(f).astype(dt).tobytes() for f in frames))
        paths.append(str(p))
    cmd = [sys.executable, str(ORACLE), SO, *paths, str(w), str(h), "400", str(bitdepth)]
    cmd += [f"{k}={v}" for k, v in sorted(options.items())]
    run = subprocess.run(
        cmd, capture_output=True, text=True, check=True, env={**os.environ, **(env or {})}
    )
    return json.loads(run.stdout)["frames"]


def _frames(w, h, bitdepth, seed):
    rng = np.random.default_rng(seed)
    top = (1 << bitdepth) - 1
    yy, xx = np.mgrid[0:h, 0:w]
    base = top * (0.5 + 0.3 * np.sin(xx / 5.0) * np.cos(yy / 3.0))
    ref = np.clip(base + rng.normal(0, top / 40, (2, h, w)), 0, top)
    dis = np.clip(ref + rng.normal(0, top / 30, (2, h, w)), 0, top)
    dt = np.uint8 if bitdepth == 8 else np.uint16
    return list(ref.astype(dt)), list(dis.astype(dt))


@needs_oracle
@pytest.mark.parametrize(
    ("w", "h", "options"),
    [(40, 24, {}), (200, 24, {}), (200, 20, {"adm_skip_aim": "true"}), (64, 33, {})],
)
def test_small_height_outputs_vary_in_libvmaf(tmp_path, w, h, options):
    refs, diss = _frames(w, h, 8, w + h)
    envs = [{}, {}, {"MALLOC_PERTURB_": "85"}, {"MALLOC_PERTURB_": "170"}]
    runs = [_oracle(tmp_path, refs, diss, 8, options, env) for env in envs]
    varied = {
        k
        for i, row in enumerate(runs[0])
        for k in row
        if len({json.dumps(r[i][k]) for r in runs}) > 1
    }
    opts = AdmOptions.from_mapping(options)
    assert varied == set(small_height_outputs(w, h, opts))
    # The other outputs are libvmaf's, bit for bit.
    for r, d, lib in zip(refs, diss, runs[0], strict=True):
        ours = compute_adm(r, d, 8, opts)
        bad = [(k, ours[k], v) for k, v in lib.items() if k not in varied and not same(v, ours[k])]
        assert not bad, f"{len(bad)} differ, max abs diff {max(abs(a - b) for _, a, b in bad)}"


@needs_oracle
@pytest.mark.parametrize("bitdepth", [8, 10])
@pytest.mark.parametrize("options", [{}, {"adm_dlm_weight": "0.8"}], ids=["dlm0.5", "dlm0.8"])
def test_zero_denominator_like_libvmaf(tmp_path, bitdepth, options):
    """Flat reference, adm_noise_weight=0: libvmaf prints adm2 = 1, adm3 = 1.0 and, for
    AIM, whatever its stack held (a denormal); admcuda gives NaN for AIM, the rest equal."""
    options = {"adm_noise_weight": "0", **options}
    dt = np.uint8 if bitdepth == 8 else np.uint16
    flat = np.full((36, 48), 100 << (bitdepth - 8), dt)
    _, diss = _frames(48, 36, bitdepth, 3)
    lib = _oracle(tmp_path, [flat, flat], diss, bitdepth, options)
    for d, row in zip(diss, lib, strict=True):
        ours = compute_adm(flat, d, bitdepth, AdmOptions.from_mapping(options))
        assert row["integer_adm_den"] == 0.0 and row["integer_adm2"] == 1.0
        assert row["integer_adm3"] == ours["integer_adm3"] == 1.0
        assert abs(row["integer_aim"]) < 1e-300 and math.isnan(ours["integer_aim"])
        bad = [k for k, v in row.items() if k != "integer_aim" and not same(v, ours[k])]
        assert not bad, [(k, ours[k], row[k]) for k in bad]


def test_zero_denominator_reference():
    flat = np.full((36, 48), 77, np.uint8)
    out = compute_adm(flat, flat, 8, plain_opts(adm_noise_weight=0.0, adm_dlm_weight=0.8))
    assert out["integer_adm_den"] == 0.0 and out["integer_adm2"] == 1.0
    assert out["integer_adm3"] == 1.0 and math.isnan(out["integer_aim"])
