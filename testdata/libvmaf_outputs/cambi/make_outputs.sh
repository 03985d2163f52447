#!/bin/sh
# Regenerate libvmaf's cambi output files of this folder (see README.md).
# Usage: make_outputs.sh VMAF_TOOL SHARED_NETFLIX_DIR
# VMAF_TOOL: libvmaf 3.2.0's `vmaf` tool built outside the project; --cpumask 4294967295
# masks off every SIMD path, so each extractor runs its scalar C.
set -eu
VMAF=$1
N=$2
OUT=$(dirname "$0")
cd "$OUT"
P8="-r $N/src01_hrc00_576x324_3f.yuv -d $N/src01_hrc01_576x324_3f.yuv -w 576 -h 324 -p 420 -b 8"
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
run cambi_model "$P8" --model version=vmaf_v0.6.1 --feature cambi=full_ref=true
run cambi_options "$P8" -n --feature cambi=window_size=33:topk=0.5:eotf=pq:cambi_max_val=0.3
run cambi_10bit "$P10" -n --feature cambi --feature psnr
