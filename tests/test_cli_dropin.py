"""``admcuda score`` as a drop-in for libvmaf's ``vmaf`` command line, ladders that
survive a bad rung, and ``admcuda map`` reading inputs as ``score`` does."""

from __future__ import annotations

import csv
import inspect
import io
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from _media import FFV1, encode, write_y4m

import admcuda
import admcuda.io.inputs
import admcuda.ladder
from admcuda.cli import score as cli
from admcuda.cli.main import main
from admcuda.data import EXAMPLE
from admcuda.options import NON_DEBUG_BASE_NAMES, OUTPUT_BASE_NAMES, AdmOptions, feature_suffix

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "admcuda" / "data"
GEOMETRY = ["-w", "32", "-h", "24"]

HAS_ERRORS = "errors" in getattr(admcuda.ladder.LadderRun, "__dataclass_fields__", {})
needs_errors = pytest.mark.skipif(
    not HAS_ERRORS, reason="run_ladder does not report per-rung errors yet (LadderRun.errors)"
)


def _accepts(func, name: str) -> bool:
    return name in inspect.signature(func).parameters


def _input_layer_takes(name: str) -> bool:
    """Both run_ladder and the input layer under it take keyword ``name``."""
    return _accepts(admcuda.ladder.run_ladder, name) and _accepts(
        admcuda.io.inputs.open_inputs, name
    )


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("ADMCUDA_TRACEBACK", None)
    proc = subprocess.run(
        [sys.executable, "-m", "admcuda", *args],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )  # fmt: skip
    proc.stderr = "".join(line for line in proc.stderr.splitlines(True) if ": notice: " not in line)
    return proc


