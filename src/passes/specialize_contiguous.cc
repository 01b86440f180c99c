#include "passes/specialize_contiguous.h"

#include "ir/simplify.h"
#include "ir/substitute.h"

namespace tilec::passes {

ir::PrimFunc specialize_contiguous(const ir::PrimFunc& func) {
  ir::PrimFunc out = func;
  ir::BufferMap replaced;
  for (ir::Param& p : out.params) {
    if (!p.is_tensor()) continue;
    const ir::Buffer& b = p.buffer;
    std::vector<ir::Expr> strides(b->shape.size());
    ir::Expr stride = ir::make_int(1, DType::Int64);
    for (size_t d = b->shape.size(); d-- > 0;) {
      strides[d] = stride;
      stride = ir::simplify(ir::make_Mul(stride, ir::make_cast(DType::Int64, b->shape[d])));
    }
    auto contiguous = std::make_shared<ir::BufferNode>(*b);
    contiguous->strides = std::move(strides);
    replaced[b.get()] = contiguous;
    p.buffer = contiguous;
  }
  out.body = ir::replace_buffers(func.body, replaced);
  return out;
}

}  // namespace tilec::passes
