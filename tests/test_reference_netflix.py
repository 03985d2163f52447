"""The reference against libvmaf's scalar-C goldens for the shared Netflix cases.

Goldens: ../shared/netflix/goldens.json (libvmaf 3.2.0, Netflix/vmaf f85a8536,
scalar C path, full double precision). Every value of every frame must be identical.
"""

from __future__ import annotations

import pytest
from _frames import luma_frames, same
from admcuda.reference import compute_adm
from conftest import NETFLIX, netflix_cases, plain_opts

INT_OPTS = {"adm_csf_mode", "adm_ref_display_height"}


def opts_from_strings(options: dict[str, str]):
    kw = {}
    for k, v in options.items():
        if v in ("true", "false"):
            kw[k] = v == "true"
        else:
            kw[k] = int(v) if k in INT_OPTS else float(v)
    return plain_opts(**kw)


CASES = netflix_cases()


@pytest.mark.parametrize("case", CASES or [None], ids=[c["name"] for c in CASES] or ["absent"])
def test_netflix_case_matches_libvmaf(case, netflix_goldens):
    if case is None:
        pytest.skip("../shared/netflix is absent")
    gold = netflix_goldens[case["name"]]["frames"]
    args = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    refs = luma_frames(NETFLIX / case["ref"], *args)
    diss = luma_frames(NETFLIX / case["dis"], *args)
    assert len(refs) == len(gold)
    opts = opts_from_strings(case["options"])
    bad = []
    for n, (r, d, g) in enumerate(zip(refs, diss, gold, strict=False)):
        out = compute_adm(r, d, case["bitdepth"], opts)
        assert set(out) == set(g)
        bad += [(n, k, out[k], v) for k, v in g.items() if not same(v, out[k])]
    assert not bad, f"{len(bad)} values differ, first: {bad[:3]}"
