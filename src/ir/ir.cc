#include "ir/ir.h"

#include <cassert>
#include <stdexcept>

namespace tilec::ir {

const char* kind_name(ExprKind kind) {
  switch (kind) {
#define TILEC_NAME(n) \
  case ExprKind::n:   \
    return #n;
    TILEC_FOR_EACH_EXPR(TILEC_NAME)
#undef TILEC_NAME
  }
  return "?";
}

const char* kind_name(StmtKind kind) {
  switch (kind) {
#define TILEC_STMT_NAME(n) \
  case StmtKind::n:        \
    return #n;
    TILEC_FOR_EACH_STMT(TILEC_STMT_NAME)
#undef TILEC_STMT_NAME
  }
  return "?";
}

const char* scope_name(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::Global: return "global";
    case MemoryScope::Shared: return "shared";
    case MemoryScope::Fragment: return "fragment";
    case MemoryScope::Local: return "local";
  }
  return "?";
}

const char* for_kind_name(ForKind kind) {
  switch (kind) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Unrolled: return "unroll";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Pipelined: return "pipelined";
  }
  return "?";
}

const char* warp_policy_name(WarpPolicy policy) {
  switch (policy) {
    case WarpPolicy::Square: return "Square";
    case WarpPolicy::FullRow: return "FullRow";
    case WarpPolicy::FullCol: return "FullCol";
  }
  return "?";
}

const char* reduce_kind_name(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum: return "sum";
    case ReduceKind::Max: return "max";
    case ReduceKind::Min: return "min";
    case ReduceKind::AbsSum: return "abssum";
    case ReduceKind::AbsMax: return "absmax";
  }
  return "?";
}

Buffer make_buffer(std::string name, DType dtype, std::vector<Expr> shape,
                   std::vector<Expr> strides, MemoryScope scope, SourceLoc loc) {
  auto b = std::make_shared<BufferNode>();
  b->name = std::move(name);
  b->dtype = dtype;
  b->shape = std::move(shape);
  b->strides = std::move(strides);
  b->scope = scope;
  b->loc = std::move(loc);
  return b;
}

Expr make_int(int64_t value, DType dtype) { return std::make_shared<IntImm>(dtype, value); }
Expr make_float(double value, DType dtype) { return std::make_shared<FloatImm>(dtype, value); }
Expr make_bool(bool value) { return std::make_shared<IntImm>(DType::Bool, value ? 1 : 0); }
Expr make_var(const std::string& name, DType dtype) { return std::make_shared<Var>(dtype, name); }

static bool is_comparison_or_logic(ExprKind kind) {
  switch (kind) {
    case ExprKind::EQ: case ExprKind::NE: case ExprKind::LT: case ExprKind::LE:
    case ExprKind::GT: case ExprKind::GE: case ExprKind::And: case ExprKind::Or:
      return true;
    default:
      return false;
  }
}

template <ExprKind K>
static Expr make_binary_of(Expr a, Expr b) {
  assert(a && b);
  if (a->dtype != b->dtype)
    throw std::logic_error(std::string("ir: ") + kind_name(K) + " of " + a->dtype.name() +
                           " and " + b->dtype.name());
  DType t = is_comparison_or_logic(K) ? DType(DType::Bool) : a->dtype;
  return std::make_shared<BinaryNode<K>>(t, std::move(a), std::move(b));
}

#define TILEC_BINARY_MAKE(n) \
  Expr make_##n(Expr a, Expr b) { return make_binary_of<ExprKind::n>(std::move(a), std::move(b)); }
TILEC_FOR_EACH_BINARY_EXPR(TILEC_BINARY_MAKE)
#undef TILEC_BINARY_MAKE

Expr make_binary(ExprKind kind, Expr a, Expr b) {
  switch (kind) {
#define TILEC_BINARY_CASE(n) \
  case ExprKind::n:          \
    return make_##n(std::move(a), std::move(b));
    TILEC_FOR_EACH_BINARY_EXPR(TILEC_BINARY_CASE)
#undef TILEC_BINARY_CASE
    default:
      throw std::logic_error(std::string("ir: not a binary kind: ") + kind_name(kind));
  }
}

