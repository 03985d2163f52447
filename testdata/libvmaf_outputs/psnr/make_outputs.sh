#!/bin/sh
# Regenerate libvmaf's psnr output files of this folder (see README.md).
# Usage: make_outputs.sh VMAF_TOOL SHARED_NETFLIX_DIR
# VMAF_TOOL: libvmaf 3.2.0's `vmaf` tool built outside the project; its integer psnr has no
# SIMD path, and --cpumask 4294967295 masks off any other SIMD.
set -eu
VMAF=$1
N=$2
OUT=$(dirname "$0")
cd "$OUT"
P3="-r $N/src01_hrc00_576x324_3f.yuv -d $N/src01_hrc01_576x324_3f.yuv -w 576 -h 324 -p 420 -b 8"
P48="-r $N/ref_160x90_48f.yuv -d $N/dis_160x90_48f.yuv -w 160 -h 90 -p 420 -b 8"
run() {  # run NAME PAIR ARGS...: one file per format
    name=$1
    pair=$2
    shift 2
    for fmt in json xml csv; do
        # shellcheck disable=SC2086
        "$VMAF" $pair --cpumask 4294967295 -q "$@" "--$fmt" -o "$name.$fmt"
    done
}
run psnr_default "$P3" -n --feature psnr
run psnr_model_all "$P3" --model version=vmaf_v0.6.1 --feature psnr=enable_mse=true:enable_apsnr=true
run psnr_luma_apsnr "$P3" -n --feature psnr=enable_chroma=false:enable_apsnr=true
run psnr_subsample3 "$P48" -n --feature psnr=enable_apsnr=true:enable_mse=true --subsample 3
run psnr_motion_subsample3 "$P48" -n --feature motion --feature psnr=enable_apsnr=true --subsample 3
