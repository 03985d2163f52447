// Stage 5, reference.cm.cm_accumulators: contrast masking of the detail-loss numerator
// (source = restored part, masker = CSF of the additive part) and of AIM (source =
// additive part, masker = CSF of the restored part), as integer sums with libvmaf's
// per-row rounding shift. The float finish stays on the host (reference.cm.cm_finish).
// With do_den it also adds the denominator's sums (reference.csf_den.den_accumulators,
// the same crop of the reference samples this pass reads anyway) to the ADM_ACC_DEN slots.
//
// Decouple is inlined for the centre sample: the restored/additive split and its CSF
// weight are recomputed in registers from the reference and distorted bands; only the
// |csf| / 30 planes written by adm_csf are read for the 3x3 neighbourhood.
//
// Layout: blockDim = (32, ADM_ROW_WARPS); each warp takes whole crop rows so that a
// row's sum is complete in one warp before it is rounded. A warp walks a row in steps of
// 30 columns: lane L loads column j0 - 1 + L, sums its three rows of the neighbourhood
// and trades column sums with lanes L - 1 and L + 1 by shuffle, so lanes 1..30 each own
// one output column and every flt sample is loaded once per row. Each block adds its
// rounded sums to acc[frame * acc_fstride + ADM_ACC_NUM/AIM/DEN + q] with one atomicAdd
// per sum; int64 sums wrap like the reference's.

#define ADM_CM_STEP 30

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

// Threshold of one masker set: sum over orientations of the 3x3 box of flt without its
// centre plus |weighted centre| / 15. Summed in uint32: exact at scale 0 (small values)
// and the int32 wrap-around of the reference at scales 1..3.
__device__ __forceinline__ i32 cm_threshold(const u32* box, const i32* centre) {
    u32 thr = 0;
#pragma unroll
    for (int q = 0; q < 3; ++q) thr += box[q] + (u32)centre[q];
    return (i32)thr;
}

