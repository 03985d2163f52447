#!/bin/sh
# Regenerate libvmaf's float_ansnr output files of this folder (see README.md).
# Usage: make_outputs.sh VMAF_TOOL SHARED_NETFLIX_DIR
# VMAF_TOOL: libvmaf 3.2.0's `vmaf` tool built outside the project with -Denable_float=true
# and -Denable_asm=false (float_ansnr is one of its float features; its filters have no
# SIMD code), and --cpumask 4294967295 masks off any other SIMD. The synthetic pair
# flat8_420 is written by testdata/make_float_ansnr_goldens.py into a temporary folder.
set -eu
VMAF=$1
N=$2
OUT=$(dirname "$0")
cd "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 -c "import importlib.util, sys
spec = importlib.util.spec_from_file_location('m', '../../make_float_ansnr_goldens.py')
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
m.write_pair('flat8_420', sys.argv[1])" "$TMP"
P3="-r $N/src01_hrc00_576x324_3f.yuv -d $N/src01_hrc01_576x324_3f.yuv -w 576 -h 324 -p 420 -b 8"
P10="-r $N/src01_hrc00_576x324.yuv420p10le.yuv -d $N/src01_hrc01_576x324.yuv420p10le.yuv -w 576 -h 324 -p 420 -b 10"
P48="-r $N/ref_160x90_48f.yuv -d $N/dis_160x90_48f.yuv -w 160 -h 90 -p 420 -b 8"
PFLAT="-r $TMP/flat8_420_ref.yuv -d $TMP/flat8_420_dis.yuv -w 20 -h 18 -p 420 -b 8"
run() {  # run NAME PAIR ARGS...: one file per format
    name=$1
    pair=$2
    shift 2
    for fmt in json xml csv; do
        # shellcheck disable=SC2086
        "$VMAF" $pair --cpumask 4294967295 -q "$@" "--$fmt" -o "$name.$fmt"
    done
}
run float_ansnr_model "$P3" --model version=vmaf_v0.6.1 --feature float_ansnr
run float_ansnr_10bit "$P10" -n --feature float_ansnr
run float_ansnr_psnr_motion_subsample3 "$P48" -n --feature psnr --feature float_ansnr --feature motion --subsample 3
run float_ansnr_speed_temporal_float_psnr "$P3" -n --feature float_ansnr --feature speed_temporal --feature float_psnr
run float_ansnr_flat "$PFLAT" -n --feature float_ansnr