def write_clip(path: Path, w: int, h: int, frames: int, *, seed: int = 0, bits: int = 8):
    """A random 4:2:0 clip (zero chroma); returns the luma planes."""
    rng = np.random.default_rng(seed)
    dtype = np.uint8 if bits == 8 else np.dtype("<u2")
    chroma = np.zeros(((h + 1) // 2) * ((w + 1) // 2) * 2, dtype).tobytes()
    lumas = [rng.integers(0, 1 << bits, (h, w)).astype(dtype) for _ in range(frames)]
    path.write_bytes(b"".join(y.tobytes() + chroma for y in lumas))
    return lumas


def write_related(ref: Path, dis: Path, w: int, h: int, frames: int, *, bits: int = 8) -> None:
    """A reference and a noisy copy of it, so that ADM has something to find."""
    lumas = write_clip(ref, w, h, frames, seed=11, bits=bits)
    rng = np.random.default_rng(12)
    peak = (1 << bits) - 1
    dtype = lumas[0].dtype
    chroma = np.zeros(((h + 1) // 2) * ((w + 1) // 2) * 2, dtype).tobytes()
    noisy = [
        np.clip(y.astype(np.int64) + rng.integers(-20, 21, y.shape), 0, peak).astype(dtype)
        for y in lumas
    ]
    dis.write_bytes(b"".join(y.tobytes() + chroma for y in noisy))


@pytest.fixture
def pair(tmp_path):
    ref, dis = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    write_related(ref, dis, 32, 24, 3)
    return ref, dis


def one_error_line(proc: subprocess.CompletedProcess[str], code: int) -> str:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("admcuda: error: "), proc.stderr
    return lines[0]


# ---- the libvmaf command line ----------------------------------------------------------


@pytest.mark.parametrize("bits", [8, 10])
def test_libvmaf_command_line_gives_the_positional_numbers(tmp_path, bits):
    ref, dis = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    write_related(ref, dis, 32, 24, 3, bits=bits)
    dropin, positional = tmp_path / "dropin.json", tmp_path / "positional.json"
    # The brief's vmaf command line, with only the program name changed.
    assert main([
        "score", "-r", str(ref), "-d", str(dis), "-w", "32", "-h", "24", "-p", "420",
        "-b", str(bits), "--feature", "adm=adm_enhn_gain_limit=1.0:debug=true", "-n",
        "--threads", "8", "--json", "-o", str(dropin),
    ]) == 0  # fmt: skip
    assert main([
        "score", str(ref), str(dis), *GEOMETRY, "-b", str(bits), "--option", "egl=1.0",
        "--debug", "--json", "-o", str(positional),
    ]) == 0  # fmt: skip
    got, want = json.loads(dropin.read_text()), json.loads(positional.read_text())
    assert got["frames"] == want["frames"] and got["pooled_metrics"] == want["pooled_metrics"]
    names = list(got["frames"][0]["metrics"])
    assert names == [f"{base}_egl_1" for base in OUTPUT_BASE_NAMES]


def test_raw_flags_beside_a_y4m_input_get_one_warning(tmp_path, capsys):
    """With -w/-h/-p/-b libvmaf's tool opens every input with its raw reader (cli_parse.c
    sets use_yuv), reading a Y4M's header and FRAME markers as samples: other numbers.
    admcuda reads the Y4M header, scores the same frames, and says so in one line."""
    ref, dis = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    write_related(ref, dis, 32, 24, 3)
    ref_y4m = write_y4m(ref, tmp_path / "ref.y4m", 32, 24, "420", 8)
    dis_y4m = write_y4m(dis, tmp_path / "dis.y4m", 32, 24, "420", 8)
    warning = (
        "admcuda: warning: with -w/-h/-p/-b given libvmaf reads every input as raw YUV, a "
        "Y4M's header and FRAME markers as samples; admcuda reads the Y4M header of "
    )

    def score(*args):
        assert main(["score", *map(str, args), "--json", "-q"]) == 0
        out, err = capsys.readouterr()
        return json.loads(out)["frames"], err

    want, err = score("-r", ref_y4m, "-d", dis)
    assert "vmaf" in want[0]["metrics"]  # no --model: vmaf_v0.6.1, as libvmaf's tool
    assert err == ""
    for flags in (GEOMETRY, ["-p", "420"], ["-b", "8"], [*GEOMETRY, "-p", "420", "-b", "8"]):
        assert score("-r", ref_y4m, "-d", dis, *flags) == (
            want,
            f"{warning}reference file '{ref_y4m}'\n",
        )
    model = ["--model", "version=vmaf_v0.6.1"]  # REF DIS alone would be ADM alone
    assert score(ref_y4m, dis_y4m, "-b", "8", *model) == (
        want,
        f"{warning}reference file '{ref_y4m}' and distorted file '{dis_y4m}'\n",
    )
    assert score(ref, dis, *GEOMETRY, *model) == (want, "")


def test_libvmaf_long_spellings(pair, tmp_path):
    ref, dis = pair
    a, b = tmp_path / "a.xml", tmp_path / "b.xml"
    assert main([
        "score", "--reference", str(ref), "--distorted", str(dis), "--width", "32",
        "--height", "24", "--pixel_format", "420", "--bitdepth", "8", "--feature", "adm",
        "--no_prediction", "--quiet", "--xml", "--output", str(a),
    ]) == 0  # fmt: skip
    assert main(["score", str(ref), str(dis), *GEOMETRY, "-o", str(b)]) == 0
    strip = re.compile(r'<fyi fps="[^"]*" />')
    assert strip.sub("", a.read_text()) == strip.sub("", b.read_text())


@pytest.mark.parametrize(("options", "suffix"), [
    ("adm_enhn_gain_limit=1.2", "_egl_1.2"),
    ("adm_norm_view_dist=4:adm_ref_display_height=2160", ""),  # not adm_cuda's parameters
    ("adm_enhn_gain_limit=1.2:adm_norm_view_dist=4", "_egl_1.2"),
    ("debug=true", ""),
])  # fmt: skip
def test_adm_cuda_writes_what_libvmafs_adm_cuda_writes(pair, tmp_path, options, suffix):
    # The same numbers as adm with those options, under adm_cuda's names (libvmaf 3.2.0's
    # integer_adm_cuda.c: egl its only feature parameter) and only the outputs it writes
    # (no integer_aim, no integer_adm3).
    ref, dis = pair
    docs = {}
    for feature in ("adm", "adm_cuda"):
        out = tmp_path / f"{feature}.json"
        args = ["score", "-r", str(ref), "-d", str(dis), *GEOMETRY, "-n", "-o", str(out)]
        assert main([*args, "--feature", f"{feature}={options}", "--json"]) == 0
        docs[feature] = json.loads(out.read_text())
    debug = "debug=true" in options
    bases = [b for b in (OUTPUT_BASE_NAMES if debug else NON_DEBUG_BASE_NAMES)
             if b not in ("integer_aim", "integer_adm3")]  # fmt: skip
    adm_suffix = AdmOptions.from_mapping(dict(kv.split("=") for kv in options.split(":")))
    full = {b: b + feature_suffix(adm_suffix) for b in OUTPUT_BASE_NAMES}
    for got, want in zip(docs["adm_cuda"]["frames"], docs["adm"]["frames"], strict=True):
        assert list(got["metrics"]) == [b + suffix for b in bases]
        assert [got["metrics"][b + suffix] for b in bases] == [
            want["metrics"][full[b]] for b in bases
        ]
    pooled = docs["adm_cuda"]["pooled_metrics"]
    assert list(pooled) == [b + suffix for b in bases]
    assert all(pooled[b + suffix] == docs["adm"]["pooled_metrics"][full[b]] for b in bases)


def test_feature_option_values_are_libvmafs_six_digits(pair, tmp_path):
    # libvmaf computes with strtof(text) printed by %g (its dictionary normalises numbers):
    # 4.1234567 scores as 4.12346, and 3.000000001 as the default, under the default names.
    ref, dis = pair
    docs = {}
    for text in ("4.1234567", "4.12346", "3.000000001", "3"):
        out = tmp_path / f"{text}.json"
        feature = f"adm=adm_norm_view_dist={text}:debug=true"
        args = ["score", "-r", str(ref), "-d", str(dis), *GEOMETRY, "-n", "--feature", feature]
        assert main([*args, "--json", "-o", str(out)]) == 0
        doc = json.loads(out.read_text())
        docs[text] = (doc["frames"], doc["pooled_metrics"])
    assert docs["4.1234567"] == docs["4.12346"]
    assert "integer_adm_num_nvd_4.12346" in docs["4.1234567"][0][0]["metrics"]
    assert docs["3.000000001"] == docs["3"]
    assert "integer_adm_num" in docs["3"][0][0]["metrics"]


def test_libvmaf_integer_syntax_and_ignored_masks(pair, tmp_path):
    """Integers read as libvmaf's strtoul(..., 0) reads them (010 is 8, 0x10 is 16), and
    --cpumask / --gpumask and libvmaf's -c (in its short options, read by none) accepted
    with no effect: the same scores as without them."""
    from admcuda.numeric import c_integer

    assert [c_integer(t) for t in ("10", " +10", "010", "0x10", "0X1f", "0", "-3")] == [
        10, 10, 8, 16, 31, 0, -3]  # fmt: skip
    for bad in ("", "0x", "08", "1_0", "1.0", "10 ", "abc", "--1", "0b1"):
        with pytest.raises(ValueError):
            c_integer(bad)
    ref, dis = pair
    outs = []
    runs = (
        [*GEOMETRY, "--frame_cnt", "2"],
        [
            "-w",
            "0x20",
            "-h",
            "030",
            "--frame_cnt",
            "02",
            "--cpumask",
            "0xff",
            "--gpumask",
            "0",
            "-c",
            "1",
        ],
    )
    for k, extra in enumerate(runs):
        out = tmp_path / f"o{k}.csv"
        assert main(["score", "-r", str(ref), "-d", str(dis), "--csv", "-o", str(out), *extra]) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1] and len(outs[0].splitlines()) == 3


def test_feature_options_go_through_the_option_parser():
    from admcuda.cli.tool import parse_feature_args

    settings: dict[str, str] = {}
    parse_feature_args(["adm=adm_enhn_gain_limit=1.5:adm_csf_mode=1"], settings)
    assert settings == {"adm_enhn_gain_limit": "1.5", "adm_csf_mode": "1"}
    assert AdmOptions.from_mapping(settings).adm_enhn_gain_limit == 1.5
    bare: dict[str, str] = {}
    parse_feature_args(["adm"], bare)
    assert bare == {}


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--feature", "motion=bogus=1"], "--feature motion: libvmaf's motion has no option"),
        (["--feature", "vif=debug=yes"], "--feature vif: option debug expects true or false"),
        (["--feature", "lpips"], "admcuda computes the features adm, vif and motion"),
        (["--feature", "vfi"], "NAME=KEY=VALUE:KEY=VALUE (did you mean vif?)"),
        (["--model", "version=vmaf_v9"], "vmaf_v9"),
        (["--feature", "adm", "--feature", "adm_cuda"], "one ADM configuration per run"),
        (["--feature", "adm=egl"], "--feature adm expects NAME=VALUE, got 'egl'"),
        (
            ["--feature", "adm=adm_enhn_gain_limit=1.2", "--option", "adm_enhn_gain_limit=1.5"],
            "option 'adm_enhn_gain_limit' given twice",
        ),  # fmt: skip
        (["--feature", "adm=adm_enhn_gain_limit=1.2", "--option", "egl=1.5"], "given twice"),
        (["--feature", "adm=adm_csf_mode=1:adm_csf_mode=2"], "option 'adm_csf_mode' given twice"),
        (["--feature", "adm=bogus=1"], "unknown ADM option 'bogus'"),
        (["--feature", "adm=adm_enhn_gain_limit=0.5"], "[1, 100]"),
        # libvmaf reads --feature options by full name and would ignore an alias
        (["--feature", "adm=egl=1.2"], "would ignore 'egl'; write adm_enhn_gain_limit=1.2"),
        (["--feature", "adm=adm_csf_mode=1:nvd=4"], "write adm_norm_view_dist=4"),
        # ... and its adm_cuda has four of ADM's options
        (
            ["--feature", "adm_cuda=adm_csf_mode=1"],
            "libvmaf's adm_cuda has no option adm_csf_mode and would ignore it",
        ),  # fmt: skip
        (["--feature", "adm_cuda=adm_skip_aim=true"], "use --feature adm=adm_skip_aim=true"),
        (["-w", "08"], "invalid integer: '08'"),  # octal, as libvmaf's strtoul reads it
        (["--cpumask", "-1"], "out of range (must be >= 0)"),
        (["--gpu", "0", "--backend", "cpu"], "--gpu 0 picks a CUDA device"),
        (["--gpu", "-1"], "out of range (must be >= 0)"),
        (["--scale", "cubic"], "unknown scaler 'cubic' for --scale"),
        (["--frame_cnt", "-1"], "-1 is out of range (must be >= 0)"),
        (["-c", "abc"], "argument -c: invalid integer: 'abc'"),
    ],
)
def test_libvmaf_usage_errors(pair, tmp_path, extra, needle):
    ref, dis = pair
    out = tmp_path / "out.json"
    # -n: no vmaf_v0.6.1 added to a -r/-d command line, so the errors are ADM's own
    proc = run_cli("score", "-r", str(ref), "-d", str(dis), *GEOMETRY, "-n", "-o", str(out), *extra)
    assert needle in one_error_line(proc, 2)
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--aom_ctc", "v6.0"],
            "--aom_ctc v6.0: admcuda computes ADM, VIF, motion and VMAF models, and libvmaf's "
            "AOM CTC preset adds other features (PSNR, SSIM, CIEDE, ...); drop it",
        ),
        (
            ["--nflx_ctc", "v1.0"],
            "--nflx_ctc v1.0: admcuda computes ADM, VIF, motion and VMAF models, and "
            "libvmaf's Netflix CTC preset adds other features (PSNR, SSIM, CAMBI); drop it",
        ),
    ],
)
def test_libvmaf_options_of_other_features_refused_by_name(pair, tmp_path, capsys, extra, message):
    """libvmaf's --aom_ctc and --nflx_ctc: a usage error saying why, before
    anything is read or written (was argparse's bare "unrecognized arguments")."""
    ref, dis = pair
    out = tmp_path / "out.json"
    assert main(["score", "-r", str(ref), "-d", str(dis), *GEOMETRY, "-o", str(out), *extra]) == 2
    assert capsys.readouterr() == ("", f"admcuda: error: {message}\n")
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-r", "R", "D"], "either as REF DIS [DIS ...] or with -r/--reference"),
        (["R", "-d", "D"], "not both"),
        (["-r", "R"], "missing -d/--distorted"),
        (["-d", "D"], "missing -r/--reference"),
        (["-", "-d", "-"], "not both"),
        (["-r", "-", "-d", "-"], "standard input ('-') can feed one input only"),
        (["--example", "-d", "D"], "--example brings its own input; drop -d/--distorted"),
    ],
)
def test_input_forms(pair, tmp_path, args, needle):
    ref, dis = pair
    args = [{"R": str(ref), "D": str(dis)}.get(a, a) for a in args]
    out = tmp_path / "out.json"
    proc = run_cli("score", *args, *GEOMETRY, "-o", str(out))
    assert needle in one_error_line(proc, 2)
    assert not out.exists()


