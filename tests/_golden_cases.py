"""libvmaf's goldens of one feature and the pairs they were read on (tests only).

Each ``testdata/<stem>_goldens.json`` was made by ``testdata/make_<stem>_goldens.py``. The
tests load that script instead of copying it, so the synthetic pairs they write are the
bytes the goldens were read on; the Netflix pairs are read from ``conftest.NETFLIX``, and a
test that needs one skips, saying so, where that folder is missing.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import NETFLIX, TESTDATA

import admcuda
from admcuda import backends
from admcuda.cli.main import main

OUTPUTS = TESTDATA / "libvmaf_outputs"

# Netflix pairs libvmaf's tool files were written on: key -> (ref, dis, width, height, bit
# depth), as the command line takes them
TOOL_PAIRS = {
    "3f": ("src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", "576", "324", "8"),
    "10b": ("src01_hrc00_576x324.yuv420p10le.yuv", "src01_hrc01_576x324.yuv420p10le.yuv",
            "576", "324", "10"),
    "48f": ("ref_160x90_48f.yuv", "dis_160x90_48f.yuv", "160", "90", "8"),
}  # fmt: skip

# bytes of a frame's two chroma planes per luma size and layout
_CHROMA = {
    "420": lambda w, h: 2 * ((w + 1) // 2) * ((h + 1) // 2),
    "422": lambda w, h: 2 * ((w + 1) // 2) * h,
    "444": lambda w, h: 2 * w * h,
    "400": lambda w, h: 0,
}


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


def tool_pair(row: tuple[str, str, str, str, str]) -> tuple[str, str, str, str, str]:
    """A row of :data:`TOOL_PAIRS` with the Netflix files' paths; the test skips where they
    are missing."""
    ref, dis = netflix_pair(row[0], row[1])
    return ref, dis, row[2], row[3], row[4]


def flat_chroma(frames: list) -> np.ndarray:
    """A pair side's chroma as the pipeline reads it: each frame's Cb then Cr, flat."""
    return np.stack([np.concatenate([f[1].ravel(), f[2].ravel()]) for f in frames])


def luma_planes(path: str, w: int, h: int, fmt: str, bd: int) -> np.ndarray:
    """Every frame's luma plane of a raw file, ``(frames, h, w)``."""
    raw = np.fromfile(path, np.uint8 if bd == 8 else np.dtype("<u2"))
    frames = raw.reshape(-1, w * h + _CHROMA[fmt](w, h))[:, : w * h]
    return frames.reshape(-1, h, w).astype(np.uint8 if bd == 8 else np.uint16)


def printed(got: float, want: float) -> bool:
    """``got`` as libvmaf's tool prints it (``%.6f``) reads back as ``want``."""
    return float(f"{got:.6f}") == want


def printed_or_null(got: float | None, want: float | None) -> bool:
    """:func:`printed`, and JSON's ``null`` for a value that is not finite."""
    if want is None:
        return got is None
    return got is not None and float(f"{got:.6f}") == want


def max_abs_diff(got: list[dict], want: list[dict]) -> float:
    """The largest absolute difference between the frames' values of the same name."""
    return max(
        (abs(g[n] - w[n]) for g, w in zip(got, want, strict=True) for n in w if n in g),
        default=math.inf,
    )


def check_one_line_refusal(args: list[str], out: Path, needle: str, capsys) -> None:
    """``admcuda`` with ``args`` fails, saying so in one line that holds ``needle``, and
    writes no ``out``."""
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not out.exists()


def engine_plans(monkeypatch) -> list:
    """The plans given to every engine started from here on (a list that fills as they
    start)."""
    seen: list = []
    start = backends.start_engine

    def spy(backend, *args, **kwargs):
        seen.append(kwargs["plan"])
        return start(backend, *args, **kwargs)

    monkeypatch.setattr(backends, "start_engine", spy)
    return seen