Expr make_not(Expr a) { return std::make_shared<Not>(std::move(a)); }

Expr make_select(Expr condition, Expr true_value, Expr false_value) {
  if (true_value->dtype != false_value->dtype)
    throw std::logic_error("ir: Select branches of different dtypes");
  DType t = true_value->dtype;
  return std::make_shared<Select>(t, std::move(condition), std::move(true_value),
                                  std::move(false_value));
}

Expr make_cast(DType dtype, Expr value) {
  if (value->dtype == dtype) return value;
  return std::make_shared<Cast>(dtype, std::move(value));
}

Expr make_call(DType dtype, const std::string& name, std::vector<Expr> args) {
  return std::make_shared<Call>(dtype, name, std::move(args));
}

Expr make_load(Buffer buffer, std::vector<Expr> indices) {
  return std::make_shared<BufferLoad>(std::move(buffer), std::move(indices));
}

Stmt make_store(Buffer buffer, std::vector<Expr> indices, Expr value) {
  auto s = std::make_shared<BufferStore>();
  s->buffer = std::move(buffer);
  s->indices = std::move(indices);
  s->value = std::move(value);
  return Stmt(s);
}

Stmt make_for(Expr var, Expr min, Expr extent, ForKind kind, Stmt body, int num_stages) {
  auto s = std::make_shared<For>();
  s->var = std::move(var);
  s->min = std::move(min);
  s->extent = std::move(extent);
  s->for_kind = kind;
  s->num_stages = num_stages;
  s->body = std::move(body);
  return Stmt(s);
}

Stmt make_while(Expr condition, Stmt body) {
  auto s = std::make_shared<While>();
  s->condition = std::move(condition);
  s->body = std::move(body);
  return Stmt(s);
}

Stmt make_if(Expr condition, Stmt then_case, Stmt else_case) {
  auto s = std::make_shared<IfThenElse>();
  s->condition = std::move(condition);
  s->then_case = std::move(then_case);
  s->else_case = std::move(else_case);
  return Stmt(s);
}

Stmt make_seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s) continue;
    if (auto* seq = s.as<Seq>()) {
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  auto s = std::make_shared<Seq>();
  s->stmts = std::move(flat);
  return Stmt(s);
}

Stmt make_let(Expr var, Expr value, Stmt body) {
  auto s = std::make_shared<LetStmt>();
  s->var = std::move(var);
  s->value = std::move(value);
  s->body = std::move(body);
  return Stmt(s);
}

Stmt make_allocate(Buffer buffer, Stmt body) {
  auto s = std::make_shared<Allocate>();
  s->buffer = std::move(buffer);
  s->body = std::move(body);
  return Stmt(s);
}

Stmt make_evaluate(Expr value) {
  auto s = std::make_shared<Evaluate>();
  s->value = std::move(value);
  return Stmt(s);
}

Expr with_loc(Expr e, const SourceLoc& loc) {
  if (e) const_cast<ExprNode*>(e.get())->loc = loc;
  return e;
}

Stmt with_loc(Stmt s, const SourceLoc& loc) {
  if (s) const_cast<StmtNode*>(s.get())->loc = loc;
  return s;
}

bool is_const_int(const Expr& e, int64_t* value) {
  if (auto* imm = e.as<IntImm>()) {
    if (value) *value = imm->value;
    return true;
  }
  return false;
}

bool is_one(const Expr& e) {
  int64_t v;
  return is_const_int(e, &v) && v == 1;
}

bool is_zero(const Expr& e) {
  int64_t v;
  return is_const_int(e, &v) && v == 0;
}

std::vector<int> ranks_in_mask(int64_t mask) {
  std::vector<int> ranks;
  for (int r = 0; r < 63; ++r)
    if ((mask >> r) & 1) ranks.push_back(r);
  return ranks;
}

}  // namespace tilec::ir
