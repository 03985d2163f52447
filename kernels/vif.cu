// libvmaf's integer VIF (reference/vif.py, reference/vif_filters.py) on the GPU: one
// kernel a scale (vif_scale, below) computes the scale's statistic, its four int64
// accumulators per frame, and the decimation to the next scale.
//
// The text is preceded by a preamble generated from reference/vif_constants.py
// (admcuda/backends/cuda/kernels.py): VIF_TAPS_<s> (each scale's Q16 taps), VIF_HALF_<s>,
// VIF_SIGMA_NSQ, VIF_LOG2_ONE, VIF_LOG2_BITS, VIF_DEN_LOG_OFFSET, and the tiling VIF_TW,
// VIF_TH (a block's tile) and VIF_VR (rows a thread of the vertical pass computes).
//
// Borders. A padded position p of a side of n samples reads sample p where 0 <= p < n and
// otherwise the entry p + pad of a mirror table made on the host by
// reference.vif_filters.mirror_indices (the same in-place reflection libvmaf performs, for
// every side of 2 samples or more). Rows use the scale's padding (PAD_ROWS), columns the
// half width of the scale's filter.
//
// Integer semantics. Every filter sum is unsigned and wraps as libvmaf's C does, so the
// order of the taps does not matter; the accumulators are int64 sums of int32 terms,
// added in any order by the block's reduction and 64-bit atomics, which is exact. The few
// double steps of the statistic are spelled with _rn/_rz intrinsics, and the module is
// built with --fmad=false, so that nothing fuses where C rounds twice.

typedef unsigned char u8;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

__constant__ u32 VIF_TAPS[4][17] = {VIF_TAPS_0, VIF_TAPS_1, VIF_TAPS_2, VIF_TAPS_3};

template <int S>
struct VifScale;
template <>
struct VifScale<0> {
    static constexpr int half = VIF_HALF_0;
};
template <>
struct VifScale<1> {
    static constexpr int half = VIF_HALF_1;
};
template <>
struct VifScale<2> {
    static constexpr int half = VIF_HALF_2;
};
template <>
struct VifScale<3> {
    static constexpr int half = VIF_HALF_3;
};

// Position p of a side of n, mirrored through the host's table (`table` already offset so
// that table[p] is the entry of padded position p).
__device__ __forceinline__ int mirrored(int p, int n, const int* __restrict__ table) {
    return (p >= 0 && p < n) ? p : __ldg(table + p);
}

// ---- horizontal pass and statistic -------------------------------------------------------

// reference.vif.log2_32 / log2_64: the table entry of the top 16 significant bits plus
// one LOG2_ONE per bit dropped. Callers pass values of at least 2**17.
__device__ __forceinline__ i64 vif_log2_32(const u16* __restrict__ table, u32 x) {
    const int k = (32 - __clz(x)) - VIF_LOG2_BITS;
    return (i64)__ldg(table + (x >> k)) + (i64)VIF_LOG2_ONE * k;
}

__device__ __forceinline__ i64 vif_log2_64(const u16* __restrict__ table, u64 x) {
    const int k = (64 - __clzll((i64)x)) - VIF_LOG2_BITS;
    return (i64)__ldg(table + (x >> k)) + (i64)VIF_LOG2_ONE * k;
}

// ((uint64)a * b + 2**31) >> 32, libvmaf's rounded product of two means.
__device__ __forceinline__ u32 mean_product(u32 a, u32 b) {
    return (u32)(((u64)a * (u64)b + 0x80000000ULL) >> 32);
}

struct VifTerms {
    i64 num_log, den_log, num_non_log, den_non_log;
};

// reference.vif.vif_sigma and vif_residuals for one pixel, from its filtered moments.
__device__ __forceinline__ void vif_pixel(u32 mu1, u32 mu2, u32 xx, u32 yy, u32 xy,
                                          const u16* __restrict__ table, double egl, double eps,
                                          VifTerms& acc) {
    const i32 s1 = (i32)(xx - mean_product(mu1, mu1));
    i32 s2 = (i32)(yy - mean_product(mu2, mu2));
    const i32 s12 = (i32)(xy - mean_product(mu1, mu2));
    s2 = s2 > 0 ? s2 : 0;
    if (s1 >= VIF_SIGMA_NSQ) {
        acc.den_log += vif_log2_32(table, (u32)s1 + (u32)VIF_SIGMA_NSQ) - VIF_DEN_LOG_OFFSET;
        if (s12 > 0 && s2 > 0) {
            const double a = (double)s1, b = (double)s2, c = (double)s12;
            double g = __ddiv_rn(c, __dadd_rn(a, eps));
            const double sv = __dsub_rn(b, __dmul_rn(g, c));
            const i64 sv_sq = sv > 0.0 ? __double2ll_rz(sv) : 0;
            g = g < egl ? g : egl;
            const i64 numer1 = sv_sq + VIF_SIGMA_NSQ;
            const i64 numer1_tmp = __double2ll_rz(__dmul_rn(__dmul_rn(g, g), a)) + numer1;
            acc.num_log += vif_log2_64(table, (u64)numer1_tmp) - vif_log2_64(table, (u64)numer1);
        }
    } else {
        acc.num_non_log += s2;
        acc.den_non_log += 1;
    }
}


