// Stage 1, reference.dwt2.dwt2 and reference.dwt2.dwt2_s123: the Daubechies-2 DWT
// (libvmaf adm_dwt2_8/_16, their _lo variants and adm_dwt2_s123_combined).
//
// One thread computes one output position of all four bands of one frame (grid.z =
// frame): the four source rows and columns come from the same index rule as
// reference.dwt2.src_indices, the vertical pass runs on the 4x4 source patch and the
// horizontal pass on the resulting 2x4 row buffer, all in registers.

// Source index of tap k for output i of a dimension of n samples (half outputs).
// Output 0 reads 1, 0, 1, 2; the last two outputs reflect past the end. When half <= 2
// (an input of 3 or 4 samples, only ever at scale 3) libvmaf's tail rule also covers
// output 0, whose first tap stays -1: the caller decides what that out-of-range tap reads.
__device__ __forceinline__ int dwt_src_index(int i, int k, int n, int half) {
    int idx = 2 * i + k - 1;
    if (i >= half - 2) {
        if (idx >= n) idx = 2 * n - idx - 1;
    } else if (i == 0) {
        idx = k == 0 ? 1 : k - 1;
    }
    return idx;
}

__device__ __forceinline__ void dwt_indices(int i, int n, int half, int* idx) {
#pragma unroll
    for (int k = 0; k < 4; ++k) idx[k] = dwt_src_index(i, k, n, half);
}

// The two 4-tap filters in the accumulator type A (u32 or i32).
template <typename A>
__device__ __forceinline__ A fir_lo(const A* x) {
    return (A)ADM_DWT_LO0 * x[0] + (A)ADM_DWT_LO1 * x[1] + (A)ADM_DWT_LO2 * x[2] + (A)ADM_DWT_LO3 * x[3];
}
template <typename A>
__device__ __forceinline__ A fir_hi(const A* x) {
    return (A)ADM_DWT_HI0 * x[0] + (A)ADM_DWT_HI1 * x[1] + (A)ADM_DWT_HI2 * x[2] + (A)ADM_DWT_HI3 * x[3];
}
// int64 sums of int32 samples times the filters, one 32x32->64 multiply per tap.
__device__ __forceinline__ i64 fir_lo64(const i32* x) {
    return mul_wide(ADM_DWT_LO0, x[0]) + mul_wide(ADM_DWT_LO1, x[1]) + mul_wide(ADM_DWT_LO2, x[2]) +
           mul_wide(ADM_DWT_LO3, x[3]);
}
__device__ __forceinline__ i64 fir_hi64(const i32* x) {
    return mul_wide(ADM_DWT_HI0, x[0]) + mul_wide(ADM_DWT_HI1, x[1]) + mul_wide(ADM_DWT_HI2, x[2]) +
           mul_wide(ADM_DWT_HI3, x[3]);
}

// Scale 0 from unsigned pixels (T = u8 or u16). The vertical pass recentres by
// DWT_LO_SUM * vp_rnd and rounds by the bit depth into int16; it runs in uint32 and
// wraps like libvmaf's int32 at 16 bits: the kept bits 16..31 are exact modulo 2**32.
// The horizontal pass fits int32 and rounds by (32768, 16).
// out: [frame][4][hh][ww] int16; lo_only writes the a plane alone (adm_skip_scale0).
template <typename T>
__global__ void adm_dwt2_s0(const T* __restrict__ src, i16* __restrict__ out, int h, int w,
                            int hh, int ww, i32 vp_rnd, int vp_shift, i32 lo_offset, i32 hi_offset,
                            int lo_only) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int f = blockIdx.z;
    if (i >= hh || j >= ww) return;
    const T* __restrict__ img = src + (i64)f * h * w;

    // x[c][k]: source sample of tap column c, tap row k. Away from the borders the taps
    // are the 4x4 block at (2i - 1, 2j - 1), read from one pointer with constant offsets.
    u32 x[4][4];
    if (i > 0 && i < hh - 2 && j > 0 && j < ww - 2) {
        const T* __restrict__ p = img + (i64)(2 * i - 1) * w + (2 * j - 1);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
#pragma unroll
            for (int c = 0; c < 4; ++c) x[c][k] = (u32)__ldg(p + c);
            p += w;
        }
    } else {
        int iy[4], ix[4];
        dwt_indices(i, h, hh, iy);
        dwt_indices(j, w, ww, ix);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
#pragma unroll
            for (int c = 0; c < 4; ++c) x[c][k] = (u32)__ldg(img + (i64)iy[k] * w + ix[c]);
        }
    }

    // Row buffer values are int16 (libvmaf's tmplo/tmphi), held in int32 for the
    // horizontal pass.
    i32 lo[4], hi[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        const u32 l = fir_lo(x[c]) - (u32)lo_offset + (u32)vp_rnd;
        const u32 g = fir_hi(x[c]) - (u32)hi_offset + (u32)vp_rnd;
        lo[c] = (i16)((i32)l >> vp_shift);
        hi[c] = (i16)((i32)g >> vp_shift);
    }

    const i64 plane = (i64)hh * ww;
    i16* __restrict__ o = out + (i64)f * 4 * plane + (i64)i * ww + j;
    o[0] = (i16)((fir_lo(lo) + ADM_DWT0_HP_RND) >> ADM_DWT0_HP_SHIFT);
    if (lo_only) return;
    o[plane] = (i16)((fir_hi(lo) + ADM_DWT0_HP_RND) >> ADM_DWT0_HP_SHIFT);
    o[2 * plane] = (i16)((fir_lo(hi) + ADM_DWT0_HP_RND) >> ADM_DWT0_HP_SHIFT);
    o[3 * plane] = (i16)((fir_hi(hi) + ADM_DWT0_HP_RND) >> ADM_DWT0_HP_SHIFT);
}

