// libvmaf's integer VIF (reference/vif.py, reference/vif_filters.py) on the GPU: per
// scale a vertical pass (vif_vertical), a horizontal pass fused with the per-pixel
// statistic and its four int64 accumulators (vif_stat), and the decimation to the next
// scale (vif_decimate).
//
// The text is preceded by a preamble generated from reference/vif_constants.py
// (admcuda/backends/cuda/kernels.py): VIF_TAPS_<s> (each scale's Q16 taps), VIF_HALF_<s>,
// VIF_SIGMA_NSQ, VIF_LOG2_ONE, VIF_LOG2_BITS, VIF_DEN_LOG_OFFSET, VIF_THREADS_X,
// VIF_THREADS_Y, VIF_STAT_ROWS.
//
// Borders. A padded position p of a side of n samples reads sample p where 0 <= p < n and
// otherwise the entry p + pad of a mirror table made on the host by
// reference.vif_filters.mirror_indices (the same in-place reflection libvmaf performs, for
// every side of 2 samples or more). Rows use the scale's padding (PAD_ROWS), columns the
// half width of the filter that reads them.
//
// Integer semantics. Every filter sum is unsigned and wraps as libvmaf's C does, so the
// order of the taps does not matter; the accumulators are int64 sums of int32 terms,
// added in any order by warp shuffles and 64-bit atomics, which is exact. The few double
// steps of the statistic are spelled with _rn/_rz intrinsics, and the module is built
// with --fmad=false, so that nothing fuses where C rounds twice.

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

// ---- vertical pass ------------------------------------------------------------------------
//
// reference.vif.vif_vertical_8 (EIGHT: 8-bit scale 0) and vif_vertical_16. Writes the five
// row buffers of libvmaf (mu1, mu2, ref, dis, ref_dis) as uint32 planes, [frame][5][h][w].
// rows: the scale's row mirror table, offset by its padding.

