// tilec CUDA device support, part 4: warp-level tensor-core MMA (mma.sync.aligned, sm_80+; fp8
// on sm_89+) and the maps between matrix elements and (lane, slot) of each fragment.
//
// Every shape computes D (16x8, f32) = A (16xK, row-major) * B (Kx8, "col": K runs down a
// column) + C. A thread's fragment is an array of 32-bit registers; slot s of a fragment is
// element s of the thread's elements in register order, low bits first (for 16-bit types
// register s / 2, half s % 2; for 8-bit types register s / 4, byte s % 4; for 32-bit types
// register s). With g = lane / 4 and t = lane % 4 (PTX's groupID and threadID_in_group):
//
//   frag_m16n8k16_a  16x16 f16/bf16, 4 regs:  reg 0 = (g, 2t..2t+1)   reg 1 = (g+8, 2t..2t+1)
//                                             reg 2 = (g, 2t+8..2t+9) reg 3 = (g+8, 2t+8..2t+9)
//   frag_m16n8k16_b  16x8 f16/bf16, 2 regs:   reg 0 = (k 2t..2t+1, n g)  reg 1 = (k 2t+8..2t+9, n g)
//   frag_m16n8k8_tf32_a 16x8 tf32, 4 regs:    reg 0 = (g, t) reg 1 = (g+8, t) reg 2 = (g, t+4)
//                                             reg 3 = (g+8, t+4)
//   frag_m16n8k8_tf32_b 8x8 tf32, 2 regs:     reg 0 = (k t, n g)  reg 1 = (k t+4, n g)
//   frag_m16n8k32_f8_a 16x32 e4m3/e5m2, 4 regs: reg 0 = (g, 4t..4t+3)  reg 1 = (g+8, 4t..4t+3)
//                                             reg 2 = (g, 4t+16..4t+19) reg 3 = (g+8, 4t+16..)
//   frag_m16n8k32_f8_b 32x8 e4m3/e5m2, 2 regs: reg 0 = (k 4t..4t+3, n g) reg 1 = (k 4t+16.., n g)
//   frag_m16n8_c     16x8 f32, 4 regs (C and D of every shape): (g, 2t) (g, 2t+1) (g+8, 2t)
//                                             (g+8, 2t+1)
//
// Each map is a struct with row(lane, slot), col(lane, slot) and their inverse lane(row, col),
// slot(row, col), usable on the host and in constant expressions: the compiler's layout
// inference mirrors them.
#pragma once

#include "cuda/types.h"