def test_short_flags_n_q_v(pair, tmp_path, capsys):
    ref, dis = pair
    out = tmp_path / "out.json"
    assert (
        main(["score", "-r", str(ref), "-d", str(dis), *GEOMETRY, "-n", "-q", "-o", str(out)]) == 0
    )
    assert capsys.readouterr() == ("", "")
    assert json.loads(out.read_text())["frames"]
    for argv in (["score", "-v"], ["score", "--version"], ["-v"]):
        assert main(argv) == 0
        assert capsys.readouterr().out.strip() == f"admcuda {admcuda.__version__}"


def test_zero_means_what_it_means_to_libvmaf(pair, tmp_path):
    """libvmaf reads --frame_cnt 0 as no limit, --subsample 0 as every frame and
    --threads 0 as no worker threads."""
    ref, dis = pair
    zero, plain = tmp_path / "zero.csv", tmp_path / "plain.csv"
    args = ["score", "-r", str(ref), "-d", str(dis), *GEOMETRY, "--csv"]
    assert main([*args, "--frame_cnt", "0", "--subsample", "0", "--threads", "0",
                 "-o", str(zero)]) == 0  # fmt: skip
    assert main([*args, "-o", str(plain)]) == 0
    assert zero.read_text() == plain.read_text()
    assert len(zero.read_text().splitlines()) == 1 + 3


