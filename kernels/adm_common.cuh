// Device helpers shared by every ADM stage: C integer semantics, libvmaf's decouple
// (reference.decouple) and the per-sample CSF weighting (reference.csf).
//
// This text is pasted into each .cu by admcuda/backends/cuda/kernels.py after a
// generated preamble of #defines (ADM_* constants from reference.constants, ADM_P_*
// parameter slots), so it includes nothing and names no standard header: NVRTC has none
// to offer.
//
// Float discipline: the angle test and the gain limit mix float and double exactly as
// libvmaf does; every rounding is spelled out with an _rn/_rz intrinsic so that nvcc
// cannot fuse a multiply and an add (the module is also built with --fmad=false), and
// no float32 result is ever subnormal, so -ftz changes nothing.

typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

// ---- C integer semantics ----------------------------------------------------------------

__device__ __forceinline__ i32 imin32(i32 a, i32 b) { return a < b ? a : b; }
__device__ __forceinline__ i32 imax32(i32 a, i32 b) { return a > b ? a : b; }
__device__ __forceinline__ i64 imax64(i64 a, i64 b) { return a > b ? a : b; }

// C's abs() on int32: abs(INT32_MIN) stays INT32_MIN (computed in unsigned to keep the
// wrap well defined for the compiler).
__device__ __forceinline__ i32 c_abs32(i32 x) { return (i32)(x < 0 ? 0u - (u32)x : (u32)x); }

__device__ __forceinline__ i64 abs64(i64 x) { return x < 0 ? -x : x; }

// Magnitude of an int32 as uint32 (2**31 for INT32_MIN).
__device__ __forceinline__ u32 mag32(i32 x) { return x < 0 ? 0u - (u32)x : (u32)x; }

// Exact products as one 32x32->64 multiply (libvmaf's int64 products of int32 values).
__device__ __forceinline__ i64 mul_wide(i32 a, i32 b) { return (i64)a * (i64)b; }

// a * b for a uint32 factor (the scale 1..3 CSF factors reach 2**32 - 1) and any int32.
__device__ __forceinline__ i64 mul_u32_i32(u32 a, i32 b) {
    const i64 p = (i64)((u64)a * (u64)(u32)b);
    return b < 0 ? p - (i64)((u64)a << 32) : p;
}

// ---- band sets ---------------------------------------------------------------------------
// A DWT level of one frame is four planes of hh x ww samples, in reference.dwt2.Bands
// order: a, v, h, d. Kernels take the pointers from this struct first and only then
// index them, so every load goes through a const __restrict__ pointer and __ldg.

template <typename T>
struct BandSet {
    const T* __restrict__ a;
    const T* __restrict__ v;
    const T* __restrict__ h;
    const T* __restrict__ d;
};

template <typename T>
__device__ __forceinline__ BandSet<T> band_set(const T* base, i64 frame_stride, int frame, i64 plane) {
    const T* p = base + (i64)frame * frame_stride;
    BandSet<T> s = {p, p + plane, p + 2 * plane, p + 3 * plane};
    return s;
}

// ---- decouple (reference.decouple) ----------------------------------------------------------

// (h, v) vectors of reference and distorted within one degree: libvmaf converts each
// int64 dot product to float, then to double, divides by 4096 and compares in double.
// The arguments are those products already rounded to float.
__device__ __forceinline__ bool angle_test(float dot, float omag, float tmag) {
    // Division by 4096 is exact in double; the multiply by its reciprocal is the same number.
    const double d = __dmul_rn((double)dot, ADM_INV_ANGLE_SCALE);
    const double o = __dmul_rn((double)omag, ADM_INV_ANGLE_SCALE);
    const double t = __dmul_rn((double)tmag, ADM_INV_ANGLE_SCALE);
    return d >= 0.0 && __dmul_rn(d, d) >= __dmul_rn(__dmul_rn(ADM_COS_1DEG_SQ, o), t);
}
// int16 products fit int32; only the dot product's sum needs 64 bits. A squared
// magnitude is at most 2**31, so it is summed and rounded to float as uint32: the
// same float as the int64 conversion, both rounding the exact integer to nearest.
__device__ __forceinline__ bool angle_flag(i16 oh, i16 ov, i16 th, i16 tv) {
    const u32 om = (u32)((i32)oh * oh) + (u32)((i32)ov * ov);
    const u32 tm = (u32)((i32)th * th) + (u32)((i32)tv * tv);
    return angle_test(__ll2float_rn((i64)((i32)oh * th) + (i32)ov * tv), __uint2float_rn(om),
                      __uint2float_rn(tm));
}
__device__ __forceinline__ bool angle_flag(i32 oh, i32 ov, i32 th, i32 tv) {
    return angle_test(__ll2float_rn(mul_wide(oh, th) + mul_wide(ov, tv)),
                      __ll2float_rn(mul_wide(oh, oh) + mul_wide(ov, ov)),
                      __ll2float_rn(mul_wide(th, th) + mul_wide(tv, tv)));
}

