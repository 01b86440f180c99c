#include "ir/bound.h"

#include <algorithm>
#include <initializer_list>

#include "base/stack_guard.h"
#include "ir/simplify.h"

namespace tilec::ir {

namespace {

// Wide enough for any sum, difference or product of two int64 bounds.
using Wide = __int128;

// Dtypes whose whole range fits an Interval.
bool analyzable(DType t) { return t.is_bool() || t.is_int() || (t.is_uint() && t.bits() < 64); }

Interval whole(DType t) {
  if (t.is_bool()) return {0, 1};
  int bits = t.bits();
  if (t.is_uint()) return {0, static_cast<int64_t>((uint64_t{1} << bits) - 1)};
  if (bits == 64) return {INT64_MIN, INT64_MAX};
  return {-(int64_t{1} << (bits - 1)), (int64_t{1} << (bits - 1)) - 1};
}

// [lo, hi] as the bound of a t-typed value: t's whole range when the value
// might not fit, since it then wraps.
Interval fit(DType t, Wide lo, Wide hi, bool* may_wrap) {
  Interval r = whole(t);
  if (lo < r.min || hi > r.max) {
    *may_wrap = true;
    return r;
  }
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

Wide floor_div(Wide a, Wide b) {
  Wide q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

Wide floor_mod(Wide a, Wide b) { return a - floor_div(a, b) * b; }

// The extremes of f over the corners of a x b (f monotone in each argument).
template <typename F>
Interval corners(DType t, Interval a, Interval b, bool* may_wrap, F f) {
  std::initializer_list<Wide> v = {f(a.min, b.min), f(a.min, b.max), f(a.max, b.min),
                                   f(a.max, b.max)};
  return fit(t, std::min(v), std::max(v), may_wrap);
}

std::pair<const Expr*, const Expr*> operands(const Expr& e) {
  switch (e.kind()) {
#define TILEC_OPERANDS(n)                      \
  case ExprKind::n: {                          \
    auto* op = static_cast<const n*>(e.get()); \
    return {&op->a, &op->b};                   \
  }
    TILEC_FOR_EACH_BINARY_EXPR(TILEC_OPERANDS)
#undef TILEC_OPERANDS
    default: return {nullptr, nullptr};
  }
}

bool is_logical(ExprKind k) {
  switch (k) {
    case ExprKind::EQ:
    case ExprKind::NE:
    case ExprKind::LT:
    case ExprKind::LE:
    case ExprKind::GT:
    case ExprKind::GE:
    case ExprKind::And:
    case ExprKind::Or:
    case ExprKind::Not: return true;
    default: return false;
  }
}

// not (a k b) as a comparison of integers.
ExprKind negate(ExprKind k) {
  switch (k) {
    case ExprKind::EQ: return ExprKind::NE;
    case ExprKind::NE: return ExprKind::EQ;
    case ExprKind::LT: return ExprKind::GE;
    case ExprKind::LE: return ExprKind::GT;
    case ExprKind::GT: return ExprKind::LE;
    default: return ExprKind::LT;  // GE
  }
}

}  // namespace

void BoundAnalyzer::bind(const Expr& var, Interval range) {
  if (analyzable(var->dtype)) {
    Interval w = whole(var->dtype);
    range = {std::max(range.min, w.min), std::min(range.max, w.max)};
  }
  ranges_[var.get()] = range;
}

std::optional<Interval> BoundAnalyzer::bound(const Expr& e) const {
  bool may_wrap = false;
  return e ? eval(e, &may_wrap) : std::nullopt;
}

bool BoundAnalyzer::can_prove(const Expr& condition) const { return prove(condition, true); }

// `may_wrap` is set when some arithmetic inside e might have left its dtype's
// range: e's value then need not be the mathematical one.
std::optional<Interval> BoundAnalyzer::eval(const Expr& e, bool* may_wrap) const {
  check_stack(e->loc);
  DType t = e->dtype;
  if (!analyzable(t)) return std::nullopt;
  if (auto* imm = e.as<IntImm>()) return Interval{imm->value, imm->value};
  if (e.as<Var>()) {
    auto it = ranges_.find(e.get());
    return it == ranges_.end() ? whole(t) : it->second;
  }
  if (is_logical(e.kind())) {
    if (prove(e, true)) return Interval{1, 1};
    if (prove(e, false)) return Interval{0, 0};
    return Interval{0, 1};
  }
  if (auto* s = e.as<Select>()) {
    if (prove(s->condition, true)) return eval(s->true_value, may_wrap);
    if (prove(s->condition, false)) return eval(s->false_value, may_wrap);
    auto a = eval(s->true_value, may_wrap);
    auto b = eval(s->false_value, may_wrap);
    return Interval{std::min(a->min, b->min), std::max(a->max, b->max)};
  }
  if (auto* c = e.as<Cast>()) {
    auto v = eval(c->value, may_wrap);
    return v ? fit(t, v->min, v->max, may_wrap) : whole(t);
  }
  auto [pa, pb] = operands(e);
  if (!pa) return whole(t);  // loads, calls
  auto ia = eval(*pa, may_wrap);
  auto ib = eval(*pb, may_wrap);
  if (!ia || !ib) return whole(t);
  Interval a = *ia, b = *ib;
  switch (e.kind()) {
    case ExprKind::Add: return fit(t, Wide(a.min) + b.min, Wide(a.max) + b.max, may_wrap);
    case ExprKind::Sub: return fit(t, Wide(a.min) - b.max, Wide(a.max) - b.min, may_wrap);
    case ExprKind::Mul: return corners(t, a, b, may_wrap, [](Wide x, Wide y) { return x * y; });
    case ExprKind::Div:
      if (b.min <= 0 && b.max >= 0) return whole(t);
      return corners(t, a, b, may_wrap, [](Wide x, Wide y) { return x / y; });
    case ExprKind::FloorDiv:
      if (b.min <= 0 && b.max >= 0) return whole(t);
      return corners(t, a, b, may_wrap, floor_div);
    case ExprKind::FloorMod:
      if (b.min > 0) {
        if (b.min == b.max && floor_div(a.min, b.min) == floor_div(a.max, b.min))
          return Interval{static_cast<int64_t>(floor_mod(a.min, b.min)),
                          static_cast<int64_t>(floor_mod(a.max, b.min))};
        if (a.min >= 0 && a.max < b.min) return a;
        return Interval{0, b.max - 1};
      }
      if (b.max < 0) return Interval{b.min + 1, 0};
      return whole(t);
    case ExprKind::Min: return Interval{std::min(a.min, b.min), std::min(a.max, b.max)};
    case ExprKind::Max: return Interval{std::max(a.min, b.min), std::max(a.max, b.max)};
    case ExprKind::BitAnd:
      // With a non-negative operand: at most it, whatever the other (x & 7 is 0..7).
      if (a.min >= 0 && b.min >= 0) return Interval{0, std::min(a.max, b.max)};
      if (a.min >= 0) return Interval{0, a.max};
      if (b.min >= 0) return Interval{0, b.max};
      return whole(t);
    case ExprKind::BitXor:
    case ExprKind::BitOr: {
      // Of non-negative operands: no bit above the larger one's highest.
      if (a.min < 0 || b.min < 0) return whole(t);
      Wide high = 1;
      while (high <= std::max(a.max, b.max)) high <<= 1;
      return Interval{0, static_cast<int64_t>(high - 1)};
    }
    default: return whole(t);
  }
}

// Proves `condition` (expected) or its negation (!expected).
bool BoundAnalyzer::prove(const Expr& condition, bool expected) const {
  if (!condition) return false;
  int64_t v;
  if (is_const_int(condition, &v)) return (v != 0) == expected;
  if (auto* n = condition.as<Not>()) return prove(n->a, !expected);
  if (auto* a = condition.as<And>()) {
    return expected ? prove(a->a, true) && prove(a->b, true)
                    : prove(a->a, false) || prove(a->b, false);
  }
  if (auto* o = condition.as<Or>()) {
    return expected ? prove(o->a, true) || prove(o->b, true)
                    : prove(o->a, false) && prove(o->b, false);
  }
  if (!is_logical(condition.kind())) return false;
  auto [pa, pb] = operands(condition);
  ExprKind k = expected ? condition.kind() : negate(condition.kind());
  return prove_compare(k, *pa, *pb);
}

bool BoundAnalyzer::prove_compare(ExprKind kind, const Expr& a, const Expr& b) const {
  if (!analyzable(a->dtype) || a->dtype != b->dtype) return false;
  bool may_wrap = false;
  auto ia = eval(a, &may_wrap);
  auto ib = eval(b, &may_wrap);
  // Bounds of a - b, from the operands' bounds, then (when both sides are
  // exactly their mathematical values) from a - b with like terms cancelled.
  Wide lo = Wide(ia->min) - ib->max, hi = Wide(ia->max) - ib->min;
  std::optional<LinearSum> sum;
  if (!may_wrap) sum = linear_sum(make_Sub(a, b));
  if (sum) {
    Wide slo = sum->constant, shi = sum->constant;
    bool ok = true;
    for (const auto& [term, coef] : sum->terms) {
      bool ignored = false;
      auto r = eval(term, &ignored);
      if (!r) {
        ok = false;
        break;
      }
      Wide x = Wide(coef) * r->min, y = Wide(coef) * r->max;
      ok = !__builtin_add_overflow(slo, std::min(x, y), &slo) &&
           !__builtin_add_overflow(shi, std::max(x, y), &shi);
      if (!ok) break;
    }
    if (ok) {
      lo = std::max(lo, slo);
      hi = std::min(hi, shi);
    }
  }
  switch (kind) {
    case ExprKind::LT: return hi < 0;
    case ExprKind::LE: return hi <= 0;
    case ExprKind::GT: return lo > 0;
    case ExprKind::GE: return lo >= 0;
    case ExprKind::EQ: return lo == 0 && hi == 0;
    case ExprKind::NE: return hi < 0 || lo > 0;
    default: return false;
  }
}

}  // namespace tilec::ir
