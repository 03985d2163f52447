// Stage 1, reference.dwt2.dwt2 and reference.dwt2.dwt2_s123: the Daubechies-2 DWT
// (libvmaf adm_dwt2_8/_16, their _lo variants and adm_dwt2_s123_combined).
//
// A thread computes a 2x2 block of output positions of all four bands of one frame
// (grid.z = frame): the source rows and columns come from the same index rule as
// reference.dwt2.src_indices, the vertical pass runs on the source patch and the
// horizontal pass on the resulting row buffer, all in registers.

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

// The six source indices a thread's outputs i and i + 1 read (window positions 0..3 are
// output i's taps, 2..5 output i + 1's), by the same rule as dwt_src_index where
// half > 2: position 0 of output 0 reflects to 1, indices past the end reflect back.
// Indices only an output past the end would read are clamped into the side.
__device__ __forceinline__ void dwt_window(int i, int n, int* idx) {
#pragma unroll
    for (int p = 0; p < 6; ++p) {
        int x = (i == 0 && p == 0) ? 1 : 2 * i - 1 + p;
        if (x >= n) x = 2 * n - x - 1;
        idx[p] = imin32(imax32(x, 0), n - 1);
    }
}

// The window away from the borders: source rows (or columns) 2i - 1 .. 2i + 4.
__device__ __forceinline__ void dwt_consecutive(int i, int* idx) {
#pragma unroll
    for (int p = 0; p < 6; ++p) idx[p] = 2 * i - 1 + p;
}