// libvmaf's Q30 reciprocal table entry for x in -32768..32768: 2**30 / x truncated
// toward zero, 0 for x = 0. By default the table itself is read (the argument lut, 65537
// entries centred at ADM_LUT_CENTRE; its hot middle stays in L1): the gathers cost fewer
// instructions than the division, and the masking pass is bound by instruction issue
// (see kernels/NOTES.md). With ADM_RECIP_DIVIDE it is computed by an exact
// unsigned division instead. adm_recip_table shows what the kernels use at every index.
__device__ __forceinline__ i32 recip_q30(i32 x, const i32* __restrict__ lut) {
#ifndef ADM_RECIP_DIVIDE
    return __ldg(lut + ADM_LUT_CENTRE + x);
#else
    (void)lut;
    const u32 m = mag32(x);
    const i32 q = m ? (i32)(0x40000000u / m) : 0;
    return x < 0 ? -q : q;
#endif
}

// Gain k in Q15 at scale 0: the Q30 reciprocal of the reference sample times the
// distorted one, clamped to [0, 1]. With m = |o|, q = 2**30 / m truncated and s = t with
// o's sign folded in, the product is q * s, so:
// - s <= 0: the product is <= 0, and k clamps to 0;
// - s > m (only where m <= 32767): q * s >= q * (m + 1) >= 2**30, and k clamps to one;
// - 0 < s <= m: 0 < q * s <= 2**30, so k needs no clamp and the sum fits uint32.
__device__ __forceinline__ i32 gain_k(i16 o, i16 t, const i32* __restrict__ lut) {
    if (o == 0) return ADM_K_ONE;
    const u32 m = mag32(o);
    const i32 s = o < 0 ? -(i32)t : (i32)t;
    if (s <= 0) return 0;
    if ((u32)s > m) return ADM_K_ONE;
    const u32 q = (u32)recip_q30((i32)m, lut);
    return (i32)((q * (u32)s + (u32)ADM_K_RND) >> ADM_K_SHIFT);
}

// Scales 1..3: the reference magnitude is cut to 15 significant bits (libvmaf's
// get_best15_from32) so the same table applies, and the shift grows to match.
__device__ __forceinline__ i32 gain_k(i32 o, i32 t, const i32* __restrict__ lut) {
    if (o == 0) return ADM_K_ONE;
    const u32 mag = mag32(o);
    u32 msb = mag;
    int sh = 0;
    if (mag >= 32768u) {
        sh = 17 - __clz((i32)mag);
        msb = (mag + (1u << (sh - 1))) >> sh;
    }
    // libvmaf's int (1 << (14 + s)) wraps to INT32_MIN at s == 17.
    const i64 rnd = sh == 17 ? (i64)(-2147483647 - 1) : ((i64)1 << (14 + sh));
    i64 k = mul_wide(recip_q30((i32)msb, lut), t);
    k = (o < 0 ? -k : k) + rnd;
    k >>= (ADM_K_SHIFT + sh);
    return (i32)(k < 0 ? 0 : (k > ADM_K_ONE ? ADM_K_ONE : k));
}

// Restored value before the gain limit, truncated to the band type.
__device__ __forceinline__ i16 restore_raw(i32 k, i16 o) {
    return (i16)((k * (i32)o + ADM_K_RND) >> ADM_K_SHIFT);
}
__device__ __forceinline__ i32 restore_raw(i32 k, i32 o) {
    return (i32)((mul_wide(k, o) + ADM_K_RND) >> ADM_K_SHIFT);
}

// Enhancement gain limit where the angle test passed: MIN/MAX of (double)rst * egl
// against the distorted sample, truncated back to the band type. The sign test of
// libvmaf's float product k/32768 * o/64 reduces to the signs of k and o.
template <typename T>
__device__ __forceinline__ T restore(i32 k, T o, T t, bool flag, double egl) {
    const T rst = restore_raw(k, o);
    if (!flag || k <= 0 || o == 0) return rst;
    const double s = __dmul_rn(__int2double_rn((i32)rst), egl);
    const double td = __int2double_rn((i32)t);
    const double m = o > 0 ? (s < td ? s : td) : (s > td ? s : td);
    // |m| <= max(|rst|, |t|) fits T, so the truncation is exact C semantics.
    return (T)__double2ll_rz(m);
}

// Restored (r) and additive (a = t - r) parts of the three detail orientations at one
// position, in (h, v, d) order.
template <typename T>
struct Decoupled {
    T r[3];
    T a[3];
};

template <typename T>
__device__ __forceinline__ Decoupled<T> decouple(T oh, T ov, T od, T th, T tv, T td,
                                                 const i32* __restrict__ lut, double egl) {
    const bool flag = angle_flag(oh, ov, th, tv);
    const T o[3] = {oh, ov, od};
    const T t[3] = {th, tv, td};
    Decoupled<T> out;
#pragma unroll
    for (int q = 0; q < 3; ++q) {
        const i32 k = gain_k(o[q], t[q], lut);
        out.r[q] = restore(k, o[q], t[q], flag, egl);
        out.a[q] = (T)(t[q] - out.r[q]);
    }
    return out;
}

