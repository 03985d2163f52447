"""``admcuda batch`` on one GPU (dask-cuda) against ``admcuda score`` one process after
another: 64 pairs of 30 1080p frames (symbolic links to one raw pair on /dev/shm, so each
pair is its own task), then 8 of them scored by separate ``admcuda score`` processes,
whose JSON frames are compared with the batch's. Prints pairs/s of both.

Run from the repository root on a GPU machine with dask-cuda installed:
``python3 testdata/bench_batch_gpu.py``.
"""

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.getcwd())
from admcuda.cli.bench import _frames_host, _write_yuv420

root = Path("/dev/shm/daskrun")
root.mkdir(parents=True, exist_ok=True)
W, H, N, PAIRS, SEQ = 1920, 1080, 30, 64, 8
ref_h, dis_h = _frames_host(8, W, H, 8, seed=11)
_write_yuv420(root / "ref.yuv", ref_h, N)
_write_yuv420(root / "dis.yuv", dis_h, N)
rows = []
for k in range(PAIRS):
    r, d = root / f"ref{k:02d}.yuv", root / f"dis{k:02d}.yuv"
    for link, target in ((r, "ref.yuv"), (d, "dis.yuv")):
        if not link.exists():
            link.symlink_to(target)
    rows.append({"ref": str(r), "dis": str(d), "name": f"p{k:02d}", "width": W, "height": H})
with open(root / "jobs.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
t0 = time.time()
p = subprocess.run(
    [
        sys.executable,
        "-m",
        "admcuda",
        "batch",
        str(root / "jobs.csv"),
        "-o",
        str(root / "res"),
        "--backend",
        "cuda",
        "-q",
    ],
    capture_output=True,
    text=True,
)
t_batch = time.time() - t0
print("batch rc", p.returncode, p.stderr[-800:])
seq_dir = root / "seq"
seq_dir.mkdir(exist_ok=True)
t0 = time.time()
for k in range(SEQ):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "admcuda",
            "score",
            rows[k]["ref"],
            rows[k]["dis"],
            "-w",
            str(W),
            "-h",
            str(H),
            "--backend",
            "cuda",
            "-q",
            "--json",
            "-o",
            str(seq_dir / f"p{k:02d}.json"),
        ],
        check=True,
    )
t_seq = time.time() - t0
same = 0
for k in range(SEQ):
    a = json.load(open(root / "res" / f"p{k:02d}.json"))
    b = json.load(open(seq_dir / f"p{k:02d}.json"))
    same += a["frames"] == b["frames"]
summ = list(csv.DictReader(open(root / "res" / "summary.csv")))
done = sum(r["status"] == "done" for r in summ)
print(
    f"dask-cuda batch: {PAIRS} pairs x {N} frames 1080p in {t_batch:.1f} s = "
    f"{PAIRS / t_batch:.2f} pairs/s ({done} done)"
)
print(f"admcuda score one after another: {SEQ} pairs in {t_seq:.1f} s = {SEQ / t_seq:.2f} pairs/s")
print(
    f"batch JSON frames == score JSON frames: {same}/{SEQ}; "
    f"ratio {(PAIRS / t_batch) / (SEQ / t_seq):.2f}x"
)
