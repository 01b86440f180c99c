#include "ir/printer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "base/stack_guard.h"
#include "ir/layout.h"
#include "ir/shared_layout.h"

namespace tilec::ir {

namespace {

// Python's operator precedence, loosest first; calls, subscripts and plain
// literals are atoms.
enum Prec { kOr = 1, kAnd, kNot, kCompare, kBitOr, kBitXor, kBitAnd, kShift, kAdd, kMul, kUnary, kAtom };

struct Text {
  std::string s;
  int prec = kAtom;
};

struct BinaryOp {
  const char* op;  // null: printed as a call T.<fn>(a, b)
  const char* fn;
  int prec;
};

BinaryOp binary_op(ExprKind kind) {
  switch (kind) {
    case ExprKind::Add: return {" + ", nullptr, kAdd};
    case ExprKind::Sub: return {" - ", nullptr, kAdd};
    case ExprKind::Mul: return {" * ", nullptr, kMul};
    case ExprKind::Div: return {" / ", nullptr, kMul};
    case ExprKind::FloorDiv: return {" // ", nullptr, kMul};
    case ExprKind::FloorMod: return {" % ", nullptr, kMul};
    case ExprKind::BitXor: return {" ^ ", nullptr, kBitXor};
    case ExprKind::BitAnd: return {" & ", nullptr, kBitAnd};
    case ExprKind::BitOr: return {" | ", nullptr, kBitOr};
    case ExprKind::ShiftLeft: return {" << ", nullptr, kShift};
    case ExprKind::ShiftRight: return {" >> ", nullptr, kShift};
    case ExprKind::Min: return {nullptr, "T.min", kAtom};
    case ExprKind::Max: return {nullptr, "T.max", kAtom};
    case ExprKind::EQ: return {" == ", nullptr, kCompare};
    case ExprKind::NE: return {" != ", nullptr, kCompare};
    case ExprKind::LT: return {" < ", nullptr, kCompare};
    case ExprKind::LE: return {" <= ", nullptr, kCompare};
    case ExprKind::GT: return {" > ", nullptr, kCompare};
    case ExprKind::GE: return {" >= ", nullptr, kCompare};
    case ExprKind::And: return {" and ", nullptr, kAnd};
    case ExprKind::Or: return {" or ", nullptr, kOr};
    default: return {nullptr, "?", kAtom};
  }
}

// The shortest decimal text that reads back as the same value (as a float32
// when `single`), always with a '.' or an exponent, positional for moderate
// magnitudes as Python's repr.
std::string format_float(double v, bool single) {
  char buf[64];
  int p = 1;
  for (; p < 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    double back = std::strtod(buf, nullptr);
    if (single ? static_cast<float>(back) == static_cast<float>(v) : back == v) break;
  }
  std::snprintf(buf, sizeof buf, "%.*g", p, v);
  std::string s = buf;
  if (auto e = s.find('e'); e != std::string::npos) {
    int exponent = std::atoi(s.c_str() + e + 1);
    if (exponent >= 0 && exponent < 16) {
      std::snprintf(buf, sizeof buf, "%.*g", std::max(p, exponent + 1), v);
      s = buf;
    }
  }
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

const char* scope_alloc(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::Global: return "T.alloc_global";
    case MemoryScope::Shared: return "T.alloc_shared";
    case MemoryScope::Fragment: return "T.alloc_fragment";
    case MemoryScope::Local: return "T.alloc_local";
  }
  return "?";
}

const char* loop_fn(ForKind kind) {
  switch (kind) {
    case ForKind::Serial: return "T.serial";
    case ForKind::Parallel: return "T.Parallel";
    case ForKind::Unrolled: return "T.unroll";
    case ForKind::Vectorized: return "T.vectorized";
    case ForKind::Pipelined: return "T.Pipelined";
  }
  return "?";
}

class IRPrinter {
 public:
  std::string expr(const Expr& e) { return print(e).s; }

  void stmt(const Stmt& s, int indent) {
    if (!s) return;
    check_stack(s->loc);
    switch (s.kind()) {
#define TILEC_DISPATCH(n) \
  case StmtKind::n: return print_##n(static_cast<const n*>(s.get()), indent);
      TILEC_FOR_EACH_STMT(TILEC_DISPATCH)
#undef TILEC_DISPATCH
    }
  }

