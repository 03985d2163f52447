#!/bin/sh
# Regenerate libvmaf's speed_temporal output files of this folder (see README.md).
# Usage: make_outputs.sh VMAF_TOOL SHARED_NETFLIX_DIR
# VMAF_TOOL: libvmaf 3.2.0's `vmaf` tool built outside the project with -Denable_asm=false
# (speed_temporal's covariance sums then take the scalar C kernel) and -Denable_float=true
# (for float_motion beside it); --cpumask 4294967295 masks off any other SIMD.
set -eu
VMAF=$1
N=$2
OUT=$(dirname "$0")
cd "$OUT"
P3="-r $N/src01_hrc00_576x324_3f.yuv -d $N/src01_hrc01_576x324_3f.yuv -w 576 -h 324 -p 420 -b 8"
P10="-r $N/src01_hrc00_576x324.yuv420p10le.yuv -d $N/src01_hrc01_576x324.yuv420p10le.yuv -w 576 -h 324 -p 420 -b 10"
run() {  # run NAME PAIR ARGS...: one file per format
    name=$1
    pair=$2
    shift 2
    for fmt in json xml csv; do
        # shellcheck disable=SC2086
        "$VMAF" $pair --cpumask 4294967295 -q "$@" "--$fmt" -o "$name.$fmt"
    done
}
run speed_temporal_model "$P3" --model version=vmaf_v0.6.1 --feature speed_temporal
run speed_temporal_10bit_options "$P10" -n --feature speed_temporal=speed_use_ref_diff=true:speed_kernelscale=1.5:speed_max_val=20
run speed_temporal_two_float_motion "$P3" -n --feature speed_temporal --feature speed_temporal=speed_prescale=0.5:speed_prescale_method=bilinear --feature float_motion
run speed_temporal_psnr_motion_subsample2 "$P3" -n --feature psnr --feature speed_temporal --feature motion --subsample 2
