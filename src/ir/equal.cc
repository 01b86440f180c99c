#include "ir/equal.h"

#include <cmath>
#include <unordered_map>

#include "base/stack_guard.h"

namespace tilec::ir {

namespace {

class StructuralEqual {
 public:
  explicit StructuralEqual(bool map_free_vars) : map_free_vars_(map_free_vars) {}

  bool eq(const Expr& a, const Expr& b) {
    if (!a || !b) return !a && !b;
    check_stack(a->loc);
    if (a.kind() != b.kind() || a->dtype != b->dtype) return false;
    switch (a.kind()) {
#define TILEC_DISPATCH(n) \
  case ExprKind::n: return eq_##n(static_cast<const n*>(a.get()), static_cast<const n*>(b.get()));
      TILEC_FOR_EACH_EXPR(TILEC_DISPATCH)
#undef TILEC_DISPATCH
    }
    return false;
  }

  bool eq(const Stmt& a, const Stmt& b) {
    if (!a || !b) return !a && !b;
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
#define TILEC_DISPATCH(n) \
  case StmtKind::n: return eq_##n(static_cast<const n*>(a.get()), static_cast<const n*>(b.get()));
      TILEC_FOR_EACH_STMT(TILEC_DISPATCH)
#undef TILEC_DISPATCH
    }
    return false;
  }

 private:
#define TILEC_EQ_DECL(n) bool eq_##n(const n* a, const n* b);
  TILEC_FOR_EACH_EXPR(TILEC_EQ_DECL)
  TILEC_FOR_EACH_STMT(TILEC_EQ_DECL)
#undef TILEC_EQ_DECL

  bool eq(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!eq(a[i], b[i])) return false;
    }
    return true;
  }

  bool eq(const Buffer& a, const Buffer& b) {
    if (a == b) return true;
    if (!a || !b) return false;
    return a->name == b->name && a->dtype == b->dtype && a->scope == b->scope &&
           eq(a->shape, b->shape);
  }

  bool eq(const BufferRegion& a, const BufferRegion& b) {
    if (!eq(a.buffer, b.buffer) || a.region.size() != b.region.size()) return false;
    for (size_t i = 0; i < a.region.size(); ++i) {
      if (!eq(a.region[i].min, b.region[i].min) || !eq(a.region[i].extent, b.region[i].extent))
        return false;
    }
    return true;
  }

  void bind(const ExprNode* a, const ExprNode* b) {
    if (auto it = lhs_.find(a); it != lhs_.end()) rhs_.erase(it->second);
    if (auto it = rhs_.find(b); it != rhs_.end()) lhs_.erase(it->second);
    lhs_[a] = b;
    rhs_[b] = a;
  }

  // `a` and `b` are defined at corresponding positions: they are the same
  // variable from here on.
  bool define(const Expr& a, const Expr& b) {
    if (!a.as<Var>() || !b.as<Var>()) return eq(a, b);
    if (a->dtype != b->dtype) return false;
    bind(a.get(), b.get());
    return true;
  }

  bool define(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!define(a[i], b[i])) return false;
    }
    return true;
  }

  bool map_free_vars_;
  std::unordered_map<const ExprNode*, const ExprNode*> lhs_;  // a's Vars -> b's
  std::unordered_map<const ExprNode*, const ExprNode*> rhs_;  // b's Vars -> a's
};

bool StructuralEqual::eq_IntImm(const IntImm* a, const IntImm* b) { return a->value == b->value; }

bool StructuralEqual::eq_FloatImm(const FloatImm* a, const FloatImm* b) {
  if (std::isnan(a->value) || std::isnan(b->value))
    return std::isnan(a->value) && std::isnan(b->value);
  return a->value == b->value && std::signbit(a->value) == std::signbit(b->value);
}

bool StructuralEqual::eq_Var(const Var* a, const Var* b) {
  if (auto it = lhs_.find(a); it != lhs_.end()) return it->second == b;
  if (rhs_.count(b)) return false;
  if (a == b) return true;
  if (!map_free_vars_) return false;
  bind(a, b);
  return true;
}

#define TILEC_EQ_BINARY(n) \
  bool StructuralEqual::eq_##n(const n* a, const n* b) { return eq(a->a, b->a) && eq(a->b, b->b); }
TILEC_FOR_EACH_BINARY_EXPR(TILEC_EQ_BINARY)
#undef TILEC_EQ_BINARY

bool StructuralEqual::eq_Not(const Not* a, const Not* b) { return eq(a->a, b->a); }

bool StructuralEqual::eq_Select(const Select* a, const Select* b) {
  return eq(a->condition, b->condition) && eq(a->true_value, b->true_value) &&
         eq(a->false_value, b->false_value);
}

bool StructuralEqual::eq_Cast(const Cast* a, const Cast* b) { return eq(a->value, b->value); }

bool StructuralEqual::eq_Call(const Call* a, const Call* b) {
  return a->name == b->name && eq(a->args, b->args);
}

bool StructuralEqual::eq_BufferLoad(const BufferLoad* a, const BufferLoad* b) {
  return eq(a->buffer, b->buffer) && eq(a->indices, b->indices);
}