// ---- CSF weighting of one sample (reference.csf) -----------------------------------------
// Orientation q is 0 = h, 1 = v, 2 = d; rf is the fixed-point factor of that orientation
// (uint16 at scale 0, uint32 above).

// Scale 0 in int32: rf <= 65535 and -32768 <= x <= 32767 keep rf * x + rnd within
// [-2**31 + 2**15, 2**31 - 2**15] for either rounding (rnd <= 65535), so no bit of the
// int64 sum is lost.
__device__ __forceinline__ i16 csf_weight(i16 x, i64 rf, int q) {
    const i32 rnd = q == 2 ? ADM_CSF0_RND_D : ADM_CSF0_RND_HV;
    const int sh = q == 2 ? ADM_CSF0_SHIFT_D : ADM_CSF0_SHIFT_HV;
    return (i16)(((i32)rf * x + rnd) >> sh);
}
__device__ __forceinline__ i32 csf_weight(i32 x, i64 rf, int) {
    return (i32)((mul_u32_i32((u32)rf, x) + ADM_CSF_S123_DST_RND) >> ADM_CSF_S123_DST_SHIFT);
}

// |weighted| / 30: the masker's neighbourhood term. At scale 0 abs is taken in int64
// (abs(-32768) = 32768, and the int16 result may wrap); at 1..3 in int32.
__device__ __forceinline__ i16 csf_flt(i16 y) {
    const i32 m = y < 0 ? -(i32)y : (i32)y;
    return (i16)((ADM_FIX_ONE_BY_30 * m + ADM_FLT0_RND) >> ADM_FLT0_SHIFT);
}
__device__ __forceinline__ i32 csf_flt(i32 y) {
    return (i32)((mul_wide((i32)ADM_I4_FIX_ONE_BY_30, c_abs32(y)) + ADM_CSF_S123_FLT_RND) >>
                 ADM_CSF_S123_FLT_SHIFT);
}

// |weighted| / 15: the centre term of the masking threshold (reference.cm.threshold).
__device__ __forceinline__ i32 cm_centre(i16 y) {
    const i32 m = y < 0 ? -(i32)y : (i32)y;
    return (i32)(i16)((ADM_ONE_BY_15 * m + ADM_FLT0_RND) >> ADM_FLT0_SHIFT);
}
__device__ __forceinline__ i32 cm_centre(i32 y) {
    return (i32)((mul_wide((i32)ADM_I4_ONE_BY_15, c_abs32(y)) + ADM_CSF_S123_FLT_RND) >>
                 ADM_CSF_S123_FLT_SHIFT);
}

// ---- CSF denominator (reference.csf_den) ---------------------------------------------

// One sample's term of the denominator's |ref|**3 sums. Scale 0: |x|**3. Scales 1..3: ((x*x + r1) >> s1) * x, rounded by
// (r2, s2). All uint64 with logical shifts; the counts come masked from the host.
struct DenShifts {
    u64 sq_rnd;
    int sq_shift;
    u64 cub_rnd;
    int cub_shift;
    u64 row_rnd;
    int row_shift;
};

__device__ __forceinline__ DenShifts den_shifts(const i64* params) {
    const DenShifts s = {(u64)params[ADM_P_DEN_SQ_RND], (int)params[ADM_P_DEN_SQ_SHIFT],
                         (u64)params[ADM_P_DEN_CUB_RND], (int)params[ADM_P_DEN_CUB_SHIFT],
                         (u64)params[ADM_P_DEN_ROW_RND], (int)params[ADM_P_DEN_ROW_SHIFT]};
    return s;
}

__device__ __forceinline__ u64 den_term(i16 x, const DenShifts&) {
    const u32 m = (u32)(x < 0 ? -(i32)x : (i32)x);  // m * m <= 2**30 fits uint32
    return (u64)(m * m) * m;
}
__device__ __forceinline__ u64 den_term(i32 x, const DenShifts& s) {
    const u32 m32 = mag32(x);
    const u64 m = m32;
    const u64 sq = ((u64)m32 * m32 + s.sq_rnd) >> s.sq_shift;
    return (sq * m + s.cub_rnd) >> s.cub_shift;
}

// ---- reductions ----------------------------------------------------------------------------

// Sum over the 32 lanes of a warp, landing in lane 0; int64 sums wrap like C's.
__device__ __forceinline__ i64 warp_sum(i64 v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// Row index of the 3x3 masking tap: reflect -1 to 1 at the top, repeat the last row at
// the bottom (libvmaf's border macros, reference.cm._taps). Same for columns.
__device__ __forceinline__ int tap_index(int i, int n) {
    return i < 0 ? 1 : (i >= n ? n - 1 : i);
}
