#include "frontend/thread_ranges.h"

#include <algorithm>

#include "ir/device_calls.h"
#include "ir/visitor.h"
#include "op/op.h"

namespace tilec::frontend {
namespace {

using Range = std::pair<int64_t, int64_t>;

bool is_index(const ir::Expr& e, const ir::Expr& tx) {
  if (const auto* cast = e.as<ir::Cast>()) return cast->value->dtype.is_integer() && is_index(cast->value, tx);
  return e.same_as(tx);
}

// The threads for which `tx op c` holds (op one of < <= > >= ==), c on either side.
std::optional<Range> comparison(const ir::Expr& cond, const ir::Expr& tx, int64_t threads) {
  const ir::ExprNode* node = cond.get();
  ir::Expr a, b;
  ir::ExprKind kind = node->kind;
  switch (kind) {
#define TILEC_OPERANDS(K)                     \
  case ir::ExprKind::K:                       \
    a = static_cast<const ir::K*>(node)->a;   \
    b = static_cast<const ir::K*>(node)->b;   \
    break;
    TILEC_OPERANDS(LT) TILEC_OPERANDS(LE) TILEC_OPERANDS(GT) TILEC_OPERANDS(GE) TILEC_OPERANDS(EQ)
#undef TILEC_OPERANDS
    default: return std::nullopt;
  }
  int64_t c;
  if (!is_index(a, tx)) {
    if (!is_index(b, tx)) return std::nullopt;
    std::swap(a, b);
    static const std::pair<ir::ExprKind, ir::ExprKind> kMirror[] = {{ir::ExprKind::LT, ir::ExprKind::GT},
                                                                    {ir::ExprKind::LE, ir::ExprKind::GE},
                                                                    {ir::ExprKind::GT, ir::ExprKind::LT},
                                                                    {ir::ExprKind::GE, ir::ExprKind::LE}};
    for (const auto& [from, to] : kMirror)
      if (kind == from) {
        kind = to;
        break;
      }
  }
  if (!ir::is_const_int(b, &c)) return std::nullopt;
  c = std::clamp<int64_t>(c, -1, threads + 1);
  switch (kind) {
    case ir::ExprKind::LT: return Range{0, c};
    case ir::ExprKind::LE: return Range{0, c + 1};
    case ir::ExprKind::GT: return Range{c + 1, threads};
    case ir::ExprKind::GE: return Range{c, threads};
    default: return Range{c, c + 1};
  }
}

}  // namespace

std::optional<Range> thread_range_of(const ir::Expr& cond, const ir::Expr& tx, int64_t threads) {
  if (!tx) return std::nullopt;
  std::optional<Range> range;
  if (const auto* both = cond.as<ir::And>()) {
    auto a = thread_range_of(both->a, tx, threads), b = thread_range_of(both->b, tx, threads);
    if (a && b) range = Range{std::max(a->first, b->first), std::min(a->second, b->second)};
  } else {
    range = comparison(cond, tx, threads);
  }
  if (!range) return std::nullopt;
  range->first = std::max<int64_t>(range->first, 0);
  range->second = std::min(range->second, threads);
  return range;
}

static bool find_tile_code(const ir::Stmt& s, bool in_groups) {
  struct Finder : ir::IRVisitor {
    bool in_groups = true, found = false;
    void visit(const ir::Stmt& st) override {
      if (found || !st) return;
      const auto* loop = st.as<ir::For>();
      if (op::is_tile_op(st.kind()) || (loop && loop->for_kind == ir::ForKind::Parallel)) {
        found = true;
        return;
      }
      if (const auto* branch = st.as<ir::IfThenElse>(); branch && !in_groups) {
        const auto* call = branch->condition.as<ir::Call>();
        if (call && call->name == ir::kThreadGroup) return visit(branch->else_case);
      }
      IRVisitor::visit(st);
    }
    using IRVisitor::visit;
  } finder;
  finder.in_groups = in_groups;
  finder.visit(s);
  return finder.found;
}

bool has_tile_code(const ir::Stmt& s) { return find_tile_code(s, true); }

bool has_tile_code_outside_groups(const ir::Stmt& s) { return find_tile_code(s, false); }

}  // namespace tilec::frontend