  void func(const PrimFunc& f) {
    os_ << "@T.prim_func";
    if (!f.out_idx.empty() || !f.const_dims.empty() || !f.workspaces.empty()) {
      std::vector<std::string> args;
      if (!f.out_idx.empty()) {
        std::string s = "out_idx=[";
        for (size_t i = 0; i < f.out_idx.size(); ++i)
          s += (i ? ", " : "") + std::to_string(f.out_idx[i]);
        args.push_back(s + "]");
      }
      if (!f.const_dims.empty()) {
        std::string s = "const_dims=[";
        for (size_t i = 0; i < f.const_dims.size(); ++i) {
          const ConstDim& c = f.const_dims[i];
          s += std::string(i ? ", " : "") + "(" + std::to_string(c.param) + ", " +
               std::to_string(c.dim) + ", " + std::to_string(c.value) + ")";
        }
        args.push_back(s + "]");
      }
      if (!f.workspaces.empty()) {
        std::string s = "workspaces=[";
        for (size_t i = 0; i < f.workspaces.size(); ++i) s += (i ? ", " : "") + std::to_string(f.workspaces[i]);
        args.push_back(s + "]");
      }
      os_ << "(" << join(args) << ")";
    }
    os_ << "\ndef " << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Param& p = f.params[i];
      if (i) os_ << ", ";
      if (p.is_tensor()) {
        std::string name = buffer_name(p.buffer);
        std::string shape = tuple(p.buffer->shape);
        os_ << name << ": T.Tensor(" << shape << ", \"" << p.buffer->dtype.name() << "\")";
      } else {
        os_ << expr(p.var) << ": T." << p.var->dtype.name();
      }
    }
    os_ << "):\n";
    for (const Param& p : f.params)
      if (p.is_tensor() && p.buffer->layout)
        os_ << "    # " << buffer_name(p.buffer) << ": " << p.buffer->layout->to_string() << "\n";
    body(f.body, 1);
  }

  std::string str() const { return os_.str(); }

 private:
  // ---------------------------------------------------------------- names

  std::string unique_name(const std::string& base) {
    std::string name = base.empty() ? "v" : base;
    if (used_.insert(name).second) return name;
    for (int i = 1;; ++i) {
      std::string candidate = name + "_" + std::to_string(i);
      if (used_.insert(candidate).second) return candidate;
    }
  }

  const std::string& var_name(const Var* v) {
    auto it = var_names_.find(v);
    if (it == var_names_.end()) it = var_names_.emplace(v, unique_name(v->name)).first;
    return it->second;
  }

  const std::string& buffer_name(const Buffer& b) {
    auto it = buffer_names_.find(b.get());
    if (it == buffer_names_.end()) it = buffer_names_.emplace(b.get(), unique_name(b->name)).first;
    return it->second;
  }

  // ---------------------------------------------------------------- expressions

  Text print(const Expr& e) {
    if (!e) return {"None"};
    check_stack(e->loc);
    switch (e.kind()) {
#define TILEC_DISPATCH(n) \
  case ExprKind::n: return print_##n(static_cast<const n*>(e.get()));
      TILEC_FOR_EACH_EXPR(TILEC_DISPATCH)
#undef TILEC_DISPATCH
    }
    return {"?"};
  }

  // e's text, parenthesized when it binds looser than `prec`.
  std::string operand(const Expr& e, int prec) {
    Text t = print(e);
    return t.prec < prec ? "(" + t.s + ")" : t.s;
  }

  static std::string join(const std::vector<std::string>& parts) {
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
    return s;
  }

  // Prints in order, so names are given in order of appearance.
  std::string list(const std::vector<Expr>& exprs) {
    std::vector<std::string> parts;
    for (const Expr& e : exprs) parts.push_back(expr(e));
    return join(parts);
  }

  std::string tuple(const std::vector<Expr>& exprs) {
    return "(" + list(exprs) + (exprs.size() == 1 ? ",)" : ")");
  }

  std::string call(const std::string& fn, const std::vector<Expr>& args) {
    return fn + "(" + list(args) + ")";
  }

  std::string subscript(const Buffer& b, const std::vector<Expr>& indices) {
    std::string name = buffer_name(b);
    return name + "[" + (indices.empty() ? "()" : list(indices)) + "]";
  }

