#!/bin/sh
# Regenerate the libvmaf output files of this folder (see README.md).
# Usage: make_outputs.sh VMAF_TOOL SHARED_NETFLIX_DIR
# VMAF_TOOL: libvmaf 3.2.0's `vmaf` tool built outside the project (meson -Denable_tools=true
# -Denable_asm=false); --cpumask 4294967295 masks off any SIMD it has anyway.
set -eu
VMAF=$1
N=$2
OUT=$(dirname "$0")
cd "$OUT"
PAIR="-r $N/ref_160x90_48f.yuv -d $N/dis_160x90_48f.yuv -w 160 -h 90 -p 420 -b 8"
run() {  # run NAME ARGS...: its JSON file
    name=$1
    shift
    # shellcheck disable=SC2086
    "$VMAF" $PAIR --cpumask 4294967295 -q "$@" --json -o "$name.json"
}
run frame_cnt_10 --model version=vmaf_v0.6.1 --frame_cnt 10
run skip_ref_3_cnt_12 --model version=vmaf_v0.6.1 --frame_skip_ref 3 --frame_cnt 12
run skip_both_5_subsample_3 --model version=vmaf_v0.6.1 --frame_skip_ref 5 --frame_skip_dist 5 --subsample 3
run skip_dist_2_subsample_4_cnt_30 -n --feature motion=motion_five_frame_window=true --feature vif --frame_skip_dist 2 --subsample 4 --frame_cnt 30
run subsample_5_two_models --model version=vmaf_v0.6.1 --model version=vmaf_v0.6.1neg:name=vmaf_neg --subsample 5
