// libvmaf's integer motion (reference/motion.py) on the GPU: the sum of absolute values
// of the filtered difference of two reference planes (motion_score_pipeline), one
// uint64 SAD a frame.
//
// Preceded by a preamble generated from reference/motion.py (admcuda/backends/cuda/
// kernels.py): MOTION_TAPS (the five Q16 taps), MOTION_THREADS.
//
// A block scores one row of one frame (grid (h, frames)). It walks the row in chunks of
// MOTION_THREADS columns: each thread computes the vertical pass of the difference at one
// column of the chunk and its halo (y_conv_diff, rounded by (rnd, shift), int32), then
// the horizontal pass of its own column from those (x_conv_row_sad) and adds its absolute
// value to a uint32 row sum, which wraps as libvmaf's row_sad does; the row's sum is then
// added to the frame's uint64 SAD. Modular sums, so the order is free.
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
    __shared__ i32 ys[MOTION_THREADS + 4];
    __shared__ u32 part[MOTION_THREADS / 32];
    const int i = blockIdx.x;
    const int f = blockIdx.y;
    const i64 plane = (i64)h * w;
    const T* __restrict__ now = cur + (i64)f * plane;
    const T* __restrict__ before =
        f - back >= 0 ? cur + (i64)(f - back) * plane : keep + (i64)(2 + f - back) * plane;
    int rows[5];
#pragma unroll
    for (int k = 0; k < 5; ++k) rows[k] = motion_mirror(i - 2 + k, h);
    u32 row_sad = 0;
    for (int j0 = 0; j0 < w; j0 += MOTION_THREADS) {
        for (int t = threadIdx.x; t < MOTION_THREADS + 4; t += MOTION_THREADS) {
            const int c = j0 - 2 + t;
            if (c < w + 2) {
                const int cm = motion_mirror(c, w);
                ACC acc = 0;
#pragma unroll
                for (int k = 0; k < 5; ++k) {
                    const i64 at = (i64)rows[k] * w + cm;
                    const i32 d = (i32)__ldg(before + at) - (i32)__ldg(now + at);
                    acc += (ACC)MOTION_TAP[k] * (ACC)d;
                }
                ys[t] = (i32)((acc + (ACC)rnd) >> shift);
            }
        }
        __syncthreads();
        const int j = j0 + threadIdx.x;
        if (j < w) {
            i64 acc = 0;
#pragma unroll
            for (int k = 0; k < 5; ++k) acc += (i64)MOTION_TAP[k] * (i64)ys[threadIdx.x + k];
            const i32 v = (i32)((acc + 32768) >> 16);
            row_sad += v < 0 ? 0u - (u32)v : (u32)v;
        }
        __syncthreads();
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) row_sad += __shfl_down_sync(0xffffffffu, row_sad, d);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = row_sad;
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 s = 0;
        for (int k = 0; k < MOTION_THREADS / 32; ++k) s += part[k];
        if (s) atomicAdd((unsigned long long*)(sad + f), (unsigned long long)s);
    }
}
