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
// Layout: blockDim = (32, ADM_ROW_WARPS). A block owns rows_per_block crop rows and
// every column. Its work items are strips of ADM_CM_STEP columns by rows_per_item
// rows; a warp takes items in turn. In an item, lane L sits on column j0 - 1 + L
// (lanes 1..30 own an output column, lanes 0 and 31 are the box's halo) and walks down
// the rows, keeping the tap rows above, at and below in registers, so each position is
// decoupled once per item (plus the two halo rows). Each output row's nine sums are
// added up over the warp through shared memory and added to the block's per-row totals
// (uint64, so wrap-around is C's); once the block is done, each row total is rounded
// and the rounded rows are added to acc[frame * acc_fstride + ADM_ACC_NUM/AIM/DEN + q]
// with one atomicAdd per sum.

#define ADM_CM_STEP 30
#define ADM_CM_MAX_ROWS 64  // rows_per_block at most

// Value of one sample after masking, before the row sum. x is the source sample, thr the
// summed threshold of the position. Scale 0: |x * rf| - (thr << sub) in int64.
// Scales 1..3: CSF-weight x first, then |.| - thr truncated to int32 (libvmaf's i4 path).
// Both then clip at zero and cube in fixed point, the square truncated to int32.
// The per-orientation parameters stay in shared memory (sp, the kernel's copy of its
// parameter block) and are read where they are used instead of occupying registers.
struct CmShifts {
    const i64* sp;
    int q;
    __device__ __forceinline__ i64 rf() const { return sp[ADM_P_RF + q]; }
    __device__ __forceinline__ int sub() const { return (int)sp[ADM_P_CM_SUB_SHIFT + q]; }
    __device__ __forceinline__ i64 sq_rnd() const { return sp[ADM_P_CM_SQ_RND + q]; }
    __device__ __forceinline__ int sq_shift() const { return (int)sp[ADM_P_CM_SQ_SHIFT + q]; }
    __device__ __forceinline__ i64 cub_rnd() const { return sp[ADM_P_CM_CUB_RND + q]; }
    __device__ __forceinline__ int cub_shift() const { return (int)sp[ADM_P_CM_CUB_SHIFT + q]; }
};

__device__ __forceinline__ i64 cm_masked(i16 x, i32 thr, const CmShifts& s) {
    // |rf * x| <= 65535 * 32768 < 2**31: the product fits int32.
    const i32 p = (i32)s.rf() * x;
    return (i64)(p < 0 ? -p : p) - ((i64)thr << s.sub());
}
__device__ __forceinline__ i64 cm_masked(i32 x, i32 thr, const CmShifts& s) {
    const i32 y = csf_weight(x, s.rf(), 0);
    return (i32)((u32)c_abs32(y) - (u32)thr);
}

