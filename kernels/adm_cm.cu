// Stages 3 to 5 in one pass, reference.csf.csf feeding reference.cm.cm_accumulators:
// contrast masking of the detail-loss numerator (source = restored part, masker = CSF
// of the additive part) and of AIM (source = additive part, masker = CSF of the
// restored part), as integer sums with libvmaf's per-row rounding shift. The float
// finish stays on the host (reference.cm.cm_finish). With do_den it also adds the
// denominator's sums (reference.csf_den.den_accumulators, over the same crop of the
// reference samples this pass reads anyway) to the ADM_ACC_DEN slots.
//
// Decouple and the CSF weighting are computed once per band position, in registers:
// no CSF plane is written. The 3x3 masking box needs only, per masker set, the sum
// over the three orientations of |csf| / 30 at each position (the threshold adds the
// three orientations' boxes in uint32, so the box of the sum is the same number).
//
// Layout: blockDim = (32, ADM_ROW_WARPS), grid.z = frame. The crop of a frame is cut
// into work items, strips of ADM_CM_STEP columns by rows_per_item rows, numbered strip
// by strip within a band of rows; each warp of the grid takes items in turn (one each
// where the grid has a warp per item, as the launcher sizes it). In an item, lane L
// sits on column j0 - 1 + L (lanes 1..30 own an output column, lanes 0 and 31 are the
// box's halo) and walks down the rows, keeping the tap rows above, at and below in
// registers, so each position is decoupled once per item (plus the two halo rows).
// Each output row's nine sums are added up over the warp through shared memory and
// added to that row's totals in rows[frame][row - top][9] (uint64 in device memory,
// zeroed by the launcher, so wrap-around is C's). adm_cm_rows then rounds each row
// total and adds the rounded rows to acc[frame * acc_fstride + ADM_ACC_NUM/AIM/DEN + q].

#define ADM_CM_STEP 30

// The masking stage's per-launch numbers, passed by value so that they are read from
// the kernel's constant bank: the CSF factors rf (h, v, d), the cubing rounding and
// shift of each orientation, and the denominator's shifts. The squaring (round, shift)
// and, at scale 0, the threshold's shift before the subtraction are the same for every
// size and option: they are compile-time constants (ADM_CM0_*, ADM_CM_S123_*, from
// reference.constants).
struct CmArgs {
    i64 rf[3];
    i64 cub_rnd[3];
    int cub_shift[3];
    DenShifts den;  // its row rounding is adm_cm_rows' work
};

__device__ __forceinline__ u64 cm0_sq_rnd(int q) {
    return q == 2 ? ADM_CM0_SQ_RND_D : ADM_CM0_SQ_RND_HV;
}
__device__ __forceinline__ int cm0_sq_shift(int q) {
    return q == 2 ? ADM_CM0_SQ_SHIFT_D : ADM_CM0_SQ_SHIFT_HV;
}
__device__ __forceinline__ int cm0_sub(int q) { return q == 2 ? ADM_CM0_SUB_D : ADM_CM0_SUB_HV; }

// The fixed-point cube of one masked value m >= 0 (m < 2**31): the square rounded and
// truncated to int32, times m, rounded by the orientation's cubing shift.
__device__ __forceinline__ i64 cm_cube(i32 m, u64 sq_rnd, int sq_shift, const CmArgs& c, int q) {
    const i32 sq = (i32)(((u64)((u32)m * (u64)(u32)m) + sq_rnd) >> sq_shift);
    return (mul_wide(m, sq) + c.cub_rnd[q]) >> c.cub_shift[q];
}

