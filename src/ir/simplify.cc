#include "ir/simplify.h"

#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "base/stack_guard.h"
#include "ir/bound.h"
#include "ir/equal.h"
#include "ir/mutator.h"
#include "ir/substitute.h"

namespace tilec::ir {

namespace {

// ---------------------------------------------------------------- constants

// The low t.bits() bits of v read as a signed number.
int64_t signed_view(DType t, uint64_t v) {
  int bits = t.bits();
  if (bits >= 64) return static_cast<int64_t>(v);
  return static_cast<int64_t>(v << (64 - bits)) >> (64 - bits);
}

// The bit pattern `v` as a value of integer dtype t (IntImm's representation:
// sign-extended for signed types, zero-extended for unsigned ones).
int64_t wrap(DType t, uint64_t v) {
  int bits = t.bits();
  if (t.is_uint() && bits < 64) return static_cast<int64_t>(v & ((uint64_t{1} << bits) - 1));
  return signed_view(t, v);
}

bool is_const(const Expr& e) { return e.as<IntImm>() || e.as<FloatImm>(); }

bool is_commutative(ExprKind k) {
  switch (k) {
    case ExprKind::Add:
    case ExprKind::Mul:
    case ExprKind::BitXor:
    case ExprKind::BitAnd:
    case ExprKind::BitOr:
    case ExprKind::Min:
    case ExprKind::Max:
    case ExprKind::EQ:
    case ExprKind::NE:
    case ExprKind::And:
    case ExprKind::Or: return true;
    default: return false;
  }
}

template <typename T>
Expr compare(ExprKind k, T a, T b) {
  switch (k) {
    case ExprKind::EQ: return make_bool(a == b);
    case ExprKind::NE: return make_bool(a != b);
    case ExprKind::LT: return make_bool(a < b);
    case ExprKind::LE: return make_bool(a <= b);
    case ExprKind::GT: return make_bool(a > b);
    case ExprKind::GE: return make_bool(a >= b);
    default: return Expr();
  }
}

Expr fold_int(ExprKind k, DType t, int64_t a, int64_t b) {
  const bool u = t.is_uint() || t.is_bool();
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  auto imm = [&](uint64_t v) { return make_int(wrap(t, v), t); };
  if (Expr c = u ? compare(k, ua, ub) : compare(k, a, b)) return c;
  switch (k) {
    case ExprKind::Min: return make_int((u ? ua < ub : a < b) ? a : b, t);
    case ExprKind::Max: return make_int((u ? ua > ub : a > b) ? a : b, t);
    case ExprKind::And: return t.is_bool() ? make_bool(a && b) : Expr();
    case ExprKind::Or: return t.is_bool() ? make_bool(a || b) : Expr();
    default: break;
  }
  if (t.is_bool()) return Expr();
  switch (k) {
    case ExprKind::Add: return imm(ua + ub);
    case ExprKind::Sub: return imm(ua - ub);
    case ExprKind::Mul: return imm(ua * ub);
    case ExprKind::BitXor: return imm(ua ^ ub);
    case ExprKind::BitAnd: return imm(ua & ub);
    case ExprKind::BitOr: return imm(ua | ub);
    case ExprKind::ShiftLeft:
    case ExprKind::ShiftRight: {
      if (b < 0 || b >= t.bits()) return Expr();  // left as written (undefined in C)
      if (k == ExprKind::ShiftLeft) return imm(ua << b);
      return u ? imm(ua >> b) : imm(static_cast<uint64_t>(a >> b));
    }
    default: break;
  }
  if (b == 0) return Expr();
  if (u) {
    if (k == ExprKind::FloorMod) return imm(ua % ub);
    return imm(ua / ub);  // Div, FloorDiv
  }
  // b == -1 is the one divisor whose quotient can overflow (min / -1).
  switch (k) {
    case ExprKind::Div: return b == -1 ? imm(0 - ua) : imm(a / b);
    case ExprKind::FloorDiv: {
      if (b == -1) return imm(0 - ua);
      int64_t q = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) --q;
      return imm(q);
    }
    case ExprKind::FloorMod: {
      if (b == -1) return make_int(0, t);
      int64_t r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return imm(r);
    }
    default: return Expr();
  }
}

template <typename T>
Expr fold_float_as(ExprKind k, DType t, T a, T b) {
  if (Expr c = compare(k, a, b)) return c;
  switch (k) {
    case ExprKind::Add: return make_float(a + b, t);
    case ExprKind::Sub: return make_float(a - b, t);
    case ExprKind::Mul: return make_float(a * b, t);
    case ExprKind::Div: return b == 0 ? Expr() : make_float(a / b, t);
    case ExprKind::Min:
    case ExprKind::Max:
      // Targets differ on min/max of NaN and of -0.0 vs 0.0.
      if (std::isnan(a) || std::isnan(b) || (a == b && std::signbit(a) != std::signbit(b)))
        return Expr();
      return make_float(k == ExprKind::Min ? std::min(a, b) : std::max(a, b), t);
    default: return Expr();
  }
}

Expr fold_float(ExprKind k, DType t, double a, double b) {
  if (t == DType::Float32)
    return fold_float_as<float>(k, t, static_cast<float>(a), static_cast<float>(b));
  if (t == DType::Float64) return fold_float_as<double>(k, t, a, b);
  return Expr();
}

// Cast of a constant, or null when the result depends on a rounding the
// target does (soft floats) or is undefined (NaN or out-of-range float -> int).
Expr fold_cast(DType t, const Expr& value) {
  DType s = value->dtype;
  if (t.is_soft_float() || s.is_soft_float()) return Expr();
  if (auto* imm = value.as<IntImm>()) {
    bool big = s == DType::UInt64;  // value holds the bit pattern
    if (t.is_bool()) return make_bool(imm->value != 0);
    if (t.is_integer()) return make_int(wrap(t, static_cast<uint64_t>(imm->value)), t);
    double d = big ? static_cast<double>(static_cast<uint64_t>(imm->value))
                   : static_cast<double>(imm->value);
    if (t == DType::Float32) {
      float f = big ? static_cast<float>(static_cast<uint64_t>(imm->value))
                    : static_cast<float>(imm->value);
      return make_float(f, t);
    }
    return make_float(d, t);
  }
  if (auto* imm = value.as<FloatImm>()) {
    double v =
        s == DType::Float32 ? static_cast<double>(static_cast<float>(imm->value)) : imm->value;
    if (t.is_bool()) return make_bool(v != 0);
    if (t.is_float()) return make_float(t == DType::Float32 ? static_cast<float>(v) : v, t);
    if (std::isnan(v)) return Expr();
    double x = std::trunc(v);
    int bits = t.bits();
    if (t.is_uint()) {
      if (x < 0 || x >= std::ldexp(1.0, bits)) return Expr();
      return make_int(static_cast<int64_t>(static_cast<uint64_t>(x)), t);
    }
    if (x < -std::ldexp(1.0, bits - 1) || x >= std::ldexp(1.0, bits - 1)) return Expr();
    return make_int(static_cast<int64_t>(x), t);
  }
  return Expr();
}

// ---------------------------------------------------------------- linear sums

struct LinearCounts {
  int constants = 0;    // constant leaves seen
  int occurrences = 0;  // term leaves seen, before merging
};

bool accumulate(const Expr& e, int64_t coef, LinearSum* out, LinearCounts* counts) {
  check_stack(e->loc);
  if (auto* imm = e.as<IntImm>()) {
    if (e->dtype == DType::UInt64 && imm->value < 0) return false;
    int64_t p;
    if (__builtin_mul_overflow(coef, imm->value, &p) ||
        __builtin_add_overflow(out->constant, p, &out->constant))
      return false;
    ++counts->constants;
    return true;
  }
  if (auto* add = e.as<Add>()) {
    return accumulate(add->a, coef, out, counts) && accumulate(add->b, coef, out, counts);
  }
  if (auto* sub = e.as<Sub>()) {
    if (coef == std::numeric_limits<int64_t>::min()) return false;
    return accumulate(sub->a, coef, out, counts) && accumulate(sub->b, -coef, out, counts);
  }
  if (auto* mul = e.as<Mul>()) {
    int64_t c, p;
    const Expr* other = is_const_int(mul->b, &c)   ? &mul->a
                        : is_const_int(mul->a, &c) ? &mul->b
                                                   : nullptr;
    if (other && !(e->dtype == DType::UInt64 && c < 0)) {
      if (__builtin_mul_overflow(coef, c, &p)) return false;
      return accumulate(*other, p, out, counts);
    }
  }
  ++counts->occurrences;
  for (auto& [term, c] : out->terms) {
    if (structural_equal(term, e)) return !__builtin_add_overflow(c, coef, &c);
  }
  out->terms.emplace_back(e, coef);
  return true;
}

// Whether c reads as negative and -c is a positive value of t, so that a sum
// prints x - 1 rather than x + -1 (or x + 4294967295 for uint32).
bool negatable(DType t, int64_t c) {
  return signed_view(t, static_cast<uint64_t>(c)) < 0 && wrap(t, 0 - static_cast<uint64_t>(c)) > 0;
}

// x + c with the constant's sign folded into the operator: x - 3, not x + -3.
Expr add_const(const Expr& x, int64_t c) {
  DType t = x->dtype;
  if (wrap(t, static_cast<uint64_t>(c)) == 0) return x;
  if (negatable(t, c)) return make_Sub(x, make_int(wrap(t, 0 - static_cast<uint64_t>(c)), t));
  return make_Add(x, make_int(wrap(t, static_cast<uint64_t>(c)), t));
}

Expr times(const Expr& x, int64_t c) { return c == 1 ? x : make_Mul(x, make_int(c, x->dtype)); }

// The canonical form of a + b (sign +1) or a - b (sign -1), when regrouping
// combines constants or like terms; else null.
Expr combine_linear(const Expr& a, const Expr& b, int64_t sign) {
  DType t = a->dtype;
  LinearSum sum;
  LinearCounts counts;
  if (!accumulate(a, 1, &sum, &counts) || !accumulate(b, sign, &sum, &counts)) return Expr();
  if (counts.constants <= 1 && counts.occurrences == static_cast<int>(sum.terms.size()))
    return Expr();
  Expr result;
  for (const auto& [term, coef] : sum.terms) {
    int64_t c = signed_view(t, static_cast<uint64_t>(coef));
    if (c > 0) result = result ? make_Add(result, times(term, c)) : times(term, c);
  }
  int64_t constant = sum.constant;
  for (const auto& [term, coef] : sum.terms) {
    int64_t c = signed_view(t, static_cast<uint64_t>(coef));
    if (c >= 0) continue;
    if (!result) {
      // 6 - x rather than x * -1 + 6.
      result = make_int(wrap(t, static_cast<uint64_t>(constant)), t);
      constant = 0;
    }
    result = make_Sub(result, times(term, wrap(t, 0 - static_cast<uint64_t>(c))));
  }
  return result ? add_const(result, constant)
                : make_int(wrap(t, static_cast<uint64_t>(constant)), t);
}

// ---------------------------------------------------------------- rewrites

Expr rewrite(ExprKind k, const Expr& a, const Expr& b);

struct MultipleAndRemainder {
  Expr multiplied;  // x, of a = x * factor + y
  int64_t factor;
};

// a as x * m + y (either order), where m > 0 divides `divisor` and 0 <= y < m with no wrap in
// the sum: then a // divisor is x // (divisor / m), y never carrying into the quotient (a
// thread's 8 consecutive columns tx * 8 + u, divided by a group's 128 columns: the same for all
// 8). Nothing where a has another form or the bounds don't show it.
std::optional<MultipleAndRemainder> multiple_and_remainder(const Expr& a, int64_t divisor) {
  const auto* sum = a.as<Add>();
  if (!sum || divisor <= 1) return std::nullopt;
  // Where the sum may wrap, its bound is the dtype's whole range.
  const DType t = a->dtype;
  const BoundAnalyzer bounds;
  const std::optional<Interval> whole = bounds.bound(a);
  const int bits = t.bits();
  if (!whole || bits >= 64) return std::nullopt;
  const int64_t lowest = t.is_uint() ? 0 : -(int64_t{1} << (bits - 1));
  const int64_t highest = t.is_uint() ? (int64_t{1} << bits) - 1 : (int64_t{1} << (bits - 1)) - 1;
  if (whole->min == lowest && whole->max == highest) return std::nullopt;
  for (const auto& [product, rest] : {std::pair{sum->a, sum->b}, std::pair{sum->b, sum->a}}) {
    const auto* mul = product.as<Mul>();
    int64_t m;
    if (!mul || !is_const_int(mul->b, &m) || m <= 0 || divisor % m) continue;
    const std::optional<Interval> r = bounds.bound(rest);
    if (r && r->min >= 0 && r->max < m) return MultipleAndRemainder{mul->a, m};
  }
  return std::nullopt;
}

Expr drop_multiples(const Expr& a, int64_t divisor);
Expr build(ExprKind k, const Expr& a, const Expr& b);

// Sum `a` without its terms x * m with m a multiple of `divisor` > 1, whose floor mod by
// divisor is a's (the sum may wrap where divisor is a power of two, which divides 2^bits; else
// the bounds must show it doesn't); null where a is no such sum.
Expr without_multiple(const Expr& a, int64_t divisor) {
  const auto* sum = a.as<Add>();
  if (!sum || divisor <= 1) return Expr();
  if (divisor & (divisor - 1)) {
    const DType t = a->dtype;
    const std::optional<Interval> whole = BoundAnalyzer().bound(a);
    if (!whole || t.bits() >= 64 || t.is_uint()) return Expr();
    if (whole->min == -(int64_t{1} << (t.bits() - 1)) && whole->max == (int64_t{1} << (t.bits() - 1)) - 1)
      return Expr();
  }
  Expr rest = drop_multiples(a, divisor);
  if (!rest) return make_int(0, a->dtype);
  return rest.get() == a.get() ? Expr() : rest;
}

// The terms of sum tree `a` that are not x * m with m a multiple of `divisor`, summed; null
// where every term is one.
Expr drop_multiples(const Expr& a, int64_t divisor) {
  const auto* mul = a.as<Mul>();
  int64_t m;
  if (mul && is_const_int(mul->b, &m) && m % divisor == 0) return Expr();
  const auto* sum = a.as<Add>();
  if (!sum) return a;
  Expr left = drop_multiples(sum->a, divisor), right = drop_multiples(sum->b, divisor);
  if (!left || !right) return left ? left : right;
  return left.get() == sum->a.get() && right.get() == sum->b.get() ? a : build(ExprKind::Add, left, right);
}

Expr build(ExprKind k, const Expr& a, const Expr& b) {
  Expr r = rewrite(k, a, b);
  return r ? r : make_binary(k, a, b);
}

// The rewritten a `k` b, or null when no rule applies. a and b are simplified.
Expr rewrite(ExprKind k, const Expr& a, const Expr& b) {
  DType t = a->dtype;
  int64_t ca, cb;
  const bool a_const = is_const_int(a, &ca), b_const = is_const_int(b, &cb);
  if (a_const && b_const) return fold_int(k, t, ca, cb);
  auto *fa = a.as<FloatImm>(), *fb = b.as<FloatImm>();
  if (fa && fb) return fold_float(k, t, fa->value, fb->value);
  if (is_commutative(k) && is_const(a) && !is_const(b)) return build(k, b, a);

  const bool integer = t.is_integer();
  auto zero = [&] { return make_int(0, t); };
  switch (k) {
    case ExprKind::Add:
      if (!integer) return Expr();
      if (b_const && cb == 0) return a;
      if (Expr r = combine_linear(a, b, 1)) return r;
      if (b_const && negatable(t, cb)) return add_const(a, cb);
      return Expr();
    case ExprKind::Sub:
      if (!integer) return Expr();
      if (b_const && cb == 0) return a;
      if (structural_equal(a, b)) return zero();
      if (Expr r = combine_linear(a, b, -1)) return r;
      if (b_const && negatable(t, cb))
        return add_const(a, static_cast<int64_t>(0 - static_cast<uint64_t>(cb)));
      return Expr();
    case ExprKind::Mul:
      if (!integer || !b_const) return Expr();
      if (cb == 1) return a;
      if (cb == 0) return zero();
      if (auto* inner = a.as<Mul>()) {
        int64_t c1;
        if (is_const_int(inner->b, &c1)) return build(k, inner->a, fold_int(k, t, c1, cb));
      }
      return Expr();
    case ExprKind::Div: return integer && b_const && cb == 1 ? a : Expr();
    case ExprKind::FloorDiv:
    case ExprKind::FloorMod: {
      if (!integer || !b_const) return Expr();
      if (cb == 1) return k == ExprKind::FloorDiv ? a : zero();
      if (k == ExprKind::FloorDiv)
        if (auto split = multiple_and_remainder(a, cb)) {
          const int64_t q = cb / split->factor;
          return q == 1 ? split->multiplied : build(k, split->multiplied, make_int(q, t));
        }
      auto* inner = a.as<Mul>();
      int64_t c1;
      if (cb > 0 && inner && is_const_int(inner->b, &c1) && c1 % cb == 0)
        return k == ExprKind::FloorDiv ? build(ExprKind::Mul, inner->a, make_int(c1 / cb, t))
                                       : zero();
      if (k == ExprKind::FloorMod)
        if (Expr rest = without_multiple(a, cb)) return build(k, rest, b);
      return Expr();
    }
    case ExprKind::BitXor:
      if (!integer) return Expr();
      if (b_const && cb == 0) return a;
      return structural_equal(a, b) ? zero() : Expr();
    case ExprKind::BitOr:
      if (!integer) return Expr();
      if (b_const && cb == 0) return a;
      return structural_equal(a, b) ? a : Expr();
    case ExprKind::BitAnd:
      if (!integer) return Expr();
      if (b_const && cb == 0) return zero();
      return structural_equal(a, b) ? a : Expr();
    case ExprKind::ShiftLeft: return integer && b_const && cb == 0 ? a : Expr();
    case ExprKind::ShiftRight: {
      if (!integer || !b_const) return Expr();
      if (cb == 0) return a;
      if (cb > 0 && cb < t.bits() && cb < 62)
        if (auto split = multiple_and_remainder(a, int64_t{1} << cb)) {
          int shift = static_cast<int>(cb);
          for (int64_t m = split->factor; m > 1; m >>= 1) --shift;  // factor: a power of two dividing 2^cb
          return shift == 0 ? split->multiplied : build(k, split->multiplied, make_int(shift, b->dtype));
        }
      return Expr();
    }
    case ExprKind::Min:
    case ExprKind::Max: return structural_equal(a, b) ? a : Expr();
    case ExprKind::EQ:
    case ExprKind::NE:
    case ExprKind::LT:
    case ExprKind::LE:
    case ExprKind::GT:
    case ExprKind::GE:
      if ((integer || t.is_bool()) && structural_equal(a, b))
        return make_bool(k == ExprKind::EQ || k == ExprKind::LE || k == ExprKind::GE);
      return Expr();
    case ExprKind::And:
      if (!t.is_bool()) return Expr();
      if (b_const) return cb ? a : make_bool(false);
      return structural_equal(a, b) ? a : Expr();
    case ExprKind::Or:
      if (!t.is_bool()) return Expr();
      if (b_const) return cb ? make_bool(true) : a;
      return structural_equal(a, b) ? a : Expr();
    default: return Expr();
  }
}

Stmt nothing() { return make_seq({}); }

class Simplifier : public IRMutator {
 protected:
#define TILEC_SIMPLIFY_BINARY(n)                                       \
  Expr mutate_##n(const n* op, const Expr& self) override {            \
    return mutate_binary(n::static_kind, op->a, op->b, op->loc, self); \
  }
  TILEC_FOR_EACH_BINARY_EXPR(TILEC_SIMPLIFY_BINARY)
#undef TILEC_SIMPLIFY_BINARY

