#!/bin/sh
# Regenerate libvmaf's float_vif output files of this folder (see README.md).
# Usage: make_outputs.sh VMAF_TOOL SHARED_NETFLIX_DIR
# VMAF_TOOL: libvmaf 3.2.0's `vmaf` tool built outside the project with -Denable_float=true
# and -Denable_asm=false (float_vif is one of its float features), and --cpumask 4294967295
# masks off any SIMD (the scalar C path of vif_tools.c's filters).
set -eu
VMAF=$1
N=$2
OUT=$(dirname "$0")
cd "$OUT"
P3="-r $N/src01_hrc00_576x324_3f.yuv -d $N/src01_hrc01_576x324_3f.yuv -w 576 -h 324 -p 420 -b 8"
P10="-r $N/src01_hrc00_576x324.yuv420p10le.yuv -d $N/src01_hrc01_576x324.yuv420p10le.yuv -w 576 -h 324 -p 420 -b 10"
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
run float_vif_model "$P3" --model version=vmaf_v0.6.1 --feature float_vif
run float_vif_10bit_debug "$P10" -n --feature float_vif=debug=true
run float_vif_options "$P3" -n --feature float_vif=vif_enhn_gain_limit=1.5:vif_kernelscale=1.5:vif_skip_scale0=true:debug=true
run float_vif_prescale_bicubic "$P48" -n --feature float_vif=vif_prescale=2:vif_prescale_method=bicubic
run float_vif_psnr_motion_subsample3 "$P48" -n --feature psnr --feature float_vif --feature motion --subsample 3
run float_vif_two_with_vif_float_ansnr "$P3" -n --feature float_ansnr --feature float_vif --feature vif --feature float_vif=vif_enhn_gain_limit=1
