// Expressions: folding Python-level values, building IR for runtime ones.
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "base/stack_guard.h"
#include "frontend/elaborator.h"
#include "frontend/int_ops.h"
#include "frontend/limits.h"
#include "ir/printer.h"
#include "ir/simplify.h"
#include "ir/substitute.h"

namespace tilec::frontend {

using K = CtValue::Kind;

SourceLoc CallArgs::loc(const std::string& name) const {
  auto it = locs.find(name);
  return it == locs.end() ? SourceLoc{} : it->second;
}

static const char* python_builtins[] = {"range", "len", "min", "max", "abs", "int",
                                        "float", "bool", "print", "isinstance", "tuple",
                                        "list", "str", "sum", "any", "all", "enumerate",
                                        "zip"};

CtValue Elaborator::lookup(const std::string& name, const SourceLoc& loc) {
  Frame& f = frame();
  auto it = f.names.find(name);
  if (it != f.names.end()) return it->second;
  if (f.closure) {
    auto cit = f.closure->find(name);
    if (cit != f.closure->end()) {
      if (cit->second.kind == K::Opaque)
        error_at(loc, "free variable '" + name + "' is a Python value of type '" +
                          cit->second.text + "', which kernels cannot use (kernels can use "
                          "ints, floats, bools, strings, None, tuples and lists of these, dtypes, "
                          "symbolic dims, prim_funcs and macros)");
      return cit->second;
    }
  }
  auto gone = f.out_of_scope.find(name);
  if (gone != f.out_of_scope.end()) {
    const SourceLoc& where = gone->second.loc;
    std::string line = std::to_string(where.line + where.file->first_line - 1);
    if (gone->second.kernel_local)
      error_at(loc, "'" + name + "' belongs to the T.Kernel block at line " + line +
                        " and is not visible after it; each T.Kernel block allocates its own "
                        "buffers and has its own block indices");
    error_at(loc, "'" + name + "' is assigned inside a block at line " + line +
                      " and is not visible here; assign it before that block (or make it a "
                      "buffer with T.alloc_local)");
  }
  for (const char* b : python_builtins)
    if (name == b) return CtValue::builtin(name);
  error_at(loc, "name '" + name + "' is not defined");
}

// ---------------------------------------------------------------- conversions

// A float as Python's repr writes it ("-8.0", "1e+300", "inf").
static std::string float_text(double v) {
  char text[32];
  std::string s(text, std::to_chars(text, text + sizeof text, v).ptr);
  if (s.find_first_of(".ein") == std::string::npos) s += ".0";
  return s;
}

static ir::Expr int_literal(int64_t v) {
  bool fits32 = v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  return ir::make_int(v, fits32 ? DType::Int32 : DType::Int64);
}

ir::Expr Elaborator::to_expr(const CtValue& v, const SourceLoc& loc, const std::string& what) {
  switch (v.kind) {
    case K::Bool: return ir::make_bool(v.bool_value);
    case K::Int: return int_literal(v.int_value);
    case K::Float: return ir::make_float(v.float_value, DType::Float32);
    case K::Expr:
      // Every runtime value on its way into IR passes here.
      expr_sizes_.check(v.expr, loc);
      return v.expr;
    case K::MutableVar: return ir::with_loc(ir::make_load(v.buffer, {ir::make_int(0)}), loc);
    case K::Region: {
      const RegionValue& r = *v.region;
      if (!r.all_points())
        error_at(loc, what + ": '" + r.buffer->name + "[...]' is a region of " +
                          std::to_string(r.buffer->shape.size()) +
                          "-dim buffer, not a single element (index every dim to read one)");
      std::vector<ir::Expr> idx;
      for (auto& range : r.ranges) idx.push_back(range.min);
      return ir::with_loc(ir::make_load(r.buffer, idx), r.loc);
    }
    case K::PendingDim:
      error_at(loc, "T.const dim '" + v.text + "' has no value here: no declaration of a tensor "
                    "argument ('A: T.Tensor((" + v.text + ", ...), dtype)') gives it, or one does "
                    "only after a compile-time decision on it; declare that tensor first, or pass " +
                    v.text + "=... to compile()");
    default:
      error_at(loc, what + " must be a number or a runtime value, not " + describe(v));
  }
}

// Whether the integer dtype t holds v (an int64, or a uint64 below 2**63).
static bool int_fits(DType t, int64_t v) {
  int bits = t.bits();
  if (t.is_uint()) return v >= 0 && (bits >= 64 || v < (int64_t{1} << bits));
  if (bits >= 64) return true;
  return v >= -(int64_t{1} << (bits - 1)) && v < (int64_t{1} << (bits - 1));
}

ir::Expr Elaborator::to_expr_of(const CtValue& v, DType dtype, const SourceLoc& loc,
                                const std::string& what) {
  auto does_not_fit = [&](const std::string& constant) {
    error_at(loc, constant + " does not fit in " + dtype.name() + (what.empty() ? "" : " (" + what + ")"));
  };
  if (v.kind == K::Int || v.kind == K::Bool) {
    int64_t i = v.kind == K::Bool ? v.bool_value : v.int_value;
    if (dtype.is_float()) return ir::make_float(static_cast<double>(i), dtype);
    if (dtype.is_bool()) return ir::make_bool(i != 0);
    if (!int_fits(dtype, i)) does_not_fit("the integer " + std::to_string(i));
    return ir::make_int(i, dtype);
  }
  if (v.kind == K::Float) {
    if (dtype.is_float()) return ir::make_float(v.float_value, dtype);
    if (dtype.is_integer()) {
      // What the cast would make of it, known now: C++ leaves the conversion of
      // a float outside the integer type undefined.
      double t = std::trunc(v.float_value);
      int bits = dtype.bits();
      double low = dtype.is_uint() ? 0.0 : -std::ldexp(1.0, bits - 1);
      double high = dtype.is_uint() ? std::ldexp(1.0, bits) : std::ldexp(1.0, bits - 1);
      if (!(t >= low && t < high)) does_not_fit("the float " + float_text(v.float_value));
    }
    return ir::make_cast(dtype, ir::make_float(v.float_value, DType::Float64));
  }
  return ir::make_cast(dtype, to_expr(v, loc, what));
}

ir::Expr Elaborator::to_bool_expr(const CtValue& v, const SourceLoc& loc) {
  if (v.is_constant()) return ir::make_bool(truthy(v, loc));
  ir::Expr e = to_expr(v, loc, "condition");
  if (e->dtype.is_bool()) return e;
  return ir::make_NE(e, e->dtype.is_float() ? ir::make_float(0, e->dtype) : ir::make_int(0, e->dtype));
}

bool Elaborator::truthy(const CtValue& v, const SourceLoc& loc) {
  switch (v.kind) {
    case K::None: return false;
    case K::Bool: return v.bool_value;
    case K::Int: return v.int_value != 0;
    case K::Float: return v.float_value != 0;
    case K::String: return !v.text.empty();
    case K::Tuple: case K::List: return !v.items.empty();
    case K::DType: case K::Buffer: case K::Function: case K::Module: case K::Builtin:
    case K::TensorType:
      return true;
    default:
      error_at(loc, "the truth of a " + describe(v) + " is only known at run time here");
  }
}

int64_t Elaborator::to_int(const CtValue& v, const SourceLoc& loc, const std::string& what) {
  if (v.kind == K::Int) return v.int_value;
  if (v.kind == K::Bool) return v.bool_value;
  if (v.kind == K::Expr) {
    int64_t value;
    if (ir::is_const_int(v.expr, &value) && !v.expr->dtype.is_float()) return value;
  }
  error_at(loc, what + " must be a compile-time integer, not " + describe(v));
}

DType Elaborator::to_dtype(const CtValue& v, const SourceLoc& loc, const std::string& what) {
  if (v.kind == K::DType) return v.dtype;
  if (v.kind == K::String) {
    if (auto t = DType::from_name(v.text)) return *t;
    error_at(loc, "unknown dtype '" + v.text + "' for " + what + " (known: bool, int8, int16, "
                  "int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, "
                  "float64, float8_e4m3, float8_e5m2)");
  }
  error_at(loc, what + " must be a dtype (a name like \"float16\", T.float16, torch.float16 or numpy.float16), not " +
                    describe(v));
}

std::vector<ir::Expr> Elaborator::to_shape(const CtValue& v, const SourceLoc& loc,
                                           const std::string& what) {
  std::vector<CtValue> dims;
  if (v.is_sequence()) dims = v.items.vector();
  else dims = {v};
  std::vector<ir::Expr> shape;
  for (const auto& d : dims) {
    if (d.kind == K::Int || d.kind == K::Bool) {
      if (d.int_value < 0)
        error_at(loc, what + " has a negative dimension (" + std::to_string(d.int_value) + ")");
      shape.push_back(int_literal(d.int_value));
      continue;
    }
    ir::Expr e = to_expr(d, loc, what + " dimension");
    if (!e->dtype.is_integer())
      error_at(loc, what + " dimensions must be integers, not " + describe(d));
    shape.push_back(e);
  }
  return shape;
}

// ---------------------------------------------------------------- operators

static double number(const CtValue& v) {
  return v.kind == K::Float ? v.float_value : static_cast<double>(v.kind == K::Bool ? v.bool_value : v.int_value);
}

// x // y and x % y of floats as Python computes them (the remainder takes the
// divisor's sign; the quotient is rounded so that q * y + r == x holds closely).
static std::pair<double, double> float_divmod(double x, double y) {
  double mod = std::fmod(x, y);
  double div = (x - mod) / y;
  if (mod != 0) {
    if ((y < 0) != (mod < 0)) {
      mod += y;
      div -= 1;
    }
  } else {
    mod = std::copysign(0.0, y);
  }
  double floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1;
  } else {
    floordiv = std::copysign(0.0, x / y);
  }
  return {floordiv, mod};
}

