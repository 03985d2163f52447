"""Shared fixtures: where the Netflix goldens live, and the ``cuda`` marker.

The Netflix parity data (Netflix's own test clips with libvmaf's outputs on them) is not
part of the repository: it is read from ``../shared/netflix`` beside the checkout, or from
the folder ``ADMCUDA_NETFLIX`` names. Every test that needs it skips, saying so, where it
is absent.
"""

from __future__ import annotations

import json
import os
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NETFLIX = Path(os.environ.get("ADMCUDA_NETFLIX") or ROOT.parent / "shared" / "netflix")
TESTDATA = ROOT / "testdata"


def pytest_configure(config):
    # Most tests use clips 17..32 pixels high, where admcuda warns that libvmaf's own
    # scale-3 outputs are undefined; tests of other behaviour (and the worker processes
    # they start) run with that warning off. tests/test_api_names.py checks it is given.
    os.environ["ADMCUDA_SMALL_HEIGHT_WARNING"] = "0"
    # Command lines the tests start run in their own processes, never in a developer's
    # running `admcuda serve` (tests/test_serve.py starts its own).
    os.environ["ADMCUDA_SERVER"] = "off"
    config.addinivalue_line("markers", "cuda: needs CuPy and an NVIDIA GPU (skipped otherwise)")


def netflix_cases() -> list[dict]:
    """The shared Netflix cases, or an empty list where ``../shared`` is absent."""
    path = NETFLIX / "cases.json"
    return json.loads(path.read_text()) if path.exists() else []


@pytest.fixture(scope="session")
def netflix_goldens() -> dict:
    path = NETFLIX / "goldens.json"
    if not path.exists():
        pytest.skip(f"shared Netflix goldens not found at {NETFLIX}")
    return json.loads(path.read_text())


def make_opts(options: dict[str, str]):
    """libvmaf-style string options -> an options object the reference accepts."""
    from admcuda.options import AdmOptions

    return AdmOptions.from_mapping(options)


def plain_opts(**kw):
    """Default ADM options as a bare namespace (reference tests need no package code)."""
    d = dict(
        adm_enhn_gain_limit=100.0,
        adm_norm_view_dist=3.0,
        adm_ref_display_height=1080,
        adm_csf_mode=0,
        adm_csf_scale=1.0,
        adm_csf_diag_scale=1.0,
        adm_noise_weight=0.03125,
        adm_skip_aim=False,
        adm_skip_scale0=False,
        adm_dlm_weight=0.5,
        adm_min_val=0.0,
    )
    d.update(kw)
    return types.SimpleNamespace(**d)