@pytest.mark.parametrize(
    ("name", "flag", "kind"),
    [
        ("out.txt", [], "xml"),
        ("out", [], "xml"),
        ("out.log", [], "xml"),
        ("out.json", [], "json"),
        ("out.csv", [], "csv"),
        ("out.sub", [], "sub"),
        ("out.txt", ["--json"], "json"),
        ("out.txt", ["--sub"], "sub"),
        ("out.json", ["--xml"], "xml"),
    ],
)
def test_output_format_from_flag_suffix_or_xml(pair, tmp_path, name, flag, kind):
    ref, dis = pair
    out = tmp_path / name
    assert main(["score", "-r", str(ref), "-d", str(dis), *GEOMETRY, "-o", str(out), *flag]) == 0
    text = out.read_text()
    if kind == "xml":
        assert ET.fromstring(text).tag == "VMAF"
    elif kind == "json":
        assert json.loads(text)["frames"]
    elif kind == "csv":
        assert text.startswith("Frame,integer_adm2,")
    else:
        assert text.startswith("{0}{1}frame: 0|integer_adm2: ")


# ---- output layouts against libvmaf's -------------------------------------------------

# libvmaf 3.2.0's own CLI (/work/vmafbuild/libvmaf/build-scalar/tools/vmaf, Netflix/vmaf
# f85a8536, scalar build) on the shipped example pair, 2026-12-01:
#   vmaf -r example_ref_176x144_3f.yuv -d example_dis_176x144_3f.yuv -w 176 -h 144 -p 420
#        -b 8 --feature adm=adm_enhn_gain_limit=1.2 -n -q --subsample 2 {--xml,--csv,--sub}
#        -o OUT
# Values are libvmaf's %.6f; admcuda writes the full double, which rounds to them.
LIBVMAF_XML = """\
<VMAF version="3.2.0">
  <params qualityWidth="176" qualityHeight="144" />
  <fyi fps="5639.10" />
  <frames>
    <frame frameNum="0" integer_adm2_egl_1.2="0.714769" integer_aim_egl_1.2="0.037259" integer_adm3_egl_1.2="0.838755" integer_adm_scale0_egl_1.2="0.667564" integer_adm_scale1_egl_1.2="0.578575" integer_adm_scale2_egl_1.2="0.691319" integer_adm_scale3_egl_1.2="0.791112" />
    <frame frameNum="2" integer_adm2_egl_1.2="0.731473" integer_aim_egl_1.2="0.037194" integer_adm3_egl_1.2="0.847140" integer_adm_scale0_egl_1.2="0.678435" integer_adm_scale1_egl_1.2="0.618950" integer_adm_scale2_egl_1.2="0.703861" integer_adm_scale3_egl_1.2="0.800324" />
  </frames>
  <pooled_metrics>
    <metric name="integer_adm2_egl_1.2" min="0.714769" max="0.731473" mean="0.723121" harmonic_mean="0.723081" />
    <metric name="integer_aim_egl_1.2" min="0.037194" max="0.037259" mean="0.037226" harmonic_mean="0.037226" />
    <metric name="integer_adm3_egl_1.2" min="0.838755" max="0.847140" mean="0.842947" harmonic_mean="0.842938" />
    <metric name="integer_adm_scale0_egl_1.2" min="0.667564" max="0.678435" mean="0.672999" harmonic_mean="0.672982" />
    <metric name="integer_adm_scale1_egl_1.2" min="0.578575" max="0.618950" mean="0.598762" harmonic_mean="0.598508" />
    <metric name="integer_adm_scale2_egl_1.2" min="0.691319" max="0.703861" mean="0.697590" harmonic_mean="0.697567" />
    <metric name="integer_adm_scale3_egl_1.2" min="0.791112" max="0.800324" mean="0.795718" harmonic_mean="0.795706" />
  </pooled_metrics>
  <aggregate_metrics />
</VMAF>
"""  # noqa: E501
LIBVMAF_CSV = """\
Frame,integer_adm2_egl_1.2,integer_aim_egl_1.2,integer_adm3_egl_1.2,integer_adm_scale0_egl_1.2,integer_adm_scale1_egl_1.2,integer_adm_scale2_egl_1.2,integer_adm_scale3_egl_1.2,
0,0.714769,0.037259,0.838755,0.667564,0.578575,0.691319,0.791112,
2,0.731473,0.037194,0.847140,0.678435,0.618950,0.703861,0.800324,
"""  # noqa: E501
LIBVMAF_SUB = """\
{0}{1}frame: 0|integer_adm2_egl_1.2: 0.714769|integer_aim_egl_1.2: 0.037259|integer_adm3_egl_1.2: 0.838755|integer_adm_scale0_egl_1.2: 0.667564|integer_adm_scale1_egl_1.2: 0.578575|integer_adm_scale2_egl_1.2: 0.691319|integer_adm_scale3_egl_1.2: 0.791112|
{2}{3}frame: 2|integer_adm2_egl_1.2: 0.731473|integer_aim_egl_1.2: 0.037194|integer_adm3_egl_1.2: 0.847140|integer_adm_scale0_egl_1.2: 0.678435|integer_adm_scale1_egl_1.2: 0.618950|integer_adm_scale2_egl_1.2: 0.703861|integer_adm_scale3_egl_1.2: 0.800324|
"""  # noqa: E501
_NUMBER = r"-?\d+\.\d+(?:e[-+]?\d+)?"