// ---- one scale, fused ---------------------------------------------------------------------
//
// A block scores a tile of VIF_TW x VIF_TH pixels of one frame at scale S and, with DEC,
// writes the tile's share of the next scale's planes. Everything between the input planes
// and the accumulators stays in shared memory:
//
// 1. The tile's input with its halo of H = VifScale<S>::half rows and columns, mirrored
//    through the row and column tables, as 16-bit samples (sx, sy).
// 2. The vertical pass (reference.vif.vif_vertical_8 / vif_vertical_16) of each tile row
//    and halo column, VIF_VR rows a thread so that each input row is read once for all of
//    them: the two means packed in one word (each fits 16 bits after its rounding) and the
//    three second moments (vmu, vxx, vyy, vxy).
// 3. The horizontal pass and the statistic (reference.vif.vif_horizontal, vif_sigma,
//    vif_residuals) of each pixel, its four sums added up over the block and then to
//    acc[f * acc_stride + 0..3] with 64-bit atomics; skipped where do_stat is 0.
// 4. With DEC: reference.vif_filters.subsample_rd_8 / subsample_rd_16 of the tile's even
//    rows and columns with scale S + 1's taps, from the same input tile (its half width is
//    smaller, and the column table of the wider half gives the same entries there), into
//    out_ref / out_dis, (h / 2) x (w / 2) a frame.
//
// 64-bit sums are avoided: a filter sum of 32-bit values v with taps summing to 2**16 is
// split into the sums of v >> 16 and v & 0xffff, each below 2**32, and the rounding shift
// (at most 16) is applied to the pair: (hi * 2**16 + lo + rnd) >> s equals
// (hi << (16 - s)) + ((lo + rnd) >> s), wrapping modulo 2**32 as the reference's cast does.

#define VIF_BLOCK (VIF_TW * VIF_TH / 4)

template <int S>
__device__ __forceinline__ u32 vif_tap(int k) {
    return VIF_TAPS[S][k];
}

// (hi * 2**16 + lo + rnd) >> s, modulo 2**32, for s <= 16 and lo + rnd < 2**32.
__device__ __forceinline__ u32 split_round(u32 hi, u32 lo, u32 rnd, int s) {
    return (hi << (16 - s)) + ((lo + rnd) >> s);
}

// The horizontal filter of the scale of half width H at four adjacent pixels, from a row
// of the vertical pass's 32-bit sums in shared memory: row[q + k] is tap k's sample of
// pixel q. `row` is 16-byte aligned, and read as whole 16-byte words.
// Each value is taken apart into two 16-bit halves, filtered separately: the packed means'
// mu1 (low) and mu2 (high) into sums[q][at], sums[q][at + 1]; a second moment's high and
// low halves likewise. The taps are symmetric, so the two samples a tap weighs are added
// first (exact: the sums wrap modulo 2**32 either way).
template <int H>
__device__ __forceinline__ void horizontal4(const u32* __restrict__ row, u32 (&sums)[4][8], int at) {
    constexpr int S = H == VIF_HALF_0 ? 0 : H == VIF_HALF_1 ? 1 : H == VIF_HALF_2 ? 2 : 3;
    constexpr int NV = 2 * H + 4, CHUNKS = (NV + 3) / 4;
    u32 v[4 * CHUNKS];
#pragma unroll
    for (int k = 0; k < CHUNKS; ++k) {
        const uint4 c = reinterpret_cast<const uint4*>(row)[k];
        v[4 * k] = c.x;
        v[4 * k + 1] = c.y;
        v[4 * k + 2] = c.z;
        v[4 * k + 3] = c.w;
    }
    const bool packed = at == 0;  // the means: low half mu1, high half mu2
#pragma unroll
    for (int part = 0; part < 2; ++part) {
        u32 p[NV];
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            const bool high = packed ? part == 1 : part == 0;
            p[k] = high ? v[k] >> 16 : v[k] & 0xffffu;
        }
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            u32 a = vif_tap<S>(H) * p[q + H];
#pragma unroll
            for (int k = 0; k < H; ++k) a += vif_tap<S>(k) * (p[q + k] + p[q + 2 * H - k]);
            sums[q][at + part] = a;
        }
    }
}

