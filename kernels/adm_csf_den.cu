// Stage 4, reference.csf_den.den_accumulators: the integer sums of |ref|**3 over the
// cropped detail bands of the reference, one per orientation, with libvmaf's per-row
// rounding shift. The float finish (rfactor**3, cube root, noise floor) stays on the
// host (reference.csf_den.den_finish).
//
// The pipeline adds these sums inside adm_cm's pass over the same crop, which reads the
// same samples; this kernel is the stage on its own, for a reference without a
// distorted input and for the stage's parity test. The per-sample term is den_term in
// adm_common.cuh.
//
// Layout: blockDim = (32, ADM_ROW_WARPS); each warp takes whole crop rows (lanes stride
// across the row), so a row's sum is complete in one warp before it is rounded. Each
// block covers rows_per_block rows and adds its three rounded sums to
// acc[frame * acc_fstride + ADM_ACC_DEN + q] with one atomicAdd each; sums wrap modulo
// 2**64 as the reference's uint64 arithmetic does.

template <typename T>
__global__ void adm_csf_den(const T* __restrict__ ref, i64 band_fstride, int ww, i64 plane,
                            const i64* __restrict__ params, i64* __restrict__ acc, i64 acc_fstride,
                            int top, int bottom, int left, int right, int rows_per_block) {
    __shared__ u64 part[ADM_ROW_WARPS][3];
    const int lane = threadIdx.x;
    const int warp = threadIdx.y;
    const int f = blockIdx.z;
    const BandSet<T> o = band_set(ref, band_fstride, f, plane);
    const T* __restrict__ src[3] = {o.h, o.v, o.d};

    const DenShifts sh = den_shifts(params);

    u64 total[3] = {0, 0, 0};
    const int r0 = top + blockIdx.x * rows_per_block;
    const int r1 = imin32(bottom, r0 + rows_per_block);
    for (int i = r0 + warp; i < r1; i += ADM_ROW_WARPS) {
        u64 row[3] = {0, 0, 0};
        for (int j = left + lane; j < right; j += 32) {
            const i64 at = (i64)i * ww + j;
#pragma unroll
            for (int q = 0; q < 3; ++q) row[q] += den_term(__ldg(src[q] + at), sh);
        }
#pragma unroll
        for (int q = 0; q < 3; ++q) {
            const u64 s = (u64)warp_sum((i64)row[q]);
            total[q] += (s + sh.row_rnd) >> sh.row_shift;
        }
    }
    if (lane == 0) {
#pragma unroll
        for (int q = 0; q < 3; ++q) part[warp][q] = total[q];
    }
    __syncthreads();
    if (lane == 0 && warp == 0) {
#pragma unroll
        for (int q = 0; q < 3; ++q) {
            u64 s = 0;
            for (int w = 0; w < ADM_ROW_WARPS; ++w) s += part[w][q];
            atomicAdd((u64*)(acc + (i64)f * acc_fstride + ADM_ACC_DEN + q), s);
        }
    }
}