template <typename T>
__global__ void __launch_bounds__(32 * ADM_ROW_WARPS, ADM_CM_MIN_BLOCKS) adm_cm(const T* __restrict__ ref, const T* __restrict__ dis, i64 band_fstride,
                       int hh, int ww, i64 plane, const T* __restrict__ flt, i64 flt_fstride,
                       const i32* __restrict__ lut, const i64* __restrict__ params,
                       i64* __restrict__ acc, i64 acc_fstride, int top, int bottom, int left,
                       int right, int rows_per_block, double egl, int do_aim, int do_den) {
    __shared__ i64 part[ADM_ROW_WARPS][9];
    __shared__ i64 sp[ADM_P_COUNT];
    const int lane = threadIdx.x;
    const int warp = threadIdx.y;
    const int f = blockIdx.z;
    const int nsets = do_aim ? 2 : 1;

    const BandSet<T> o = band_set(ref, band_fstride, f, plane);
    const BandSet<T> t = band_set(dis, band_fstride, f, plane);
    const T* __restrict__ fl = flt + (i64)f * flt_fstride;

    // part: each warp's rounded row sums, accumulated by its lane 0 (in shared memory
    // rather than registers, which the inner loop needs).
    const int tid = warp * 32 + lane;
    if (tid < ADM_P_COUNT) sp[tid] = __ldg(params + tid);
    if (lane < 9) part[warp][lane] = 0;
    __syncthreads();
    const CmShifts sh[3] = {{sp, 0}, {sp, 1}, {sp, 2}};
    const i64 row_rnd = sp[ADM_P_CM_ROW_RND];
    const int row_shift = (int)sp[ADM_P_CM_ROW_SHIFT];
    const DenShifts dsh = den_shifts(sp);

    const int r0 = top + blockIdx.x * rows_per_block;
    const int r1 = imin32(bottom, r0 + rows_per_block);
    for (int i = r0 + warp; i < r1; i += ADM_ROW_WARPS) {
        const i64 rows[3] = {(i64)tap_index(i - 1, hh) * ww, (i64)i * ww, (i64)tap_index(i + 1, hh) * ww};
        i64 row[6] = {0, 0, 0, 0, 0, 0};
        u64 den_row[3] = {0, 0, 0};
        for (int j0 = left; j0 < right; j0 += ADM_CM_STEP) {
            const int j = j0 - 1 + lane;
            const int jc = tap_index(j, ww);
            const bool own = lane >= 1 && lane <= ADM_CM_STEP && j < right;

            // Box sums (without centre) of the masker planes around (i, j).
            u32 box[2][3];
#pragma unroll
            for (int s = 0; s < 2; ++s) {
#pragma unroll
                for (int q = 0; q < 3; ++q) {
                    u32 col = 0, mid = 0;
                    if (s < nsets) {
                        const T* __restrict__ p = fl + (3 * s + q) * plane + jc;
                        mid = (u32)(i32)__ldg(p + rows[1]);
                        col = (u32)(i32)__ldg(p + rows[0]) + mid + (u32)(i32)__ldg(p + rows[2]);
                    }
                    const u32 west = __shfl_up_sync(0xffffffffu, col, 1);
                    const u32 east = __shfl_down_sync(0xffffffffu, col, 1);
                    box[s][q] = west + col + east - mid;
                }
            }
            if (own) {
                const i64 at = rows[1] + j;
                const T oh = __ldg(o.h + at), ov = __ldg(o.v + at), od = __ldg(o.d + at);
                const Decoupled<T> dc =
                    decouple(oh, ov, od, __ldg(t.h + at), __ldg(t.v + at), __ldg(t.d + at), lut, egl);
                if (do_den) {
                    den_row[0] += den_term(oh, dsh);
                    den_row[1] += den_term(ov, dsh);
                    den_row[2] += den_term(od, dsh);
                }
                i32 centre[3];
#pragma unroll
                for (int q = 0; q < 3; ++q) centre[q] = cm_centre(csf_weight(dc.a[q], sh[q].rf(), q));
                const i32 thr_num = cm_threshold(box[0], centre);
#pragma unroll
                for (int q = 0; q < 3; ++q) row[q] += cm_term(dc.r[q], thr_num, sh[q]);
                if (do_aim) {
#pragma unroll
                    for (int q = 0; q < 3; ++q) centre[q] = cm_centre(csf_weight(dc.r[q], sh[q].rf(), q));
                    const i32 thr_aim = cm_threshold(box[1], centre);
#pragma unroll
                    for (int q = 0; q < 3; ++q) row[3 + q] += cm_term(dc.a[q], thr_aim, sh[q]);
                }
            }
            __syncwarp();
        }
#pragma unroll
        for (int k = 0; k < 6; ++k) {
            const i64 sum = (warp_sum(row[k]) + row_rnd) >> row_shift;
            if (lane == 0) part[warp][k] = (i64)((u64)part[warp][k] + (u64)sum);
        }
        if (do_den) {
#pragma unroll
            for (int q = 0; q < 3; ++q) {
                const u64 sum = ((u64)warp_sum((i64)den_row[q]) + dsh.row_rnd) >> dsh.row_shift;
                if (lane == 0) part[warp][6 + q] = (i64)((u64)part[warp][6 + q] + sum);
            }
        }
    }
    __syncthreads();
    if (lane == 0 && warp == 0) {
        i64* __restrict__ out = acc + (i64)f * acc_fstride;
        for (int k = 0; k < 9; ++k) {
            const bool used = k < 6 ? k < 3 * nsets : do_den != 0;
            if (!used) continue;
            u64 s = 0;
            for (int w = 0; w < ADM_ROW_WARPS; ++w) s += (u64)part[w][k];
            atomicAdd((u64*)(out + (k < 6 ? ADM_ACC_NUM + k : ADM_ACC_DEN + k - 6)), s);
        }
    }
}
