// kernels/vif.cu (as admcuda.backends.cuda.kernels.feature_source gives it, saved as
// vif_full.cu beside this file) behind the shim, one C entry point for every instance.
#include "shim.h"
#include "vif_full.cu"
template <typename T, int S, bool DEC>
static void go(const void* ref, const void* dis, int n, int h, int w, const int* rows, const int* cols,
               unsigned mr, int ms, unsigned sr, int ss, const unsigned short* table, double egl, double eps,
               long long* acc, int stride, int do_stat, unsigned dr, int ds, int dc, unsigned short* oref, unsigned short* odis) {
  D3 grid = {(w + VIF_TW - 1) / VIF_TW, (h + VIF_TH - 1) / VIF_TH, n};
  launch(grid, {VIF_TW * VIF_TH / 4, 1, 1}, [&] {
    vif_scale<T, S, DEC>((const T*)ref, (const T*)dis, h, w, rows, cols, mr, ms, sr, ss, table, egl, eps, acc, stride, do_stat, dr, ds, dc, oref, odis);
  });
}
extern "C" void run_vif_scale(int eight, int S, int dec, const void* ref, const void* dis, int n, int h, int w,
    const int* rows, const int* cols, unsigned mr, int ms, unsigned sr, int ss, const unsigned short* table,
    double egl, double eps, long long* acc, int stride, int do_stat, unsigned dr, int ds, int dc,
    unsigned short* oref, unsigned short* odis) {
#define A ref, dis, n, h, w, rows, cols, mr, ms, sr, ss, table, egl, eps, acc, stride, do_stat, dr, ds, dc, oref, odis
  if (eight) { if (dec) go<unsigned char, 0, true>(A); else go<unsigned char, 0, false>(A); return; }
  switch (S * 2 + dec) {
    case 0: go<unsigned short, 0, false>(A); break; case 1: go<unsigned short, 0, true>(A); break;
    case 2: go<unsigned short, 1, false>(A); break; case 3: go<unsigned short, 1, true>(A); break;
    case 4: go<unsigned short, 2, false>(A); break; case 5: go<unsigned short, 2, true>(A); break;
    case 6: go<unsigned short, 3, false>(A); break;
  }
}
