#include "passes/gpu/nest_vectors.h"

#include <algorithm>

#include "ir/shared_layout.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "ir/visitor.h"

namespace tilec::passes {
namespace {

bool uses(const ir::Expr& e, const ir::Expr& var) {
  struct Finder : ir::IRVisitor {
    const ir::ExprNode* var;
    bool found = false;
    void visit(const ir::Expr& x) override {
      if (x.get() == var) found = true;
      if (!found) IRVisitor::visit(x);
    }
  } finder;
  finder.var = var.get();
  finder.visit(e);
  return finder.found;
}

bool has_load(const ir::Expr& e) {
  struct Finder : ir::IRVisitor {
    bool found = false;
    void visit_BufferLoad(const ir::BufferLoad*) override { found = true; }
  } finder;
  finder.visit(e);
  return finder.found;
}

bool multiple_of(const ir::Expr& e, int64_t n) {
  return ir::is_zero(ir::simplify(ir::make_FloorMod(e, ir::make_int(n, e->dtype))));
}

// Whether an access of `b` at `indices` covers a run of `width` elements as the nest's last
// var runs over an aligned group.
bool vector_access(const ir::Buffer& b, const std::vector<ir::Expr>& indices, const ir::Expr& var, int64_t width,
                   bool aligned_globals) {
  if (b->scope != ir::MemoryScope::Global && b->scope != ir::MemoryScope::Shared) return false;
  if (width * b->dtype.bytes() > 16 || b->dtype.bits() < 8) return false;
  if (b->scope == ir::MemoryScope::Global && (!aligned_globals || b->layout)) return false;
  for (size_t d = 0; d + 1 < indices.size(); ++d)
    if (uses(indices[d], var) || has_load(indices[d])) return false;
  const ir::Expr& last = indices.back();
  if (has_load(last)) return false;
  ir::Expr offset = ir::simplify(ir::substitute(last, var, ir::make_int(0, var->dtype)));
  if (!ir::is_zero(ir::simplify(ir::make_Sub(ir::make_Sub(last, var), offset)))) return false;
  if (!multiple_of(offset, width)) return false;
  if (b->scope == ir::MemoryScope::Shared)
    return b->layout ? b->layout->contiguous_elements() % width == 0
                     : indices.size() < 2 || multiple_of(b->shape.back(), width);
  for (size_t d = 0; d + 1 < b->strides.size(); ++d)
    if (!multiple_of(b->strides[d], width)) return false;
  return true;
}

}  // namespace

std::optional<NestStore> nest_store(const op::ParallelNest& nest) {
  if (const auto* store = nest.body.as<ir::BufferStore>()) return NestStore{store, ir::Expr()};
  const auto* guarded = nest.body.as<ir::IfThenElse>();
  if (!guarded || guarded->else_case || uses(guarded->condition, nest.vars.back()) || has_load(guarded->condition))
    return std::nullopt;
  const auto* store = guarded->then_case.as<ir::BufferStore>();
  if (!store) return std::nullopt;
  return NestStore{store, guarded->condition};
}

std::optional<NestVectors> nest_vectors(const op::ParallelNest& nest, const ir::Fragment& layout, bool aligned_globals) {
  const std::optional<NestStore> body = nest_store(nest);
  if (!body || layout.covers_more()) return std::nullopt;
  const ir::BufferStore* store = body->store;
  const int last = static_cast<int>(nest.extents.size()) - 1;
  const ir::Expr& var = nest.vars.back();
  int64_t run = 1;
  for (const auto& d : layout.digits())
    if (!d.on_thread && d.dim == last && d.place == 1 && d.stride == 1) run = d.radix;
  int64_t width = 1;
  while (width * 2 <= std::min<int64_t>(run, 16) && run % (width * 2) == 0) width *= 2;
  for (const auto& d : layout.digits())
    if (d.dim == last && d.place != 1)
      while (width > 1 && d.place % width != 0) width /= 2;
  if (width < 2) return std::nullopt;

  std::vector<const ir::BufferLoad*> loads;
  struct Loads : ir::IRVisitor {
    std::vector<const ir::BufferLoad*>* out;
    void visit_BufferLoad(const ir::BufferLoad* op) override {
      out->push_back(op);
      IRVisitor::visit_BufferLoad(op);
    }
  } collect;
  collect.out = &loads;
  collect.visit(store->value);

  // The widest width every vector access can take; accesses that can't take it stay scalar.
  for (; width >= 2; width /= 2) {
    NestVectors v;
    v.width = width;
    for (const ir::BufferLoad* load : loads)
      if (std::any_of(load->indices.begin(), load->indices.end(), [&](const ir::Expr& i) { return uses(i, var); }) &&
          vector_access(load->buffer, load->indices, var, width, aligned_globals))
        v.loads.push_back(load);
    v.store = vector_access(store->buffer, store->indices, var, width, aligned_globals);
    if (v.store || !v.loads.empty()) return v;
  }
  return std::nullopt;
}

}  // namespace tilec::passes
