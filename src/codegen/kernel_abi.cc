#include "codegen/kernel_abi.h"

#include <algorithm>
#include <stdexcept>

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

// The tensor maps of the kernel's KernelLaunch (none before lowering).
static std::vector<ir::TensorMapSpec> tensor_maps_of(const ir::Stmt& body) {
  struct Finder : ir::IRVisitor {
    std::vector<ir::TensorMapSpec> maps;
    void visit_KernelLaunch(const ir::KernelLaunch* op) override { maps = op->tensor_maps; }
  } finder;
  finder.visit(body);
  return finder.maps;
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
  for (const ir::TensorMapSpec& spec : tensor_maps_of(func.body)) {
    auto it = std::find_if(func.params.begin(), func.params.end(),
                           [&](const ir::Param& p) { return p.buffer == spec.tensor; });
    if (it == func.params.end())
      throw std::logic_error("kernel ABI: a tensor map of '" + spec.tensor->name + "', which is not a param");
    abi.tensor_maps.push_back({static_cast<int>(it - func.params.begin()), spec.box, spec.swizzle_bytes});
  }
  return abi;
}

}  // namespace tilec::codegen