// x ** y of floats, with Python's errors where C's pow would give a NaN or an
// infinity from finite operands.
static double float_power(double x, double y, const SourceLoc& loc) {
  bool finite = std::isfinite(x) && std::isfinite(y);
  if (x == 0 && y < 0) error_at(loc, "0.0 cannot be raised to a negative power");
  if (finite && x < 0 && y != std::floor(y))
    error_at(loc, "a negative number raised to a fractional power is complex ((" + float_text(x) +
                      ") ** " + float_text(y) + "), which kernels have no type for");
  double r = std::pow(x, y);
  if (finite && std::isinf(r))
    error_at(loc, "float overflow: " + float_text(x) + " ** " + float_text(y) + " is too large for a float");
  return r;
}

static bool is_int_operator(const std::string& op) {
  for (const char* o : {"+", "-", "*", "//", "%", "**", "<<", ">>", "&", "|", "^"})
    if (op == o) return true;
  return false;
}

static CtValue fold_numbers(const std::string& op, const CtValue& a, const CtValue& b,
                            const SourceLoc& loc) {
  bool ints = a.kind != K::Float && b.kind != K::Float;
  if (ints) {
    int64_t x = a.kind == K::Bool ? a.bool_value : a.int_value;
    int64_t y = b.kind == K::Bool ? b.bool_value : b.int_value;
    if (op == "/") {
      if (y == 0) error_at(loc, "division by zero");
      return CtValue::of_float(static_cast<double>(x) / static_cast<double>(y));
    }
    // A negative exponent makes a float, as in Python.
    if (op == "**" && y < 0)
      return CtValue::of_float(float_power(static_cast<double>(x), static_cast<double>(y), loc));
    if (is_int_operator(op)) return CtValue::of_int(fold_int(op, x, y, loc));
  } else {
    double x = number(a), y = number(b);
    if (op == "+") return CtValue::of_float(x + y);
    if (op == "-") return CtValue::of_float(x - y);
    if (op == "*") return CtValue::of_float(x * y);
    if (op == "/" || op == "//" || op == "%") {
      if (y == 0) error_at(loc, "division by zero");
      if (op == "/") return CtValue::of_float(x / y);
      auto [q, r] = float_divmod(x, y);
      return CtValue::of_float(op == "//" ? q : r);
    }
    if (op == "**") return CtValue::of_float(float_power(x, y, loc));
  }
  error_at(loc, "operator '" + op + "' is not defined for " + describe(a) + " and " + describe(b));
}