  // `min + extent`, folded when both are constants.
  std::string stop(const Expr& min, const Expr& extent) {
    int64_t m, n;
    if (is_const_int(min, &m) && is_const_int(extent, &n) && min->dtype == DType::Int32)
      return std::to_string(m + n);
    if (is_zero(min)) return expr(extent);
    std::string a = operand(min, kAdd);
    std::string b = operand(extent, kAdd + 1);
    return a + " + " + b;
  }

  std::string region(const BufferRegion& r) {
    std::string name = buffer_name(r.buffer);
    std::vector<std::string> parts;
    for (const Range& range : r.region) {
      if (is_one(range.extent)) {
        parts.push_back(expr(range.min));
      } else {
        std::string lo = expr(range.min);
        parts.push_back(lo + ":" + stop(range.min, range.extent));
      }
    }
    return name + "[" + (parts.empty() ? "()" : join(parts)) + "]";
  }

  Text print_IntImm(const IntImm* op) {
    if (op->dtype.is_bool()) return {op->value ? "True" : "False"};
    std::string digits = op->dtype == DType::UInt64
                             ? std::to_string(static_cast<uint64_t>(op->value))
                             : std::to_string(op->value);
    if (op->dtype == DType::Int32) return {digits, op->value < 0 ? kUnary : kAtom};
    return {std::string("T.") + op->dtype.name() + "(" + digits + ")"};
  }

  Text print_FloatImm(const FloatImm* op) {
    std::string quoted = std::string("\"") + op->dtype.name() + "\"";
    if (std::isnan(op->value)) return {"T.nan(" + quoted + ")"};
    if (std::isinf(op->value)) {
      std::string inf = "T.infinity(" + quoted + ")";
      return op->value < 0 ? Text{"-" + inf, kUnary} : Text{inf};
    }
    if (op->dtype == DType::Float32) {
      std::string s = format_float(op->value, true);
      return {s, s[0] == '-' ? kUnary : kAtom};
    }
    return {std::string("T.") + op->dtype.name() + "(" + format_float(op->value, false) + ")"};
  }

  Text print_Var(const Var* op) { return {var_name(op)}; }

#define TILEC_PRINT_BINARY(n) \
  Text print_##n(const n* op) { return print_binary(n::static_kind, op->a, op->b); }
  TILEC_FOR_EACH_BINARY_EXPR(TILEC_PRINT_BINARY)
#undef TILEC_PRINT_BINARY

  Text print_binary(ExprKind kind, const Expr& a, const Expr& b) {
    BinaryOp op = binary_op(kind);
    if (!op.op) return {call(op.fn, {a, b})};
    // Comparisons do not chain as in C: both sides of one are parenthesized.
    std::string lhs = operand(a, op.prec == kCompare ? op.prec + 1 : op.prec);
    std::string rhs = operand(b, op.prec + 1);
    return {lhs + op.op + rhs, op.prec};
  }

  Text print_Not(const Not* op) { return {"not " + operand(op->a, kNot), kNot}; }

  Text print_Select(const Select* op) {
    return {call("T.if_then_else", {op->condition, op->true_value, op->false_value})};
  }

  Text print_Cast(const Cast* op) {
    return {"T.cast(" + expr(op->value) + ", \"" + op->dtype.name() + "\")"};
  }

  Text print_Call(const Call* op) { return {call("T." + op->name, op->args)}; }

  Text print_BufferLoad(const BufferLoad* op) { return {subscript(op->buffer, op->indices)}; }

  // ---------------------------------------------------------------- statements

  std::ostream& line(int indent) { return os_ << std::string(4 * indent, ' '); }

  // A block's statements; `pass` when they print nothing.
  void body(const Stmt& s, int indent) {
    auto before = os_.tellp();
    stmt(s, indent);
    if (os_.tellp() == before) line(indent) << "pass\n";
  }

  void print_BufferStore(const BufferStore* op, int indent) {
    std::string target = subscript(op->buffer, op->indices);
    std::string value = expr(op->value);
    line(indent) << target << " = " << value << "\n";
  }

  void print_For(const For* op, int indent) {
    std::string var = expr(op->var);
    std::string args;
    if (is_zero(op->min)) {
      args = expr(op->extent);
    } else {
      std::string lo = expr(op->min);
      args = lo + ", " + stop(op->min, op->extent);
    }
    if (op->for_kind == ForKind::Pipelined)
      args += ", num_stages=" + std::to_string(op->num_stages);
    if (op->async_fill) args += ", async_fill=True";
    line(indent) << "for " << var << " in " << loop_fn(op->for_kind) << "(" << args << "):\n";
    body(op->body, indent + 1);
  }

