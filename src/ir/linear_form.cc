#include "ir/linear_form.h"

#include "base/stack_guard.h"
#include "ir/equal.h"

namespace tilec::ir {

bool LinearForm::add(const Expr& e, int64_t scale) {
  check_stack(e->loc);
  int64_t value;
  if (is_const_int(e, &value)) {
    int64_t product;
    return !__builtin_mul_overflow(value, scale, &product) && !__builtin_add_overflow(constant, product, &constant);
  }
  if (const auto* add = e.as<Add>()) return this->add(add->a, scale) && this->add(add->b, scale);
  if (const auto* sub = e.as<Sub>()) return this->add(sub->a, scale) && scale != INT64_MIN && this->add(sub->b, -scale);
  if (const auto* mul = e.as<Mul>()) {
    int64_t factor, product;
    if (is_const_int(mul->b, &factor)) return !__builtin_mul_overflow(scale, factor, &product) && this->add(mul->a, product);
    if (is_const_int(mul->a, &factor)) return !__builtin_mul_overflow(scale, factor, &product) && this->add(mul->b, product);
  }
  if (const auto* cast = e.as<Cast>();
      cast && cast->dtype.is_int() && cast->value->dtype.is_integer() && cast->dtype.bits() > cast->value->dtype.bits())
    return this->add(cast->value, scale);
  for (Term& t : terms)
    if (structural_equal(t.atom, e)) return !__builtin_add_overflow(t.coefficient, scale, &t.coefficient);
  terms.push_back({e, scale});
  return true;
}

bool provably_multiple_of(const Expr& e, int64_t k) {
  LinearForm form;
  if (k <= 0 || !form.add(e, 1) || form.constant % k != 0) return false;
  for (const LinearForm::Term& t : form.terms)
    if (t.coefficient % k != 0) return false;
  return true;
}

}  // namespace tilec::ir