// A sequence or string about to be made, of `length` items (more when
// `overflows`), checked against the compile-time limit.
static void check_length(int64_t length, bool overflows, const SourceLoc& loc, const std::string& what) {
  if (overflows || length > kMaxSequenceLength)
    error_at(loc, what + " makes more than the " + std::to_string(kMaxSequenceLength) +
                      " items a compile-time tuple, list or string may have (large data belongs "
                      "in a buffer, long loops in a runtime loop)");
}

void Elaborator::spend_sequence_work(int64_t items, const SourceLoc& loc) {
  sequence_work_ += items;
  if (sequence_work_ > kMaxSequenceWork)
    error_at(loc, "compile-time operations on tuples, lists and strings have handled more than " +
                      std::to_string(kMaxSequenceWork) + " items in this kernel (each comparison, "
                      "search, slice, concatenation and repetition counts the items it handles); large "
                      "data belongs in a buffer, and loops over it in a runtime loop");
}

static CtValue repeat_sequence(const CtValue& seq, int64_t count, const SourceLoc& loc) {
  CtValue r = seq;
  r.items.clear();
  if (count <= 0 || seq.items.empty()) return r;
  int64_t length;
  bool overflows = __builtin_mul_overflow(static_cast<int64_t>(seq.items.size()), count, &length);
  check_length(length, overflows, loc, describe(seq) + " * " + std::to_string(count));
  std::vector<CtValue> items;
  items.reserve(static_cast<size_t>(length));
  for (int64_t i = 0; i < count; ++i) items.insert(items.end(), seq.items.begin(), seq.items.end());
  r.items = std::move(items);
  return r;
}

static ir::ExprKind binary_kind(const std::string& op) {
  if (op == "+") return ir::ExprKind::Add;
  if (op == "-") return ir::ExprKind::Sub;
  if (op == "*") return ir::ExprKind::Mul;
  if (op == "/") return ir::ExprKind::Div;
  if (op == "//") return ir::ExprKind::FloorDiv;
  if (op == "%") return ir::ExprKind::FloorMod;
  if (op == "^") return ir::ExprKind::BitXor;
  if (op == "&") return ir::ExprKind::BitAnd;
  if (op == "|") return ir::ExprKind::BitOr;
  if (op == "<<") return ir::ExprKind::ShiftLeft;
  if (op == ">>") return ir::ExprKind::ShiftRight;
  if (op == "<") return ir::ExprKind::LT;
  if (op == "<=") return ir::ExprKind::LE;
  if (op == ">") return ir::ExprKind::GT;
  if (op == ">=") return ir::ExprKind::GE;
  if (op == "==") return ir::ExprKind::EQ;
  if (op == "!=") return ir::ExprKind::NE;
  return ir::ExprKind::Var;  // not an arithmetic/comparison operator
}

std::pair<ir::Expr, ir::Expr> Elaborator::unify_operands(const CtValue& a, const CtValue& b,
                                                          const SourceLoc& loc,
                                                          const std::string& what) {
  ir::Expr ea, eb;
  if (a.is_number() && !b.is_number()) {
    eb = to_expr(b, loc, what);
    DType t = eb->dtype;
    if (a.kind == K::Float && !t.is_float()) t = DType::Float32;
    if (t.is_bool()) t = DType::Int32;
    ea = to_expr_of(a, t, loc, what);
    eb = ir::make_cast(t, eb);
  } else if (b.is_number() && !a.is_number()) {
    ea = to_expr(a, loc, what);
    DType t = ea->dtype;
    if (b.kind == K::Float && !t.is_float()) t = DType::Float32;
    if (t.is_bool()) t = DType::Int32;
    eb = to_expr_of(b, t, loc, what);
    ea = ir::make_cast(t, ea);
  } else {
    ea = to_expr(a, loc, what);
    eb = to_expr(b, loc, what);
    DType t = promote(ea->dtype, eb->dtype);
    ea = ir::make_cast(t, ea);
    eb = ir::make_cast(t, eb);
  }
  return {ea, eb};
}

CtValue Elaborator::eval_binop(const std::string& op, const CtValue& a, const CtValue& b,
                               const SourceLoc& loc) {
  if (a.is_number() && b.is_number()) return fold_numbers(op, a, b, loc);
  if (op == "+" && a.is_sequence() && b.is_sequence()) {
    check_length(static_cast<int64_t>(a.items.size() + b.items.size()), false, loc, "this concatenation");
    spend_sequence_work(static_cast<int64_t>(a.items.size() + b.items.size()), loc);
    CtValue r = a;
    r.items.append(b.items);
    return r;
  }
  if (op == "*" && (a.is_sequence() || b.is_sequence()) && (a.kind == K::Int || b.kind == K::Int)) {
    const CtValue& seq = a.is_sequence() ? a : b;
    CtValue r = repeat_sequence(seq, a.is_sequence() ? b.int_value : a.int_value, loc);
    spend_sequence_work(static_cast<int64_t>(r.items.size()), loc);
    return r;
  }
  if (op == "+" && a.kind == K::String && b.kind == K::String) {
    check_length(static_cast<int64_t>(a.text.size() + b.text.size()), false, loc, "this concatenation");
    spend_sequence_work(static_cast<int64_t>(a.text.size() + b.text.size()), loc);
    return CtValue::of_string(a.text + b.text);
  }

  auto typed_pair = [&](DType* out_type) {
    auto pair = unify_operands(a, b, loc, "operand of '" + op + "'");
    *out_type = pair.first->dtype;
    return pair;
  };

  if (op == "&" || op == "|") {  // of conditions: and, or
    ir::Expr ea = to_expr(a, loc, "left operand of '" + op + "'");
    ir::Expr eb = to_expr(b, loc, "right operand of '" + op + "'");
    if (ea->dtype.is_bool() && eb->dtype.is_bool())
      return CtValue::of_expr(op == "&" ? ir::make_And(ea, eb) : ir::make_Or(ea, eb));
  }
  if (op == "**") {
    if (b.kind == K::Int && b.int_value >= 0 && b.int_value <= 16) {
      ir::Expr base = to_expr(a, loc, "base of '**'");
      ir::Expr r = to_expr_of(CtValue::of_int(1), base->dtype, loc, "");
      for (int64_t i = 0; i < b.int_value; ++i) r = i == 0 ? base : ir::make_Mul(r, base);
      return CtValue::of_expr(r);
    }
    DType t;
    auto [ea, eb] = typed_pair(&t);
    if (!t.is_float()) {
      ea = ir::make_cast(DType::Float32, ea);
      eb = ir::make_cast(DType::Float32, eb);
      t = DType::Float32;
    }
    return CtValue::of_expr(ir::make_call(t, "pow", {ea, eb}));
  }
  ir::ExprKind kind = binary_kind(op);
  if (kind == ir::ExprKind::Var)
    error_at(loc, "operator '" + op + "' is not supported on " + describe(a) + " and " + describe(b));
  DType t;
  auto [ea, eb] = typed_pair(&t);
  if ((op == "^" || op == "&" || op == "|" || op == "<<" || op == ">>") && !t.is_integer())
    error_at(loc, "operator '" + op + "' needs integers (or, for & and |, two conditions), not " +
                      describe(a) + " and " + describe(b));
  if (op == "/" && !t.is_float()) {
    ea = ir::make_cast(DType::Float32, ea);
    eb = ir::make_cast(DType::Float32, eb);
  }
  return CtValue::of_expr(ir::with_loc(ir::make_binary(kind, ea, eb), loc));
}