def _as_libvmaf_prints(text: str, fmt: str) -> str:
    """Our document with every decimal number printed as libvmaf prints it (%.6f), and
    libvmaf's fps where ours is; admcuda's own version attribute is left out (its
    ``version`` is libvmaf's already)."""

    def six(match: re.Match[str]) -> str:
        return f"{float(match.group(0)):.6f}"

    if fmt == "xml":
        text = text.replace(f' admcuda_version="{admcuda.__version__}"', "", 1)
        text = re.sub(rf'(?<==")({_NUMBER})(?=")', six, text)
        return re.sub(r'<fyi fps="[^"]*" />', '<fyi fps="5639.10" />', text)
    if fmt == "csv":
        return re.sub(rf"(?<=,)({_NUMBER})(?=,)", six, text)
    return re.sub(rf"(?<=: )({_NUMBER})(?=\|)", six, text)


def _example_args(*extra: str) -> list[str]:
    return [
        "score", "-r", str(DATA / EXAMPLE.ref), "-d", str(DATA / EXAMPLE.dis), "-w", "176",
        "-h", "144", "-p", "420", "-b", "8", "--feature", "adm=adm_enhn_gain_limit=1.2", "-n",
        "-q", "--subsample", "2", *extra,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("flag", "want"), [("--xml", LIBVMAF_XML), ("--csv", LIBVMAF_CSV), ("--sub", LIBVMAF_SUB)]
)
def test_layout_is_libvmafs(tmp_path, flag, want):
    out = tmp_path / "out"
    assert main(_example_args(flag, "-o", str(out))) == 0
    assert _as_libvmaf_prints(out.read_text(), flag[2:]) == want