  Expr mutate_binary(ExprKind k, const Expr& op_a, const Expr& op_b, const SourceLoc& loc,
                     const Expr& self) {
    Expr a = mutate(op_a);
    Expr b = mutate(op_b);
    if (Expr r = rewrite(k, a, b)) return r;
    if (a.same_as(op_a) && b.same_as(op_b)) return self;
    return with_loc(make_binary(k, a, b), loc);
  }

  Expr mutate_Not(const Not* op, const Expr& self) override {
    Expr a = mutate(op->a);
    int64_t v;
    if (is_const_int(a, &v)) return make_bool(v == 0);
    if (auto* inner = a.as<Not>()) return inner->a;
    return a.same_as(op->a) ? self : with_loc(make_not(a), op->loc);
  }

  Expr mutate_Select(const Select* op, const Expr& self) override {
    Expr e = IRMutator::mutate_Select(op, self);
    auto* s = e.as<Select>();
    if (!s) return e;
    int64_t c;
    if (is_const_int(s->condition, &c)) return c ? s->true_value : s->false_value;
    if (structural_equal(s->true_value, s->false_value)) return s->true_value;
    return e;
  }

  Expr mutate_Cast(const Cast* op, const Expr& self) override {
    Expr e = IRMutator::mutate_Cast(op, self);
    auto* c = e.as<Cast>();
    if (!c) return e;
    Expr folded = fold_cast(c->dtype, c->value);
    return folded ? folded : e;
  }