CtValue Elaborator::eval_unary(const std::string& op, const CtValue& a, const SourceLoc& loc) {
  if (op == "not") {
    if (a.is_constant()) return CtValue::of_bool(!truthy(a, loc));
    return CtValue::of_expr(ir::make_not(to_bool_expr(a, loc)));
  }
  if (a.kind == K::Int || a.kind == K::Bool) {
    int64_t v = a.kind == K::Bool ? a.bool_value : a.int_value;
    if (op == "-") return CtValue::of_int(negate_int(v, loc));
    if (op == "+") return CtValue::of_int(v);
    if (op == "~") return CtValue::of_int(~v);
  }
  if (a.kind == K::Float) {
    if (op == "-") return CtValue::of_float(-a.float_value);
    if (op == "+") return a;
  }
  ir::Expr e = to_expr(a, loc, "operand of unary '" + op + "'");
  if (op == "+") return CtValue::of_expr(e);
  if (op == "~") {  // every bit flipped: x ^ all ones
    if (!e->dtype.is_integer() || e->dtype.is_bool())
      error_at(loc, "operator '~' needs an integer, not " + describe(a));
    const int bits = e->dtype.bits();
    const int64_t all_ones = e->dtype.is_uint() && bits < 64 ? (int64_t{1} << bits) - 1 : -1;
    return CtValue::of_expr(ir::with_loc(ir::make_BitXor(e, ir::make_int(all_ones, e->dtype)), loc));
  }
  if (e->dtype.is_bool()) e = ir::make_cast(DType::Int32, e);
  ir::Expr zero = e->dtype.is_float() ? ir::make_float(0, e->dtype) : ir::make_int(0, e->dtype);
  return CtValue::of_expr(ir::make_Sub(zero, e));
}

// a == b of compile-time values; `compared` counts the items compared.
static bool values_equal(const CtValue& a, const CtValue& b, int64_t* compared) {
  ++*compared;
  if (a.is_number() && b.is_number()) return number(a) == number(b);
  // A dtype equals a string that names it ("int8", or an alias such as "float8_e4m3fn"), as
  // TVM's dtypes (strings) compare in TileLang's helpers: `assert val.dtype == "int8"`.
  if ((a.kind == K::DType && b.kind == K::String) || (a.kind == K::String && b.kind == K::DType)) {
    const CtValue& type = a.kind == K::DType ? a : b;
    const CtValue& text = a.kind == K::DType ? b : a;
    return DType::from_name(text.text) == type.dtype;
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case K::None: return true;
    case K::String: return a.text == b.text;
    case K::DType: return a.dtype == b.dtype;
    case K::Tuple: case K::List:
      if (a.items.size() != b.items.size()) return false;
      for (size_t i = 0; i < a.items.size(); ++i)
        if (!values_equal(a.items[i], b.items[i], compared)) return false;
      return true;
    case K::Buffer: return a.buffer == b.buffer;
    default: return false;
  }
}

CtValue Elaborator::eval_compare(const ast::Expr& e) {
  CtValue left = eval(*e.items[0]);
  CtValue result;
  bool have_result = false;
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const std::string& op = e.ops[i];
    CtValue right = eval(*e.items[i + 1]);
    const SourceLoc& loc = e.items[i]->loc;
    CtValue r;
    int64_t compared = 0;
    if (op == "is" || op == "is not") {
      bool same = left.kind == right.kind && (left.kind == K::None || values_equal(left, right, &compared));
      if (!left.is_constant() && left.kind != K::None && right.kind != K::None)
        error_at(loc, "'" + op + "' compares compile-time values only");
      r = CtValue::of_bool(op == "is" ? same : !same);
    } else if (op == "in" || op == "not in") {
      if (!right.is_sequence() || !left.is_constant())
        error_at(loc, "'" + op + "' needs a compile-time value and a tuple or list");
      bool found = false;
      for (auto& item : right.items) found = found || values_equal(left, item, &compared);
      r = CtValue::of_bool(op == "in" ? found : !found);
    } else if (left.is_number() && right.is_number()) {
      double x = number(left), y = number(right);
      bool v = op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : op == ">=" ? x >= y
             : op == "==" ? x == y : x != y;
      if (left.kind != K::Float && right.kind != K::Float) {
        int64_t a = left.kind == K::Bool ? left.bool_value : left.int_value;
        int64_t b = right.kind == K::Bool ? right.bool_value : right.int_value;
        v = op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : op == ">=" ? a >= b
          : op == "==" ? a == b : a != b;
      }
      r = CtValue::of_bool(v);
    } else if ((op == "==" || op == "!=") && left.is_constant() && right.is_constant()) {
      bool eq = values_equal(left, right, &compared);
      r = CtValue::of_bool(op == "==" ? eq : !eq);
    } else {
      r = eval_binop(op, left, right, loc);
    }
    spend_sequence_work(compared, loc);
    if (!have_result) {
      result = r;
      have_result = true;
    } else if (result.is_constant() && r.is_constant()) {
      result = CtValue::of_bool(truthy(result, loc) && truthy(r, loc));
    } else {
      result = CtValue::of_expr(ir::make_And(to_bool_expr(result, loc), to_bool_expr(r, loc)));
    }
    left = right;
  }
  return result;
}

