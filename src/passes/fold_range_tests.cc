#include "passes/fold_range_tests.h"

#include <unordered_set>
#include <vector>

#include "ir/equal.h"
#include "ir/mutator.h"

namespace tilec::passes {
namespace {

using ir::Expr;

// The symbols that are a tensor parameter's extent by themselves: bound from a shape, never < 0.
std::unordered_set<const ir::ExprNode*> tensor_extent_symbols(const ir::PrimFunc& func) {
  std::unordered_set<const ir::ExprNode*> symbols;
  for (const ir::Param& p : func.params)
    if (p.is_tensor())
      for (const Expr& dim : p.buffer->shape)
        if (dim.as<ir::Var>()) symbols.insert(dim.get());
  return symbols;
}

bool is_zero_int(const Expr& e) {
  const auto* imm = e.as<ir::IntImm>();
  return imm && imm->value == 0;
}

class FoldRangeTests : public ir::IRMutator {
 public:
  explicit FoldRangeTests(std::unordered_set<const ir::ExprNode*> extents) : extents_(std::move(extents)) {}

 protected:
  Expr mutate_And(const ir::And* op, const Expr& self) override {
    std::vector<Expr> terms;
    conjuncts(self, terms);
    bool changed = false;
    for (Expr& t : terms) {
      Expr m = mutate(t);
      changed |= !m.same_as(t);
      t = m;
    }
    for (size_t i = 0; i < terms.size(); ++i)
      for (size_t j = i + 1; j < terms.size(); ++j)
        if (Expr folded = fold(terms[i], terms[j])) {
          terms[i] = folded;
          terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(j));
          changed = true;
          break;
        }
    if (!changed) return self;
    Expr all = terms[0];
    for (size_t i = 1; i < terms.size(); ++i) all = ir::make_And(all, terms[i]);
    return all;
  }

 private:
  static void conjuncts(const Expr& e, std::vector<Expr>& out) {
    if (const auto* both = e.as<ir::And>()) {
      conjuncts(both->a, out);
      conjuncts(both->b, out);
    } else {
      out.push_back(e);
    }
  }

  // `x >= 0` and `x < n` (in either order) as one unsigned compare; null when they aren't that.
  Expr fold(const Expr& first, const Expr& second) const {
    for (auto [lower, upper] : {std::pair(first, second), std::pair(second, first)}) {
      const auto* ge = lower.as<ir::GE>();
      const auto* lt = upper.as<ir::LT>();
      if (!ge || !lt || !is_zero_int(ge->b) || !ir::structural_equal(ge->a, lt->a)) continue;
      const DType t = lt->a->dtype;
      if (t != DType::Int32 && t != DType::Int64) continue;
      if (!is_tensor_extent(lt->b)) continue;
      const DType u = t == DType::Int32 ? DType::UInt32 : DType::UInt64;
      return ir::make_LT(ir::make_cast(u, lt->a), ir::make_cast(u, lt->b));
    }
    return Expr();
  }

  // A tensor's extent symbol, or a widening integer cast of one.
  bool is_tensor_extent(const Expr& e) const {
    if (const auto* cast = e.as<ir::Cast>())
      return cast->dtype.is_int() && cast->value->dtype.is_int() && cast->dtype.bits() >= cast->value->dtype.bits() &&
             is_tensor_extent(cast->value);
    return extents_.count(e.get()) > 0;
  }

  std::unordered_set<const ir::ExprNode*> extents_;
};

}  // namespace

ir::Stmt fold_range_tests(const ir::Stmt& body, const PassContext& ctx) {
  if (!ctx.func) return body;
  return FoldRangeTests(tensor_extent_symbols(*ctx.func)).mutate(body);
}

}  // namespace tilec::passes