namespace tilec_cuda {

struct frag_m16n8k16_a {
  enum : int { rows = 16, cols = 16, slots = 8, regs = 4 };
  __host__ __device__ static constexpr int row(int lane, int slot) {
    return lane / 4 + 8 * ((slot / 2) % 2);
  }
  __host__ __device__ static constexpr int col(int lane, int slot) {
    return 2 * (lane % 4) + slot % 2 + 8 * (slot / 4);
  }
  __host__ __device__ static constexpr int lane(int row, int col) {
    return (row % 8) * 4 + (col % 8) / 2;
  }
  __host__ __device__ static constexpr int slot(int row, int col) {
    return col % 2 + 2 * (row / 8) + 4 * (col / 8);
  }
};

struct frag_m16n8k16_b {
  enum : int { rows = 16, cols = 8, slots = 4, regs = 2 };
  __host__ __device__ static constexpr int row(int lane, int slot) {
    return 2 * (lane % 4) + slot % 2 + 8 * (slot / 2);
  }
  __host__ __device__ static constexpr int col(int lane, int /*slot*/) { return lane / 4; }
  __host__ __device__ static constexpr int lane(int row, int col) {
    return col * 4 + (row % 8) / 2;
  }
  __host__ __device__ static constexpr int slot(int row, int /*col*/) {
    return row % 2 + 2 * (row / 8);
  }
};

struct frag_m16n8_c {
  enum : int { rows = 16, cols = 8, slots = 4, regs = 4 };
  __host__ __device__ static constexpr int row(int lane, int slot) {
    return lane / 4 + 8 * (slot / 2);
  }
  __host__ __device__ static constexpr int col(int lane, int slot) {
    return 2 * (lane % 4) + slot % 2;
  }
  __host__ __device__ static constexpr int lane(int row, int col) { return (row % 8) * 4 + col / 2; }
  __host__ __device__ static constexpr int slot(int row, int col) {
    return col % 2 + 2 * (row / 8);
  }
};

struct frag_m16n8k8_tf32_a {
  enum : int { rows = 16, cols = 8, slots = 4, regs = 4 };
  __host__ __device__ static constexpr int row(int lane, int slot) {
    return lane / 4 + 8 * (slot % 2);
  }
  __host__ __device__ static constexpr int col(int lane, int slot) {
    return lane % 4 + 4 * (slot / 2);
  }
  __host__ __device__ static constexpr int lane(int row, int col) {
    return (row % 8) * 4 + col % 4;
  }
  __host__ __device__ static constexpr int slot(int row, int col) {
    return row / 8 + 2 * (col / 4);
  }
};

struct frag_m16n8k8_tf32_b {
  enum : int { rows = 8, cols = 8, slots = 2, regs = 2 };
  __host__ __device__ static constexpr int row(int lane, int slot) { return lane % 4 + 4 * slot; }
  __host__ __device__ static constexpr int col(int lane, int /*slot*/) { return lane / 4; }
  __host__ __device__ static constexpr int lane(int row, int col) { return col * 4 + row % 4; }
  __host__ __device__ static constexpr int slot(int row, int /*col*/) { return row / 4; }
};

struct frag_m16n8k32_f8_a {
  enum : int { rows = 16, cols = 32, slots = 16, regs = 4 };
  __host__ __device__ static constexpr int row(int lane, int slot) {
    return lane / 4 + 8 * ((slot / 4) % 2);
  }
  __host__ __device__ static constexpr int col(int lane, int slot) {
    return 4 * (lane % 4) + slot % 4 + 16 * (slot / 8);
  }
  __host__ __device__ static constexpr int lane(int row, int col) {
    return (row % 8) * 4 + (col % 16) / 4;
  }
  __host__ __device__ static constexpr int slot(int row, int col) {
    return col % 4 + 4 * (row / 8) + 8 * (col / 16);
  }
};

struct frag_m16n8k32_f8_b {
  enum : int { rows = 32, cols = 8, slots = 8, regs = 2 };
  __host__ __device__ static constexpr int row(int lane, int slot) {
    return 4 * (lane % 4) + slot % 4 + 16 * (slot / 4);
  }
  __host__ __device__ static constexpr int col(int lane, int /*slot*/) { return lane / 4; }
  __host__ __device__ static constexpr int lane(int row, int col) {
    return col * 4 + (row % 16) / 4;
  }
  __host__ __device__ static constexpr int slot(int row, int /*col*/) {
    return row % 4 + 4 * (row / 16);
  }
};

// Two 16-bit elements in one register, `lo` in the low half (the lower slot).
__device__ __forceinline__ uint32_t pack_b16x2(uint16_t lo, uint16_t hi) {
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}
__device__ __forceinline__ uint32_t pack_half2(half lo, half hi) {
  return pack_b16x2(bits_of(lo), bits_of(hi));
}
__device__ __forceinline__ uint32_t pack_bfloat162(bfloat16 lo, bfloat16 hi) {
  return pack_b16x2(bits_of(lo), bits_of(hi));
}
// Four 8-bit elements in one register, b0 in the lowest byte.
__device__ __forceinline__ uint32_t pack_b8x4(uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3) {
  return static_cast<uint32_t>(b0) | (static_cast<uint32_t>(b1) << 8) |
         (static_cast<uint32_t>(b2) << 16) | (static_cast<uint32_t>(b3) << 24);
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

// cvt.rna.tf32.f32: float rounded to tf32 (10 mantissa bits; nearest, ties away from zero),
// as the 32-bit register mma's .tf32 operands take.
__device__ __forceinline__ uint32_t to_tf32(float f) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(f));
  return r;
}

// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3}:
// d = a * b + c, fragments as frag_m16n8k16_a / _b and frag_m16n8_c. d may be c.
__device__ __forceinline__ void mma_m16n8k16_f16(float* d, const uint32_t* a, const uint32_t* b,
                                                 const float* c) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: as mma_m16n8k16_f16, on bfloat16.
__device__ __forceinline__ void mma_m16n8k16_bf16(float* d, const uint32_t* a, const uint32_t* b,
                                                  const float* c) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3}:
// a and b hold tf32 values (to_tf32), fragments as frag_m16n8k8_tf32_a / _b, frag_m16n8_c.
__device__ __forceinline__ void mma_m16n8k8_tf32(float* d, const uint32_t* a, const uint32_t* b,
                                                 const float* c) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

#endif  // sm_80

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
#define TILEC_CUDA_HAS_FP8_MMA 1

// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3}
// (sm_89+): fragments as frag_m16n8k32_f8_a / _b (four fp8 bytes a register), frag_m16n8_c.
__device__ __forceinline__ void mma_m16n8k32_e4m3(float* d, const uint32_t* a, const uint32_t* b,
                                                  const float* c) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

// mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32: as mma_m16n8k32_e4m3, on e5m2.
__device__ __forceinline__ void mma_m16n8k32_e5m2(float* d, const uint32_t* a, const uint32_t* b,
                                                  const float* c) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

#endif  // sm_89

}  // namespace tilec_cuda
