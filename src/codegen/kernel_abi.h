// How a compiled kernel receives its arguments: the one contract between the
// code generators (which read arguments in this order) and the runtime (which
// fills them in this order from the caller's tensors and scalars).
//
// A generated kernel entry is
//   extern "C" void <entry>(void* const* tensors, const int64_t* ints, const double* floats);
// tensors[i] is the data pointer of tensor param tensor_params[i];
// ints[i] is int_slots[i]; floats[i] is the scalar param float_params[i].
#pragma once

#include <vector>

#include "ir/ir.h"

namespace tilec::codegen {

struct IntSlot {
  enum class Source {
    SymbolicDim,  // the value of `var`, solved from tensor shapes at call time
    Stride,       // the stride (in elements) of tensor param `param`, dim `dim`
                  // (only strides that are Vars; constant strides are checked)
    Scalar,       // the integer or bool scalar param `param`
  };
  Source source;
  int param = 0;
  int dim = 0;
  ir::Expr var;  // the Var the generated code binds this slot to
};

struct KernelAbi {
  std::vector<int> tensor_params;
  std::vector<IntSlot> int_slots;
  std::vector<int> float_params;
  // Symbolic dim Vars in slot order, each with the first (param, dim) whose
  // shape is exactly that Var (from which the runtime reads its value).
  struct SymbolSource {
    ir::Expr var;
    int param = -1, dim = -1;  // -1: appears only inside dim expressions
  };
  std::vector<SymbolSource> symbols;
  // TMA tensor maps (the kernel's KernelLaunch::tensor_maps): built for each call from
  // tensor param `param` with the given box (innermost dim first) and swizzle.
  struct TensorMap {
    int param = -1;
    std::vector<int64_t> box;
    int64_t swizzle_bytes = 0;  // 128, 64 or 32: that CU_TENSOR_MAP_SWIZZLE_*B; 0: none
  };
  std::vector<TensorMap> tensor_maps;
};

// Symbolic dims first (in order of first appearance in param shapes), then each
// tensor param's strides, then integer scalar params.
KernelAbi make_kernel_abi(const ir::PrimFunc& func);

// The name of the generated entry function.
inline const char* kernel_entry_name() { return "tilec_kernel_entry"; }

}  // namespace tilec::codegen
