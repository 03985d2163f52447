#!/bin/sh
# Regenerate libvmaf's psnr_hvs output files of this folder (see README.md).
# Usage: make_outputs.sh VMAF_TOOL SHARED_NETFLIX_DIR
# VMAF_TOOL: libvmaf 3.2.0's `vmaf` tool built outside the project; psnr_hvs has no SIMD
# path, and --cpumask 4294967295 masks off any other SIMD.
set -eu
VMAF=$1
N=$2
OUT=$(dirname "$0")
cd "$OUT"
P3="-r $N/src01_hrc00_576x324_3f.yuv -d $N/src01_hrc01_576x324_3f.yuv -w 576 -h 324 -p 420 -b 8"
P10="-r $N/src01_hrc00_576x324.yuv420p10le.yuv -d $N/src01_hrc01_576x324.yuv420p10le.yuv -w 576 -h 324 -p 420 -b 10"
P48="-r $N/ref_160x90_48f.yuv -d $N/dis_160x90_48f.yuv -w 160 -h 90 -p 420 -b 8"
SAME="-r $N/src01_hrc00_576x324_3f.yuv -d $N/src01_hrc00_576x324_3f.yuv -w 576 -h 324 -p 420 -b 8"
run() {  # run NAME PAIR ARGS...: one file per format
    name=$1
    pair=$2
    shift 2
    for fmt in json xml csv; do
        # shellcheck disable=SC2086
        "$VMAF" $pair --cpumask 4294967295 -q "$@" "--$fmt" -o "$name.$fmt"
    done
}
run psnr_hvs_model "$P3" --model version=vmaf_v0.6.1 --feature psnr_hvs
run psnr_hvs_10bit "$P10" -n --feature psnr_hvs
run psnr_hvs_psnr_motion_subsample3 "$P48" -n --feature psnr --feature psnr_hvs --feature motion --subsample 3
run psnr_hvs_same "$SAME" -n --feature psnr_hvs
run psnr_hvs_ciede "$P3" -n --feature psnr_hvs --feature ciede