template <typename T>
__device__ __forceinline__ i64 cm_term(T x, i32 thr, const CmShifts& s) {
    const i64 m = imax64(cm_masked(x, thr, s), 0);
    if (m <= 0xffffffffLL) {
        // The usual case, in 32x32->64 multiplies. The square's bits sh..sh+31 are the
        // same whether it is shifted as int64 or uint64 (sh <= 32), so (int32) agrees.
        const u32 mu = (u32)m;
        const i32 sq = (i32)(((u64)mu * mu + (u64)s.sq_rnd()) >> s.sq_shift());
        return (mul_u32_i32(mu, sq) + s.cub_rnd()) >> s.cub_shift();
    }
    const i64 sq = (i64)(i32)((m * m + s.sq_rnd()) >> s.sq_shift());
    return (sq * m + s.cub_rnd()) >> s.cub_shift();
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
__device__ __forceinline__ void cm_position(const BandSet<T>& o, const BandSet<T>& t, i64 at,
                                            const i32* __restrict__ lut, double egl,
                                            const CmShifts* sh, bool aim, CmPos<T>* p) {
    p->o[0] = __ldg(o.h + at);
    p->o[1] = __ldg(o.v + at);
    p->o[2] = __ldg(o.d + at);
    const Decoupled<T> dc =
        decouple(p->o[0], p->o[1], p->o[2], __ldg(t.h + at), __ldg(t.v + at), __ldg(t.d + at), lut, egl);
    u32 fa = 0, fr = 0, ca = 0, cr = 0;
#pragma unroll
    for (int q = 0; q < 3; ++q) {
        p->r[q] = dc.r[q];
        p->a[q] = dc.a[q];
        const T ya = csf_weight(dc.a[q], sh[q].rf(), q);
        fa += (u32)(i32)csf_flt(ya);
        ca += (u32)cm_centre(ya);
        if (aim) {
            const T yr = csf_weight(dc.r[q], sh[q].rf(), q);
            fr += (u32)(i32)csf_flt(yr);
            cr += (u32)cm_centre(yr);
        }
    }
    p->fsum[0] = fa;
    p->fsum[1] = fr;
    p->csum[0] = ca;
    p->csum[1] = cr;
}

// Sums 0..2 are the numerator's, 3..5 AIM's, 6..8 the denominator's.
__device__ __forceinline__ bool sum_used(int k, bool aim, bool den) {
    return k < 3 || (k < 6 ? aim : den);
}

template <typename T>
__global__ void __launch_bounds__(32 * ADM_ROW_WARPS, ADM_CM_MIN_BLOCKS)
adm_cm(const T* __restrict__ ref, const T* __restrict__ dis, i64 band_fstride, int hh, int ww,
       i64 plane, const i32* __restrict__ lut, const i64* __restrict__ params,
       i64* __restrict__ acc, i64 acc_fstride, int top, int bottom, int left, int right,
       int rows_per_block, int rows_per_item, double egl, int do_aim, int do_den) {
    __shared__ u64 rowsum[ADM_CM_MAX_ROWS][9];
    __shared__ u64 red[ADM_ROW_WARPS][9][33];  // 33: lanes 2k of one read spread over banks
    __shared__ i64 sp[ADM_P_COUNT];
    const int lane = threadIdx.x;
    const int warp = threadIdx.y;
    const int tid = warp * 32 + lane;
    const int f = blockIdx.z;
    const bool aim = do_aim != 0;
    const bool den = do_den != 0;

    const BandSet<T> o = band_set(ref, band_fstride, f, plane);
    const BandSet<T> t = band_set(dis, band_fstride, f, plane);

    const int r0 = top + blockIdx.x * rows_per_block;
    const int r1 = imin32(bottom, r0 + rows_per_block);
    const int nrows = r1 - r0;
    if (tid < ADM_P_COUNT) sp[tid] = __ldg(params + tid);
    for (int k = tid; k < nrows * 9; k += 32 * ADM_ROW_WARPS) rowsum[k / 9][k % 9] = 0;
    __syncthreads();
    const CmShifts sh[3] = {{sp, 0}, {sp, 1}, {sp, 2}};
    const DenShifts dsh = den_shifts(sp);

    const int nstrips = (right - left + ADM_CM_STEP - 1) / ADM_CM_STEP;
    const int nitems = nstrips * ((nrows + rows_per_item - 1) / rows_per_item);
    for (int item = warp; item < nitems; item += ADM_ROW_WARPS) {
        const int strip = item % nstrips;
        const int a = r0 + (item / nstrips) * rows_per_item;
        const int b = imin32(r1, a + rows_per_item);
        const int j = left + strip * ADM_CM_STEP - 1 + lane;
        const int jc = tap_index(j, ww);
        const bool own = lane >= 1 && lane <= ADM_CM_STEP && j < right;

        CmPos<T> cur, nxt;
        cm_position(o, t, (i64)tap_index(a - 1, hh) * ww + jc, lut, egl, sh, aim, &nxt);
        u32 above[2] = {nxt.fsum[0], nxt.fsum[1]};
        cm_position(o, t, (i64)a * ww + jc, lut, egl, sh, aim, &cur);
        for (int i = a; i < b; ++i) {
            cm_position(o, t, (i64)tap_index(i + 1, hh) * ww + jc, lut, egl, sh, aim, &nxt);
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
#pragma unroll
                for (int q = 0; q < 3; ++q) v[q] = cm_term(cur.r[q], thr_num, sh[q]);
                if (aim) {
                    const i32 thr_aim = (i32)(box[1] + cur.csum[1]);
#pragma unroll
                    for (int q = 0; q < 3; ++q) v[3 + q] = cm_term(cur.a[q], thr_aim, sh[q]);
                }
                if (den) {
#pragma unroll
                    for (int q = 0; q < 3; ++q) v[6 + q] = (i64)den_term(cur.o[q], dsh);
                }
            }
            // The row's nine sums over the warp, through shared memory: each lane stores
            // its nine values, then lanes 2k and 2k + 1 add up half of sum k each.
#pragma unroll
            for (int k = 0; k < 9; ++k) red[warp][k][lane] = (u64)v[k];
            __syncwarp();
            if (lane < 18) {
                const int k = lane >> 1;
                const u64* __restrict__ part = &red[warp][k][(lane & 1) * 16];
                u64 sum = 0;
#pragma unroll
                for (int m = 0; m < 16; ++m) sum += part[m];
                sum += __shfl_down_sync(0x3ffffu, sum, 1);
                if (!(lane & 1) && sum_used(k, aim, den)) atomicAdd((u64*)&rowsum[i - r0][k], sum);
            }
            __syncwarp();
            above[0] = cur.fsum[0];
            above[1] = cur.fsum[1];
            cur = nxt;
        }
    }
    __syncthreads();
    if (tid < 9) {
        const int k = tid;
        if (!sum_used(k, aim, den)) return;
        const i64 row_rnd = sp[ADM_P_CM_ROW_RND];
        const int row_shift = (int)sp[ADM_P_CM_ROW_SHIFT];
        u64 total = 0;
        for (int r = 0; r < nrows; ++r) {
            const u64 s = rowsum[r][k];
            total += k < 6 ? (u64)((i64)(s + (u64)row_rnd) >> row_shift) : (s + dsh.row_rnd) >> dsh.row_shift;
        }
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
