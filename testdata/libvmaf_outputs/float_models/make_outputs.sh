#!/bin/sh
# Regenerate libvmaf's float model output files of this folder (see README.md).
# Usage: make_outputs.sh VMAF_TOOL SHARED_NETFLIX_DIR
# VMAF_TOOL: libvmaf 3.2.0's `vmaf` tool built outside the project with -Denable_float=true,
# -Denable_asm=false and -Dbuilt_in_models=true (the vmaf_float_* models are built in with
# its float features), and --cpumask 4294967295 masks off any other SIMD. Its float ADM
# divides through the CPU's rcpss: the files here are those of an AMD EPYC CPU.
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
run float_v061 "$P3" --model version=vmaf_float_v0.6.1
run float_and_integer "$P3" --model version=vmaf_float_v0.6.1 --model version=vmaf_v0.6.1:name=vmaf_int
run float_b_v063_10bit "$P10" --model version=vmaf_float_b_v0.6.3
run float_4k_and_neg_egl "$P48" --model version=vmaf_float_4k_v0.6.1 --model version=vmaf_float_v0.6.1neg:name=neg:float_adm.adm_enhn_gain_limit=1.2
run float_v061_features_after "$P3" --model version=vmaf_float_v0.6.1 --feature float_vif=debug=true --feature float_adm=debug=true --feature float_motion=motion_force_zero=true
run float_v061_subsample3 "$P48" --model version=vmaf_float_v0.6.1 --subsample 3
