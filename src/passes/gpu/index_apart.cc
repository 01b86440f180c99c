#include "passes/gpu/index_apart.h"

#include <cstdlib>
#include <numeric>
#include <optional>
#include <vector>

#include "ir/equal.h"
#include "ir/linear_form.h"
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
  ir::LinearForm form;
  if (!form.add(y, 1)) return false;
  int64_t stride = 0;
  Wide lo = 0, hi = 0;  // the range of the rest, r
  int64_t multiple = 0;  // the gcd of r's coefficients
  for (const ir::LinearForm::Term& t : form.terms) {
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
