// Tests of device/cuda/panels.h, the layout of the shared tiles that TMA writes and wgmma
// reads, on the host: for every element of every wgmma operand a gemm tile issues, the shared
// address three ways must agree --
//   1. where TMA puts it: the box of its panel (rows x panel bytes) written row by row at the
//      panel's address and swizzled as CUtensorMapSwizzle says (the 16-byte chunk index within
//      each span of the swizzle's width XORed with the address's 128-byte line index, modulo
//      the chunks a span holds);
//   2. where wgmma reads it: the descriptor that panels.h builds, decoded field by field and
//      mapped through the PTX ISA's canonical layouts (core matrices of 8 rows x 16 bytes; the
//      leading and stride byte offsets of K-major and MN-major operands, with and without
//      swizzle), then swizzled by the descriptor's mode;
//   3. where generated code addresses it: panel_offset.
#include "../../device/cuda/panels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

namespace {

constexpr unsigned kTileAddress = 9 * 1024;  // a shared address on a 1024-byte boundary

// The span of CUtensorMapSwizzle / a descriptor's swizzle mode in bytes (0: none).
int swizzle_span(int mode) { return mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0; }

// `address` after a swizzle of `span` bytes: chunk (address / 16) mod (span / 16) XOR line
// (address / 128) mod (span / 16).
unsigned swizzled(unsigned address, int span) {
  if (span == 0) return address;
  const unsigned chunks = span / 16;
  const unsigned chunk = (address / 16) % chunks, line = (address / 128) % chunks;
  return address - chunk * 16 + (chunk ^ line) * 16;
}

// 1. TMA: element (row, col) of a Rows x Cols tile of `elem`-byte elements, loaded as one box of
// Rows x `panel` bytes a panel with the swizzle of that width (none for 16-byte panels).
unsigned tma_address(int rows, int elem, int panel, int row, int col) {
  const int panel_cols = panel / elem;
  const unsigned box = kTileAddress + (col / panel_cols) * rows * panel;
  return swizzled(box + row * panel + (col % panel_cols) * elem, panel == 16 ? 0 : panel);
}

struct Descriptor {
  unsigned start, leading, stride;
  int mode;
};
Descriptor decode(unsigned long long bits) {
  return {unsigned(bits & 0x3FFF) << 4, unsigned((bits >> 16) & 0x3FFF) << 4, unsigned((bits >> 32) & 0x3FFF) << 4,
          int(bits >> 62)};
}

// 2. wgmma: element (mn, k) of an operand (mn along M or N, k along K) read through `d`.
unsigned wgmma_address(const Descriptor& d, bool k_major, int elem, int mn, int k) {
  const int span = swizzle_span(d.mode);
  unsigned offset;
  if (k_major) {
    // Always swizzled (a K-major row holds whole 32-byte k steps, so its panels are >= 32
    // bytes); a k step lies within one swizzle span.
    offset = (mn / 8) * d.stride + (mn % 8) * span + k * elem;
  } else {
    const int mnb = mn * elem;
    offset = span ? (mnb / span) * d.leading + mnb % span + (k / 8) * d.stride + (k % 8) * span
                  : (mnb / 16) * d.stride + mnb % 16 + (k / 8) * d.leading + (k % 8) * 16;
  }
  return swizzled(d.start + offset, span);
}

// The wgmma operands a gemm issues from a Rows x Cols tile, as wgmma_gemm_ss does: each
// instruction reads `mn_extent` (64 for A, the instruction's width for B) x `k_step` elements.
template <int Rows, int Cols, int Elem, int Panel, bool KMajor>
void check_operand(int mn_extent, int k_step) {
  SCOPED_TRACE(std::to_string(Rows) + " x " + std::to_string(Cols) + " tile of " + std::to_string(Elem) +
               "-byte elements, " + std::to_string(Panel) + "-byte panels, " + (KMajor ? "K-major" : "MN-major"));
  const int mn_total = KMajor ? Rows : Cols, k_total = KMajor ? Cols : Rows;
  int elements = 0;
  for (int mn0 = 0; mn0 < mn_total; mn0 += mn_extent) {
    for (int k0 = 0; k0 < k_total; k0 += k_step) {
      const int row0 = KMajor ? mn0 : k0, col0 = KMajor ? k0 : mn0;
      const Descriptor d = decode(tilec_cuda::operand_descriptor_bits(
          kTileAddress, tilec_cuda::operand_part<Rows, Cols, Elem, Panel, KMajor>(row0, col0)));
      ASSERT_EQ(swizzle_span(d.mode), Panel == 16 ? 0 : Panel);
      for (int mn = 0; mn < mn_extent; ++mn) {
        for (int k = 0; k < k_step; ++k) {
          const int row = KMajor ? mn0 + mn : k0 + k, col = KMajor ? k0 + k : mn0 + mn;
          const unsigned tma = tma_address(Rows, Elem, Panel, row, col);
          ASSERT_EQ(wgmma_address(d, KMajor, Elem, mn, k), tma)
              << "instruction at (" << row0 << ", " << col0 << "), element (" << mn << ", " << k << ")";
          const int offset = tilec_cuda::panel_offset<Rows, Cols, Elem, Panel>(row, col);
          ASSERT_EQ(kTileAddress + offset * Elem, tma)
              << "(" << row << ", " << col << ")";
          ++elements;
        }
      }
    }
  }
  EXPECT_EQ(elements, Rows * Cols);  // every element, read once
}

TEST(PanelsTest, WgmmaReadsWhatTmaWrote16BitOperands) {
  // bf16 / fp16, k16 (32 bytes): A K-major in 64-row strips; B K-major (stored N x K) or
  // MN-major (stored K x N) in instructions of the given width.
  check_operand<128, 32, 2, 64, true>(64, 16);    // A 128 x 32: 64-byte panels (bK = 32)
  check_operand<64, 32, 2, 64, true>(64, 16);     // A 64 x 32
  check_operand<128, 64, 2, 128, true>(64, 16);   // A 128 x 64: 128-byte panels
  check_operand<128, 96, 2, 64, true>(64, 16);    // A 128 x 96: three 64-byte panels
  check_operand<128, 48, 2, 32, true>(64, 16);    // A 128 x 48: three 32-byte panels
  check_operand<256, 32, 2, 64, true>(256, 16);  // B stored 256 x 32, one n256 instruction
  check_operand<128, 32, 2, 64, true>(64, 16);    // B stored 128 x 32, two n64 instructions
  check_operand<32, 128, 2, 128, false>(128, 16);  // B stored 32 x 128 (bK = 32)
  check_operand<32, 256, 2, 128, false>(128, 16);  // B stored 32 x 256, two warpgroups along N
  check_operand<32, 64, 2, 128, false>(64, 16);   // B stored 32 x 64 (64 x 64 x 32)
  check_operand<64, 32, 2, 64, false>(32, 16);    // B stored 64 x 32: 64-byte panels
  check_operand<32, 16, 2, 32, false>(16, 16);    // B stored 32 x 16: 32-byte panels
  check_operand<32, 48, 2, 32, false>(48, 16);    // B stored 32 x 48: three 32-byte panels
  check_operand<32, 8, 2, 16, false>(8, 16);       // B stored 32 x 8: no swizzle
  check_operand<32, 24, 2, 16, false>(24, 16);    // B stored 32 x 24: three 16-byte panels
  check_operand<64, 128, 2, 128, false>(64, 16);  // A stored K x M (transpose_A)
}

TEST(PanelsTest, WgmmaReadsWhatTmaWroteTf32AndFp8Operands) {
  // tf32 (float32), k8, and fp8, k32: 32 bytes too, K-major only.
  check_operand<128, 32, 4, 128, true>(64, 8);   // A 128 x 32 float
  check_operand<128, 16, 4, 64, true>(64, 8);    // A 128 x 16 float
  check_operand<64, 8, 4, 32, true>(64, 8);      // A 64 x 8 float
  check_operand<128, 24, 4, 32, true>(128, 8);  // B stored 128 x 24 float: three 32-byte panels
  check_operand<128, 128, 1, 128, true>(64, 32);  // fp8 128 x 128
  check_operand<128, 64, 1, 64, true>(64, 32);    // fp8 128 x 64
  check_operand<256, 32, 1, 32, true>(256, 32);  // fp8 B stored 256 x 32
}

// panel_offset is a bijection of the tile onto its elements, whatever the width.
template <int Rows, int Cols, int Elem, int Panel>
void check_bijection() {
  std::set<int> seen;
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < Cols; ++c) {
      const int offset = tilec_cuda::panel_offset<Rows, Cols, Elem, Panel>(r, c);
      ASSERT_GE(offset, 0);
      ASSERT_LT(offset, Rows * Cols);
      ASSERT_TRUE(seen.insert(offset).second) << "(" << r << ", " << c << ") with " << Panel << "-byte panels";
    }
}

