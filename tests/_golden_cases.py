"""libvmaf's goldens of one feature and the pairs they were read on (tests only).

Each ``testdata/<stem>_goldens.json`` was made by ``testdata/make_<stem>_goldens.py``. The
tests load that script instead of copying it, so the synthetic pairs they write are the
bytes the goldens were read on; the Netflix pairs are read from ``conftest.NETFLIX``, and a
test that needs one skips, saying so, where that folder is missing.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import pytest
from conftest import NETFLIX, TESTDATA

from admcuda.cli.main import main

OUTPUTS = TESTDATA / "libvmaf_outputs"


def load_maker(stem: str) -> ModuleType:
    """``testdata/make_<stem>_goldens.py`` as a module (its pairs, their planes and bytes)."""
    spec = importlib.util.spec_from_file_location(
        f"{stem}_maker", TESTDATA / f"make_{stem}_goldens.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def feature_arg(name: str, options: str) -> str:
    """``--feature``'s text for a feature and its options as libvmaf's tool takes them."""
    return name + (f"={options}" if options else "")


def pair_folder(name: str):
    """A module's fixture ``folder``: one temporary folder the module's pairs are written into."""

    @pytest.fixture(scope="module")
    def folder(tmp_path_factory):
        return tmp_path_factory.mktemp(name)

    return folder


def written_pair(maker: ModuleType, pair: str, folder: Path) -> tuple[str, str]:
    """The (reference, distorted) files of a script's pair, written into ``folder`` on first use."""
    ref = folder / f"{pair}_ref.yuv"
    if not ref.exists():
        maker.write_pair(pair, str(folder))
    return str(ref), str(folder / f"{pair}_dis.yuv")


def netflix_pair(ref: str, dis: str) -> tuple[str, str]:
    """The paths of a pair of ``../shared/netflix``; the test skips where it is missing."""
    if not (NETFLIX / ref).exists():
        pytest.skip(f"shared Netflix pairs not found at {NETFLIX}")
    return str(NETFLIX / ref), str(NETFLIX / dis)


def same_double(got: float, want: float) -> bool:
    """The same double: equal with the same sign, or NaN both."""
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def check_frames(
    frames: list[dict], case: dict, *, signed: bool = False, json_nulls: bool = False
) -> None:
    """Every frame's outputs: the golden's names, in its order, and its doubles, ``==``
    (with ``signed``, the same double: -0.0 is not 0.0 and NaN is NaN; with ``json_nulls``,
    None for a value not finite, as libvmaf's JSON writes it)."""
    assert len(frames) == len(case["frames"])
    for i, (got, want) in enumerate(zip(frames, case["frames"], strict=True)):
        assert list(got) == list(want), i
        for name, value in want.items():
            if json_nulls and got[name] is None:
                assert not math.isfinite(value), (i, name, value)
                continue
            if signed:
                assert same_double(got[name], value), (i, name, got[name], value)
            else:
                assert got[name] == value, (i, name, got[name], value)


class FeatureGoldens:
    """One feature's goldens file, the script that made it and its pairs' geometry.

    ``feature``: the feature every case scores, or None where each case names its own.
    ``layout``: the pixel format of the script's synthetic pairs where their rows
    ``(w, h, bitdepth, ...)`` name none; None where the rows are ``(w, h, fmt, bitdepth, ...)``.
    The scripts' Netflix rows are ``(ref, dis, w, h, fmt, bitdepth)``.
    """

    def __init__(self, stem: str, *, feature: str | None, layout: str | None) -> None:
        self.maker = load_maker(stem)
        self.doc = json.loads((TESTDATA / f"{stem}_goldens.json").read_text())
        self.cases: dict[str, dict] = self.doc["cases"]
        self.outputs = OUTPUTS / stem
        self._feature = feature
        self._layout = layout

    def keys_on(self, pairs: Mapping) -> list[str]:
        """The cases read on one of ``pairs`` (the script's PAIRS or NETFLIX_PAIRS)."""
        return [k for k, v in self.cases.items() if v["pair"] in pairs]

    def feature(self, case: dict) -> str:
        return feature_arg(self._feature or case["feature"], case["options"])

    def geometry(self, case: dict) -> tuple[int, int, str, int]:
        """(width, height, pixel format, bit depth) of a case's pair."""
        pair = case["pair"]
        if pair in self.maker.PAIRS:
            row = self.maker.PAIRS[pair]
            if self._layout is None:
                w, h, fmt, bd = row[:4]
                return w, h, fmt, bd
            return row[0], row[1], self._layout, row[2]
        _, _, w, h, fmt, bd = self.maker.NETFLIX_PAIRS[pair]
        return w, h, fmt, bd

    def paths(self, case: dict, written: Path | Mapping[str, tuple[str, str]]) -> tuple[str, str]:
        """(reference, distorted) of a case: a synthetic pair from ``written`` (a folder it
        is written into on first use, or the paths of the pairs already written), a Netflix
        pair from ``../shared/netflix``."""
        pair = case["pair"]
        if pair in self.maker.PAIRS:
            if isinstance(written, Mapping):
                return written[pair]
            return written_pair(self.maker, pair, written)
        ref, dis = self.maker.NETFLIX_PAIRS[pair][:2]
        return netflix_pair(ref, dis)

    def cli(
        self,
        case: dict,
        written: Path | Mapping[str, tuple[str, str]],
        out: Path,
        *extra: str,
        fmt: str = "json",
    ) -> str:
        """``admcuda score`` of a case, no model, into ``out`` as ``fmt``; the file's text."""
        w, h, pixfmt, bd = self.geometry(case)
        ref, dis = self.paths(case, written)
        args = ["score", "-q", "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", pixfmt,
                "-b", str(bd), "--feature", self.feature(case), "-n", *extra,
                f"--{fmt}", "-o", str(out)]  # fmt: skip
        assert main(args) == 0
        return out.read_text()


def read_output(path: Path, fmt: str) -> tuple[list[tuple[int, dict]], dict, dict]:
    """(frameNum, metrics) per frame, pooled_metrics and aggregate_metrics of a file that
    libvmaf's tool or admcuda wrote as ``json``, ``xml`` or ``csv`` (JSON's null: NaN)."""
    if fmt == "json":
        doc = json.loads(path.read_text())
        agg = {k: (math.nan if v is None else v) for k, v in doc["aggregate_metrics"].items()}
        frames = [(f["frameNum"], f["metrics"]) for f in doc["frames"]]
        return frames, doc["pooled_metrics"], agg
    if fmt == "xml":
        root = ET.parse(path).getroot()
        frames = []
        for el in root.find("frames"):
            attrs = dict(el.attrib)
            frames.append((int(attrs.pop("frameNum")), {k: float(v) for k, v in attrs.items()}))
        pools = {}
        for el in root.find("pooled_metrics"):
            attrs = dict(el.attrib)
            name = attrs.pop("name")
            pools[name] = {k: float(v) for k, v in attrs.items()}
        agg = {k: float(v) for k, v in root.find("aggregate_metrics").attrib.items()}
        return frames, pools, agg
    rows = list(csv.reader(path.read_text().splitlines()))
    head = rows[0][1:-1]
    frames = [(int(r[0]), dict(zip(head, map(float, r[1:-1]), strict=True))) for r in rows[1:]]
    return frames, {}, {}