def check_tool_files(ours: Path, theirs: Path, fmt: str, same=printed) -> None:
    """Two files of one layout, admcuda's and libvmaf's tool's: the same frames, names
    and order, and each value ``same`` as the one the tool printed."""
    frames, pool, agg = read_output(ours, fmt)
    their_frames, their_pool, their_agg = read_output(theirs, fmt)
    assert [n for n, _ in frames] == [n for n, _ in their_frames]
    for (_, got), (_, want) in zip(frames, their_frames, strict=True):
        assert list(got) == list(want)
        assert all(same(got[k], v) for k, v in want.items()), (got, want)
    assert list(pool) == list(their_pool)
    for k, methods in their_pool.items():
        assert all(same(pool[k][m], v) for m, v in methods.items()), (k, pool[k])
    assert agg == their_agg == {}


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
        self.stem = stem
        self._feature = feature
        self._layout = layout
        self._luma: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def keys_on(self, pairs: Mapping) -> list[str]:
        """The cases read on one of ``pairs`` (the script's PAIRS or NETFLIX_PAIRS)."""
        return [k for k, v in self.cases.items() if v["pair"] in pairs]

    def feature(self, case: dict) -> str:
        return feature_arg(self._feature or case["feature"], case["options"])

    def least_sides(self) -> dict[str, int]:
        """Each case on a synthetic pair -> the shorter side of that pair's frames."""
        return {k: min(self.maker.PAIRS[self.cases[k]["pair"]][:2]) for k in self.keys_on(
            self.maker.PAIRS)}  # fmt: skip

    def script_sha256(self) -> str:
        """The sha256 of the script's file as it is now."""
        return hashlib.sha256((TESTDATA / f"make_{self.stem}_goldens.py").read_bytes()).hexdigest()

    def luma(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """A case's reference and distorted luma planes, ``(frames, h, w)`` each; a
        synthetic pair's file bytes checked against the sha256 the goldens recorded."""
        pair = self.cases[key]["pair"]
        if pair not in self._luma:
            if pair in self.maker.PAIRS:
                for data, side in zip(self.maker.pair_bytes(pair), ("ref", "dis"), strict=True):
                    digest = hashlib.sha256(data).hexdigest()
                    assert digest == self.doc["pairs"][pair][f"{side}_sha256"]
                self._luma[pair] = self.maker.pair_planes(pair)
            else:
                w, h, fmt, bd = self.geometry(self.cases[key])
                ref, dis = self.paths(self.cases[key], {})
                self._luma[pair] = (
                    luma_planes(ref, w, h, fmt, bd),
                    luma_planes(dis, w, h, fmt, bd),
                )
        return self._luma[pair]

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

    def score(self, case: dict, written: Path | Mapping[str, tuple[str, str]], **kwargs):
        """``admcuda.score`` of a case, no model; ``features`` the case's feature unless
        given."""
        w, h, fmt, bd = self.geometry(case)
        ref, dis = self.paths(case, written)
        kwargs.setdefault("features", [self.feature(case)])
        return admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                             no_prediction=True, **kwargs)  # fmt: skip

    def check_refused(
        self, key: str, feature: str, needle: str, written: Path, out: Path, capsys
    ) -> None:
        """``admcuda score`` of a case's pair with ``--feature feature`` is refused in one
        line that holds ``needle``, and writes no ``out``."""
        w, h, fmt, _ = self.geometry(self.cases[key])
        ref, dis = self.paths(self.cases[key], written)
        args = ["score", "-q", "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
                "--feature", feature, "-n", "--json", "-o", str(out)]  # fmt: skip
        check_one_line_refusal(args, out, needle, capsys)

    def check_tool_run(
        self,
        name: str,
        fmt: str,
        pair: tuple[str, str, str, str, str],
        args: list[str],
        tmp_path: Path,
        same=printed,
    ) -> None:
        """``admcuda score`` with ``args`` on a 4:2:0 ``pair`` (ref, dis, width, height, bit
        depth) written as ``fmt`` against libvmaf's tool's file ``name`` of that layout."""
        ref, dis, w, h, bd = pair
        out = tmp_path / f"out.{fmt}"
        io = ["-r", ref, "-d", dis, "-w", w, "-h", h, "-p", "420", "-b", bd]
        assert main(["score", "-q", *io, *args, f"--{fmt}", "-o", str(out)]) == 0
        check_tool_files(out, self.outputs / f"{name}.{fmt}", fmt, same)

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