  void print_While(const While* op, int indent) {
    line(indent) << "while " << expr(op->condition) << ":\n";
    body(op->body, indent + 1);
  }

  void print_IfThenElse(const IfThenElse* op, int indent) {
    line(indent) << "if " << expr(op->condition) << ":\n";
    body(op->then_case, indent + 1);
    const IfThenElse* chain = op;
    while (chain->else_case) {
      if (auto* elif = chain->else_case.as<IfThenElse>()) {
        line(indent) << "elif " << expr(elif->condition) << ":\n";
        body(elif->then_case, indent + 1);
        chain = elif;
      } else {
        line(indent) << "else:\n";
        body(chain->else_case, indent + 1);
        break;
      }
    }
  }

  void print_Seq(const Seq* op, int indent) {
    for (const Stmt& s : op->stmts) stmt(s, indent);
  }

  void print_LetStmt(const LetStmt* op, int indent) {
    std::string var = expr(op->var);
    std::string value = expr(op->value);
    line(indent) << var << " = " << value << "\n";
    stmt(op->body, indent);
  }

  void print_Allocate(const Allocate* op, int indent) {
    std::string name = buffer_name(op->buffer);
    std::string shape = tuple(op->buffer->shape);
    std::string layout = op->buffer->layout ? "  # " + op->buffer->layout->to_string() : "";
    std::string fragment = op->buffer->fragment ? "  # " + op->buffer->fragment->to_string() : "";
    if (op->buffer->view_of) {
      line(indent) << name << " = T.reshape(" << buffer_name(op->buffer->view_of) << ", " << shape << ")" << layout
                   << fragment << "\n";
      return stmt(op->body, indent);
    }
    line(indent) << name << " = " << scope_alloc(op->buffer->scope) << "(" << shape << ", \""
                 << op->buffer->dtype.name() << "\")" << layout << fragment << "\n";
    stmt(op->body, indent);
  }

  void print_Evaluate(const Evaluate* op, int indent) {
    line(indent) << "T.evaluate(" << expr(op->value) << ")\n";
  }

  void print_KernelLaunch(const KernelLaunch* op, int indent) {
    std::string grid = list(op->grid);
    std::string vars = list(op->block_vars);
    if (op->block_vars.size() != 1) vars = "(" + vars + ")";
    line(indent) << "with T.Kernel(" << grid << ", threads=" << std::to_string(op->threads) << ") as " << vars << ":"
                 << (op->thread_var     ? "  # per thread " + expr(op->thread_var)
                     : op->thread_index ? "  # reads the thread index " + expr(op->thread_index)
                                        : std::string())
                 << "\n";
    if (op->producer_threads > 0)
      line(indent + 1) << "# warp-specialized: " << std::to_string(op->producer_threads) << " producer threads past "
                       << std::to_string(op->threads) << "\n";
    if (op->persistent) line(indent + 1) << "# persistent: one wave of blocks, each looping over the grid's tiles\n";
    if (op->grid_sync) line(indent + 1) << "# cooperative: every block resident at once (T.sync_grid)\n";
    if (op->clustered())
      line(indent + 1) << "# clusters of " << std::to_string(op->cluster_dims[0]) << " x "
                       << std::to_string(op->cluster_dims[1]) << " x " << std::to_string(op->cluster_dims[2])
                       << " blocks\n";
    for (const std::string& source : op->extern_sources)
      line(indent + 1) << "# T.import_source: " << source.size() << " characters of CUDA\n";
    for (size_t i = 0; i < op->tensor_maps.size(); ++i) {
      const TensorMapSpec& map = op->tensor_maps[i];
      std::string box;
      for (int64_t extent : map.box) box += (box.empty() ? "" : ", ") + std::to_string(extent);
      line(indent + 1) << "# TMA tensor map " << std::to_string(i) << ": " << buffer_name(map.tensor) << ", box ["
                       << box << "] innermost first, "
                       << (map.swizzle_bytes ? std::to_string(map.swizzle_bytes) + "-byte swizzle" : "no swizzle")
                       << "\n";
    }
    if (op->swizzle_panel > 0)
      line(indent + 1) << "T.use_swizzle(" << std::to_string(op->swizzle_panel)
                       << (op->swizzle_columns ? ", order=\"col\"" : "") << ")\n";
    if (op->keep_registers) line(indent + 1) << "T.no_set_max_nreg()\n";
    if (op->min_blocks_per_sm > 0)
      line(indent + 1) << "T.annotate_min_blocks_per_sm(" << std::to_string(op->min_blocks_per_sm) << ")\n";
    body(op->body, indent + 1);
  }