// Value of one sample after masking, before the row sum. x is the source sample, thr the
// summed threshold of the position, q the orientation. Both clip at zero and cube in
// fixed point, the square truncated to int32.
//
// Scale 0: |x * rf| - (thr << sub) in int64. |x * rf| <= 65535 * 32768 < 2**31, so
// where 0 <= thr < 2**(31 - sub) the difference fits int32 and so does the clipped
// value: FAST, which the caller takes where both thresholds of the position are below
// 2**(31 - 12) (always, unless an int16 |csf| / 30 wrapped negative).
template <bool FAST>
__device__ __forceinline__ i64 cm_term(i16 x, i32 thr, const CmArgs& c, int q) {
    const int sub = cm0_sub(q);
    const i32 p = (i32)c.rf[q] * x;
    const i32 ap = p < 0 ? -p : p;
    if (FAST) return cm_cube(imax32(ap - (thr << sub), 0), cm0_sq_rnd(q), cm0_sq_shift(q), c, q);
    const i64 m = imax64((i64)ap - ((i64)thr << sub), 0);
    if (m <= 0x7fffffffLL) return cm_cube((i32)m, cm0_sq_rnd(q), cm0_sq_shift(q), c, q);
    // int64 products that wrap as libvmaf's do, computed in uint64 to keep that defined.
    const i64 m2 = (i64)((u64)m * (u64)m + cm0_sq_rnd(q));
    const i64 sq = (i64)(i32)(m2 >> cm0_sq_shift(q));
    return (i64)((u64)sq * (u64)m + (u64)c.cub_rnd[q]) >> c.cub_shift[q];
}
__device__ __forceinline__ bool cm_fast(i16, i32 thr) {
    const int sub = ADM_CM0_SUB_HV > ADM_CM0_SUB_D ? ADM_CM0_SUB_HV : ADM_CM0_SUB_D;
    return (u32)thr < (1u << (31 - sub));
}
// Scales 1..3: CSF-weight x first, then |.| - thr truncated to int32 (libvmaf's i4
// path), so the clipped value is below 2**31 whatever thr is.
template <bool FAST>
__device__ __forceinline__ i64 cm_term(i32 x, i32 thr, const CmArgs& c, int q) {
    const i32 y = csf_weight(x, c.rf[q], 0);
    const i32 m = imax32((i32)((u32)c_abs32(y) - (u32)thr), 0);
    return cm_cube(m, ADM_CM_S123_SQ_RND, ADM_CM_S123_SQ_SHIFT, c, q);
}
__device__ __forceinline__ bool cm_fast(i32, i32) { return true; }

// One band plane of a frame's (a, v, h, d) set: the detail orientation q (0 = h,
// 1 = v, 2 = d) at element offset at. Offsets stay in int32 (the launcher refuses
// bands of 2**31 elements or more a frame); the load goes through __ldg on the
// const __restrict__ frame base.
template <typename T>
__device__ __forceinline__ T band_at(const T* __restrict__ base, i32 plane, int q, i32 at) {
    const int slot = q == 0 ? 2 : (q == 1 ? 1 : 3);
    return __ldg(base + (slot * plane + at));
}

// What the masking pass keeps of one band position: the restored (r), additive (a) and
// reference (o) samples of the three orientations, and per masker set (0 = CSF of the
// additive part, 1 = of the restored part) the orientation sums of |csf| / 30 (fsum,
// the box's terms) and of |csf| / 15 (csum, the threshold's centre term), in uint32.
template <typename T>
struct CmPos {
    T r[3];
    T a[3];
    T o[3];
    u32 fsum[2];
    u32 csum[2];
};

template <typename T>
__device__ __forceinline__ void cm_position(const T* __restrict__ ob, const T* __restrict__ tb,
                                            i32 plane, i32 at, const i32* __restrict__ lut,
                                            double egl, const CmArgs& c, bool aim,
                                            CmPos<T>* p) {
#pragma unroll
    for (int q = 0; q < 3; ++q) p->o[q] = band_at(ob, plane, q, at);
    const Decoupled<T> dc =
        decouple(p->o[0], p->o[1], p->o[2], band_at(tb, plane, 0, at), band_at(tb, plane, 1, at),
                 band_at(tb, plane, 2, at), lut, egl);
    u32 fa = 0, fr = 0, ca = 0, cr = 0;
#pragma unroll
    for (int q = 0; q < 3; ++q) {
        p->r[q] = dc.r[q];
        p->a[q] = dc.a[q];
        const T ya = csf_weight(dc.a[q], c.rf[q], q);
        fa += (u32)(i32)csf_flt(ya);
        ca += (u32)cm_centre(ya);
        if (aim) {
            const T yr = csf_weight(dc.r[q], c.rf[q], q);
            fr += (u32)(i32)csf_flt(yr);
            cr += (u32)cm_centre(yr);
        }
    }
    p->fsum[0] = fa;
    p->fsum[1] = fr;
    p->csum[0] = ca;
    p->csum[1] = cr;
}