template <typename T, int S, bool EIGHT>
__global__ void vif_vertical(const T* __restrict__ ref, const T* __restrict__ dis, int h, int w,
                             const int* __restrict__ rows, u32 mean_rnd, int mean_shift,
                             u64 sq_rnd, int sq_shift, u32* __restrict__ out) {
    constexpr int H = VifScale<S>::half;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int f = blockIdx.z;
    if (i >= h || j >= w) return;
    const i64 plane = (i64)h * w;
    const T* __restrict__ x = ref + (i64)f * plane + j;
    const T* __restrict__ y = dis + (i64)f * plane + j;
    u32 m1 = 0, m2 = 0;
    u32 xx32 = 0, yy32 = 0, xy32 = 0;
    u64 xx64 = 0, yy64 = 0, xy64 = 0;
#pragma unroll
    for (int k = 0; k <= 2 * H; ++k) {
        const int r = mirrored(i - H + k, h, rows);
        const u32 a = __ldg(x + (i64)r * w);
        const u32 b = __ldg(y + (i64)r * w);
        const u32 t = VIF_TAPS[S][k];
        m1 += t * a;
        m2 += t * b;
        if (EIGHT) {
            xx32 += t * (a * a);
            yy32 += t * (b * b);
            xy32 += t * (a * b);
        } else {
            xx64 += (u64)t * (u64)(a * a);
            yy64 += (u64)t * (u64)(b * b);
            xy64 += (u64)t * (u64)(a * b);
        }
    }
    u32* __restrict__ o = out + (i64)f * 5 * plane + (i64)i * w + j;
    if (EIGHT) {
        o[0] = (m1 + mean_rnd) >> mean_shift;
        o[plane] = (m2 + mean_rnd) >> mean_shift;
        o[2 * plane] = xx32;
        o[3 * plane] = yy32;
        o[4 * plane] = xy32;
    } else {
        o[0] = (u32)(u16)((m1 + mean_rnd) >> mean_shift);
        o[plane] = (u32)(u16)((m2 + mean_rnd) >> mean_shift);
        o[2 * plane] = (u32)((xx64 + sq_rnd) >> sq_shift);
        o[3 * plane] = (u32)((yy64 + sq_rnd) >> sq_shift);
        o[4 * plane] = (u32)((xy64 + sq_rnd) >> sq_shift);
    }
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

__device__ __forceinline__ i64 warp_sum(i64 v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

// One thread a column, VIF_STAT_ROWS rows of a block of VIF_THREADS_Y rows of threads; the
// block's four sums are added to acc[f * acc_stride + 0..3] (num_log, den_log,
// num_non_log, den_non_log). tmp: vif_vertical's planes. cols: the column mirror table of
// this scale's filter, offset by its half width.
template <int S>
__global__ void __launch_bounds__(VIF_THREADS_X* VIF_THREADS_Y)
    vif_stat(const u32* __restrict__ tmp, int h, int w, const int* __restrict__ cols,
             const u16* __restrict__ table, double egl, double eps, i64* __restrict__ acc,
             int acc_stride) {
    constexpr int H = VifScale<S>::half;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int f = blockIdx.z;
    const i64 plane = (i64)h * w;
    const u32* __restrict__ base = tmp + (i64)f * 5 * plane;
    VifTerms t = {0, 0, 0, 0};
    if (j < w) {
        int cc[2 * H + 1];
#pragma unroll
        for (int k = 0; k <= 2 * H; ++k) cc[k] = mirrored(j - H + k, w, cols);
        const int i0 = blockIdx.y * (VIF_THREADS_Y * VIF_STAT_ROWS) + threadIdx.y;
        for (int q = 0; q < VIF_STAT_ROWS; ++q) {
            const int i = i0 + q * VIF_THREADS_Y;
            if (i >= h) break;
            const u32* __restrict__ row = base + (i64)i * w;
            u32 mu1 = 0, mu2 = 0;
            u64 xx = 0, yy = 0, xy = 0;
#pragma unroll
            for (int k = 0; k <= 2 * H; ++k) {
                const u32 tap = VIF_TAPS[S][k];
                const u32* __restrict__ p = row + cc[k];
                mu1 += tap * __ldg(p);
                mu2 += tap * __ldg(p + plane);
                xx += (u64)tap * __ldg(p + 2 * plane);
                yy += (u64)tap * __ldg(p + 3 * plane);
                xy += (u64)tap * __ldg(p + 4 * plane);
            }
            vif_pixel(mu1, mu2, (u32)((xx + 32768ULL) >> 16), (u32)((yy + 32768ULL) >> 16),
                      (u32)((xy + 32768ULL) >> 16), table, egl, eps, t);
        }
    }
    __shared__ i64 part[VIF_THREADS_X * VIF_THREADS_Y / 32][4];
    const int lane = (threadIdx.y * blockDim.x + threadIdx.x) & 31;
    const int warp = (threadIdx.y * blockDim.x + threadIdx.x) >> 5;
    const i64 v0 = warp_sum(t.num_log), v1 = warp_sum(t.den_log);
    const i64 v2 = warp_sum(t.num_non_log), v3 = warp_sum(t.den_non_log);
    if (lane == 0) {
        part[warp][0] = v0;
        part[warp][1] = v1;
        part[warp][2] = v2;
        part[warp][3] = v3;
    }
    __syncthreads();
    if (warp == 0 && lane < 4) {
        i64 s = 0;
        for (int k = 0; k < VIF_THREADS_X * VIF_THREADS_Y / 32; ++k) s += part[k][lane];
        if (s != 0) {
            atomicAdd((unsigned long long*)(acc + (i64)f * acc_stride + lane),
                      (unsigned long long)s);
        }
    }
}

// ---- decimation ------------------------------------------------------------------------
//
// reference.vif_filters.subsample_rd_8 / subsample_rd_16: the plane of scale S - 1 (h by
// w, type T) filtered with scale S's taps at its even rows and columns, vertically rounded
// by (vrnd, vshift) (cast to 16 bits where cast16), horizontally by (32768, 16), kept as
// an oh = h / 2 by ow = w / 2 uint16 plane. grid.z is frame * 2 + (0 reference, 1
// distorted). rows: the source scale's row mirror table; cols: the mirror table of w for
// scale S's half width.

template <typename T, int S>
__global__ void vif_decimate(const T* __restrict__ ref, const T* __restrict__ dis, int h, int w,
                             const int* __restrict__ rows, const int* __restrict__ cols, u32 vrnd,
                             int vshift, int cast16, u16* __restrict__ out_ref,
                             u16* __restrict__ out_dis, int oh, int ow) {
    constexpr int H = VifScale<S>::half;
    const int oj = blockIdx.x * blockDim.x + threadIdx.x;
    const int oi = blockIdx.y * blockDim.y + threadIdx.y;
    const int f = blockIdx.z >> 1;
    const int which = blockIdx.z & 1;
    if (oi >= oh || oj >= ow) return;
    const T* __restrict__ src = (which ? dis : ref) + (i64)f * h * w;
    int rr[2 * H + 1];
#pragma unroll
    for (int k = 0; k <= 2 * H; ++k) rr[k] = mirrored(2 * oi - H + k, h, rows);
    u32 acc = 0;
#pragma unroll
    for (int kc = 0; kc <= 2 * H; ++kc) {
        const int c = mirrored(2 * oj - H + kc, w, cols);
        u32 v = 0;
#pragma unroll
        for (int kr = 0; kr <= 2 * H; ++kr) v += VIF_TAPS[S][kr] * (u32)__ldg(src + (i64)rr[kr] * w + c);
        v = (v + vrnd) >> vshift;
        if (cast16) v = (u16)v;
        acc += VIF_TAPS[S][kc] * v;
    }
    u16* __restrict__ dst = (which ? out_dis : out_ref) + (i64)f * oh * ow;
    dst[(i64)oi * ow + oj] = (u16)((acc + 32768u) >> 16);
}
