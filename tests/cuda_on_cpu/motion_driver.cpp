// kernels/motion.cu (saved as motion_full.cu beside this file) behind the shim.
#include "shim.h"
#include "motion_full.cu"
extern "C" void run_motion(int eight, const void* cur, const void* keep, int back, int n, int h, int w, long long rnd, int shift, unsigned long long* sad) {
  D3 grid = {(h + MOTION_ROWS - 1) / MOTION_ROWS, n, 1};
  launch(grid, {MOTION_THREADS, 1, 1}, [&] {
    if (eight) motion_sad<unsigned char, int>((const unsigned char*)cur, (const unsigned char*)keep, back, h, w, rnd, shift, sad);
    else motion_sad<unsigned short, long long>((const unsigned short*)cur, (const unsigned short*)keep, back, h, w, rnd, shift, sad);
  });
}
