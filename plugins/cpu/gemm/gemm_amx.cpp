// gemm_amx.cpp — the AMX tile configuration and the 32 x 32 tile kernel (see gemm_amx.h).
// Every function here runs AMX code under its target attribute; callers reach them only
// when amx_bf16_usable() holds.
#include "gemm_amx.h"

#include "intrinsics.h"

#define CTL_CPU_AMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,f16c")))

namespace catalyst::cpu {
namespace {

struct alignas(64) TileConfig {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

}  // namespace

CTL_CPU_AMX void amx_begin() {
  TileConfig config{};
  config.palette = 1;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  __asm__ volatile("" ::: "memory");  // the asm below only names the first bytes of config
  _tile_loadconfig(&config);
}

CTL_CPU_AMX void amx_end() {
  _tile_release();
}

CTL_CPU_AMX void amx_kernel_32x32(int64_t chunks, const uint16_t* a0, const uint16_t* a1, const uint16_t* b0,
                                  const uint16_t* b1, const float* c_in, int64_t ld_in, float* c_out, int64_t ld_out) {
  __asm__ volatile("" ::: "memory");  // tile loads read memory the compiler cannot see
  if (c_in) {
    const int64_t stride = ld_in * static_cast<int64_t>(sizeof(float));
    _tile_loadd(0, c_in, stride);
    _tile_loadd(1, c_in + 16, stride);
    _tile_loadd(2, c_in + 16 * ld_in, stride);
    _tile_loadd(3, c_in + 16 * ld_in + 16, stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  for (int64_t k = 0; k < chunks; ++k) {
    _tile_loadd(4, a0 + k * kAmxPanelChunk, 64);
    _tile_loadd(6, b0 + k * kAmxPanelChunk, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(7, b1 + k * kAmxPanelChunk, 64);
    _tile_dpbf16ps(1, 4, 7);
    _tile_loadd(5, a1 + k * kAmxPanelChunk, 64);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  const int64_t stride = ld_out * static_cast<int64_t>(sizeof(float));
  _tile_stored(0, c_out, stride);
  _tile_stored(1, c_out + 16, stride);
  _tile_stored(2, c_out + 16 * ld_out, stride);
  _tile_stored(3, c_out + 16 * ld_out + 16, stride);
}
}  // namespace catalyst::cpu
