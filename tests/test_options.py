"""ADM option table, parsing, ranges, the libvmaf refusal rule and output naming."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import NETFLIX
from hypothesis import given
from hypothesis import strategies as st

from admcuda.errors import AdmError
from admcuda.options import (
    NON_DEBUG_BASE_NAMES,
    OPTIONS,
    OUTPUT_BASE_NAMES,
    AdmOptions,
    feature_names,
    feature_suffix,
    lookup_option,
)

# libvmaf 3.2.0, src/feature/integer_adm.c options[] and adm_options.h defaults:
# (name, alias, type, default, min, max, FEATURE_PARAM)
LIBVMAF_TABLE = [
    ("debug", None, "bool", False, None, None, False),
    ("adm_csf_scale", "scf", "double", 1.0, 0.0, 50.0, True),
    ("adm_csf_diag_scale", "scfd", "double", 1.0, 0.0, 50.0, True),
    ("adm_dlm_weight", "dlmw", "double", 0.5, 0.0, 1.0, True),
    ("adm_enhn_gain_limit", "egl", "double", 100.0, 1.0, 100.0, True),
    ("adm_norm_view_dist", "nvd", "double", 3.0, 0.75, 24.0, True),
    ("adm_ref_display_height", "rdh", "int", 1080, 1, 4320, True),
    ("adm_csf_mode", "csf", "int", 0, 0, 3, True),
    ("adm_noise_weight", "nw", "double", 0.03125, 0.0, 1500.0, True),
    ("adm_skip_aim", None, "bool", False, None, None, False),
    ("adm_skip_scale0", "ssz", "bool", False, None, None, True),
    ("adm_min_val", "min", "double", 0.0, 0.0, 1.0, True),
]

# Output names written by the libvmaf 3.2.0 CLI (/work/ext/libvmaf/build/tools/vmaf),
# `vmaf -r src01_hrc00_576x324_3f.yuv -d src01_hrc01_576x324_3f.yuv -w 576 -h 324 -p 420
# -b 8 --no_prediction --feature adm=<OPTIONS> --json -o out.json`, 2026-11-29.
# Each entry: libvmaf option string -> the name integer_adm2 was written under.
LIBVMAF_NAMES = {
    "": "integer_adm2",
    "adm_enhn_gain_limit=1.2": "integer_adm2_egl_1.2",
    "adm_enhn_gain_limit=1.0": "integer_adm2_egl_1",
    "adm_enhn_gain_limit=100": "integer_adm2",
    "adm_enhn_gain_limit=1.23456789": "integer_adm2_egl_1.23457",
    "adm_norm_view_dist=3.000": "integer_adm2",
    "adm_noise_weight=0.0000123": "integer_adm2_nw_1.23e-05",
    "adm_noise_weight=1234.5678": "integer_adm2_nw_1234.57",
    "adm_skip_aim=true": "integer_adm2",
    "adm_skip_scale0=false": "integer_adm2",
    "adm_skip_scale0=true:adm_enhn_gain_limit=1.5:adm_norm_view_dist=4": (
        "integer_adm2_egl_1.5_nvd_4_ssz"
    ),
    "adm_csf_scale=0.5:adm_csf_diag_scale=2.25:adm_dlm_weight=0.7:adm_ref_display_height=2160"
    ":adm_csf_mode=1:adm_noise_weight=0.1:adm_min_val=0.01": (
        "integer_adm2_scfd_2.25_csf_1_scf_0.5_dlmw_0.7_min_0.01_nw_0.1_rdh_2160"
    ),
}


def _mapping(option_string: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in option_string.split(":") if kv)


def test_table_matches_libvmaf():
    got = [(s.name, s.alias, s.type, s.default, s.min, s.max, s.feature_param) for s in OPTIONS]
    assert got == LIBVMAF_TABLE


def test_dataclass_fields_follow_table():
    fields = dataclasses.fields(AdmOptions)
    assert [f.name for f in fields] == [s.name for s in OPTIONS]
    defaults = AdmOptions()
    for spec in OPTIONS:
        assert getattr(defaults, spec.name) == spec.default
        assert (
            type(getattr(defaults, spec.name))
            is {"bool": bool, "int": int, "double": float}[spec.type]
        )


def test_frozen_and_keyword_only():
    opts = AdmOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.adm_csf_mode = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        AdmOptions(True)  # type: ignore[misc]


@pytest.mark.parametrize("spec", OPTIONS, ids=lambda s: s.name)
def test_name_and_alias_give_same_value(spec):
    value = "true" if spec.type == "bool" else f"{spec.max:g}"
    by_name = AdmOptions.from_mapping({spec.name: value})
    if spec.alias:
        assert AdmOptions.from_mapping({spec.alias: value}) == by_name
    assert lookup_option(spec.name) is spec


def test_parse_strings_like_libvmaf():
    opts = AdmOptions.from_mapping(
        {"egl": "1.2", "rdh": "2160", "csf": "3", "ssz": "true", "adm_skip_aim": "false"}
    )
    assert opts.adm_enhn_gain_limit == 1.2
    assert opts.adm_ref_display_height == 2160
    assert opts.adm_csf_mode == 3
    assert opts.adm_skip_scale0 is True
    assert opts.adm_skip_aim is False


def test_native_values_accepted():
    opts = AdmOptions.from_mapping({"nvd": 4, "rdh": 2160, "debug": True, "min": 0.25})
    assert opts.adm_norm_view_dist == 4.0 and isinstance(opts.adm_norm_view_dist, float)
    assert opts.debug is True
    assert opts.adm_min_val == 0.25


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("egl", "0.5", ["adm_enhn_gain_limit", "egl", "[1, 100]", "0.5"]),
        ("adm_enhn_gain_limit", "101", ["adm_enhn_gain_limit", "egl", "[1, 100]"]),
        ("csf", "4", ["adm_csf_mode", "csf", "[0, 3]"]),
        ("rdh", "0", ["adm_ref_display_height", "rdh", "[1, 4320]"]),
        ("nw", "-1", ["adm_noise_weight", "nw", "[0, 1500]"]),
        ("dlmw", "1.01", ["adm_dlm_weight", "dlmw", "[0, 1]"]),
        ("nvd", "0.5", ["adm_norm_view_dist", "nvd", "[0.75, 24]"]),
        ("min", "nan", ["adm_min_val", "min"]),
        ("scf", "inf", ["adm_csf_scale", "scf"]),
    ],
)
def test_out_of_range_names_option_range_and_alias(key, value, words):
    with pytest.raises(AdmError) as info:
        AdmOptions.from_mapping({key: value})
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("ssz", "1"),
        ("ssz", "True"),
        ("debug", "yes"),
        ("rdh", "2000.7"),
        ("rdh", "1e3"),
        ("rdh", ""),
        ("egl", "1.2x"),
        ("egl", "abc"),
        ("egl", ""),
        ("csf", 1.0),
        ("csf", True),
        ("egl", True),
        ("ssz", 1),
    ],
)
def test_bad_values_refused(key, value):
    with pytest.raises(AdmError, match=lookup_option(key).name):
        AdmOptions.from_mapping({key: value})


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("csf", "9" * 400, "[0, 3], got a 400-digit number"),
        ("csf", "0" * 10 + "1" * 5000, "[0, 3], got a 5000-digit number"),  # past int()'s limit
        ("csf", 10**400, "[0, 3], got a 401-digit integer"),
        ("egl", 10**400, "[1, 100], got a 401-digit integer"),  # beyond every double
        ("rdh", -(10**5000), "[1, 4320], got a 5001-digit integer"),
    ],
    ids=["text", "text-past-int-limit", "int", "int-beyond-double", "int-past-str-limit"],
)
def test_numbers_too_long_are_out_of_range(key, value, words):
    with pytest.raises(AdmError) as info:
        AdmOptions.from_mapping({key: value})
    assert str(info.value).endswith(words)


def test_unknown_option_suggests():
    with pytest.raises(AdmError, match=r"unknown ADM option 'eg'.*did you mean 'egl'"):
        AdmOptions.from_mapping({"eg": "1.2"})
    with pytest.raises(AdmError, match="unknown ADM option 'EGL'"):
        AdmOptions.from_mapping({"EGL": "1.2"})


def test_name_and_alias_together_refused():
    with pytest.raises(AdmError, match="given twice"):
        AdmOptions.from_mapping({"egl": "1.2", "adm_enhn_gain_limit": "1.3"})


@pytest.mark.parametrize(
    "mapping",
    [
        {"nvd": "1"},
        {"rdh": "1079"},
        {"nvd": "0.75", "rdh": "4319"},
        {"nvd": "2.999"},
    ],
)
def test_libvmaf_refusal_rule(mapping):
    with pytest.raises(AdmError, match=r"refuses.*3240.*-EINVAL") as info:
        AdmOptions.from_mapping(mapping)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("mapping", [{"nvd": "0.75", "rdh": "4320"}, {"nvd": "6", "rdh": "540"}])
def test_refusal_boundary_accepted(mapping):
    AdmOptions.from_mapping(mapping)


def test_constructor_validates_too():
    with pytest.raises(AdmError, match="adm_csf_mode"):
        AdmOptions(adm_csf_mode=7)
    with pytest.raises(AdmError, match="refuses"):
        AdmOptions(adm_norm_view_dist=1.0)
    with pytest.raises(AdmError, match="refuses"):
        AdmOptions().replace(adm_ref_display_height=100)


@given(
    st.floats(min_value=1.0, max_value=100.0, allow_nan=False),
    st.floats(min_value=3.0, max_value=24.0, allow_nan=False),
)
def test_double_text_is_read_as_libvmafs_dictionary_keeps_it(egl, nvd):
    # libvmaf's feature dictionary keeps strtof(text) printed with %g (src/dict.c), and the
    # option parser reads that: the value is the float32 nearest the text, to 6 digits.
    opts = AdmOptions.from_mapping({"egl": repr(egl), "nvd": repr(nvd)})
    assert opts.adm_enhn_gain_limit == float(f"{np.float32(egl):g}")
    assert opts.adm_norm_view_dist == float(f"{np.float32(nvd):g}")
    printed = {"egl": f"{opts.adm_enhn_gain_limit:g}", "nvd": f"{opts.adm_norm_view_dist:g}"}
    again = AdmOptions.from_mapping(printed)
    assert again == opts  # what the output names print reads back as the same options


@pytest.mark.parametrize(("text", "value", "name"), [
    ("4.1234567", 4.12346, "integer_adm2_nvd_4.12346"),
    ("3.000000001", 3.0, "integer_adm2"),  # libvmaf computes the default here
    ("2.9999999", 3.0, "integer_adm2"),  # and here: not below its 3 * 1080 limit
    ("3.0000004", 3.0, "integer_adm2"),
    ("3.00001", 3.00001, "integer_adm2_nvd_3.00001"),
])  # fmt: skip
def test_view_distance_text_as_libvmaf_computes_with_it(text, value, name):
    opts = AdmOptions.from_mapping({"adm_norm_view_dist": text})
    assert opts.adm_norm_view_dist == value
    assert feature_names(opts)["integer_adm2"] == name


@pytest.mark.parametrize(("key", "text"), [
    ("nw", "-0"), ("nw", "-0.0"), ("nw", "-1e-50"), ("adm_min_val", "-0"), ("rdh", "-0"),
    ("csf", "-0"),
])  # fmt: skip
def test_negative_zero_is_refused_as_libvmaf_refuses_it(key, text):
    # Kept as "-0" by its dictionary, then refused by opt.c (a zero not written "0").
    with pytest.raises(AdmError, match="libvmaf refuses .* reads as -0.*write 0") as info:
        AdmOptions.from_mapping({key: text})
    assert "\n" not in str(info.value)
    with pytest.raises(AdmError, match="reads as -0"):
        AdmOptions(adm_noise_weight=-0.0)
    assert AdmOptions.from_mapping({key: "+0" if key != "rdh" else "+1080"}) is not None


def test_integer_options_written_as_whole_decimals_as_libvmaf_reads_them():
    # Its dictionary keeps 1080.0 as "1080"; 1080.5 would be "1080.5", which its atoi
    # truncates: refused here rather than scored as 1080.
    assert AdmOptions.from_mapping({"rdh": "1080.0"}) == AdmOptions()
    assert AdmOptions.from_mapping({"rdh": "2.16e3"}).adm_ref_display_height == 2160
    with pytest.raises(AdmError, match="expects an integer .* got '1080.5'"):
        AdmOptions.from_mapping({"rdh": "1080.5"})


def test_gain_limit_text_and_python_floats_are_normalised_alike():
    assert AdmOptions.from_mapping({"egl": "1.23456789"}).adm_enhn_gain_limit == 1.23457
    assert AdmOptions(adm_enhn_gain_limit=1.23456789).adm_enhn_gain_limit == 1.23457
    assert AdmOptions(adm_norm_view_dist=4.1234567) == AdmOptions.from_mapping({"nvd": "4.12346"})
    assert AdmOptions(adm_noise_weight=0.1).adm_noise_weight == 0.1  # %g gives back 0.1


@pytest.mark.parametrize(("option_string", "expected"), list(LIBVMAF_NAMES.items()))
def test_feature_names_match_libvmaf_cli(option_string, expected):
    opts = AdmOptions.from_mapping(_mapping(option_string))
    names = feature_names(opts)
    assert names["integer_adm2"] == expected
    suffix = expected.removeprefix("integer_adm2")
    assert feature_suffix(opts) == suffix
    assert list(names) == list(OUTPUT_BASE_NAMES)
    assert all(names[b] == b + suffix for b in OUTPUT_BASE_NAMES)


def test_debug_and_skip_aim_do_not_rename():
    opts = AdmOptions(debug=True, adm_skip_aim=True)
    assert feature_names(opts) == {b: b for b in OUTPUT_BASE_NAMES}


def test_output_name_order():
    assert NON_DEBUG_BASE_NAMES == OUTPUT_BASE_NAMES[:7]
    assert len(OUTPUT_BASE_NAMES) == 18 == len(set(OUTPUT_BASE_NAMES))


def _vmaf_cli() -> str | None:
    return os.environ.get("VMAF_CLI") or shutil.which("vmaf")


@pytest.mark.skipif(
    _vmaf_cli() is None or not NETFLIX.is_dir(),
    reason="needs a libvmaf CLI (VMAF_CLI or vmaf on PATH) and ../shared/netflix",
)
@pytest.mark.parametrize(
    "option_string",
    ["adm_enhn_gain_limit=1.2:debug=true", "adm_skip_scale0=true:adm_noise_weight=0.5"],
)
def test_feature_names_against_live_cli(tmp_path, option_string):
    out = tmp_path / "out.json"
    subprocess.run(
        [
            _vmaf_cli(),
            "-r", str(NETFLIX / "src01_hrc00_576x324_3f.yuv"),
            "-d", str(NETFLIX / "src01_hrc01_576x324_3f.yuv"),
            "-w", "576", "-h", "324", "-p", "420", "-b", "8",
            "--no_prediction", "--frame_cnt", "1", "-q",
            "--feature", f"adm={option_string}", "--json", "-o", str(out),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    written = list(json.loads(out.read_text())["frames"][0]["metrics"])
    opts = AdmOptions.from_mapping(_mapping(option_string))
    wanted = OUTPUT_BASE_NAMES if opts.debug else NON_DEBUG_BASE_NAMES
    names = feature_names(opts)
    assert written == [names[b] for b in wanted]