// ---------------------------------------------------------------- subscripts

CtValue Elaborator::eval_subscript(const ast::Expr& e) {
  CtValue base = eval(*e.value);
  if (base.kind == K::Builtin && (base.text == "T.Tensor" || base.text == "T.Buffer")) {
    EvaluatedCall call;
    call.node = &e;
    call.callee_name = base.text;
    const std::vector<ast::ExprPtr>* items = &e.items;
    if (items->size() == 1 && (*items)[0]->kind == ast::ExprKind::Tuple &&
        (*items)[0]->items.size() == 2 &&
        (*items)[0]->items[0]->kind != ast::ExprKind::Int)
      items = &(*items)[0]->items;  // T.Tensor[((M, K), "float16")]
    for (const auto& item : *items) {
      call.positional.push_back(eval(*item));
      call.positional_locs.push_back(item->loc);
    }
    return call_builtin(base.text, call);
  }
  if (base.is_sequence()) {
    if (e.items.size() != 1) error_at(e.loc, "a tuple takes one index");
    const ast::Expr& index = *e.items[0];
    if (index.kind == ast::ExprKind::Slice) {
      int64_t n = static_cast<int64_t>(base.items.size());
      auto bound = [&](const ast::ExprPtr& p, int64_t dflt) {
        if (!p) return dflt;
        int64_t v = to_int(eval(*p), p->loc, "slice bound");
        if (v < 0) v += n;
        return std::clamp<int64_t>(v, 0, n);
      };
      if (index.step) error_at(index.loc, "slice steps are not supported on tuples");
      int64_t lo = bound(index.lower, 0), hi = bound(index.upper, n);
      CtValue r = base;
      r.items.clear();
      spend_sequence_work(std::max<int64_t>(hi - lo, 0), index.loc);
      for (int64_t i = lo; i < hi; ++i) r.items.push_back(base.items[i]);
      return r;
    }
    int64_t i = to_int(eval(index), index.loc, "tuple index");
    int64_t n = static_cast<int64_t>(base.items.size());
    if (i < -n || i >= n)
      error_at(index.loc, "tuple index " + std::to_string(i) + " out of range (size " +
                              std::to_string(n) + ")");
    return base.items[i < 0 ? i + n : i];
  }
  ir::Buffer buffer;
  if (base.kind == K::Buffer) buffer = base.buffer;
  else if (base.kind == K::MutableVar) buffer = base.buffer;
  if (!buffer) error_at(e.value->loc, describe(base) + " cannot be indexed");
  std::vector<const ast::Expr*> indices;
  for (const auto& item : e.items) {
    if (item->kind == ast::ExprKind::Tuple)
      for (const auto& sub : item->items) indices.push_back(sub.get());
    else
      indices.push_back(item.get());
  }
  size_t ndim = buffer->shape.size();
  if (indices.size() > ndim)
    error_at(e.loc, "'" + buffer->name + "' has " + std::to_string(ndim) + " dim" +
                        (ndim == 1 ? "" : "s") + " but is indexed with " +
                        std::to_string(indices.size()));
  auto region = std::make_shared<RegionValue>();
  region->buffer = buffer;
  region->loc = e.loc;
  for (size_t d = 0; d < indices.size(); ++d) {
    const ast::Expr& index = *indices[d];
    if (index.kind == ast::ExprKind::Slice) {
      if (index.step) {
        CtValue step = eval(*index.step);
        if (!(step.kind == K::Int && step.int_value == 1))
          error_at(index.step->loc, "buffer slices take no step other than 1");
      }
      ir::Expr lo = index.lower ? to_expr_of(eval(*index.lower), DType::Int32, index.lower->loc, "slice start")
                                : ir::make_int(0);
      ir::Expr hi = index.upper ? to_expr_of(eval(*index.upper), DType::Int32, index.upper->loc, "slice stop")
                                : ir::make_cast(DType::Int32, buffer->shape[d]);
      region->ranges.push_back({lo, slice_extent(lo, hi)});
      continue;
    }
    CtValue v = eval(index);
    if (v.kind == K::Float || (v.kind == K::Expr && !v.expr->dtype.is_integer()))
      error_at(index.loc, "buffer index must be an integer, not " + describe(v));
    if (v.kind == K::Int && v.int_value < 0)
      error_at(index.loc, "negative index " + std::to_string(v.int_value) + " into '" +
                              buffer->name + "' (indices count from 0; negative ones do not wrap)");
    ir::Expr idx = v.kind == K::Int ? int_literal(v.int_value) : to_expr(v, index.loc, "buffer index");
    if (!idx->dtype.is_integer())  // an element of a float buffer
      error_at(index.loc, "buffer index must be an integer, not " + std::string(idx->dtype.name()) + " " +
                              ir::to_string(idx));
    region->ranges.push_back({idx, ir::Expr()});
  }
  for (size_t d = indices.size(); d < ndim; ++d)
    region->ranges.push_back({ir::make_int(0), ir::make_cast(DType::Int32, buffer->shape[d])});
  CtValue r;
  r.kind = K::Region;
  r.region = region;
  return r;
}

// ---------------------------------------------------------------- attributes

