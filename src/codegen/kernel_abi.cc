#include "codegen/kernel_abi.h"

#include <algorithm>

#include "ir/visitor.h"

namespace tilec::codegen {

// Var nodes in `e`, in the order they first appear (left to right).
static void collect_vars(const ir::Expr& e, std::vector<ir::Expr>* out) {
  struct Collector : ir::IRVisitor {
    std::vector<ir::Expr>* out;
    void visit(const ir::Expr& e) override {
      if (e.as<ir::Var>() &&
          std::none_of(out->begin(), out->end(), [&](const ir::Expr& v) { return v.same_as(e); }))
        out->push_back(e);
      IRVisitor::visit(e);
    }
  } collector;
  collector.out = out;
  collector.visit(e);
}

KernelAbi make_kernel_abi(const ir::PrimFunc& func) {
  KernelAbi abi;
  std::vector<ir::Expr> symbols;
  for (size_t p = 0; p < func.params.size(); ++p) {
    const ir::Param& param = func.params[p];
    if (!param.is_tensor()) continue;
    abi.tensor_params.push_back(static_cast<int>(p));
    for (size_t d = 0; d < param.buffer->shape.size(); ++d) {
      const ir::Expr& dim = param.buffer->shape[d];
      size_t before = symbols.size();
      collect_vars(dim, &symbols);
      for (size_t s = before; s < symbols.size(); ++s)
        abi.symbols.push_back({symbols[s], -1, -1});
      if (dim.as<ir::Var>()) {
        for (auto& src : abi.symbols)
          if (src.var.same_as(dim) && src.param < 0) {
            src.param = static_cast<int>(p);
            src.dim = static_cast<int>(d);
          }
      }
    }
  }
  for (auto& s : abi.symbols)
    abi.int_slots.push_back({IntSlot::Source::SymbolicDim, s.param, s.dim, s.var});
  for (size_t p = 0; p < func.params.size(); ++p) {
    const ir::Param& param = func.params[p];
    if (!param.is_tensor()) continue;
    for (size_t d = 0; d < param.buffer->strides.size(); ++d)
      if (param.buffer->strides[d].as<ir::Var>())
        abi.int_slots.push_back(
          {IntSlot::Source::Stride, static_cast<int>(p), static_cast<int>(d), param.buffer->strides[d]});
  }
  for (size_t p = 0; p < func.params.size(); ++p) {
    const ir::Param& param = func.params[p];
    if (param.is_tensor()) continue;
    if (param.var->dtype.is_float())
      abi.float_params.push_back(static_cast<int>(p));
    else
      abi.int_slots.push_back({IntSlot::Source::Scalar, static_cast<int>(p), 0, param.var});
  }
  return abi;
}

}  // namespace tilec::codegen
