// libvmaf's integer motion (reference/motion.py) on the GPU: the sum of absolute values
// of the filtered difference of two reference planes (motion_score_pipeline), one
// uint64 SAD a frame.
//
// Preceded by a preamble generated from reference/motion.py (admcuda/backends/cuda/
// kernels.py): MOTION_TAPS (the five Q16 taps), MOTION_THREADS (a block) and MOTION_ROWS
// (the rows a block scores).
//
// A block scores MOTION_ROWS rows of one frame (grid (row groups, frames)), walking them
// in tiles of MOTION_THREADS columns. For each column of a tile and its halo a thread
// reads the difference of the two planes down the rows' span once and keeps the vertical
// pass (y_conv_diff, rounded by (rnd, shift), int32) of every row in shared memory; then
// each thread filters its column horizontally for every row (x_conv_row_sad) and adds
// the absolute values to its share of each row's sum. Row sums are uint32 and wrap as
// libvmaf's row_sad does (modular, so the order of the shares is free); the block adds
// its rows' sums to the frame's uint64 SAD.
//
// The plane compared with frame f of the batch is frame f - back of the batch, or, before
// the batch's start, plane 2 + f - back of `keep` (the last two reference planes of the
// batches before: [0] the one before last, [1] the last).

typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

__constant__ i32 MOTION_TAP[5] = MOTION_TAPS;

// libvmaf's one-step mirror about the edge sample.
__device__ __forceinline__ int motion_mirror(int p, int n) {
    return p < 0 ? -p : (p >= n ? 2 * n - p - 2 : p);
}

template <typename T, typename ACC>
__global__ void __launch_bounds__(MOTION_THREADS)
    motion_sad(const T* __restrict__ cur, const T* __restrict__ keep, int back, int h, int w,
               i64 rnd, int shift, u64* __restrict__ sad) {
    __shared__ i32 ys[MOTION_ROWS][MOTION_THREADS + 4];
    __shared__ u32 part[MOTION_ROWS][MOTION_THREADS];
    const int tid = threadIdx.x;
    const int i0 = blockIdx.x * MOTION_ROWS;
    const int f = blockIdx.y;
    const int rows = min(MOTION_ROWS, h - i0);
    const i64 plane = (i64)h * w;
    const T* __restrict__ now = cur + (i64)f * plane;
    const T* __restrict__ before =
        f - back >= 0 ? cur + (i64)(f - back) * plane : keep + (i64)(2 + f - back) * plane;
    u32 row_sad[MOTION_ROWS];
#pragma unroll
    for (int r = 0; r < MOTION_ROWS; ++r) row_sad[r] = 0;
    for (int j0 = 0; j0 < w; j0 += MOTION_THREADS) {
        for (int t = tid; t < MOTION_THREADS + 4; t += MOTION_THREADS) {
            const int c = j0 - 2 + t;
            if (c >= w + 2) continue;
            const int cm = motion_mirror(c, w);
            i32 d[MOTION_ROWS + 4];
#pragma unroll
            for (int k = 0; k < MOTION_ROWS + 4; ++k) {
                d[k] = 0;
                if (k < rows + 4) {
                    const i64 at = (i64)motion_mirror(i0 - 2 + k, h) * w + cm;
                    d[k] = (i32)__ldg(before + at) - (i32)__ldg(now + at);
                }
            }
#pragma unroll
            for (int r = 0; r < MOTION_ROWS; ++r) {
                const ACC acc = (ACC)MOTION_TAP[0] * ((ACC)d[r] + (ACC)d[r + 4]) +
                                (ACC)MOTION_TAP[1] * ((ACC)d[r + 1] + (ACC)d[r + 3]) +
                                (ACC)MOTION_TAP[2] * (ACC)d[r + 2];
                ys[r][t] = (i32)((acc + (ACC)rnd) >> shift);
            }
        }
        __syncthreads();
        if (j0 + tid < w) {
#pragma unroll
            for (int r = 0; r < MOTION_ROWS; ++r) {
                const i64 acc = (i64)MOTION_TAP[0] * ((i64)ys[r][tid] + ys[r][tid + 4]) +
                                (i64)MOTION_TAP[1] * ((i64)ys[r][tid + 1] + ys[r][tid + 3]) +
                                (i64)MOTION_TAP[2] * ys[r][tid + 2];
                const i32 v = (i32)((acc + 32768) >> 16);
                row_sad[r] += v < 0 ? 0u - (u32)v : (u32)v;
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < MOTION_ROWS; ++r) part[r][tid] = row_sad[r];
    __syncthreads();
    if (tid < rows) {
        u32 s = 0;  // the row's sum, wrapping at 32 bits
        for (int k = 0; k < MOTION_THREADS; ++k) s += part[tid][k];
        part[tid][0] = s;
    }
    __syncthreads();
    if (tid == 0) {
        u64 total = 0;
        for (int r = 0; r < rows; ++r) total += part[r][0];
        if (total) atomicAdd((unsigned long long*)(sad + f), (unsigned long long)total);
    }
}
