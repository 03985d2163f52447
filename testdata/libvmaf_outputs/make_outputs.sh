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
PAIR="-r $N/src01_hrc00_576x324_3f.yuv -d $N/src01_hrc01_576x324_3f.yuv -w 576 -h 324 -p 420 -b 8"
run() {  # run NAME ARGS...: one file per format
    name=$1
    shift
    for fmt in json xml csv; do
        # shellcheck disable=SC2086
        "$VMAF" $PAIR --cpumask 4294967295 -q "$@" "--$fmt" -o "$name.$fmt"
    done
}
run model_v061 --model version=vmaf_v0.6.1
run model_neg --model version=vmaf_v0.6.1neg
run model_two --model version=vmaf_v0.6.1 --model version=vmaf_v0.6.1neg:name=vmaf_neg
run model_4k_and_v061 --model version=vmaf_4k_v0.6.1:name=vmaf_4k --model version=vmaf_v0.6.1
run model_name_foo --model version=vmaf_v0.6.1:name=foo
run model_no_prediction -n --model version=vmaf_v0.6.1
run features_vif_motion -n --feature vif --feature motion
run features_vif_motion_default_model --feature vif --feature motion
run features_motion_force_zero -n --feature motion=motion_force_zero=true
run features_motion_force_zero_default_model --feature motion=motion_force_zero=true
run features_debug -n --feature adm=debug=true --feature vif=debug=true --feature motion=debug=true
run model_feature_adm_debug --model version=vmaf_v0.6.1 --feature adm=debug=true
run model_feature_vif_egl --model version=vmaf_v0.6.1 --feature vif=vif_enhn_gain_limit=1.0
run model_v061_subsample2 --model version=vmaf_v0.6.1 --subsample 2
run model_b_v063 --model version=vmaf_b_v0.6.3