// What libvmaf reads for source row -1 at column c (reference.adm._int16_rows_as_int32):
// the int16 row m1 stored before the band, read as little-endian int32 pairs, zero past
// its m1_len samples; zero without m1.
__device__ __forceinline__ i32 row_m1(const i16* __restrict__ m1, int m1_len, int c) {
    if (!m1) return 0;
    const u32 lo = 2 * c < m1_len ? (u32)(u16)__ldg(m1 + 2 * c) : 0u;
    const u32 hi = 2 * c + 1 < m1_len ? (u32)(u16)__ldg(m1 + 2 * c + 1) : 0u;
    return (i32)(lo | (hi << 16));
}

// Vertical pass of column c into the int32 row-buffer values (lo, hi); row -1 reads m1.
template <typename T>
__device__ __forceinline__ void dwt_vertical(const T* __restrict__ img, int w, const int* iy, int c,
                                             const i16* __restrict__ m1, int m1_len, i64 vp_rnd,
                                             int vp_shift, i32* lo, i32* hi) {
    i32 x[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) x[k] = iy[k] < 0 ? row_m1(m1, m1_len, c) : (i32)__ldg(img + (i64)iy[k] * w + c);
    *lo = (i32)((fir_lo64(x) + vp_rnd) >> vp_shift);
    *hi = (i32)((fir_hi64(x) + vp_rnd) >> vp_shift);
}

// Border outputs of the scale 1..3 DWT: the general index rule, and the out-of-range
// taps of a 3- or 4-sample input side (frames 17..32 wide or high) as reference.dwt2
// reads them: zeros in mode 0 (dwt2_s123); modes 1 and 2 are the reference and distorted
// halves of dwt2_s123_pair. Row -1 reads m1 in mode 1 (zeros in 0 and 2). Column -1 of
// the row buffers: mode 1 reads (0, own tmplo[w-1]); mode 2 reads (the reference's
// tmphi[w-1], own tmplo[w-1]), the reference recomputed from `other` (its source plane)
// with m1 as its row -1.
template <typename T>
__device__ __forceinline__ void dwt_border(const T* __restrict__ img, int h, int w, int hh, int ww,
                                           int i, int j, i64 vp_rnd, int vp_shift, int mode,
                                           const i16* __restrict__ m1, int m1_len,
                                           const T* __restrict__ other_img, i32* lo, i32* hi) {
    const i16* __restrict__ own_m1 = mode == 1 ? m1 : (const i16*)0;
    int iy[4], ix[4];
    dwt_indices(i, h, hh, iy);
    dwt_indices(j, w, ww, ix);
    for (int c = 0; c < 4; ++c) {
        if (ix[c] >= 0) {
            dwt_vertical(img, w, iy, ix[c], own_m1, m1_len, vp_rnd, vp_shift, &lo[c], &hi[c]);
            continue;
        }
        i32 l = 0, g = 0, unused;
        if (mode != 0) dwt_vertical(img, w, iy, w - 1, own_m1, m1_len, vp_rnd, vp_shift, &g, &unused);
        if (mode == 2) dwt_vertical(other_img, w, iy, w - 1, m1, m1_len, vp_rnd, vp_shift, &unused, &l);
        lo[c] = l;
        hi[c] = g;
    }
}

// Scales 1..3 from the previous level's approximation plane (T = i16 after scale 0,
// i32 after 1 and 2). Both passes accumulate in int64 and truncate to int32 after the
// per-scale rounding shift. `mode`, m1 and other: see dwt_border.
//
// src: plane of frame f at src + f * src_fstride, h x w, rows of w samples; m1 and
// other likewise. out: [frame][4][hh][ww] int32.
template <typename T>
__global__ void adm_dwt2_s123(const T* __restrict__ src, i64 src_fstride, i32* __restrict__ out,
                              int h, int w, int hh, int ww, i64 vp_rnd, int vp_shift, i64 hp_rnd,
                              int hp_shift, int mode, const i16* __restrict__ m1, i64 m1_fstride,
                              int m1_len, const T* __restrict__ other, i64 other_fstride) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int f = blockIdx.z;
    if (i >= hh || j >= ww) return;
    const T* __restrict__ img = src + (i64)f * src_fstride;

    i32 lo[4], hi[4];
    if (i > 0 && i < hh - 2 && j > 0 && j < ww - 2) {
        // Away from the borders: the 4x4 block at (2i - 1, 2j - 1), constant offsets.
        const T* __restrict__ p = img + (i64)(2 * i - 1) * w + (2 * j - 1);
        i32 x[4][4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
#pragma unroll
            for (int c = 0; c < 4; ++c) x[c][k] = (i32)__ldg(p + c);
            p += w;
        }
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            lo[c] = (i32)((fir_lo64(x[c]) + vp_rnd) >> vp_shift);
            hi[c] = (i32)((fir_hi64(x[c]) + vp_rnd) >> vp_shift);
        }
    } else {
        dwt_border(img, h, w, hh, ww, i, j, vp_rnd, vp_shift, mode,
                   m1 ? m1 + (i64)f * m1_fstride : m1, m1_len,
                   other ? other + (i64)f * other_fstride : other, lo, hi);
    }

    const i64 plane = (i64)hh * ww;
    i32* __restrict__ o = out + (i64)f * 4 * plane + (i64)i * ww + j;
    o[0] = (i32)((fir_lo64(lo) + hp_rnd) >> hp_shift);
    o[plane] = (i32)((fir_hi64(lo) + hp_rnd) >> hp_shift);
    o[2 * plane] = (i32)((fir_lo64(hi) + hp_rnd) >> hp_shift);
    o[3 * plane] = (i32)((fir_hi64(hi) + hp_rnd) >> hp_shift);
}
