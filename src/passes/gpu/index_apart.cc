#include "passes/gpu/index_apart.h"

#include <cstdlib>
#include <numeric>
#include <optional>
#include <vector>

#include "base/stack_guard.h"
#include "ir/equal.h"
#include "ir/substitute.h"
#include "ir/visitor.h"

namespace tilec::passes {
namespace {

using Wide = __int128;

// An index's range, where it is narrow enough that no arithmetic in it can have wrapped (the
// bound analysis gives a value that may have wrapped its dtype's whole range).
std::optional<ir::Interval> narrow_bound(const ir::Expr& e, const ir::BoundAnalyzer& bounds) {
  auto b = bounds.bound(e);
  if (!b || Wide(b->max) - b->min >= (Wide(1) << 30)) return std::nullopt;
  return b;
}

// An integer expression as a sum of constant multiples of atoms: anything but +, -, a product
// by a constant and a widening integer cast.
struct LinearForm {
  struct Term {
    ir::Expr atom;
    int64_t coefficient;
  };
  std::vector<Term> terms;
  int64_t constant = 0;

  // Adds `scale` times e; false where a coefficient would overflow.
  bool add(const ir::Expr& e, int64_t scale) {
    check_stack(e->loc);
    int64_t value;
    if (ir::is_const_int(e, &value)) {
      int64_t product;
      return !__builtin_mul_overflow(value, scale, &product) && !__builtin_add_overflow(constant, product, &constant);
    }
    if (const auto* add = e.as<ir::Add>()) return this->add(add->a, scale) && this->add(add->b, scale);
    if (const auto* sub = e.as<ir::Sub>()) return this->add(sub->a, scale) && scale != INT64_MIN && this->add(sub->b, -scale);
    if (const auto* mul = e.as<ir::Mul>()) {
      int64_t factor, product;
      if (ir::is_const_int(mul->b, &factor)) return !__builtin_mul_overflow(scale, factor, &product) && this->add(mul->a, product);
      if (ir::is_const_int(mul->a, &factor)) return !__builtin_mul_overflow(scale, factor, &product) && this->add(mul->b, product);
    }
    if (const auto* cast = e.as<ir::Cast>();
        cast && cast->dtype.is_int() && cast->value->dtype.is_integer() && cast->dtype.bits() > cast->value->dtype.bits())
      return this->add(cast->value, scale);
    for (Term& t : terms)
      if (ir::structural_equal(t.atom, e)) return !__builtin_add_overflow(t.coefficient, scale, &t.coefficient);
    terms.push_back({e, scale});
    return true;
  }
};

}  // namespace

bool ranges_apart(const ir::Expr& x, const ir::Expr& y, const ir::BoundAnalyzer& bounds) {
  auto bx = narrow_bound(x, bounds), by = narrow_bound(y, bounds);
  return bx && by && (bx->max < by->min || by->max < bx->min);
}

bool iterations_apart(const ir::Expr& x, const ir::Expr& y, const ir::Expr& other, const ir::Expr& var,
                      const ir::VarMap& originals, const ir::BoundAnalyzer& bounds) {
  if (!ir::uses_var(x, other.get()) || ir::uses_var(x, var.get()) || ir::uses_var(y, other.get()) ||
      !ir::uses_var(y, var.get()) ||
      !ir::structural_equal(ir::substitute(x, originals), ir::substitute(y, originals)) || !narrow_bound(y, bounds))
    return false;
  LinearForm form;
  if (!form.add(y, 1)) return false;
  int64_t stride = 0;
  Wide lo = 0, hi = 0;  // the range of the rest, r
  int64_t multiple = 0;  // the gcd of r's coefficients
  for (const LinearForm::Term& t : form.terms) {
    if (t.atom.get() == var.get()) {
      stride = t.coefficient;
      continue;
    }
    if (ir::uses_var(t.atom, var.get()) || t.coefficient == INT64_MIN) return false;
    auto b = narrow_bound(t.atom, bounds);
    if (!b) return false;
    const Wide a = Wide(b->min) * t.coefficient, c = Wide(b->max) * t.coefficient;
    lo += std::min(a, c);
    hi += std::max(a, c);
    multiple = std::gcd(multiple, t.coefficient);
  }
  if (stride == 0) return false;
  const Wide step = stride < 0 ? -Wide(stride) : Wide(stride);
  if (hi - lo < step) return true;
  auto range = narrow_bound(var, bounds);
  return range && step * (Wide(range->max) - range->min + 1) <= multiple;
}

}  // namespace tilec::passes