def test_json_keys_are_libvmafs(tmp_path):
    out = tmp_path / "out.json"
    assert main(_example_args("--json", "-o", str(out))) == 0
    doc = json.loads(out.read_text())
    root = ET.fromstring(LIBVMAF_XML)
    # libvmaf's keys in its order, admcuda's own version beside libvmaf's
    assert list(doc) == [
        "version", "admcuda_version", "fps", "frames", "pooled_metrics", "aggregate_metrics"
    ]  # fmt: skip
    assert doc["admcuda_version"] == admcuda.__version__ and isinstance(doc["fps"], float)
    # "version" is the libvmaf whose numbers these are, as its own files write it
    libvmaf = json.loads((ROOT / "testdata/libvmaf_outputs/features_debug.json").read_text())
    assert doc["version"] == libvmaf["version"] == root.get("version") == "3.2.0"
    assert doc["aggregate_metrics"] == {}
    want_frames = [dict(f.attrib) for f in root.iter("frame")]
    for frame, want in zip(doc["frames"], want_frames, strict=True):
        assert list(frame) == ["frameNum", "metrics"]
        assert frame["frameNum"] == int(want.pop("frameNum"))
        assert {k: f"{v:.6f}" for k, v in frame["metrics"].items()} == want
        assert list(frame["metrics"]) == list(want)
    want_pooled = {m.attrib.pop("name"): dict(m.attrib) for m in root.iter("metric")}
    got_pooled = {
        name: {k: f"{v:.6f}" for k, v in methods.items()}
        for name, methods in doc["pooled_metrics"].items()
    }
    assert got_pooled == want_pooled
    assert all(list(m) == ["min", "max", "mean", "harmonic_mean"] for m in got_pooled.values())


# ---- ladders --------------------------------------------------------------------------


def _bad_ladder(tmp_path: Path) -> tuple[Path, list[Path]]:
    """ref, and rungs: good a, a missing file, a 40x30 Y4M (the wrong size), good b."""
    ref, a, b = tmp_path / "ref.yuv", tmp_path / "a.yuv", tmp_path / "b.yuv"
    write_related(ref, a, 32, 24, 2)
    write_clip(b, 32, 24, 2, seed=7)
    big_raw = tmp_path / "big_raw.bin"
    write_clip(big_raw, 40, 30, 2, seed=8)
    big = write_y4m(big_raw, tmp_path / "big.y4m", 40, 30, "420", 8)
    big_raw.unlink()
    return ref, [a, tmp_path / "missing.yuv", big, b]