  Stmt mutate_For(const For* op, const Stmt& self) override {
    Expr min = mutate(op->min);
    Expr extent = mutate(op->extent);
    int64_t n;
    if (is_const_int(extent, &n)) {
      if (n <= 0) return nothing();
      if (n == 1) return or_nothing(mutate(substitute(op->body, VarMap{{op->var.get(), min}})));
    }
    Stmt body = mutate(op->body);
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return self;
    auto s = std::make_shared<For>(*op);
    s->min = std::move(min);
    s->extent = std::move(extent);
    s->body = std::move(body);
    return Stmt(s);
  }

  Stmt mutate_IfThenElse(const IfThenElse* op, const Stmt& self) override {
    Expr condition = mutate(op->condition);
    int64_t c;
    if (is_const_int(condition, &c)) return or_nothing(mutate(c ? op->then_case : op->else_case));
    Stmt then_case = mutate(op->then_case);
    Stmt else_case = mutate(op->else_case);
    if (condition.same_as(op->condition) && then_case.same_as(op->then_case) &&
        else_case.same_as(op->else_case))
      return self;
    auto s = std::make_shared<IfThenElse>(*op);
    s->condition = std::move(condition);
    s->then_case = std::move(then_case);
    s->else_case = std::move(else_case);
    return Stmt(s);
  }