CtValue Elaborator::eval_attribute(const ast::Expr& e) {
  CtValue base = eval(*e.value);
  const std::string& attr = e.id;
  if (base.kind == K::Host) return host_attribute(base, attr, e.loc);
  if (base.kind == K::Module) {
    if (base.text == "tilec" && (attr == "language" || attr == "layout" || attr == "math")) {
      CtValue m;
      m.kind = K::Module;
      m.text = "tilec." + attr;
      return m;
    }
    if (base.text == "tilec.layout") {
      if (is_builtin("tilec.layout." + attr)) return CtValue::builtin("tilec.layout." + attr);
      error_at(e.loc, "tilec.layout has no '" + attr + "' usable in kernels (it has make_swizzled_layout)");
    }
    if (base.text == "tilec.language.GemmWarpPolicy") {
      if (attr == "Square" || attr == "FullRow" || attr == "FullCol") return CtValue::of_string(attr);
      error_at(e.loc, "T.GemmWarpPolicy has no policy '" + attr + "' (Square, FullRow, FullCol)");
    }
    if (base.text == "tilec.language") {
      if (attr == "GemmWarpPolicy") {
        CtValue m;
        m.kind = K::Module;
        m.text = "tilec.language.GemmWarpPolicy";
        return m;
      }
      if (auto t = DType::from_name(attr)) return CtValue::of_dtype(*t);
      if (is_builtin("T." + attr)) return CtValue::builtin("T." + attr);
      error_at(e.loc, "unknown primitive 'T." + attr + "' (docs/language.md lists the T namespace)");
    }
    if (base.text == "tilec.math") {
      if (is_builtin("tilec.math." + attr)) return CtValue::builtin("tilec.math." + attr);
      error_at(e.loc, "tilec.math has no '" + attr + "' usable in kernels (it has next_power_of_2, cdiv)");
    }
    if (base.text == "tilec.tvm" && (attr == "tirx" || attr == "tir")) {
      CtValue m;
      m.kind = K::Module;
      m.text = "tilec.tvm.tirx";
      return m;
    }
    if (base.text == "tilec.tvm.tirx") {
      if (is_builtin("tilec.tvm.tirx." + attr)) return CtValue::builtin("tilec.tvm.tirx." + attr);
      error_at(e.loc, "tvm.tirx has no '" + attr +
                          "' usable in kernels (tilec has const, Select, Cast, reinterpret, Min, Max)");
    }
    if (is_builtin("tilec." + attr)) return CtValue::builtin("tilec." + attr);
    if (base.host) return host_attribute(base, attr, e.loc);  // tilec.math, tilec.cdiv, ...
    error_at(e.loc, "module '" + base.text + "' has no attribute '" + attr + "' usable in kernels");
  }
  ir::Buffer buffer = base.kind == K::Buffer ? base.buffer
                      : base.kind == K::Region ? base.region->buffer : nullptr;
  if (buffer) {
    if (attr == "shape") {
      std::vector<CtValue> dims;
      for (const auto& d : buffer->shape) {
        int64_t v;
        dims.push_back(ir::is_const_int(d, &v) ? CtValue::of_int(v) : CtValue::of_expr(d));
      }
      return CtValue::tuple(dims);
    }
    if (attr == "dtype") return CtValue::of_dtype(buffer->dtype);
    if (attr == "ndim") return CtValue::of_int(static_cast<int64_t>(buffer->shape.size()));
    if (attr == "data" && base.kind == K::Buffer) return base;  // for T.Tensor(shape, dtype, x.data)
    error_at(e.loc, "buffer '" + buffer->name + "' has no attribute '" + attr +
                        "' (buffers have shape, dtype, ndim, data)");
  }
  if (base.kind == K::Expr && attr == "dtype") return CtValue::of_dtype(base.expr->dtype);
  if (base.kind == K::DType && attr == "bits") return CtValue::of_int(base.dtype.bits());
  error_at(e.loc, describe(base) + " has no attribute '" + attr + "'");
}

// ---------------------------------------------------------------- calls

CtValue Elaborator::eval_call(const ast::Expr& e) {
  if (e.value->kind == ast::ExprKind::Attribute && e.value->id == "astype") return eval_astype(e);
  CtValue callee = eval(*e.value);
  EvaluatedCall call;
  call.node = &e;
  if (callee.kind == K::Builtin && evaluates_own_arguments(callee.text)) return call_builtin(callee.text, call);
  if (e.value->kind == ast::ExprKind::Attribute) {
    call.callee_name = (e.value->value->kind == ast::ExprKind::Name ? e.value->value->id + "." : "") + e.value->id;
  } else if (e.value->kind == ast::ExprKind::Name) {
    call.callee_name = e.value->id;
  } else {
    call.callee_name = "function";
  }
  for (const auto& arg : e.items) {
    if (arg->kind == ast::ExprKind::Starred) {
      CtValue seq = eval(*arg->value);
      if (!seq.is_sequence()) error_at(arg->loc, "*-argument must be a tuple or list, not " + describe(seq));
      check_length(static_cast<int64_t>(call.positional.size() + seq.items.size()), false, arg->loc,
                   "this call's argument list");
      spend_sequence_work(static_cast<int64_t>(seq.items.size()), arg->loc);
      for (auto& item : seq.items) {
        call.positional.push_back(item);
        call.positional_locs.push_back(arg->loc);
      }
      continue;
    }
    call.positional.push_back(eval(*arg));
    call.positional_locs.push_back(arg->loc);
  }
  for (const auto& kw : e.keywords) {
    if (kw.name.empty()) error_at(kw.loc, "**-arguments are not supported in kernels");
    call.keywords.emplace_back(kw.name, eval(*kw.value));
    call.keyword_locs.push_back(kw.loc);
  }
  switch (callee.kind) {
    case K::Builtin: return call_builtin(callee.text, call);
    case K::Function: return call_function(callee, call);
    case K::Host: return call_host(callee, call);
    case K::DType: {
      if (call.positional.size() != 1 || !call.keywords.empty())
        error_at(e.loc, std::string("T.") + callee.dtype.name() + "() takes one value");
      const CtValue& v = call.positional[0];
      if (v.is_number()) return CtValue::of_expr(to_expr_of(v, callee.dtype, e.loc, "value"));
      return CtValue::of_expr(ir::make_cast(callee.dtype, to_expr(v, call.positional_locs[0], "value")));
    }
    default:
      error_at(e.value->loc, describe(callee) + " is not callable");
  }
}

// TVM's PrimExpr.astype(dtype), which TileLang kernels call on values (`A_shared[k].astype(
// accum_dtype)`): T.cast(value, dtype).
CtValue Elaborator::eval_astype(const ast::Expr& e) {
  CtValue value = eval(*e.value->value);
  const bool is_value = value.kind == K::Expr || value.kind == K::MutableVar || value.is_number() ||
                        (value.kind == K::Region && value.region->all_points());
  if (!is_value) error_at(e.value->loc, describe(value) + " has no attribute 'astype' (values have it: T.cast)");
  EvaluatedCall call;
  call.node = &e;
  call.callee_name = "astype";
  call.positional.push_back(value);
  call.positional_locs.push_back(e.value->value->loc);
  for (const auto& arg : e.items) {
    call.positional.push_back(eval(*arg));
    call.positional_locs.push_back(arg->loc);
  }
  for (const auto& kw : e.keywords) {
    if (kw.name != "dtype") error_at(kw.loc, "astype() takes one argument, dtype");
    call.keywords.emplace_back(kw.name, eval(*kw.value));
    call.keyword_locs.push_back(kw.loc);
  }
  if (call.positional.size() + call.keywords.size() != 2) error_at(e.loc, "astype() takes one argument, dtype");
  return call_builtin("T.cast", call);
}