@needs_errors
def test_ladder_survives_a_missing_and_a_wrong_size_rung(tmp_path):
    ref, rungs = _bad_ladder(tmp_path)
    out = tmp_path / "scores"
    out.mkdir()
    proc = run_cli("score", str(ref), *map(str, rungs), *GEOMETRY, "--json", "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    scores = [line.split() for line in proc.stdout.splitlines()]  # the rungs that scored
    assert [(s[0], s[1]) for s in scores] == [(str(r), "integer_adm2:") for r in rungs[::3]]
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and all(line.startswith("admcuda: error: ") for line in lines)
    assert "missing.yuv" in lines[0] and "not found" in lines[0]
    assert "big.y4m" in lines[1] and "40x30" in lines[1]
    assert sorted(p.name for p in out.iterdir()) == ["a.json", "b.json"]
    for rung in (rungs[0], rungs[3]):
        single = tmp_path / f"single_{rung.stem}.json"
        assert main(["score", str(ref), str(rung), *GEOMETRY, "-o", str(single)]) == 0
        got = json.loads((out / f"{rung.stem}.json").read_text())
        assert got["frames"] == json.loads(single.read_text())["frames"]


@needs_errors
def test_ladder_with_a_corrupt_rung(tmp_path, capsys):
    ref, good, bad = tmp_path / "r.yuv", tmp_path / "good.yuv", tmp_path / "bad.yuv"
    write_related(ref, good, 20, 18, 2, bits=10)
    lumas = write_clip(bad, 20, 18, 2, seed=3, bits=10)
    lumas[1][0, 0] = 4000  # does not fit 10 bits
    chroma = np.zeros(2 * 9 * 10, np.dtype("<u2")).tobytes()
    bad.write_bytes(b"".join(y.tobytes() + chroma for y in lumas))
    args = ["score", str(ref), str(bad), str(good), "-w", "20", "-h", "18", "-b", "10",
            "-o", str(tmp_path / "{index}.csv")]  # fmt: skip
    assert main(args) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "too large for 10 bits" in err[0] and "bad.yuv" in err[0]
    assert not (tmp_path / "1.csv").exists()
    assert (tmp_path / "2.csv").read_text().startswith("Frame,integer_adm2,")


@needs_errors
def test_ladder_summary_is_a_line_per_rung(tmp_path):
    ref, rungs = _bad_ladder(tmp_path)
    proc = run_cli("score", str(ref), *map(str, rungs), *GEOMETRY)
    assert proc.returncode == 1
    assert len(proc.stderr.splitlines()) == 2
    head, *lines = proc.stdout.splitlines()
    assert head.startswith(f"admcuda {admcuda.__version__}, backend ")
    assert f"reference {ref}" in head
    assert len(lines) == 2
    for line, rung in zip(lines, (rungs[0], rungs[3]), strict=True):
        doc = tmp_path / f"{rung.stem}.json"
        assert main(["score", str(ref), str(rung), *GEOMETRY, "-o", str(doc)]) == 0
        pooled = json.loads(doc.read_text())["pooled_metrics"]["integer_adm2"]
        assert line.split()[:3] == [str(rung), "2", "frames"]
        assert (
            f"integer_adm2 mean {pooled['mean']:.6f} harmonic_mean "
            f"{pooled['harmonic_mean']:.6f} min {pooled['min']:.6f} p5 "
        ) in line
        assert line.split()[-10::2] == ["p5", "median", "p95", "max", "stdev"]


def test_ladder_summary_without_failures(pair, tmp_path, capsys):
    ref, dis = pair
    other = tmp_path / "other.yuv"
    write_clip(other, 32, 24, 2, seed=4)
    assert main(["score", str(ref), str(dis), str(other), *GEOMETRY]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    assert "32x24 420 8-bit" in head
    assert [line.split()[:3] for line in lines] == [[str(dis), "3", "frames"],
                                                     [str(other), "2", "frames"]]  # fmt: skip


def test_single_input_failure_still_raises(tmp_path):
    ref = tmp_path / "ref.yuv"
    write_clip(ref, 32, 24, 2)
    out = tmp_path / "out.json"
    proc = run_cli("score", str(ref), str(tmp_path / "missing.yuv"), *GEOMETRY, "-o", str(out))
    assert "not found" in one_error_line(proc, 1)
    assert not out.exists()


# ---- what goes to run_ladder ----------------------------------------------------------


@pytest.fixture
def fake_ladder(monkeypatch):
    """Replace run_ladder with one that records its arguments and scores nothing real."""
    calls: list[dict] = []

    def fake(ref, dis, **kwargs):
        calls.append({"ref": ref, "dis": list(dis), **kwargs})
        frame = {name: 0.5 for name in NON_DEBUG_BASE_NAMES}
        fields = dict(
            frames=[[dict(frame)] for _ in dis], frame_numbers=[[0] for _ in dis], width=32,
            height=24, pixel_format="420", bitdepth=8, ref=str(ref), dis=[str(d) for d in dis],
            opts=kwargs["opts"],
        )  # fmt: skip
        if HAS_ERRORS:
            fields["errors"] = [None for _ in dis]
        return admcuda.ladder.LadderRun(**fields)

    monkeypatch.setattr(cli, "run_ladder", fake)
    return calls


def test_new_flags_pass_through(fake_ladder, tmp_path):
    out = tmp_path / "o.json"
    assert main(["score", "r.yuv", "d.yuv", *GEOMETRY, "-o", str(out)]) == 0
    plain = fake_ladder.pop()
    assert not {"ignore_name", "scale", "device"} & set(plain)
    assert main(["score", "r.yuv", "d.yuv", *GEOMETRY, "--ignore-name", "--scale", "bicubic",
                 "--gpu", "1", "-o", str(out)]) == 0  # fmt: skip
    call = fake_ladder.pop()
    assert call["ignore_name"] is True and call["scale"] == "bicubic" and call["device"] == 1
    assert main(["score", "r.yuv", "d.yuv", *GEOMETRY, "--ignore_name", "-o", str(out)]) == 0
    assert fake_ladder.pop()["ignore_name"] is True


@needs_errors
def test_cli_keyword_arguments_exist_in_run_ladder():
    """Whatever the CLI may pass must be a parameter of run_ladder."""
    for name in ("ignore_name", "scale", "device"):
        assert _accepts(admcuda.ladder.run_ladder, name), name


def test_libvmaf_flags_reach_run_ladder(fake_ladder, tmp_path):
    assert main(["score", "-r", "r.yuv", "-d", "a.yuv", "-d", "b.yuv", *GEOMETRY,
                 "--frame_cnt", "5", "--frame_skip_ref", "1", "--frame_skip_dist", "2",
                 "--subsample", "3", "--threads", "4", "-o", str(tmp_path / "{name}.json"),
                 "-n", "--feature", "adm=adm_enhn_gain_limit=1.2:debug=true"]) == 0  # fmt: skip
    call = fake_ladder.pop()
    assert call["ref"] == "r.yuv" and call["dis"] == ["a.yuv", "b.yuv"]
    assert (call["frame_cnt"], call["frame_skip_ref"], call["frame_skip_dist"]) == (5, 1, 2)
    assert call["subsample"] == 3 and call["threads"] == 4
    assert call["opts"] == AdmOptions(adm_enhn_gain_limit=1.2, debug=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


def test_stdin_dash_reaches_the_input_layer(fake_ladder, tmp_path):
    assert main(["score", "-", "d.yuv", *GEOMETRY, "-o", str(tmp_path / "o.json")]) == 0
    assert fake_ladder.pop()["ref"] == "-"
    assert main(["score", "-r", "r.yuv", "-d", "-", "-d", "x.yuv", *GEOMETRY,
                 "-o", str(tmp_path / "{name}.csv")]) == 0  # fmt: skip
    assert fake_ladder.pop()["dis"] == ["-", "x.yuv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.json", "stdin.csv", "x.csv"]


def test_backend_flag_reaches_run_ladder(fake_ladder, tmp_path):
    assert main(["score", "r.yuv", "d.yuv", *GEOMETRY, "--backend", "cpu", "--csv"]) == 0
    assert fake_ladder.pop()["backend"] == "cpu"


@pytest.mark.skipif(
    not _input_layer_takes("ignore_name"), reason="the input layer does not take ignore_name yet"
)
def test_ignore_name_end_to_end(tmp_path):
    ref, dis = tmp_path / "ref_64x64.yuv", tmp_path / "dis_64x64.yuv"
    write_related(ref, dis, 32, 24, 2)
    args = ["score", str(ref), str(dis), *GEOMETRY, "--csv"]
    assert run_cli(*args).returncode == 1
    assert run_cli(*args, "--ignore-name").returncode == 0


@pytest.mark.skipif(not _input_layer_takes("scale"), reason="the input layer cannot scale yet")
def test_scale_end_to_end(tmp_path):
    ref, dis = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    write_related(ref, dis, 32, 24, 2)
    big = encode(dis, tmp_path / "big.y4m", 32, 24, "420", 8, ["-vf", "scale=64:48"])
    args = ["score", str(ref), str(big), *GEOMETRY, "--csv"]
    assert "64x48" in one_error_line(run_cli(*args), 1)
    proc = run_cli(*args, "--scale", "bicubic")
    assert proc.returncode == 0, proc.stderr
    assert len(list(csv.reader(io.StringIO(proc.stdout)))) == 1 + 2


# ---- admcuda map reads inputs as score does --------------------------------------------


def _map(tmp_path: Path, name: str, *args: str) -> np.ndarray:
    from admcuda.cli.map import main as map_main

    png, npy = tmp_path / f"{name}.png", tmp_path / f"{name}.npy"
    assert map_main([*args, "--frame", "1", "-o", str(png), "--npy", str(npy)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return np.load(npy)


def test_map_reads_y4m_and_encoded_video(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    ref, dis = DATA / EXAMPLE.ref, DATA / EXAMPLE.dis
    size = ["-w", "176", "-h", "144"]
    raw = _map(tmp_path, "raw", str(ref), str(dis), *size)
    ref_y4m = write_y4m(ref, tmp_path / "ref.y4m", 176, 144, "420", 8)
    dis_y4m = write_y4m(dis, tmp_path / "dis.y4m", 176, 144, "420", 8)
    dis_mkv = encode(dis, tmp_path / "dis.mkv", 176, 144, "420", 8, FFV1)
    assert raw.sum() > 0
    np.testing.assert_array_equal(_map(tmp_path, "y4m", str(ref_y4m), str(dis_y4m)), raw)
    np.testing.assert_array_equal(_map(tmp_path, "mkv", str(ref_y4m), str(dis_mkv)), raw)
    np.testing.assert_array_equal(_map(tmp_path, "mix", str(ref), str(dis_mkv), *size), raw)
    assert capsys.readouterr().err == ""


def test_map_of_a_10_bit_y4m(tmp_path):
    pytest.importorskip("matplotlib")
    ref, dis = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    write_related(ref, dis, 48, 40, 2, bits=10)
    raw = _map(tmp_path, "raw", str(ref), str(dis), "-w", "48", "-h", "40", "-b", "10")
    ref_y4m = write_y4m(ref, tmp_path / "ref.y4m", 48, 40, "420", 10)
    np.testing.assert_array_equal(_map(tmp_path, "y4m", str(ref_y4m), str(dis)), raw)


@pytest.mark.parametrize(
    ("make_args", "needle", "code"),
    [
        (lambda r, d, v: [r, d], "is raw YUV: give --width and --height", 1),
        (lambda r, d, v: [r, v, "-w", "64", "-h", "64"], "64x64", 1),
        (lambda r, d, v: [r, v, "-w", "176", "-h", "144", "--frame", "3"], "out of range", 1),
        (lambda r, d, v: [r, d, "-w", "176", "-h", "144", "--feature", "motion"], "ADM alone", 2),
    ],
)
def test_map_errors(tmp_path, capsys, make_args, needle, code):
    pytest.importorskip("matplotlib")
    from admcuda.cli.map import main as map_main

    # Names without a size in them, so that no check of the name comes first.
    ref, dis = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    ref.write_bytes((DATA / EXAMPLE.ref).read_bytes())
    dis.write_bytes((DATA / EXAMPLE.dis).read_bytes())
    video = encode(dis, tmp_path / "dis.mkv", 176, 144, "420", 8, FFV1)
    out = tmp_path / "m.png"
    assert map_main([*make_args(str(ref), str(dis), str(video)), "-o", str(out)]) == code
    err = capsys.readouterr().err
    assert err.startswith("admcuda: error: ") and err.count("\n") == 1 and needle in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dis.mkv", "dis.yuv", "ref.yuv"]
