#include "passes/guard_global_accesses.h"

#include <optional>
#include <utility>
#include <vector>

#include "ir/bound.h"
#include "ir/device_calls.h"
#include "ir/equal.h"
#include "ir/mutator.h"
#include "ir/simplify.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;

bool is_global(const ir::Buffer& b) { return b->scope == ir::MemoryScope::Global; }

Expr as_int64(const Expr& e) { return ir::make_cast(DType::Int64, e); }

// A widening integer cast's operand (the casts elaboration and this pass put around indices);
// a narrowing cast stays, since it may change the value.
Expr uncast(const Expr& e) {
  const auto* cast = e.as<ir::Cast>();
  return cast && cast->dtype.is_int() && cast->value->dtype.is_int() && cast->dtype.bits() >= cast->value->dtype.bits()
             ? uncast(cast->value)
             : e;
}

// e = a // c or a >> k, with the divisor c > 0 a constant: (a, c).
std::optional<std::pair<Expr, int64_t>> constant_quotient(const Expr& e) {
  int64_t c;
  if (const auto* div = e.as<ir::FloorDiv>(); div && ir::is_const_int(div->b, &c) && c > 0)
    return std::pair(div->a, c);
  if (const auto* shift = e.as<ir::ShiftRight>(); shift && ir::is_const_int(shift->b, &c) && c >= 0 && c < 62)
    return std::pair(shift->a, int64_t{1} << c);
  return std::nullopt;
}

// ceil(b / c): n for b = n * (c m) (a symbolic grid of n tokens' programs), else (b + c - 1) // c.
Expr ceil_quotient(const Expr& b, int64_t c) {
  Expr product = uncast(ir::simplify(b));
  if (const auto* mul = product.as<ir::Mul>()) {
    int64_t k;
    for (auto [factor, other] : {std::pair(mul->b, mul->a), std::pair(mul->a, mul->b)})
      if (ir::is_const_int(factor, &k) && k % c == 0)
        return ir::simplify(k == c ? other : ir::make_Mul(other, ir::make_int(k / c, other->dtype)));
  }
  return ir::simplify(ir::make_FloorDiv(ir::make_Add(as_int64(b), ir::make_int(c - 1, DType::Int64)),
                                        ir::make_int(c, DType::Int64)));
}

// The conjuncts of `condition` (a && b && c).
void conjuncts(const Expr& condition, std::vector<Expr>& out) {
  if (const auto* both = condition.as<ir::And>()) {
    conjuncts(both->a, out);
    conjuncts(both->b, out);
  } else {
    out.push_back(condition);
  }
}

// 0 of dtype t: what an out-of-bounds load reads.
Expr zero_of(DType t) {
  if (t.is_bool()) return ir::make_bool(false);
  return t.is_float() ? ir::make_float(0.0, t) : ir::make_int(0, t);
}

