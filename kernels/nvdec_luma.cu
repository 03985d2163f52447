// NVDEC's decoded surface to a contiguous luma plane (admcuda.io.nvdec.reader), one
// kernel a frame. No reference stage: the reference reads planes that are already
// contiguous. Rows are `pitch` samples apart in the surface. NV12's rows are copied;
// P016's samples are shifted down to 10-bit values (P016_SHIFT), and flag[slot] is set
// where a sample has one of the low bits (P016_LOW: a 12-bit stream). P016_SHIFT and
// P016_LOW are defined by the caller.

extern "C" __global__ void admcuda_luma_p016(const unsigned short* __restrict__ src,
                                             long long pitch, unsigned short* __restrict__ dst,
                                             int width, int* __restrict__ flag, int slot) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width) return;
    const long long y = blockIdx.y;
    const unsigned short v = __ldg(src + y * pitch + x);
    dst[y * width + x] = (unsigned short)(v >> P016_SHIFT);
    if (v & P016_LOW) flag[slot] = 1;
}

extern "C" __global__ void admcuda_luma_nv12(const unsigned char* __restrict__ src,
                                             long long pitch, unsigned char* __restrict__ dst,
                                             int width) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width) return;
    const long long y = blockIdx.y;
    dst[y * width + x] = __ldg(src + y * pitch + x);
}