template <typename T, int S, bool DEC>
__global__ void __launch_bounds__(VIF_BLOCK)
    vif_scale(const T* __restrict__ ref, const T* __restrict__ dis, int h, int w,
              const int* __restrict__ rows, const int* __restrict__ cols, u32 mean_rnd,
              int mean_shift, u32 sq_rnd, int sq_shift, const u16* __restrict__ table, double egl,
              double eps, i64* __restrict__ acc, int acc_stride, int do_stat, u32 dec_rnd,
              int dec_shift, int dec_cast16, u16* __restrict__ out_ref,
              u16* __restrict__ out_dis) {
    constexpr bool EIGHT = sizeof(T) == 1 && S == 0;
    constexpr int H = VifScale<S>::half;
    constexpr int WC = VIF_TW + 2 * H;  // tile columns with the halo
    constexpr int RR = VIF_TH + 2 * H;  // tile rows with the halo
    constexpr int HD = DEC ? VifScale<(S < 3 ? S + 1 : 3)>::half : 0;
    constexpr int WD = VIF_TW + 2 * HD;
    __shared__ u16 sx[RR][WC], sy[RR][WC];
    constexpr int WV = VIF_TW - 4 + 4 * ((2 * H + 7) / 4);  // >= WC, a multiple of 4
    __shared__ __align__(16) u32 vmu[VIF_TH][WV];
    __shared__ __align__(16) u32 vxx[VIF_TH][WV];
    __shared__ __align__(16) u32 vyy[VIF_TH][WV];
    __shared__ __align__(16) u32 vxy[VIF_TH][WV];
    __shared__ u32 dx[DEC ? VIF_TH / 2 : 1][DEC ? WD : 1], dy[DEC ? VIF_TH / 2 : 1][DEC ? WD : 1];
    __shared__ i64 red[4][VIF_BLOCK];

    const int tid = threadIdx.x;
    const int j0 = blockIdx.x * VIF_TW, i0 = blockIdx.y * VIF_TH, f = blockIdx.z;
    const i64 plane = (i64)h * w;
    const T* __restrict__ x = ref + (i64)f * plane;
    const T* __restrict__ y = dis + (i64)f * plane;

    // 1. the input tile
    for (int it = tid; it < RR * WC; it += VIF_BLOCK) {
        const int r = it / WC, c = it % WC;
        const int pr = i0 - H + r, pc = j0 - H + c;
        u16 a = 0, b = 0;
        if (pr <= h - 1 + H && pc <= w - 1 + H) {
            const i64 at = (i64)mirrored(pr, h, rows) * w + mirrored(pc, w, cols);
            a = __ldg(x + at);
            b = __ldg(y + at);
        }
        sx[r][c] = a;
        sy[r][c] = b;
    }
    __syncthreads();

    // 2. the vertical pass, VIF_VR rows a thread
    for (int it = tid; it < (VIF_TH / VIF_VR) * WC; it += VIF_BLOCK) {
        const int c = it % WC, r0 = (it / WC) * VIF_VR;
        if (i0 + r0 >= h) continue;
        u32 m1[VIF_VR], m2[VIF_VR], xh[VIF_VR], xl[VIF_VR], yh[VIF_VR], yl[VIF_VR], ph[VIF_VR],
            pl[VIF_VR];
#pragma unroll
        for (int q = 0; q < VIF_VR; ++q) m1[q] = m2[q] = xh[q] = xl[q] = yh[q] = yl[q] = ph[q] = pl[q] = 0;
#pragma unroll
        for (int k = 0; k < 2 * H + VIF_VR; ++k) {
            const u32 a = sx[r0 + k][c], b = sy[r0 + k][c];
            const u32 aa = a * a, bb = b * b, ab = a * b;
#pragma unroll
            for (int q = 0; q < VIF_VR; ++q) {
                const int tk = k - q;
                if (tk < 0 || tk > 2 * H) continue;
                const u32 t = vif_tap<S>(tk);
                m1[q] += t * a;
                m2[q] += t * b;
                if (EIGHT) {  // every sum fits 32 bits unshifted
                    xl[q] += t * aa;
                    yl[q] += t * bb;
                    pl[q] += t * ab;
                } else {
                    xh[q] += t * (aa >> 16);
                    xl[q] += t * (aa & 0xffffu);
                    yh[q] += t * (bb >> 16);
                    yl[q] += t * (bb & 0xffffu);
                    ph[q] += t * (ab >> 16);
                    pl[q] += t * (ab & 0xffffu);
                }
            }
        }
#pragma unroll
        for (int q = 0; q < VIF_VR; ++q) {
            const int r = r0 + q;
            const u32 mu1 = (u16)((m1[q] + mean_rnd) >> mean_shift);
            const u32 mu2 = (u16)((m2[q] + mean_rnd) >> mean_shift);
            vmu[r][c] = mu1 | (mu2 << 16);
            if (EIGHT) {
                vxx[r][c] = xl[q];
                vyy[r][c] = yl[q];
                vxy[r][c] = pl[q];
            } else {
                vxx[r][c] = split_round(xh[q], xl[q], sq_rnd, sq_shift);
                vyy[r][c] = split_round(yh[q], yl[q], sq_rnd, sq_shift);
                vxy[r][c] = split_round(ph[q], pl[q], sq_rnd, sq_shift);
            }
        }
    }
    __syncthreads();

    // 3. the horizontal pass and the statistic, four adjacent pixels of a row a thread
    VifTerms t = {0, 0, 0, 0};
    if (do_stat) {
        for (int it = tid; it < VIF_TH * (VIF_TW / 4); it += VIF_BLOCK) {
            const int r = it / (VIF_TW / 4), c0 = (it % (VIF_TW / 4)) * 4;
            if (i0 + r >= h || j0 + c0 >= w) continue;
            // sums[q][0..7]: mu1, mu2 and the high and low halves of xx, yy, xy of pixel c0 + q
            u32 sums[4][8];
            horizontal4<H>(&vmu[r][c0], sums, 0);
            horizontal4<H>(&vxx[r][c0], sums, 2);
            horizontal4<H>(&vyy[r][c0], sums, 4);
            horizontal4<H>(&vxy[r][c0], sums, 6);
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                if (j0 + c0 + q >= w) break;
                const u32* m = sums[q];
                vif_pixel(m[0], m[1], split_round(m[2], m[3], 32768u, 16),
                          split_round(m[4], m[5], 32768u, 16), split_round(m[6], m[7], 32768u, 16),
                          table, egl, eps, t);
            }
        }
    }

    // 4. the next scale's planes
    if (DEC) {
        for (int it = tid; it < 2 * (VIF_TH / 2) * WD; it += VIF_BLOCK) {
            const int which = it / ((VIF_TH / 2) * WD);
            const int rest = it % ((VIF_TH / 2) * WD);
            const int rd = rest / WD, d = rest % WD;
            const int r = 2 * rd;  // the tile's even rows
            if (i0 + r >= h) continue;
            u32 v = 0;
#pragma unroll
            for (int k = 0; k <= 2 * HD; ++k) {
                const u32 s = which ? sy[r + H - HD + k][H - HD + d] : sx[r + H - HD + k][H - HD + d];
                v += vif_tap<(S < 3 ? S + 1 : 3)>(k) * s;
            }
            v = (v + dec_rnd) >> dec_shift;
            if (dec_cast16) v = (u16)v;
            if (which)
                dy[rd][d] = v;
            else
                dx[rd][d] = v;
        }
        __syncthreads();
        const int oh = h / 2, ow = w / 2;
        for (int it = tid; it < 2 * (VIF_TH / 2) * (VIF_TW / 2); it += VIF_BLOCK) {
            const int which = it / ((VIF_TH / 2) * (VIF_TW / 2));
            const int rest = it % ((VIF_TH / 2) * (VIF_TW / 2));
            const int rd = rest / (VIF_TW / 2), cd = rest % (VIF_TW / 2);
            const int oi = i0 / 2 + rd, oj = j0 / 2 + cd;
            if (oi >= oh || oj >= ow) continue;
            u32 v = 0;
#pragma unroll
            for (int k = 0; k <= 2 * HD; ++k) {
                v += vif_tap<(S < 3 ? S + 1 : 3)>(k) * (which ? dy[rd][2 * cd + k] : dx[rd][2 * cd + k]);
            }
            u16* __restrict__ dst = (which ? out_dis : out_ref) + (i64)f * oh * ow;
            dst[(i64)oi * ow + oj] = (u16)((v + 32768u) >> 16);
        }
    }

    // the block's sums
    if (do_stat) {
        red[0][tid] = t.num_log;
        red[1][tid] = t.den_log;
        red[2][tid] = t.num_non_log;
        red[3][tid] = t.den_non_log;
        __syncthreads();
        for (int half = VIF_BLOCK / 2; half > 0; half >>= 1) {
            if (tid < half) {
#pragma unroll
                for (int q = 0; q < 4; ++q) red[q][tid] += red[q][tid + half];
            }
            __syncthreads();
        }
        if (tid < 4 && red[tid][0] != 0) {
            atomicAdd((unsigned long long*)(acc + (i64)f * acc_stride + tid),
                      (unsigned long long)red[tid][0]);
        }
    }
}