  Stmt mutate_Seq(const Seq* op, const Stmt& self) override {
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const Stmt& s : op->stmts) {
      stmts.push_back(mutate(s));
      changed |= !stmts.back().same_as(s) || !s || s.kind() == StmtKind::Seq;
    }
    return changed ? make_seq(std::move(stmts)) : self;
  }

  Stmt mutate_LetStmt(const LetStmt* op, const Stmt& self) override {
    Expr value = mutate(op->value);
    if (is_const(value))
      return or_nothing(mutate(substitute(op->body, VarMap{{op->var.get(), value}})));
    Stmt body = mutate(op->body);
    if (value.same_as(op->value) && body.same_as(op->body)) return self;
    auto s = std::make_shared<LetStmt>(*op);
    s->value = std::move(value);
    s->body = std::move(body);
    return Stmt(s);
  }

 private:
  static Stmt or_nothing(Stmt s) { return s ? s : nothing(); }
};

}  // namespace

Expr simplify(const Expr& e) { return Simplifier().mutate(e); }

Stmt simplify(const Stmt& s) { return Simplifier().mutate(s); }

std::optional<LinearSum> linear_sum(const Expr& e) {
  LinearSum sum;
  LinearCounts counts;
  if (!accumulate(e, 1, &sum, &counts)) return std::nullopt;
  std::erase_if(sum.terms, [](const auto& t) { return t.second == 0; });
  return sum;
}

}  // namespace tilec::ir