TEST(PanelsTest, PanelOffsetsAreABijection) {
  check_bijection<64, 64, 2, 128>();
  check_bijection<64, 96, 2, 64>();
  check_bijection<16, 48, 2, 32>();
  check_bijection<8, 24, 2, 16>();
  check_bijection<64, 32, 4, 128>();
  check_bijection<32, 32, 1, 32>();
}

// 128-byte panels keep the layout that ran on the H200 before 64-, 32- and 16-byte ones came:
// chunk XOR row mod 8, panels of Rows x 128 bytes, descriptors of (16, 1024) K-major and
// (Rows * 128, 1024) MN-major.
TEST(PanelsTest, Panels128BytesWideAreThePreviousLayout) {
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 256; ++c) {
      const int byte = r * 128 + (c % 64) * 2;
      const int offset = tilec_cuda::panel_offset<64, 256, 2, 128>(r, c);
      EXPECT_EQ(offset, (c / 64) * 64 * 64 + (byte ^ ((r & 7) << 4)) / 2);
    }
  const auto k_major = tilec_cuda::operand_part<128, 64, 2, 128, true>(64, 16);
  EXPECT_EQ(k_major.start, 64 * 128 + 32);
  EXPECT_EQ(k_major.leading, 16);
  EXPECT_EQ(k_major.stride, 1024);
  EXPECT_EQ(k_major.mode, 1);
  const auto mn_major = tilec_cuda::operand_part<64, 256, 2, 128, false>(16, 128);
  EXPECT_EQ(mn_major.start, 2 * 64 * 128 + 16 * 128);
  EXPECT_EQ(mn_major.leading, 64 * 128);
  EXPECT_EQ(mn_major.stride, 1024);
}

