// A vector store's run of half or bfloat16 computed two elements at a time, where that converts
// in one instruction what took two: the floats a pair stores (from_float_pair: cvt.rn.bf16x2.f32
// on CUDA), and the two FP8 values next to each other in a local run that the pair's values read
// as floats (e4m3_pair_to_float: cvt.rn.f16x2.e4m3x2). An FP8 cache's dequantization
// (`KV[r, c] = float(fp8(raw[c])) * scale`) goes from eight instructions a value to about four.
//
//   for u in T.unroll(8):                      for p in T.unroll(4):
//     run[u] = bf16(float(e4m3(raw[8g+u])) * s)   ->   e4m3_pair_to_float(&raw_pair[0], &raw[8g+2p])
//                                                    from_float_pair(&run[2p], raw_pair[0] * s,
//                                                                    raw_pair[1] * s)
#pragma once

#include <vector>

#include "ir/ir.h"

namespace tilec::passes {

// `element` is a vector group's element (run[lane] = value, lane in [0, width)); the loop over
// its pairs, with the locals it needs added to `locals`; null where `element` is no store of
// half or bfloat16 converted from float32 (or width is odd), and the element loop stays.
// With bf16x2_multiplies (CUDA), a bfloat16 run of `float(e4m3(raw[i])) * float(scale)`, scale a
// bfloat16 the group shares (an FP8 cache's dequantization, its scale rounded to bfloat16 as
// FlashMLA's is), goes four elements at a time: each pair's bytes made bfloat16 by bit
// operations and multiplied in bf16x2 multiplies (exact: an e4m3 times a bfloat16 is exact in
// float32), 5 instructions a pair where the floats' way takes 6.
ir::Stmt pair_conversions(const ir::Stmt& element, const ir::Expr& lane, int64_t width,
                          std::vector<ir::Buffer>& locals, bool bf16x2_multiplies);

// A slot loop's body `run[i(s)] = T(max(x(s), floor))` (T half or bfloat16 from float32, run a
// thread's local array, floor not varying with s) as a loop over pairs of slots where slots 2p
// and 2p + 1 are neighbouring elements from an even one: from_float_pair_max(&run[i(2p)], x(2p),
// x(2p + 1), floor), the pair converted, then its max in one instruction (a ReLU into a 16-bit
// gemm operand: one instruction an element where max and half a paired conversion took one and
// a half). `run[i(s)] = T(x(s) < 0 ? 0 : x(s))`, a ReLU that keeps NaN (max(NaN, 0) is 0), is
// from_float_pair_relu: one conversion of the pair that clamps negatives, half an instruction
// an element. Null where `body` is no such store or `slots` is odd; the conversion alone, ptxas
// pairs itself.
ir::Stmt pair_max_conversions(const ir::Stmt& body, const ir::Expr& slot, int64_t slots);

}  // namespace tilec::passes
