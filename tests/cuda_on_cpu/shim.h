// Just enough of CUDA's device language to run kernels/*.cu on the CPU, for tests on
// machines without a GPU (tests/test_kernels_on_cpu.py): each CUDA thread of a block is
// an OS thread, __syncthreads a barrier, blocks run one after another. Intrinsics map to
// the plain C++ operations they round like (the file is built with -ffp-contract=off).
// Warp shuffles are not provided: kernels checked here reduce through shared memory.
#include <cstdint>
#include <cstring>
#include <cmath>
#include <thread>
#include <barrier>
#include <vector>
#include <functional>
#include <algorithm>
using std::min;
struct D3 { int x, y, z; };
static thread_local D3 threadIdx;
static D3 blockIdx, blockDim;
static std::barrier<>* g_bar;
#define __global__
#define __device__
#define __forceinline__ inline
#define __constant__
#define __launch_bounds__(x)
#define __shared__ static
#define __restrict__
#define __align__(n) __attribute__((aligned(n)))
struct alignas(16) uint4 { unsigned x, y, z, w; };
#define __ldg(p) (*(p))
#define __clz(x) __builtin_clz((unsigned)(x))
#define __clzll(x) __builtin_clzll((unsigned long long)(x))
#define __ddiv_rn(a,b) ((a)/(b))
#define __dadd_rn(a,b) ((a)+(b))
#define __dsub_rn(a,b) ((a)-(b))
#define __dmul_rn(a,b) ((a)*(b))
#define __double2ll_rz(x) ((long long)(x))
#define __syncthreads() g_bar->arrive_and_wait()
#define atomicAdd(p,v) (*(p)+=(v))
static void launch(D3 grid, D3 block, const std::function<void()>& body) {
  int nt = block.x * block.y * block.z;
  blockDim = block;
  for (int z = 0; z < grid.z; ++z) for (int y = 0; y < grid.y; ++y) for (int x = 0; x < grid.x; ++x) {
    blockIdx = {x, y, z};
    std::barrier<> bar(nt);
    g_bar = &bar;
    std::vector<std::thread> ts;
    for (int t = 0; t < nt; ++t) ts.emplace_back([&, t] {
      threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
      body();
    });
    for (auto& th : ts) th.join();
  }
}