class Guard : public ir::IRMutator {
 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    for (size_t d = 0; d < op->grid.size() && d < op->block_vars.size(); ++d)
      bind_below(op->block_vars[d], ir::make_int(0), op->grid[d]);
    if (op->thread_index) bind_below(op->thread_index, ir::make_int(0), ir::make_int(op->threads));
    return IRMutator::mutate_KernelLaunch(op, self);
  }

  Stmt mutate_For(const ir::For* op, const Stmt& self) override {
    Expr end = ir::simplify(ir::make_Add(as_int64(op->min), as_int64(op->extent)));
    size_t facts = facts_.size();
    bind_below(op->var, op->min, end);
    Stmt result = IRMutator::mutate_For(op, self);
    facts_.resize(facts);
    return result;
  }

  Stmt mutate_LetStmt(const ir::LetStmt* op, const Stmt& self) override {
    // A let of a symbolic grid's program (program * 2) may wrap by the intervals, but is >= 0
    // as non_negative takes it.
    std::optional<ir::Interval> range = bounds_.bound(op->value);
    if (non_negative(op->value) && (!range || range->min < 0)) range = ir::Interval{0, range ? range->max : INT64_MAX};
    if (range) bounds_.bind(op->var, *range);
    size_t facts = facts_.size();
    for (const Expr& bound : quotient_bounds(op->value)) facts_.push_back(ir::make_LT(as_int64(op->var), as_int64(bound)));
    Stmt result = IRMutator::mutate_LetStmt(op, self);
    facts_.resize(facts);
    return result;
  }

  Stmt mutate_IfThenElse(const ir::IfThenElse* op, const Stmt& self) override {
    Expr condition = mutate(op->condition);
    size_t facts = facts_.size();
    conjuncts(op->condition, facts_);
    Stmt then_case = mutate(op->then_case);
    facts_.resize(facts);
    Stmt else_case = op->else_case ? mutate(op->else_case) : Stmt();
    if (condition.same_as(op->condition) && then_case.same_as(op->then_case) && else_case.same_as(op->else_case))
      return self;
    return ir::with_loc(ir::make_if(condition, then_case, else_case), op->loc);
  }

  // &A[i]: an address, not a load (T.access_ptr's, for T.ptx_cp_async; the instructions that
  // read through one are the program's to keep in bounds).
  Expr mutate_Call(const ir::Call* op, const Expr& self) override {
    if (op->name != ir::kAddressOf) return IRMutator::mutate_Call(op, self);
    const auto* load = op->args.at(0).as<ir::BufferLoad>();
    std::vector<Expr> indices;
    for (const Expr& i : load->indices) indices.push_back(mutate(i));
    return ir::address_of(load->buffer, indices);
  }

  Expr mutate_BufferLoad(const ir::BufferLoad* op, const Expr& self) override {
    Expr load = IRMutator::mutate_BufferLoad(op, self);
    if (!is_global(op->buffer)) return load;
    const auto* loaded = load.as<ir::BufferLoad>();
    Expr inside = in_bounds(op->buffer, loaded->indices);
    return inside ? ir::make_select(inside, load, zero_of(op->dtype)) : load;
  }

  Stmt mutate_BufferStore(const ir::BufferStore* op, const Stmt& self) override {
    Stmt store = IRMutator::mutate_BufferStore(op, self);
    if (!is_global(op->buffer)) return store;
    Expr inside = in_bounds(op->buffer, store.as<ir::BufferStore>()->indices);
    return inside ? ir::with_loc(ir::make_if(inside, store), op->loc) : store;
  }

 private:
  // var takes values in [lo, end): its interval where both are constants, and the fact var < end.
  void bind_below(const Expr& var, const Expr& lo, const Expr& end) {
    int64_t low, high;
    const bool const_low = ir::is_const_int(ir::simplify(lo), &low);
    if (ir::is_const_int(end, &high) && const_low) bounds_.bind(var, {low, high - 1});
    else if (const_low) bounds_.bind(var, {low, INT64_MAX});
    facts_.push_back(ir::make_LT(as_int64(var), as_int64(end)));
  }

  // The condition that `indices` are inside `buffer`'s shape, of the dims not proven so;
  // null when every dim is.
  Expr in_bounds(const ir::Buffer& buffer, const std::vector<Expr>& indices) const {
    Expr condition;
    auto add = [&](const Expr& c) { condition = condition ? ir::make_And(condition, c) : c; };
    for (size_t d = 0; d < indices.size() && d < buffer->shape.size(); ++d) {
      Expr index = as_int64(indices[d]), extent = as_int64(buffer->shape[d]);
      Expr above = ir::simplify(ir::make_GE(index, ir::make_int(0, DType::Int64)));
      Expr below = ir::simplify(ir::make_LT(index, extent));
      if (!bounds_.can_prove(above) && !non_negative(indices[d]) && !fact_non_negative(index)) add(above);
      if (!proven(below, index, extent)) add(below);
    }
    return condition;
  }

  // Whether `e` is built of non-negative parts by operations that keep them so. Unlike the
  // interval analysis this takes the arithmetic not to wrap, as TileLang's analyzer does: an
  // index that wrapped would be wrong whether guarded or not, and this spares a test of >= 0
  // of every index made of block, thread and loop variables.
  bool non_negative(const Expr& e) const {
    int64_t v;
    if (ir::is_const_int(e, &v)) return v >= 0;
    switch (e.kind()) {
      case ir::ExprKind::Var: {
        auto range = bounds_.bound(e);
        return range && range->min >= 0;
      }
      case ir::ExprKind::Cast: return e->dtype.is_int() && non_negative(e.as<ir::Cast>()->value);
#define TILEC_BOTH(n) \
  case ir::ExprKind::n: return non_negative(e.as<ir::n>()->a) && non_negative(e.as<ir::n>()->b);
        TILEC_BOTH(Add) TILEC_BOTH(Mul) TILEC_BOTH(FloorDiv) TILEC_BOTH(Min) TILEC_BOTH(BitAnd)
        TILEC_BOTH(BitOr) TILEC_BOTH(ShiftRight)
#undef TILEC_BOTH
      case ir::ExprKind::FloorMod: return non_negative(e.as<ir::FloorMod>()->b);
      case ir::ExprKind::Max: return non_negative(e.as<ir::Max>()->a) || non_negative(e.as<ir::Max>()->b);
      default: return false;
    }
  }

  // Whether index < extent: by the intervals, or an enclosing fact a < b with a the index and
  // b <= extent, or the index a quotient of such an a (quotient_bounds), or the min of something
  // so (min(i, n - 1) < n).
  bool proven(const Expr& below, const Expr& index, const Expr& extent, int depth = 0) const {
    if (bounds_.can_prove(below)) return true;
    // held here: a node simplify made lives only as long as its handle
    const Expr index_r = resolved(index);
    if (const auto* min = index_r.as<ir::Min>(); min && depth < kMaxDepth) {
      for (const Expr& part : {min->a, min->b})
        if (at_most(ir::make_Add(part, ir::make_int(1, part->dtype)), extent, depth + 1) ||
            proven(ir::simplify(ir::make_LT(as_int64(part), extent)), as_int64(part), extent, depth + 1))
          return true;
    }
    for (const Expr& bound : fact_bounds(index))
      if (at_most(bound, extent)) return true;
    for (const Expr& bound : quotient_bounds(uncast(index)))
      if (at_most(bound, extent)) return true;
    return false;
  }

  // e without its integer casts, simplified.
  Expr resolved(const Expr& e) const { return ir::simplify(uncast(e)); }

  // Whether b <= extent: compared in their own type where both have one (the casts to int64
  // around them hide n - 1 < n from the simplifier).
  bool at_most(const Expr& b, const Expr& extent, int depth = 0) const {
    Expr b_r = resolved(b), extent_r = resolved(extent);
    if (b_r->dtype != extent_r->dtype) {
      b_r = ir::simplify(as_int64(b_r));
      extent_r = ir::simplify(as_int64(extent_r));
    }
    if (const auto* min = b_r.as<ir::Min>();
        min && depth < kMaxDepth && (at_most(min->a, extent_r, depth + 1) || at_most(min->b, extent_r, depth + 1)))
      return true;
    return ir::structural_equal(b_r, extent_r) || bounds_.can_prove(ir::simplify(ir::make_LE(b_r, extent_r)));
  }

  // Each b of an enclosing fact e < b.
  std::vector<Expr> fact_bounds(const Expr& e) const {
    std::vector<Expr> bounds;
    Expr e_s = ir::simplify(as_int64(e));
    for (const Expr& fact : facts_) {
      if (const auto* less = fact.as<ir::LT>(); less && ir::structural_equal(ir::simplify(as_int64(less->a)), e_s))
        bounds.push_back(less->b);
    }
    return bounds;
  }

  // Whether an enclosing fact says e >= 0.
  bool fact_non_negative(const Expr& e) const {
    Expr e_s = ir::simplify(as_int64(e));
    for (const Expr& fact : facts_) {
      const auto* at_least = fact.as<ir::GE>();
      int64_t v;
      if (at_least && ir::is_const_int(at_least->b, &v) && v >= 0 &&
          ir::structural_equal(ir::simplify(as_int64(at_least->a)), e_s))
        return true;
    }
    return false;
  }

  // For e = a // c (or a >> k) and each enclosing fact a < b: e < ceil(b / c). A symbolic grid
  // of tokens * blocks programs makes program // blocks a token, below the tokens.
  std::vector<Expr> quotient_bounds(const Expr& e) const {
    std::vector<Expr> bounds;
    if (auto quotient = constant_quotient(ir::simplify(e)))
      for (const Expr& b : fact_bounds(quotient->first)) bounds.push_back(ceil_quotient(b, quotient->second));
    return bounds;
  }

  // How deep proven and at_most look through nested mins.
  static constexpr int kMaxDepth = 6;

  ir::BoundAnalyzer bounds_;
  std::vector<Expr> facts_;  // conditions that hold where the walk is
};

}  // namespace

Stmt guard_global_accesses(const Stmt& body, const PassContext& ctx) {
  if (!config_on(ctx, "tilec.safe_global_access", true) || config_on(ctx, "tilec.bounds_check", false))
    return body;
  return Guard().mutate(body);
}

}  // namespace tilec::passes
