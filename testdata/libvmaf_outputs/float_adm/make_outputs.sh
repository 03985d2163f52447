#!/bin/sh
# Regenerate libvmaf's float_adm output files of this folder (see README.md).
# Usage: make_outputs.sh VMAF_TOOL SHARED_NETFLIX_DIR
# VMAF_TOOL: libvmaf 3.2.0's `vmaf` tool built outside the project with -Denable_float=true
# and -Denable_asm=false (float_adm is one of its float features), and --cpumask 4294967295
# masks off any other SIMD. Its divisions go through the CPU's rcpss: the files here are
# those of an AMD EPYC CPU.
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
run float_adm_model "$P3" --model version=vmaf_v0.6.1 --feature float_adm
run float_adm_10bit "$P10" -n --feature float_adm
run float_adm_egl1_debug "$P3" -n --feature float_adm=debug=true:adm_enhn_gain_limit=1.0
run float_adm_psnr_motion_subsample3 "$P48" -n --feature psnr --feature float_adm --feature motion --subsample 3
run float_adm_float_ansnr_csf1 "$P3" -n --feature float_ansnr --feature float_adm=adm_csf_mode=1