  void print_Copy(const Copy* op, int indent) {
    std::string src = region(op->src);
    std::string dst = region(op->dst);
    std::string note = op->instruction.selected() ? "  # via " + to_string(op->instruction) : "";
    if (op->barrier) note += ", completes on " + expr(op->barrier);
    if (op->multicast) {
      note += ", multicast to the blocks of ranks";
      for (int r : ranks_in_mask(op->multicast)) note += " " + std::to_string(r);
    }
    if (!op->allow_async) note += "  # synchronous, as written";
    else if (!op->allow_tma) note += "  # no TMA, as written";
    const char* eviction = op->eviction == EvictionPolicy::First  ? ", eviction_policy=\"evict_first\""
                           : op->eviction == EvictionPolicy::Last ? ", eviction_policy=\"evict_last\""
                                                                  : "";
    line(indent) << "T.copy(" << src << ", " << dst << eviction << ")" << note << "\n";
  }

  void print_Gemm(const Gemm* op, int indent) {
    std::string a = region(op->a);
    std::string b = region(op->b);
    std::string c = region(op->c);
    line(indent) << "T.gemm(" << a << ", " << b << ", " << c
                 << (op->transpose_a ? ", transpose_A=True" : "")
                 << (op->transpose_b ? ", transpose_B=True" : "")
                 << (op->clear_accum ? ", clear_accum=True" : "")
                 << (op->policy != WarpPolicy::Square
                         ? std::string(", policy=T.GemmWarpPolicy.") + warp_policy_name(op->policy)
                         : std::string())
                 << (op->wg_wait ? ", wg_wait=" + std::to_string(op->wg_wait) : std::string())
                 << ")" << (op->instruction.selected() ? "  # via " + to_string(op->instruction) : "") << "\n";
  }

  void print_Gemv(const Gemv* op, int indent) {
    std::string a = region(op->a);
    std::string x = region(op->x);
    std::string y = region(op->y);
    line(indent) << "T.gemv(" << a << ", " << x << ", " << y
                 << (op->accumulate ? ", accumulate=True" : "") << ")\n";
  }

  void print_Fill(const Fill* op, int indent) {
    std::string dst = region(op->dst);
    std::string value = expr(op->value);
    line(indent) << "T.fill(" << dst << ", " << value << ")\n";
  }

  void print_Reduce(const Reduce* op, int indent) {
    std::string src = region(op->src);
    std::string dst = region(op->dst);
    line(indent) << "T.reduce_" << reduce_kind_name(op->reduce_kind) << "(" << src << ", " << dst
                 << ", dim=" << std::to_string(op->dim) << (op->clear ? "" : ", clear=False") << ")\n";
  }

  void print_CumSum(const CumSum* op, int indent) {
    std::string src = region(op->src);
    std::string dst = region(op->dst);
    line(indent) << "T.cumsum(" << src << ", " << dst << ", dim=" << std::to_string(op->dim)
                 << (op->reverse ? ", reverse=True" : "") << ")\n";
  }

  void print_AtomicAdd(const AtomicAdd* op, int indent) {
    std::string dst = region(op->dst);
    std::string src = op->src.buffer ? region(op->src) : expr(op->value);
    std::string call = "T.atomic_add(" + dst + ", " + src + (op->prev.buffer ? ", return_prev=True)" : ")");
    std::string note = op->instruction.selected() ? "  # via " + to_string(op->instruction) : "";
    line(indent) << (op->prev.buffer ? region(op->prev) + " = " : std::string()) << call << note << "\n";
  }

  std::ostringstream os_;
  std::unordered_set<std::string> used_;
  std::unordered_map<const Var*, std::string> var_names_;
  std::unordered_map<const BufferNode*, std::string> buffer_names_;
};

}  // namespace

std::string to_string(const Expr& e) { return IRPrinter().expr(e); }

std::string to_string(const Stmt& s) {
  IRPrinter p;
  p.stmt(s, 0);
  return p.str();
}

std::string to_string(const PrimFunc& f) {
  IRPrinter p;
  p.func(f);
  return p.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_string(e); }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }

}  // namespace tilec::ir