// ---------------------------------------------------------------- comprehensions

// Binds a comprehension's target (a name, or a tuple or list of targets) to `value`.
static void bind_comprehension_target(Elaborator& el, const ast::Expr& target, const CtValue& value) {
  if (target.kind == ast::ExprKind::Name) {
    el.frame().names[target.id] = value;
    return;
  }
  if (target.kind != ast::ExprKind::Tuple && target.kind != ast::ExprKind::List)
    error_at(target.loc, "a comprehension's target is a name or a tuple of names");
  if (!value.is_sequence())
    error_at(target.loc, "cannot unpack " + describe(value) + " into " +
                             std::to_string(target.items.size()) + " names");
  if (value.items.size() != target.items.size())
    error_at(target.loc, "cannot unpack " + std::to_string(value.items.size()) + " values into " +
                             std::to_string(target.items.size()) + " names");
  for (size_t i = 0; i < target.items.size(); ++i) {
    if (target.items[i]->kind == ast::ExprKind::Starred)
      error_at(target.items[i]->loc, "a starred target is not supported in a comprehension");
    bind_comprehension_target(el, *target.items[i], value.items[i]);
  }
}

static void target_names(const ast::Expr& target, std::set<std::string>& names) {
  if (target.kind == ast::ExprKind::Name) names.insert(target.id);
  for (const auto& item : target.items) target_names(*item, names);
}

// Evaluated now, over compile-time sequences: the list of a list comprehension's elements,
// the tuple of a generator expression's. Its targets are its own names, as in Python 3: a
// name of the code around it that a target shadows is as it was afterwards.
CtValue Elaborator::eval_comprehension(const ast::Expr& e) {
  std::set<std::string> names;
  for (const auto& clause : e.clauses) target_names(*clause.target, names);
  std::map<std::string, std::optional<CtValue>> shadowed;
  for (const auto& name : names) {
    auto bound = frame().names.find(name);
    shadowed[name] = bound == frame().names.end() ? std::nullopt : std::optional(bound->second);
  }
  std::vector<CtValue> items;
  std::function<void(size_t)> run = [&](size_t k) {
    if (k == e.clauses.size()) {
      check_length(static_cast<int64_t>(items.size() + 1), false, e.loc, "this comprehension");
      items.push_back(eval(*e.value));
      return;
    }
    const ast::ComprehensionClause& clause = e.clauses[k];
    CtValue seq = eval(*clause.iter);
    if (!seq.is_sequence())
      error_at(clause.iter->loc, "a comprehension iterates a tuple, a list or a range of "
                                 "compile-time values, not " + describe(seq));
    spend_compile_time_iterations(static_cast<int64_t>(seq.items.size()), clause.iter->loc);
    for (const auto& item : seq.items) {
      bind_comprehension_target(*this, *clause.target, item);
      bool kept = true;
      for (const auto& condition : clause.conditions)
        if (!truthy(eval(*condition), condition->loc)) {
          kept = false;
          break;
        }
      if (kept) run(k + 1);
    }
  };
  run(0);
  for (const auto& [name, value] : shadowed) {
    if (value) frame().names[name] = *value;
    else frame().names.erase(name);
  }
  CtValue result = CtValue::tuple(std::move(items));
  if (e.id == "list") result.kind = K::List;
  return result;
}

CtValue Elaborator::apply_lambda(const ast::Expr& lambda, const std::vector<CtValue>& args) {
  // The parameters shadow the frame's names while the body is evaluated.
  struct Shadow {
    std::map<std::string, CtValue>& names;
    std::vector<std::pair<std::string, std::optional<CtValue>>> saved;
    ~Shadow() {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
        if (it->second) names[it->first] = *it->second;
        else names.erase(it->first);
      }
    }
  } shadow{frame().names, {}};
  for (size_t i = 0; i < lambda.items.size(); ++i) {
    const std::string& name = lambda.items[i]->id;
    auto it = shadow.names.find(name);
    shadow.saved.emplace_back(name, it == shadow.names.end() ? std::nullopt : std::optional<CtValue>(it->second));
    shadow.names[name] = args.at(i);
  }
  return eval(*lambda.value);
}

CtValue Elaborator::call_function(const CtValue& function, const EvaluatedCall& call) {
  const FunctionValue& f = *function.function;
  const ast::Stmt& def = *f.def;
  if (static_cast<int>(frames_.size()) > kMaxCallDepth)
    error_at(call.node->loc, "calls nest more than " + std::to_string(kMaxCallDepth) +
                                 " deep (recursion is not supported in kernels)");
  if (++calls_ > kMaxCalls)
    error_at(call.node->loc, "more than " + std::to_string(kMaxCalls) + " calls of kernel functions "
                             "in one kernel; a call in a compile-time loop or a recursion runs that "
                             "often (make it a runtime loop inside T.Kernel)");
  Frame callee;
  callee.closure = f.closure;
  callee.module = f.module;
  callee.is_macro = true;
  callee.control_depth_at_entry = runtime_control_depth_;
  std::vector<std::string> names;
  for (const auto& p : def.params) {
    if (p.star) error_at(p.loc, "*args and **kwargs are not supported in kernel functions");
    names.push_back(p.name);
  }
  if (call.positional.size() > names.size())
    error_at(call.node->loc, "'" + def.name + "' takes " + std::to_string(names.size()) +
                                 " arguments but " + std::to_string(call.positional.size()) +
                                 " were given");
  for (size_t i = 0; i < call.positional.size(); ++i) callee.names[names[i]] = call.positional[i];
  for (size_t i = 0; i < call.keywords.size(); ++i) {
    const auto& [name, value] = call.keywords[i];
    if (std::find(names.begin(), names.end(), name) == names.end())
      error_at(call.keyword_locs[i], "'" + def.name + "' got an unexpected keyword argument '" + name + "'");
    if (callee.names.count(name))
      error_at(call.keyword_locs[i], "'" + def.name + "' got multiple values for argument '" + name + "'");
    callee.names[name] = value;
  }
  callee.multi_assigned.clear();
  for (auto& [name, count] : assigned_names(def.body))
    if (count > 1) callee.multi_assigned.insert(name);
  frames_.push_back(std::move(callee));
  for (const auto& p : def.params) {
    if (frame().names.count(p.name)) continue;
    if (!p.default_value)
      error_at(call.node->loc, "'" + def.name + "' is missing argument '" + p.name + "'");
    frame().names[p.name] = eval(*p.default_value);
  }
  frame().names.emplace(def.name, function);  // a parameter of that name hides it
  exec_block(def.body);
  CtValue result = frame().return_value.value_or(CtValue::none());
  frames_.pop_back();
  return result;
}