// The position's six masking terms (numerator, then AIM where aim) into v[0..5].
template <bool FAST, typename T>
__device__ __forceinline__ void cm_terms(const CmPos<T>& p, i32 thr_num, i32 thr_aim,
                                         const CmArgs& c, bool aim, i64* v) {
#pragma unroll
    for (int q = 0; q < 3; ++q) v[q] = cm_term<FAST>(p.r[q], thr_num, c, q);
    if (aim) {
#pragma unroll
        for (int q = 0; q < 3; ++q) v[3 + q] = cm_term<FAST>(p.a[q], thr_aim, c, q);
    }
}

// Sums 0..2 are the numerator's, 3..5 AIM's, 6..8 the denominator's.
__device__ __forceinline__ bool sum_used(int k, bool aim, bool den) {
    return k < 3 || (k < 6 ? aim : den);
}

template <typename T>
__global__ void __launch_bounds__(32 * ADM_ROW_WARPS, ADM_CM_MIN_BLOCKS)
adm_cm(const T* __restrict__ ref, const T* __restrict__ dis, i64 band_fstride, int hh, int ww,
       int plane, const i32* __restrict__ lut, u64* __restrict__ rows, int top, int bottom,
       int left, int right, int rows_per_item, double egl, int do_aim,
       int do_den, i64 rf_h,
       i64 rf_v, i64 rf_d, i64 cub_rnd_h, i64 cub_rnd_v, i64 cub_rnd_d, int cub_shift_h,
       int cub_shift_v, int cub_shift_d, u64 den_sq_rnd, int den_sq_shift, u64 den_cub_rnd,
       int den_cub_shift) {
    // 35: the 16 lanes of each half-warp's 64-bit loads below fall on 16 different banks.
    __shared__ u64 red[ADM_ROW_WARPS][9][35];
    const int red_k = imin32(threadIdx.x / 3, 8);  // lanes 27..31 repeat sum 8, unused
    const int red_p = threadIdx.x % 3;
    const int lane = threadIdx.x;
    const int warp = threadIdx.y;
    const int f = blockIdx.z;
    const bool aim = do_aim != 0;
    const bool den = do_den != 0;
    const CmArgs c = {{rf_h, rf_v, rf_d},
                      {cub_rnd_h, cub_rnd_v, cub_rnd_d},
                      {cub_shift_h, cub_shift_v, cub_shift_d},
                      {den_sq_rnd, den_sq_shift, den_cub_rnd, den_cub_shift, 0, 0}};

    const T* __restrict__ ob = ref + (i64)f * band_fstride;
    const T* __restrict__ tb = dis + (i64)f * band_fstride;
    u64* __restrict__ frows = rows + (i64)f * (bottom - top) * 9;

    const int nstrips = (right - left + ADM_CM_STEP - 1) / ADM_CM_STEP;
    const int nitems = nstrips * ((bottom - top + rows_per_item - 1) / rows_per_item);
    for (int item = blockIdx.x * ADM_ROW_WARPS + warp; item < nitems;
         item += gridDim.x * ADM_ROW_WARPS) {
        const int strip = item % nstrips;
        const int a = top + (item / nstrips) * rows_per_item;
        const int b = imin32(bottom, a + rows_per_item);
        const int j = left + strip * ADM_CM_STEP - 1 + lane;
        const int jc = tap_index(j, ww);
        const bool own = lane >= 1 && lane <= ADM_CM_STEP && j < right;

        CmPos<T> cur, nxt;
        const i32 above_at = tap_index(a - 1, hh) * ww + jc;
        cm_position(ob, tb, plane, above_at, lut, egl, c, aim, &nxt);
        u32 above[2] = {nxt.fsum[0], nxt.fsum[1]};
        cm_position(ob, tb, plane, a * ww + jc, lut, egl, c, aim, &cur);
        for (int i = a; i < b; ++i) {
            const i32 below_at = tap_index(i + 1, hh) * ww + jc;
            cm_position(ob, tb, plane, below_at, lut, egl, c, aim, &nxt);
            u32 box[2];
#pragma unroll
            for (int s = 0; s < 2; ++s) {
                const u32 col = above[s] + cur.fsum[s] + nxt.fsum[s];
                const u32 west = __shfl_up_sync(0xffffffffu, col, 1);
                const u32 east = __shfl_down_sync(0xffffffffu, col, 1);
                box[s] = west + col + east - cur.fsum[s];
            }
            i64 v[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
            if (own) {
                const i32 thr_num = (i32)(box[0] + cur.csum[0]);
                const i32 thr_aim = (i32)(box[1] + cur.csum[1]);
                const T any = 0;
                if (cm_fast(any, thr_num) && (!aim || cm_fast(any, thr_aim))) {
                    cm_terms<true>(cur, thr_num, thr_aim, c, aim, v);
                } else {
                    cm_terms<false>(cur, thr_num, thr_aim, c, aim, v);
                }
                if (den) {
#pragma unroll
                    for (int q = 0; q < 3; ++q) v[6 + q] = (i64)den_term(cur.o[q], c.den);
                }
            }
            // The row's nine sums over the warp, through shared memory: each lane stores
            // its nine values; lanes 3k, 3k + 1 and 3k + 2 add up every third of lanes
            // 1..30's values of sum k (lanes 0 and 31, the halo, hold zeros), and lane 3k
            // adds the three parts.
#pragma unroll
            for (int k = 0; k < 9; ++k) red[warp][k][lane] = (u64)v[k];
            __syncwarp();
            {
                const u64* __restrict__ part = &red[warp][red_k][1 + red_p];
                u64 sum = 0;
#pragma unroll
                for (int m = 0; m < 10; ++m) sum += part[3 * m];
                const u64 s1 = __shfl_down_sync(0xffffffffu, sum, 1);
                const u64 s2 = __shfl_down_sync(0xffffffffu, sum, 2);
                if (red_p == 0 && lane < 27 && sum_used(red_k, aim, den))
                    atomicAdd(frows + (i - top) * 9 + red_k, sum + s1 + s2);
            }
            __syncwarp();
            above[0] = cur.fsum[0];
            above[1] = cur.fsum[1];
            cur = nxt;
        }
    }
}

// The masking pass's second step: each row total of rows[frame][nrows][9] rounded by its
// sum's per-row shift (the masking sums' in int64, the denominator's in uint64) and the
// rounded rows added to the frame's accumulators. blockDim = (32, 9): warp k adds up sum
// k over the rows, grid.x = frame.
__global__ void adm_cm_rows(const u64* __restrict__ rows, int nrows, i64* __restrict__ acc,
                            i64 acc_fstride, i64 row_rnd, int row_shift, u64 den_row_rnd,
                            int den_row_shift, int do_aim, int do_den) {
    const int k = threadIdx.y;
    const int f = blockIdx.x;
    if (!sum_used(k, do_aim != 0, do_den != 0)) return;
    const u64* __restrict__ fr = rows + (i64)f * nrows * 9 + k;
    u64 total = 0;
    for (int r = threadIdx.x; r < nrows; r += 32) {
        const u64 s = __ldg(fr + (i64)r * 9);
        total += k < 6 ? (u64)((i64)(s + (u64)row_rnd) >> row_shift)
                       : (s + den_row_rnd) >> den_row_shift;
    }
    total = (u64)warp_sum((i64)total);
    if (threadIdx.x == 0) {
        i64* __restrict__ out = acc + (i64)f * acc_fstride;
        atomicAdd((u64*)(out + (k < 6 ? ADM_ACC_NUM + k : ADM_ACC_DEN + k - 6)), total);
    }
}

// Test hook: out[i] = the Q30 reciprocal gain_k uses for table index i (0..65536), to
// compare with libvmaf's table over the whole domain.
__global__ void adm_recip_table(i32* __restrict__ out, const i32* __restrict__ lut) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= 2 * ADM_LUT_CENTRE) out[i] = recip_q30(i - ADM_LUT_CENTRE, lut);
}
