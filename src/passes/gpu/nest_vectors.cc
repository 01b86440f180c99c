#include "passes/gpu/nest_vectors.h"

#include <algorithm>
#include <cmath>

#include "ir/shared_layout.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "ir/visitor.h"

namespace tilec::passes {
namespace {

bool uses(const ir::Expr& e, const ir::Expr& var) { return ir::uses_var(e, var.get()); }

bool has_load(const ir::Expr& e) {
  struct Finder : ir::IRVisitor {
    bool found = false;
    void visit_BufferLoad(const ir::BufferLoad*) override { found = true; }
  } finder;
  finder.visit(e);
  return finder.found;
}

// Whether e reads a fragment (whose elements sit in the threads' slots, not at an address a
// group's first element can name).
bool reads_fragment(const ir::Expr& e) {
  struct Finder : ir::IRVisitor {
    bool found = false;
    void visit_BufferLoad(const ir::BufferLoad* op) override {
      if (op->buffer->scope == ir::MemoryScope::Fragment) found = true;
      IRVisitor::visit_BufferLoad(op);
    }
  } finder;
  finder.visit(e);
  return finder.found;
}

// The loads of a store's value, each with the conditions under which the value reads it: a
// Select's condition (or its negation) for its branches, And's and Or's left side for their
// right (the generated code evaluates all three lazily). And, where the load is the true value
// of a chain of Selects whose false values are zero, the chain's outermost Select: that
// expression is the load where the conditions hold and zero elsewhere.
struct GuardedLoads : ir::IRVisitor {
  struct Entry {
    const ir::BufferLoad* load;
    ir::Expr guard;                           // null when the load is always read
    const ir::ExprNode* zero_else = nullptr;  // the chain's outermost Select, or null
  };
  std::vector<Entry> entries;
  std::vector<ir::Expr> conditions;
  // The chain the expression being visited continues (it is its Selects' true value), and the
  // one the next expression visited will.
  const ir::ExprNode* chain = nullptr;
  const ir::ExprNode* next_chain = nullptr;

  ir::Expr guard() const {
    ir::Expr all;
    for (const ir::Expr& c : conditions) all = all ? ir::make_And(all, c) : c;
    return all;
  }
  void visit(const ir::Expr& e) override {
    chain = next_chain;
    next_chain = nullptr;
    IRVisitor::visit(e);
  }
  void under(const ir::Expr& condition, const ir::Expr& e, const ir::ExprNode* continues = nullptr) {
    conditions.push_back(condition);
    next_chain = continues;
    visit(e);
    conditions.pop_back();
  }
  static bool is_plus_zero(const ir::Expr& e) {
    if (const auto* i = e.as<ir::IntImm>()) return i->value == 0;
    const auto* f = e.as<ir::FloatImm>();
    return f && f->value == 0 && !std::signbit(f->value);
  }
  void visit_BufferLoad(const ir::BufferLoad* op) override {
    entries.push_back({op, guard(), chain});
    IRVisitor::visit_BufferLoad(op);
  }
  void visit_Select(const ir::Select* op) override {
    const ir::ExprNode* top = chain ? chain : op;
    visit(op->condition);
    under(op->condition, op->true_value, is_plus_zero(op->false_value) ? top : nullptr);
    under(ir::make_not(op->condition), op->false_value);
  }
  void visit_And(const ir::And* op) override {
    visit(op->a);
    under(op->a, op->b);
  }
  void visit_Or(const ir::Or* op) override {
    visit(op->a);
    under(ir::make_not(op->a), op->b);
  }
};

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
  // Other dims may read memory (a gather's row index): the same for the whole run.
  for (size_t d = 0; d + 1 < indices.size(); ++d)
    if (uses(indices[d], var) || reads_fragment(indices[d])) return false;
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

  GuardedLoads loads;
  loads.visit(store->value);

  // The widest width every vector access can take; accesses that can't take it stay scalar,
  // and so do loads read under a condition that differs along the run (a vector would read
  // elements the condition keeps out, maybe past the tensor's end).
  for (; width >= 2; width /= 2) {
    NestVectors v;
    v.width = width;
    for (const auto& [load, guard, zero_else] : loads.entries)
      if (std::any_of(load->indices.begin(), load->indices.end(), [&](const ir::Expr& i) { return uses(i, var); }) &&
          vector_access(load->buffer, load->indices, var, width, aligned_globals) &&
          (!guard || (!uses(guard, var) && !reads_fragment(guard)))) {
        v.loads.push_back({load, guard, guard ? zero_else : nullptr});
      }
    v.store = vector_access(store->buffer, store->indices, var, width, aligned_globals);
    if (v.store || !v.loads.empty()) return v;
  }
  return std::nullopt;
}

}  // namespace tilec::passes
