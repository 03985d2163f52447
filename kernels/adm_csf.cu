// Stage 3, reference.csf.csf applied to the output of reference.decouple.decouple
// (scale 0) and reference.decouple.decouple_s123 (scales 1..3).
//
// Decouple is inlined: each thread reads the reference and distorted detail samples
// of one position, splits the distorted one into restored and additive parts in
// registers and weights them, so no decouple plane ever reaches device memory.
//
// Output planes are [frame][2][3][hh][ww] in (h, v, d) order: set 0 weights the
// additive part (the masker of the detail-loss numerator), set 1 the restored part
// (the masker of AIM, skipped when do_aim is 0). flt is always written over the region;
// weighted only when its pointer is not null (the stage's parity test reads it, the
// masking stage recomputes the centre sample instead).
//
// last_d, when not null, receives row hh - 2 of the d plane libvmaf's CSF buffer holds
// last (the weighted restored band, or |weighted additive| / 30 without AIM), [frame][ww]:
// a frame 17..32 high reads it at scale 3 as its DWT's row -1 (see adm_dwt2.cu).

template <typename T>
__global__ void adm_csf(const T* __restrict__ ref, const T* __restrict__ dis, i64 band_fstride,
                        int ww, i64 plane, const i32* __restrict__ lut,
                        const i64* __restrict__ params, T* __restrict__ flt,
                        T* __restrict__ weighted, i64 out_fstride, T* __restrict__ last_d,
                        int hh, int row0, int row1, int col0, int col1, double egl,
                        int do_aim) {
    const int j = col0 + blockIdx.x * blockDim.x + threadIdx.x;
    const int i = row0 + blockIdx.y * blockDim.y + threadIdx.y;
    const int f = blockIdx.z;
    if (i >= row1 || j >= col1) return;

    const BandSet<T> o = band_set(ref, band_fstride, f, plane);
    const BandSet<T> t = band_set(dis, band_fstride, f, plane);
    const i64 at = (i64)i * ww + j;
    const Decoupled<T> dc = decouple(__ldg(o.h + at), __ldg(o.v + at), __ldg(o.d + at),
                                     __ldg(t.h + at), __ldg(t.v + at), __ldg(t.d + at), lut, egl);

    T* __restrict__ fo = flt + (i64)f * out_fstride + at;
    T* __restrict__ wo = weighted ? weighted + (i64)f * out_fstride + at : weighted;
#pragma unroll
    for (int q = 0; q < 3; ++q) {
        const i64 rf = __ldg(params + ADM_P_RF + q);
        const T ya = csf_weight(dc.a[q], rf, q);
        fo[q * plane] = csf_flt(ya);
        if (wo) wo[q * plane] = ya;
        if (do_aim) {
            const T yr = csf_weight(dc.r[q], rf, q);
            fo[(3 + q) * plane] = csf_flt(yr);
            if (wo) wo[(3 + q) * plane] = yr;
            if (q == 2 && last_d && i == hh - 2) last_d[(i64)f * ww + j] = yr;
        } else if (q == 2 && last_d && i == hh - 2) {
            last_d[(i64)f * ww + j] = csf_flt(ya);
        }
    }
}