bool StructuralEqual::eq_BufferStore(const BufferStore* a, const BufferStore* b) {
  return eq(a->buffer, b->buffer) && eq(a->indices, b->indices) && eq(a->value, b->value);
}

bool StructuralEqual::eq_For(const For* a, const For* b) {
  return a->for_kind == b->for_kind && a->num_stages == b->num_stages && a->async_fill == b->async_fill &&
         eq(a->min, b->min) &&
         eq(a->extent, b->extent) && define(a->var, b->var) && eq(a->body, b->body);
}

bool StructuralEqual::eq_While(const While* a, const While* b) {
  return eq(a->condition, b->condition) && eq(a->body, b->body);
}

bool StructuralEqual::eq_IfThenElse(const IfThenElse* a, const IfThenElse* b) {
  return eq(a->condition, b->condition) && eq(a->then_case, b->then_case) &&
         eq(a->else_case, b->else_case);
}

bool StructuralEqual::eq_Seq(const Seq* a, const Seq* b) {
  if (a->stmts.size() != b->stmts.size()) return false;
  for (size_t i = 0; i < a->stmts.size(); ++i) {
    if (!eq(a->stmts[i], b->stmts[i])) return false;
  }
  return true;
}

bool StructuralEqual::eq_LetStmt(const LetStmt* a, const LetStmt* b) {
  return eq(a->value, b->value) && define(a->var, b->var) && eq(a->body, b->body);
}

bool StructuralEqual::eq_Allocate(const Allocate* a, const Allocate* b) {
  return eq(a->buffer, b->buffer) && eq(a->body, b->body);
}

bool StructuralEqual::eq_Evaluate(const Evaluate* a, const Evaluate* b) {
  return eq(a->value, b->value);
}

bool StructuralEqual::eq_KernelLaunch(const KernelLaunch* a, const KernelLaunch* b) {
  if (a->thread_var.defined() != b->thread_var.defined()) return false;
  if (a->thread_var && !define(a->thread_var, b->thread_var)) return false;
  if (a->thread_index.defined() != b->thread_index.defined()) return false;
  if (a->thread_index && a->thread_index.get() != a->thread_var.get() && !define(a->thread_index, b->thread_index)) return false;
  return a->threads == b->threads && a->producer_threads == b->producer_threads && a->persistent == b->persistent && a->grid_sync == b->grid_sync &&
         a->cluster_dims == b->cluster_dims &&
         a->extern_sources == b->extern_sources &&
         a->keep_registers == b->keep_registers && a->min_blocks_per_sm == b->min_blocks_per_sm &&
         a->tensor_maps == b->tensor_maps && a->swizzle_panel == b->swizzle_panel &&
         a->swizzle_columns == b->swizzle_columns && eq(a->grid, b->grid) && define(a->block_vars, b->block_vars) &&
         eq(a->body, b->body);
}

bool StructuralEqual::eq_Copy(const Copy* a, const Copy* b) {
  if (a->barrier.defined() != b->barrier.defined()) return false;
  if (a->barrier && !eq(a->barrier, b->barrier)) return false;
  return a->instruction == b->instruction && a->allow_tma == b->allow_tma && a->allow_async == b->allow_async &&
         a->multicast == b->multicast && a->eviction == b->eviction && eq(a->src, b->src) && eq(a->dst, b->dst);
}

bool StructuralEqual::eq_Gemm(const Gemm* a, const Gemm* b) {
  return a->transpose_a == b->transpose_a && a->transpose_b == b->transpose_b &&
         a->clear_accum == b->clear_accum && a->policy == b->policy && a->wg_wait == b->wg_wait &&
         a->instruction == b->instruction &&
         eq(a->a, b->a) &&
         eq(a->b, b->b) && eq(a->c, b->c);
}

bool StructuralEqual::eq_Gemv(const Gemv* a, const Gemv* b) {
  return a->accumulate == b->accumulate && eq(a->a, b->a) && eq(a->x, b->x) && eq(a->y, b->y);
}

bool StructuralEqual::eq_Fill(const Fill* a, const Fill* b) {
  return eq(a->dst, b->dst) && eq(a->value, b->value);
}

bool StructuralEqual::eq_Reduce(const Reduce* a, const Reduce* b) {
  return a->reduce_kind == b->reduce_kind && a->dim == b->dim && a->clear == b->clear &&
         eq(a->src, b->src) && eq(a->dst, b->dst);
}

bool StructuralEqual::eq_CumSum(const CumSum* a, const CumSum* b) {
  return a->dim == b->dim && a->reverse == b->reverse && eq(a->src, b->src) && eq(a->dst, b->dst);
}

bool StructuralEqual::eq_AtomicAdd(const AtomicAdd* a, const AtomicAdd* b) {
  return a->instruction == b->instruction && eq(a->dst, b->dst) && eq(a->src, b->src) && eq(a->value, b->value) &&
         eq(a->prev, b->prev);
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b, bool map_free_vars) {
  return StructuralEqual(map_free_vars).eq(a, b);
}

bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars) {
  return StructuralEqual(map_free_vars).eq(a, b);
}

}  // namespace tilec::ir
