// tilec CUDA device support, part 7a (sm_90a): the panel layout of the shared tiles that TMA
// writes and wgmma reads, as plain integer arithmetic (the compiler's host tests include this
// header too, to check it against the PTX ISA's and the driver's definitions).
//
// A Rows x Cols tile of E-byte elements is cut into panels P bytes wide, P one of 128, 64, 32
// and 16 (the compiler takes the widest that divides a row's bytes: passes/gpu/infer_layout.h,
// panel_bytes_of). Panel p holds columns [p * P / E, (p + 1) * P / E) of every row: Rows x P
// bytes, rows P bytes apart. Inside a panel the 16-byte chunks of a row are permuted by the
// P-byte swizzle, a function of the shared-memory address: bits [4, 4 + log2(P / 16)) of the
// address are XORed with the bits above bit 7 (for P = 128 the chunk with the row mod 8; P = 64
// with (row / 2) mod 4; P = 32 with (row / 4) mod 2; P = 16 is no swizzle). That is what
// cp.async.bulk.tensor writes with CU_TENSOR_MAP_SWIZZLE_128B / 64B / 32B / NONE, one panel a
// box, and what wgmma reads through a descriptor of swizzle mode 1 / 2 / 3 / 0. The pattern
// repeats every 8 * P bytes, so a tile starts on 1024 bytes and every panel then starts on
// its pattern (Rows is a multiple of 8; 16-byte panels, which have no pattern, may also take
// one row, the panels then lying end to end: TMA moves such a row in boxes of up to 256
// elements).
#pragma once

#if defined(__CUDACC__)
#define TILEC_PANEL_FN __host__ __device__ __forceinline__ constexpr
#else
#define TILEC_PANEL_FN inline constexpr
#endif

namespace tilec_cuda {

// The byte offset `byte` (from a 1024-byte boundary) after the swizzle of PanelBytes panels.
template <int PanelBytes>
TILEC_PANEL_FN int panel_swizzle(int byte) {
  static_assert(PanelBytes == 16 || PanelBytes == 32 || PanelBytes == 64 || PanelBytes == 128,
                "panels are 16, 32, 64 or 128 bytes wide");
  return byte ^ (((byte >> 7) & (PanelBytes / 16 - 1)) << 4);
}

// The element offset of (row, col) in a Rows x Cols tile of ElemBytes-byte elements stored in
// PanelBytes panels (see above).
template <int Rows, int Cols, int ElemBytes, int PanelBytes>
TILEC_PANEL_FN int panel_offset(int row, int col) {
  static_assert((Rows % 8 == 0 || (Rows == 1 && PanelBytes == 16)) && Cols * ElemBytes % PanelBytes == 0,
                "the tile is whole panels of 8-row groups, or one row of 16-byte panels");
  constexpr int panel_cols = PanelBytes / ElemBytes;
  // panel_swizzle of row * PanelBytes + inner, with the XOR on `inner` alone (the row's bytes
  // have no bits where the swizzle XORs, and adding `inner` carries into none of them). Written
  // so, the XOR is seen to take the row's low bits only: a thread's elements 8 rows apart, or
  // whole chunks apart, share their swizzle, and the compiler folds their offsets into the
  // instructions' immediates. panel_swizzle of the sum hid that: a loop storing a fragment kept
  // one register an element for its address (ptxas -v: the warp-specialized attention
  // backward's consumers spilled 108 bytes a thread, 4 now).
  const int inner = (col % panel_cols) * ElemBytes;
  const int swizzled = inner ^ ((((row * PanelBytes) >> 7) & (PanelBytes / 16 - 1)) << 4);
  return (col / panel_cols) * Rows * panel_cols + row * panel_cols + swizzled / ElemBytes;
}

// What a wgmma shared-memory descriptor says of one instruction's operand (PTX ISA, "Matrix
// Descriptor Format"; "Shared Memory Matrix Layout"): its start as a byte offset into the tile,
// the leading and stride byte offsets, and the swizzle mode (0 none, 1 128-byte, 2 64-byte,
// 3 32-byte).
struct operand_view {
  int start = 0, leading = 0, stride = 0, mode = 0;
};

// The swizzle mode of PanelBytes panels.
TILEC_PANEL_FN int panel_swizzle_mode(int panel_bytes) {
  return panel_bytes == 128 ? 1 : panel_bytes == 64 ? 2 : panel_bytes == 32 ? 3 : 0;
}

// The view of the operand part whose first element is (row, col) of a Rows x Cols panel tile.
// K-major (rows along M or N, K along a row): (row, col) starts an 8-row group; the part's K
// step of 32 bytes lies in one panel (P >= 32); 8-row groups are 8 * P bytes apart (stride);
// the leading offset is unused with a swizzle. MN-major (rows along K, M or N along a row):
// (row, col) starts an 8-row group and a panel; with a swizzle the next P bytes of M or N are
// the next panel (leading) and the next 8 rows of K 8 * P bytes on (stride); without one
// (P = 16) the roles swap: 8 rows of K are 128 bytes on (leading), the next 16 bytes of M or N
// the next panel (stride).
template <int Rows, int Cols, int ElemBytes, int PanelBytes, bool KMajor>
TILEC_PANEL_FN operand_view operand_part(int row, int col) {
  static_assert(!KMajor || PanelBytes >= 32, "a K-major row holds whole 32-byte k steps");
  constexpr int panel_cols = PanelBytes / ElemBytes, panel_size = Rows * PanelBytes;
  operand_view v;
  v.start = (col / panel_cols) * panel_size + row * PanelBytes + (col % panel_cols) * ElemBytes;
  v.mode = panel_swizzle_mode(PanelBytes);
  if (KMajor) {
    v.leading = 16;
    v.stride = 8 * PanelBytes;
  } else if (PanelBytes == 16) {
    v.leading = 128;
    v.stride = panel_size;
  } else {
    v.leading = panel_size;
    v.stride = 8 * PanelBytes;
  }
  return v;
}

// The 64-bit descriptor of `view` for a tile at shared-window address `tile_address`.
TILEC_PANEL_FN unsigned long long operand_descriptor_bits(unsigned tile_address, operand_view view) {
  return (((tile_address + view.start) & 0x3FFFFull) >> 4) | ((unsigned long long)(view.leading >> 4) << 16) |
         ((unsigned long long)(view.stride >> 4) << 32) | ((unsigned long long)view.mode << 62);
}

}  // namespace tilec_cuda

#undef TILEC_PANEL_FN