TEST(PanelsTest, DescriptorFieldsAreThePtxIsaBits) {
  // start >> 4 in bits 0-13, leading >> 4 in 16-29, stride >> 4 in 32-45, mode in 62-63.
  const tilec_cuda::operand_view view{96, 4096, 512, 2};
  const unsigned long long bits = tilec_cuda::operand_descriptor_bits(0x12400, view);
  EXPECT_EQ(bits & 0x3FFF, (0x12400u + 96) >> 4);
  EXPECT_EQ((bits >> 14) & 3, 0u);
  EXPECT_EQ((bits >> 16) & 0x3FFF, 4096u >> 4);
  EXPECT_EQ((bits >> 32) & 0x3FFF, 512u >> 4);
  EXPECT_EQ((bits >> 46) & 0xFFFF, 0u);  // base offset 0: every panel starts its pattern
  EXPECT_EQ(bits >> 62, 2u);
  EXPECT_EQ(tilec_cuda::panel_swizzle_mode(128), 1);
  EXPECT_EQ(tilec_cuda::panel_swizzle_mode(64), 2);
  EXPECT_EQ(tilec_cuda::panel_swizzle_mode(32), 3);
  EXPECT_EQ(tilec_cuda::panel_swizzle_mode(16), 0);
}

}  // namespace