// ---------------------------------------------------------------- dispatch

Elaborator::EvalDepth::EvalDepth(Elaborator& el, const SourceLoc& loc) : el_(el) {
  check_stack(loc);
  if (++el_.eval_depth_ > kMaxEvalDepth) {
    --el_.eval_depth_;
    error_at(loc, "evaluation nested too deeply (more than " + std::to_string(kMaxEvalDepth) +
                      " levels of expressions, statements and calls inside one another)");
  }
}

CtValue Elaborator::eval(const ast::Expr& e) {
  using E = ast::ExprKind;
  EvalDepth depth(*this, e.loc);
  switch (e.kind) {
    case E::Name: return lookup(e.id, e.loc);
    case E::Int: return CtValue::of_int(e.int_value);
    case E::Float: return CtValue::of_float(e.float_value);
    case E::String: return CtValue::of_string(e.id);
    case E::Bool: return CtValue::of_bool(e.bool_value);
    case E::NoneLit: return CtValue::none();
    case E::Attribute: return eval_attribute(e);
    case E::Subscript: return eval_subscript(e);
    case E::Call: return eval_call(e);
    case E::BinOp: {
      CtValue lhs = eval(*e.lhs);  // before rhs, as Python does (arguments have no order in C++)
      return eval_binop(e.op, lhs, eval(*e.rhs), e.loc);
    }
    case E::UnaryOp: return eval_unary(e.op, eval(*e.value), e.loc);
    case E::Compare: return eval_compare(e);
    case E::BoolOp: {
      bool is_and = e.op == "and";
      CtValue acc = eval(*e.items[0]);
      for (size_t i = 1; i < e.items.size(); ++i) {
        if (acc.is_constant()) {
          bool t = truthy(acc, e.items[i - 1]->loc);
          if (is_and ? !t : t) return acc;
          acc = eval(*e.items[i]);
          continue;
        }
        ir::Expr a = to_bool_expr(acc, e.items[i - 1]->loc);
        ir::Expr b = to_bool_expr(eval(*e.items[i]), e.items[i]->loc);
        acc = CtValue::of_expr(is_and ? ir::make_And(a, b) : ir::make_Or(a, b));
      }
      return acc;
    }
    case E::IfExp: {
      CtValue test = eval(*e.value);
      if (test.is_constant()) return truthy(test, e.value->loc) ? eval(*e.lhs) : eval(*e.rhs);
      CtValue a = eval(*e.lhs), b = eval(*e.rhs);
      ir::Expr cond = to_bool_expr(test, e.value->loc);
      auto [ea, eb] = unify_operands(a, b, e.loc, "conditional expression");
      return CtValue::of_expr(ir::make_select(cond, ea, eb));
    }
    case E::Tuple: case E::List: {
      std::vector<CtValue> items;
      for (const auto& item : e.items) {
        if (item->kind == E::Starred) {
          CtValue seq = eval(*item->value);
          if (!seq.is_sequence()) error_at(item->loc, "cannot unpack " + describe(seq));
          check_length(static_cast<int64_t>(items.size() + seq.items.size()), false, item->loc,
                       "this unpacking");
          spend_sequence_work(static_cast<int64_t>(seq.items.size()), item->loc);
          items.insert(items.end(), seq.items.begin(), seq.items.end());
        } else {
          check_length(static_cast<int64_t>(items.size() + 1), false, item->loc,
                       e.kind == E::List ? "this list" : "this tuple");
          items.push_back(eval(*item));
        }
      }
      CtValue r = CtValue::tuple(std::move(items));
      if (e.kind == E::List) r.kind = K::List;
      if (r.items.depth() > kMaxValueNesting)
        error_at(e.loc, "tuples and lists nest more than " + std::to_string(kMaxValueNesting) +
                            " deep here (a tuple inside a tuple inside ...)");
      return r;
    }
    case E::Slice: error_at(e.loc, "a slice is only allowed inside [ ]");
    case E::Starred: error_at(e.loc, "a starred expression is only allowed in a call or a tuple");
    case E::Lambda:
      error_at(e.loc, "lambda is not supported in kernels but as T.Layout's index function "
                      "(T.Layout(shape, lambda i, j: offset))");
    case E::Dict:
      error_at(e.loc, "a dict is not supported in kernels but as T.annotate_layout's argument "
                      "(T.annotate_layout({A_shared: layout}))");
    case E::Comprehension: return eval_comprehension(e);
    case E::Unsupported: error_at(e.loc, e.id + " is not supported in kernels");
  }
  error_at(e.loc, "unsupported expression");
}

ir::Expr Elaborator::slice_extent(const ir::Expr& lo, const ir::Expr& hi) {
  ir::Expr extent = ir::make_Sub(hi, lo);
  ir::Expr expanded = extent;
  // Latest binding first: its value may name the ones bound before it.
  for (auto block = blocks_.rbegin(); block != blocks_.rend(); ++block)
    for (auto let = (*block)->lets.rbegin(); let != (*block)->lets.rend(); ++let)
      expanded = ir::substitute(expanded, let->var, let->value);
  if (expanded.same_as(extent) || !expr_sizes_.fits(expanded)) return extent;
  ir::Expr folded = ir::simplify(expanded);
  return ir::is_const_int(folded) ? ir::make_cast(extent->dtype, folded) : extent;
}

}  // namespace tilec::frontend