// Whether every thread of the warp that has outputs sits away from the borders. The
// whole warp votes: a thread without outputs returns only after the vote.
__device__ __forceinline__ bool warp_inner(bool valid, bool inner) {
    return __all_sync(0xffffffffu, inner || !valid);
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

struct Dwt0 {
    u32 vp_rnd;
    int vp_shift;
    u32 lo_offset;
    u32 hi_offset;
};

// Vertical pass of one source column (taps x[0..3]) into the int16 row-buffer values
// (libvmaf's tmplo/tmphi), held in int32 for the horizontal pass.
__device__ __forceinline__ void dwt0_vertical(const u32* x, const Dwt0& k, i32* lo, i32* hi) {
    *lo = (i16)((i32)(fir_lo(x) - k.lo_offset + k.vp_rnd) >> k.vp_shift);
    *hi = (i16)((i32)(fir_hi(x) - k.hi_offset + k.vp_rnd) >> k.vp_shift);
}

// Horizontal pass of four row-buffer columns into the four bands of one output.
__device__ __forceinline__ void dwt0_store(i16* __restrict__ o, i64 plane, const i32* lo,
                                           const i32* hi, int lo_only) {
    o[0] = (i16)((fir_lo(lo) + ADM_DWT0_HP_RND) >> ADM_DWT0_HP_SHIFT);
    if (lo_only) return;
    o[plane] = (i16)((fir_hi(lo) + ADM_DWT0_HP_RND) >> ADM_DWT0_HP_SHIFT);
    o[2 * plane] = (i16)((fir_lo(hi) + ADM_DWT0_HP_RND) >> ADM_DWT0_HP_SHIFT);
    o[3 * plane] = (i16)((fir_hi(hi) + ADM_DWT0_HP_RND) >> ADM_DWT0_HP_SHIFT);
}

// One output position anywhere, taps by the general index rule (the borders).
template <typename T>
__device__ void dwt0_one(const T* __restrict__ img, i16* __restrict__ out, int h, int w, int hh,
                         int ww, int i, int j, const Dwt0& k, int lo_only) {
    int iy[4], ix[4];
    dwt_indices(i, h, hh, iy);
    dwt_indices(j, w, ww, ix);
    i32 lo[4], hi[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        u32 x[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) x[r] = (u32)__ldg(img + (i64)iy[r] * w + ix[c]);
        dwt0_vertical(x, k, &lo[c], &hi[c]);
    }
    dwt0_store(out + (i64)i * ww + j, (i64)hh * ww, lo, hi, lo_only);
}

// The 2x2 outputs at (i, j) from the 6x6 source block whose rows and columns are ry and
// cx: the vertical filter of each of its columns is computed once per output row and
// shared by the two outputs of that row, and the block is loaded once for both rows.
// Outputs past hh or ww are not stored. P is the level's arithmetic: its sample type A,
// vertical(x, lo, hi) of four taps and store(o, plane, lo, hi) of four row-buffer columns.
template <typename T, typename O, typename P>
__device__ __forceinline__ void dwt_block(const T* __restrict__ img, O* __restrict__ fo, int w,
                                          int hh, int ww, int i, int j, const int* ry,
                                          const int* cx, const P& pass) {
    const i64 plane = (i64)hh * ww;
    i32 lo[2][6], hi[2][6];
#pragma unroll
    for (int c = 0; c < 6; ++c) {
        typename P::A x[6];
#pragma unroll
        for (int r = 0; r < 6; ++r) x[r] = (typename P::A)__ldg(img + (i64)ry[r] * w + cx[c]);
        pass.vertical(x, &lo[0][c], &hi[0][c]);
        pass.vertical(x + 2, &lo[1][c], &hi[1][c]);
    }
#pragma unroll
    for (int di = 0; di < 2; ++di) {
#pragma unroll
        for (int dj = 0; dj < 2; ++dj) {
            if (i + di < hh && j + dj < ww) {
                pass.store(fo + (i64)(i + di) * ww + j + dj, plane, &lo[di][2 * dj],
                           &hi[di][2 * dj]);
            }
        }
    }
}

// Scale 0's arithmetic for dwt_block.
struct Dwt0Pass {
    typedef u32 A;
    Dwt0 k;
    int lo_only;
    __device__ __forceinline__ void vertical(const u32* x, i32* lo, i32* hi) const {
        dwt0_vertical(x, k, lo, hi);
    }
    __device__ __forceinline__ void store(i16* __restrict__ o, i64 plane, const i32* lo,
                                          const i32* hi) const {
        dwt0_store(o, plane, lo, hi, lo_only);
    }
};

// One source row of the block as loaded: the sample before, the aligned word(s) of four
// samples, the sample after; sample c of the row's six (0..5) taken out by dwt0_sample.
struct Dwt0Row {
    u32 left;
    uint2 mid;  // u8: mid.x holds the four samples; u16: mid.x and mid.y two each
    u32 right;
};

template <typename T>
__device__ __forceinline__ Dwt0Row dwt0_row(const T* __restrict__ row) {
    Dwt0Row r;
    r.left = __ldg(row - 1);
    if (sizeof(T) == 1) {
        r.mid.x = __ldg((const u32*)row);
        r.mid.y = 0;
    } else {
        r.mid = __ldg((const uint2*)row);
    }
    r.right = __ldg(row + 4);
    return r;
}

template <typename T>
__device__ __forceinline__ u32 dwt0_sample(const Dwt0Row& r, int c) {
    if (c == 0) return r.left;
    if (c == 5) return r.right;
    if (sizeof(T) == 1) return (r.mid.x >> (8 * (c - 1))) & 0xffu;
    const u32 v = c < 3 ? r.mid.x : r.mid.y;
    return (c & 1) ? v & 0xffffu : v >> 16;
}

__device__ __forceinline__ u32 pack16(i16 lo, i16 hi) { return (u32)(u16)lo | ((u32)(u16)hi << 16); }

// dwt_block for a warp away from the borders where the source rows and the bands are
// aligned (the launcher's `words`: w a multiple of 4, both bases 4-sample aligned). The
// block's columns 2j - 1 .. 2j + 4 are then one sample, an aligned word of four samples
// (j is even) and one sample: three loads a row instead of six. The two outputs of a row
// are adjacent int16 in each band, stored as one 32-bit word (ww = w / 2 is even).
template <typename T>
__device__ __forceinline__ void dwt0_block_words(const T* __restrict__ img, i16* __restrict__ fo,
                                                 int w, int hh, int ww, int i, int j,
                                                 const Dwt0& k, int lo_only) {
    const i64 plane = (i64)hh * ww;
    Dwt0Row rows[6];
#pragma unroll
    for (int r = 0; r < 6; ++r) rows[r] = dwt0_row(img + (i64)(2 * i - 1 + r) * w + 2 * j);
    i32 lo[2][6], hi[2][6];
#pragma unroll
    for (int c = 0; c < 6; ++c) {
        u32 x[6];
#pragma unroll
        for (int r = 0; r < 6; ++r) x[r] = dwt0_sample<T>(rows[r], c);
        dwt0_vertical(x, k, &lo[0][c], &hi[0][c]);
        dwt0_vertical(x + 2, k, &lo[1][c], &hi[1][c]);
    }
#pragma unroll
    for (int di = 0; di < 2; ++di) {
        i16 b0[4], b1[4];
        dwt0_store(b0, 1, lo[di], hi[di], 0);
        dwt0_store(b1, 1, lo[di] + 2, hi[di] + 2, 0);
        u32* __restrict__ o = (u32*)(fo + (i64)(i + di) * ww + j);
        o[0] = pack16(b0[0], b1[0]);
        if (lo_only) continue;
        o[plane / 2] = pack16(b0[1], b1[1]);
        o[plane] = pack16(b0[2], b1[2]);
        o[3 * plane / 2] = pack16(b0[3], b1[3]);
    }
}

// One thread computes the 2x2 outputs at (2 * ty, 2 * tx) of all four bands of one frame
// (grid.z = frame), from the 6x6 source block at (2i - 1, 2j - 1). In a warp whose
// threads all sit away from the borders the block's rows and columns are consecutive;
// elsewhere each comes from the border rule (dwt_window), the same arithmetic for every
// thread of the warp, where both sides have 5 samples or more (half > 2).
// out: [frame][4][hh][ww] int16; lo_only writes the a plane alone (adm_skip_scale0).
template <typename T>
__global__ void __launch_bounds__(ADM_DWT_THREADS, ADM_DWT0_MIN_BLOCKS)
adm_dwt2_s0(const T* __restrict__ src, i16* __restrict__ out, int h, int w, int hh, int ww,
            i32 vp_rnd, int vp_shift, i32 lo_offset, i32 hi_offset, int lo_only, int words) {
    const int j = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    const int i = 2 * (blockIdx.y * blockDim.y + threadIdx.y);
    const int f = blockIdx.z;
    const bool valid = i < hh && j < ww;
    const bool inner = warp_inner(valid, i > 0 && i + 1 < hh - 2 && j > 0 && j + 1 < ww - 2);
    if (!valid) return;
    const T* __restrict__ img = src + (i64)f * h * w;
    i16* __restrict__ fo = out + (i64)f * 4 * hh * ww;
    const Dwt0 k = {(u32)vp_rnd, vp_shift, (u32)lo_offset, (u32)hi_offset};
    const Dwt0Pass pass = {k, lo_only};
    int ry[6], cx[6];
    if (inner && words) {
        dwt0_block_words(img, fo, w, hh, ww, i, j, k, lo_only);
    } else if (inner) {
        // Each branch has its own copy of the block: here the offsets fold to constants.
        dwt_consecutive(i, ry);
        dwt_consecutive(j, cx);
        dwt_block(img, fo, w, hh, ww, i, j, ry, cx, pass);
    } else if (h > 4 && w > 4) {
        dwt_window(i, h, ry);
        dwt_window(j, w, cx);
        dwt_block(img, fo, w, hh, ww, i, j, ry, cx, pass);
    } else {
        // A side of 3 or 4 samples (below what the pipeline scores): output by output.
        for (int di = 0; di < 2 && i + di < hh; ++di) {
            for (int dj = 0; dj < 2 && j + dj < ww; ++dj) {
                dwt0_one(img, fo, h, w, hh, ww, i + di, j + dj, k, lo_only);
            }
        }
    }
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

// Horizontal pass of four int32 row-buffer columns into the four bands of one output.
__device__ __forceinline__ void dwt_s123_store(i32* __restrict__ o, i64 plane, const i32* lo,
                                               const i32* hi, i64 hp_rnd, int hp_shift) {
    o[0] = (i32)((fir_lo64(lo) + hp_rnd) >> hp_shift);
    o[plane] = (i32)((fir_hi64(lo) + hp_rnd) >> hp_shift);
    o[2 * plane] = (i32)((fir_lo64(hi) + hp_rnd) >> hp_shift);
    o[3 * plane] = (i32)((fir_hi64(hi) + hp_rnd) >> hp_shift);
}

// Scales 1..3's arithmetic for dwt_block: both passes in int64, truncated to int32 after
// the level's rounding shift.
struct DwtS123Pass {
    typedef i32 A;
    i64 vp_rnd;
    int vp_shift;
    i64 hp_rnd;
    int hp_shift;
    __device__ __forceinline__ void vertical(const i32* x, i32* lo, i32* hi) const {
        *lo = (i32)((fir_lo64(x) + vp_rnd) >> vp_shift);
        *hi = (i32)((fir_hi64(x) + vp_rnd) >> vp_shift);
    }
    __device__ __forceinline__ void store(i32* __restrict__ o, i64 plane, const i32* lo,
                                          const i32* hi) const {
        dwt_s123_store(o, plane, lo, hi, hp_rnd, hp_shift);
    }
};

// Scales 1..3 from the previous level's approximation plane (T = i16 after scale 0,
// i32 after 1 and 2). Both passes accumulate in int64 and truncate to int32 after the
// per-scale rounding shift. `mode`, m1 and other: see dwt_border.
//
// One thread computes the 2x2 outputs at (2 * ty, 2 * tx), as adm_dwt2_s0 does, from
// consecutive rows and columns in a warp away from the borders and by the border rule
// elsewhere; where a side has only 3 or 4 samples, output by output (dwt_border).
// src: plane of frame f at src + f * src_fstride, h x w, rows of w samples; m1 and
// other likewise. out: [frame][4][hh][ww] int32.
template <typename T>
__global__ void adm_dwt2_s123(const T* __restrict__ src, i64 src_fstride, i32* __restrict__ out,
                              int h, int w, int hh, int ww, i64 vp_rnd, int vp_shift, i64 hp_rnd,
                              int hp_shift, int mode, const i16* __restrict__ m1, i64 m1_fstride,
                              int m1_len, const T* __restrict__ other, i64 other_fstride) {
    const int j = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    const int i = 2 * (blockIdx.y * blockDim.y + threadIdx.y);
    const int f = blockIdx.z;
    const bool valid = i < hh && j < ww;
    const bool inner = warp_inner(valid, i > 0 && i + 1 < hh - 2 && j > 0 && j + 1 < ww - 2);
    if (!valid) return;
    const T* __restrict__ img = src + (i64)f * src_fstride;
    i32* __restrict__ fo = out + (i64)f * 4 * hh * ww;
    const i64 plane = (i64)hh * ww;
    const DwtS123Pass pass = {vp_rnd, vp_shift, hp_rnd, hp_shift};

    int ry[6], cx[6];
    if (inner) {
        // Each branch has its own copy of the block: here the offsets fold to constants.
        dwt_consecutive(i, ry);
        dwt_consecutive(j, cx);
        dwt_block(img, fo, w, hh, ww, i, j, ry, cx, pass);
        return;
    }
    if (h > 4 && w > 4) {
        dwt_window(i, h, ry);
        dwt_window(j, w, cx);
        dwt_block(img, fo, w, hh, ww, i, j, ry, cx, pass);
        return;
    }
    // A side of 3 or 4 samples: libvmaf's out-of-range taps, output by output.
    const i16* __restrict__ fm1 = m1 ? m1 + (i64)f * m1_fstride : m1;
    const T* __restrict__ fother = other ? other + (i64)f * other_fstride : other;
    for (int di = 0; di < 2 && i + di < hh; ++di) {
        for (int dj = 0; dj < 2 && j + dj < ww; ++dj) {
            i32 lo[4], hi[4];
            dwt_border(img, h, w, hh, ww, i + di, j + dj, vp_rnd, vp_shift, mode, fm1, m1_len,
                       fother, lo, hi);
            dwt_s123_store(fo + (i64)(i + di) * ww + j + dj, plane, lo, hi, hp_rnd, hp_shift);
        }
    }
}
