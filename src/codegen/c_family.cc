#include "codegen/c_family.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "base/stack_guard.h"
#include "ir/intrinsics.h"
#include "ir/shared_layout.h"
#include "ir/visitor.h"

namespace tilec::codegen {

namespace {

// Names a generated identifier must not take: C++ keywords and alternative
// tokens, names the generated code itself uses, and macros the standard
// headers (or GNU mode) may define.
const std::unordered_set<std::string>& reserved_names() {
  static const std::unordered_set<std::string> names = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    "std", "tilec_rt", "tensors", "ints", "floats", "tilec_kernel_entry", "main",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "float_t", "double_t",
    "INT8_C", "INT16_C", "INT32_C", "INT64_C", "UINT8_C", "UINT16_C", "UINT32_C", "UINT64_C",
    "INT8_MIN", "INT16_MIN", "INT32_MIN", "INT64_MIN", "INT8_MAX", "INT16_MAX", "INT32_MAX",
    "INT64_MAX", "UINT8_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX", "SIZE_MAX",
    "CHAR_BIT", "INT_MAX", "INT_MIN", "UINT_MAX", "LONG_MAX", "LONG_MIN", "FLT_MAX", "DBL_MAX",
    "NULL", "EOF", "NAN", "INFINITY", "HUGE_VAL", "HUGE_VALF", "M_PI", "M_E", "EDOM", "ERANGE",
    "errno", "assert", "offsetof", "linux", "unix", "i386",
  };
  return names;
}

bool is_narrow_integer(DType t) { return t.is_integer() && t.bits() < 32; }

std::string hex_float(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", value);
  return buf;
}

const char* infix_operator(ir::ExprKind kind) {
  switch (kind) {
    case ir::ExprKind::Add: return "+";
    case ir::ExprKind::Sub: return "-";
    case ir::ExprKind::Mul: return "*";
    case ir::ExprKind::Div: return "/";
    case ir::ExprKind::BitXor: return "^";
    case ir::ExprKind::BitAnd: return "&";
    case ir::ExprKind::BitOr: return "|";
    case ir::ExprKind::ShiftLeft: return "<<";
    case ir::ExprKind::ShiftRight: return ">>";
    case ir::ExprKind::EQ: return "==";
    case ir::ExprKind::NE: return "!=";
    case ir::ExprKind::LT: return "<";
    case ir::ExprKind::LE: return "<=";
    case ir::ExprKind::GT: return ">";
    case ir::ExprKind::GE: return ">=";
    case ir::ExprKind::And: return "&&";
    case ir::ExprKind::Or: return "||";
    default: return nullptr;
  }
}

const char* function_operator(ir::ExprKind kind) {
  switch (kind) {
    case ir::ExprKind::FloorDiv: return "floordiv";
    case ir::ExprKind::FloorMod: return "floormod";
    case ir::ExprKind::Min: return "min";
    case ir::ExprKind::Max: return "max";
    default: return nullptr;
  }
}

bool is_comparison(ir::ExprKind kind) {
  return kind >= ir::ExprKind::EQ && kind <= ir::ExprKind::GE;
}

[[noreturn]] void fail(const std::string& message, const SourceLoc& loc = {}) {
  throw std::logic_error("codegen: " + message + (loc.valid() ? " (at " + loc.str() + ")" : ""));
}

[[noreturn]] void unlowered(ir::StmtKind kind, const SourceLoc& loc) {
  fail(std::string(ir::kind_name(kind)) + " must be lowered before code generation", loc);
}

}  // namespace

// ---------------------------------------------------------------- names

std::string CFamilyPrinter::fresh_name(const std::string& hint) {
  std::string base;
  for (char c : hint) {
    char d = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (d == '_' && !base.empty() && base.back() == '_') continue;  // "__" is reserved
    base += d;
  }
  if (base.empty() || base[0] == '_' || std::isdigit(static_cast<unsigned char>(base[0])))
    base = "v" + base;
  if (reserved_names().count(base)) base += "_";
  std::string name = base;
  const char* sep = base.back() == '_' ? "" : "_";
  for (int n = 1; used_names_.count(name); ++n) name = base + sep + std::to_string(n);
  used_names_.insert(name);
  return name;
}

std::string CFamilyPrinter::bind_var(const ir::Expr& var, bool loop_scoped) {
  auto* v = var.as<ir::Var>();
  if (!v) fail("binding a non-Var expression");
  auto& stack = var_names_[var.get()];
  auto ended = loop_names_.find(var.get());
  std::string name;
  if (loop_scoped && stack.empty() && ended != loop_names_.end()) {
    name = ended->second;
  } else {
    name = fresh_name(v->name);
    if (!loop_scoped && ended != loop_names_.end()) loop_names_.erase(ended);
  }
  stack.emplace_back(name, loop_scoped);
  return name;
}

void CFamilyPrinter::unbind_var(const ir::Expr& var) {
  auto it = var_names_.find(var.get());
  if (it == var_names_.end() || it->second.empty()) fail("unbinding an unbound Var");
  auto [name, loop_scoped] = it->second.back();
  it->second.pop_back();
  if (loop_scoped && it->second.empty()) loop_names_[var.get()] = name;
}

const std::string& CFamilyPrinter::var_name(const ir::Expr& var) const {
  auto it = var_names_.find(var.get());
  if (it == var_names_.end() || it->second.empty())
    fail("Var '" + var.as<ir::Var>()->name + "' is used outside its scope", var->loc);
  return it->second.back().first;
}

void CFamilyPrinter::bind_buffer(const ir::Buffer& buffer, const std::string& name,
                                 std::vector<Stride> strides, bool wide) {
  buffers_[buffer.get()].push_back({name, std::move(strides), wide});
}

void CFamilyPrinter::unbind_buffer(const ir::Buffer& buffer) {
  auto it = buffers_.find(buffer.get());
  if (it == buffers_.end() || it->second.empty()) fail("unbinding an unbound buffer");
  it->second.pop_back();
}

const std::string& CFamilyPrinter::buffer_name(const ir::Buffer& buffer) const {
  auto it = buffers_.find(buffer.get());
  if (it == buffers_.end() || it->second.empty())
    fail("buffer '" + buffer->name + "' is used outside its scope", buffer->loc);
  return it->second.back().name;
}

// ---------------------------------------------------------------- output

void CFamilyPrinter::emit_line(const std::string& text) {
  out_ << std::string(2 * indent_, ' ') << text << '\n';
}

void CFamilyPrinter::open_block(const std::string& head) {
  emit_line(head + " {");
  ++indent_;
}

void CFamilyPrinter::close_block(const std::string& tail) {
  --indent_;
  emit_line("}" + tail);
}

void CFamilyPrinter::reopen_block(const std::string& text) {
  --indent_;
  emit_line(text);
  ++indent_;
}

std::string CFamilyPrinter::comment_text(const std::string& text) {
  std::string out;
  for (char c : text) out += std::iscntrl(static_cast<unsigned char>(c)) ? ' ' : c;
  size_t begin = out.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  out = out.substr(begin);
  while (!out.empty() && (out.back() == ' ' || out.back() == '\\')) out.pop_back();
  return out;
}

std::string CFamilyPrinter::string_literal(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void CFamilyPrinter::emit_source_comment(const SourceLoc& loc) {
  if (!loc.valid()) return;
  if (loc.file.get() == last_comment_file_ && loc.line == last_comment_line_) return;
  last_comment_file_ = loc.file.get();
  last_comment_line_ = loc.line;
  std::string text = comment_text(loc.file->line_text(loc.line));
  current_source_line_ = comment_text(loc.file->name) + ":" +
                         std::to_string(loc.line + loc.file->first_line - 1) + ":" +
                         (text.empty() ? "" : " " + text);
  emit_line("// " + current_source_line_);
}

// ---------------------------------------------------------------- literals

std::string CFamilyPrinter::wrap(const CExpr& e, Prec min) {
  return e.prec < min ? "(" + e.text + ")" : e.text;
}

CExpr CFamilyPrinter::int_literal(int64_t value, DType t) const {
  if (t.is_float()) return float_literal(static_cast<double>(value), t);
  auto signed_text = [](int64_t v) {
    return CExpr{std::to_string(v), v < 0 ? Prec::Unary : Prec::Primary};
  };
  switch (t.code()) {
    case DType::Bool:
      return {value != 0 ? "true" : "false"};
    case DType::Int32: {
      auto v = static_cast<int32_t>(value);
      if (v == std::numeric_limits<int32_t>::min()) return {"(-2147483647 - 1)"};
      return signed_text(v);
    }
    case DType::Int64:
      if (value == std::numeric_limits<int64_t>::min()) return {"INT64_MIN"};
      return {"INT64_C(" + std::to_string(value) + ")"};
    case DType::UInt32:
      return {std::to_string(static_cast<uint32_t>(value)) + "u"};
    case DType::UInt64:
      return {"UINT64_C(" + std::to_string(static_cast<uint64_t>(value)) + ")"};
    case DType::Int8:
      return {"static_cast<int8_t>(" + std::to_string(static_cast<int8_t>(value)) + ")"};
    case DType::Int16:
      return {"static_cast<int16_t>(" + std::to_string(static_cast<int16_t>(value)) + ")"};
    case DType::UInt8:
      return {"static_cast<uint8_t>(" + std::to_string(static_cast<uint8_t>(value)) + ")"};
    case DType::UInt16:
      return {"static_cast<uint16_t>(" + std::to_string(static_cast<uint16_t>(value)) + ")"};
    default:
      fail(std::string("no integer literal of type ") + t.name());
  }
}

std::string CFamilyPrinter::type_name(DType t) const {
  switch (t.code()) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8_t";
    case DType::Int16: return "int16_t";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::UInt8: return "uint8_t";
    case DType::UInt16: return "uint16_t";
    case DType::UInt32: return "uint32_t";
    case DType::UInt64: return "uint64_t";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    default: return soft_float_type_name(t);
  }
}

// Finite values print as exact hexadecimal literals. A soft-float immediate is
// built from a float literal when its value is one, else from a double, so its
// constructor rounds it exactly once.
CExpr CFamilyPrinter::float_literal(double value, DType t) const {
  if (!t.is_float()) return int_literal(static_cast<int64_t>(value), t);
  if (!std::isfinite(value)) return non_finite_literal(value, t);
  auto as_float = static_cast<float>(value);
  if (t == DType::Float32 && !std::isfinite(as_float)) return non_finite_literal(as_float, t);
  bool exact_float = static_cast<double>(as_float) == value;
  std::string text;
  if (t == DType::Float64 || (t.is_soft_float() && !exact_float))
    text = hex_float(value);
  else
    text = hex_float(as_float) + "f";
  if (t.is_soft_float()) return {soft_float_from(t, text)};
  return {text, text[0] == '-' ? Prec::Unary : Prec::Primary};
}

// ---------------------------------------------------------------- expressions

// Soft floats become float first and are built from the result: the float
// conversion is exact and their constructors take integers, float and double,
// each rounded once.
CExpr CFamilyPrinter::convert(const CExpr& code, DType from, DType to) const {
  if (from == to) return code;
  if (computes_in_float(from)) {
    CExpr as_float{"float(" + code.text + ")"};
    return to == DType::Float32 ? as_float : convert(as_float, DType::Float32, to);
  }
  if (to.is_soft_float()) return {soft_float_from(to, code.text)};
  return {"static_cast<" + type_name(to) + ">(" + code.text + ")"};
}

CExpr CFamilyPrinter::print(const ir::Expr& e) {
  if (!e) fail("null expression");
  check_stack(e->loc);
  switch (e.kind()) {
    case ir::ExprKind::IntImm:
      return int_literal(e.as<ir::IntImm>()->value, e->dtype);
    case ir::ExprKind::FloatImm:
      return float_literal(e.as<ir::FloatImm>()->value, e->dtype);
    case ir::ExprKind::Var:
      return {var_name(e)};
#define TILEC_BINARY_CASE(n)                                            \
  case ir::ExprKind::n: {                                               \
    auto* op = static_cast<const ir::n*>(e.get());                      \
    return print_binary(ir::ExprKind::n, op->a, op->b, e->dtype);      \
  }
      TILEC_FOR_EACH_BINARY_EXPR(TILEC_BINARY_CASE)
#undef TILEC_BINARY_CASE
    case ir::ExprKind::Not:
      return {"!" + wrap(print(e.as<ir::Not>()->a), Prec::Unary), Prec::Unary};
    case ir::ExprKind::Select: {
      auto* op = e.as<ir::Select>();
      return {"(" + wrap(print(op->condition), Prec::LogicalOr) + " ? " +
              print(op->true_value).text + " : " + wrap(print(op->false_value), Prec::LogicalOr) +
              ")"};
    }
    case ir::ExprKind::Cast: {
      auto* op = e.as<ir::Cast>();
      return convert(print(op->value), op->value->dtype, e->dtype);
    }
    case ir::ExprKind::Call:
      return print_call(*e.as<ir::Call>());
    case ir::ExprKind::BufferLoad: {
      auto* op = e.as<ir::BufferLoad>();
      return {buffer_element(op->buffer, op->indices)};
    }
  }
  fail("unknown expression kind");
}

// Types computed in float compute each operation in float and round its
// result back, which is exact rounding for +, -, *, / of 16- and 8-bit
// formats. Narrow integers would be promoted to int by C++: their results are
// cast back so they wrap as the IR says (unsigned ones through uint32_t, where
// int multiplication could overflow).
CExpr CFamilyPrinter::print_arith(ir::ExprKind kind, const CExpr& a, const CExpr& b, DType t) {
  if (const char* fn = function_operator(kind))
    return {math_function(fn, t) + "(" + a.text + ", " + b.text + ")"};
  Prec prec = kind == ir::ExprKind::Add || kind == ir::ExprKind::Sub ? Prec::Additive
               : kind == ir::ExprKind::BitXor                         ? Prec::BitXor
               : kind == ir::ExprKind::BitAnd                         ? Prec::BitAnd
               : kind == ir::ExprKind::BitOr                          ? Prec::BitOr
               : kind == ir::ExprKind::ShiftLeft || kind == ir::ExprKind::ShiftRight ? Prec::Shift
                                                                      : Prec::Multiplicative;
  std::string lhs = wrap(a, prec);
  if (t.is_uint() && t.bits() < 32) lhs = "static_cast<uint32_t>(" + a.text + ")";
  CExpr result{lhs + " " + infix_operator(kind) + " " + wrap(b, static_cast<Prec>(int(prec) + 1)),
               prec};
  if (is_narrow_integer(t)) return {"static_cast<" + type_name(t) + ">(" + result.text + ")"};
  return result;
}

CExpr CFamilyPrinter::print_binary(ir::ExprKind kind, const ir::Expr& a, const ir::Expr& b,
                                   DType t) {
  DType operand = a->dtype;
  CExpr ca = print(a), cb = print(b);
  bool via_float = computes_in_float(operand);
  if (via_float) {
    ca = convert(ca, operand, DType::Float32);
    cb = convert(cb, operand, DType::Float32);
  }
  if (is_comparison(kind)) {
    Prec prec = kind == ir::ExprKind::EQ || kind == ir::ExprKind::NE ? Prec::Equality
                                                                      : Prec::Relational;
    // Operands that are comparisons or logic get parentheses even where C++
    // would not need them: `(a < b) == c` reads as meant.
    return {wrap(ca, Prec::Additive) + " " + infix_operator(kind) + " " +
                wrap(cb, Prec::Additive),
            prec};
  }
  if (kind == ir::ExprKind::And || kind == ir::ExprKind::Or) {
    Prec prec = kind == ir::ExprKind::And ? Prec::LogicalAnd : Prec::LogicalOr;
    auto operand_text = [&](const CExpr& c) {
      return c.prec == prec || c.prec > Prec::LogicalAnd ? c.text : "(" + c.text + ")";
    };
    return {operand_text(ca) + " " + infix_operator(kind) + " " + operand_text(cb), prec};
  }
  // Python's // and % by a power of two are exactly an arithmetic shift and a mask on
  // two's complement integers, without floordiv's sign fix-up.
  int64_t divisor;
  if ((kind == ir::ExprKind::FloorDiv || kind == ir::ExprKind::FloorMod) && t.is_int() && !t.is_uint() &&
      ir::is_const_int(b, &divisor) && divisor > 0 && (divisor & (divisor - 1)) == 0) {
    if (kind == ir::ExprKind::FloorMod)
      return {"(" + wrap(ca, Prec::Multiplicative) + " & " + int_literal(divisor - 1, t).text + ")"};
    int shift = 0;
    while ((int64_t{1} << shift) < divisor) ++shift;
    return {"(" + wrap(ca, Prec::Multiplicative) + " >> " + std::to_string(shift) + ")"};
  }
  if (!via_float) return print_arith(kind, ca, cb, t);
  return convert(print_arith(kind, ca, cb, DType::Float32), DType::Float32, t);
}

CExpr CFamilyPrinter::print_call(const ir::Call& op) {
  if (op.name == ir::kReinterpret) {
    if (op.args.size() != 1 || op.args[0]->dtype.bits() != op.dtype.bits())
      fail("reinterpret takes one value of its result's size", op.loc);
    return CExpr{reinterpret(op.dtype, print(op.args[0]).text)};
  }
  const ir::IntrinsicInfo* info = ir::find_intrinsic(op.name);
  if (!info) fail("unknown intrinsic '" + op.name + "'", op.loc);
  if (static_cast<int>(op.args.size()) != info->arity)
    fail("intrinsic '" + op.name + "' takes " + std::to_string(info->arity) + " arguments",
         op.loc);
  DType arg_type = op.args[0]->dtype;
  bool via_float = computes_in_float(arg_type);
  DType compute = via_float ? DType(DType::Float32) : arg_type;
  std::string text = math_function(op.name, compute) + "(";
  for (size_t i = 0; i < op.args.size(); ++i) {
    CExpr arg = print(op.args[i]);
    text += (i ? ", " : "") + convert(arg, op.args[i]->dtype, compute).text;
  }
  CExpr call{text + ")"};
  DType result = info->returns_bool ? DType(DType::Bool) : compute;
  return convert(call, result, op.dtype);
}

// ---------------------------------------------------------------- buffers

std::string CFamilyPrinter::buffer_offset(const ir::Buffer& buffer,
                                          const std::vector<ir::Expr>& indices) {
  if (indices.size() != buffer->shape.size())
    fail("buffer '" + buffer->name + "' of rank " + std::to_string(buffer->shape.size()) +
         " indexed with " + std::to_string(indices.size()) + " indices");
  auto it = buffers_.find(buffer.get());
  if (it == buffers_.end() || it->second.empty())
    fail("buffer '" + buffer->name + "' is used outside its scope", buffer->loc);
  const BufferBinding& binding = it->second.back();
  if (buffer->layout) return layout_offset(*buffer->layout, indices);

  std::vector<Stride> strides = binding.strides;
  bool wide = binding.wide;
  if (strides.empty() && !buffer->strides.empty()) {
    wide = true;
    for (const ir::Expr& stride : buffer->strides) {
      int64_t value;
      if (ir::is_const_int(stride, &value))
        strides.push_back({value, ""});
      else if (stride->dtype == DType::Int64)
        strides.push_back({1, wrap(print(stride), Prec::Primary)});
      else
        strides.push_back({1, "static_cast<int64_t>(" + print_expr(stride) + ")"});
    }
  }
  if (strides.size() != indices.size())
    fail("buffer '" + buffer->name + "' has no strides for its rank");

  std::string offset;
  for (size_t d = 0; d < indices.size(); ++d) {
    const Stride& stride = strides[d];
    int64_t index_value;
    bool const_index = ir::is_const_int(indices[d], &index_value);
    if (const_index && index_value == 0) continue;
    std::string term;
    if (const_index && stride.symbol.empty()) {
      term = std::to_string(index_value * stride.constant);
    } else if (const_index) {
      term = index_value == 1 ? stride.symbol : std::to_string(index_value) + " * " + stride.symbol;
    } else {
      CExpr index = print(indices[d]);
      std::string multiplier =
          stride.symbol.empty() ? std::to_string(stride.constant) : stride.symbol;
      if (stride.symbol.empty() && stride.constant == 1)
        term = wrap(index, Prec::Additive);
      else if (wide && indices[d]->dtype != DType::Int64)
        term = "(int64_t)" + wrap(index, Prec::Unary) + " * " + multiplier;
      else
        term = wrap(index, Prec::Multiplicative) + " * " + multiplier;
    }
    offset += (offset.empty() ? "" : " + ") + term;
  }
  return offset.empty() ? "0" : offset;
}

std::string CFamilyPrinter::layout_offset(const ir::SharedLayout& layout, const std::vector<ir::Expr>& indices) {
  return print_expr(layout.offset_of(indices));
}

std::string CFamilyPrinter::buffer_element(const ir::Buffer& buffer,
                                           const std::vector<ir::Expr>& indices) {
  std::string offset = buffer_offset(buffer, indices);
  return buffer_name(buffer) + "[" + offset + "]";
}

std::string CFamilyPrinter::element_count(const ir::Buffer& buffer, int64_t* constant) {
  int64_t product = 1;
  std::string symbolic;
  for (const ir::Expr& dim : buffer->shape) {
    int64_t value;
    if (ir::is_const_int(dim, &value)) {
      product *= value;
    } else if (symbolic.empty()) {
      CExpr code = print(dim);
      symbolic = dim->dtype == DType::Int64 ? wrap(code, Prec::Multiplicative)
                                            : "(int64_t)" + wrap(code, Prec::Unary);
    } else {
      symbolic += " * " + wrap(print(dim), Prec::Multiplicative);
    }
  }
  *constant = symbolic.empty() ? product : -1;
  if (symbolic.empty()) return std::to_string(product);
  return product == 1 ? symbolic : symbolic + " * " + std::to_string(product);
}

// Each stride is the next dim times the next stride: constant while both are,
// else an int64 const declared here.
std::vector<Stride> CFamilyPrinter::declare_row_major_strides(const ir::Buffer& buffer,
                                                              const std::string& name,
                                                              bool* wide) {
  size_t rank = buffer->shape.size();
  std::vector<Stride> strides(rank);
  bool all_const = true;
  int64_t count = 1;
  for (size_t d = rank; d-- > 0;) {
    if (d + 1 < rank) {
      const Stride& next_stride = strides[d + 1];
      const ir::Expr& next = buffer->shape[d + 1];
      int64_t value;
      bool next_const = ir::is_const_int(next, &value);
      if (next_stride.symbol.empty() && next_const) {
        strides[d].constant = next_stride.constant * value;
      } else {
        std::string product;
        if (!next_stride.symbol.empty()) {
          product = next_stride.symbol + " * " +
                    (next_const ? std::to_string(value) : wrap(print(next), Prec::Multiplicative));
        } else {
          CExpr code = print(next);
          product = next->dtype == DType::Int64 ? wrap(code, Prec::Multiplicative)
                                                : "(int64_t)" + wrap(code, Prec::Unary);
          if (next_stride.constant != 1) product += " * " + std::to_string(next_stride.constant);
        }
        strides[d].symbol = fresh_name(name + "_stride" + std::to_string(d));
        emit_line("const int64_t " + strides[d].symbol + " = " + product + ";");
      }
    }
    int64_t value;
    if (ir::is_const_int(buffer->shape[d], &value))
      count *= value;
    else
      all_const = false;
  }
  *wide = !all_const || count > std::numeric_limits<int32_t>::max();
  return strides;
}

// ---------------------------------------------------------------- statements

void CFamilyPrinter::emit_stmt(const ir::Stmt& s) {
  if (!s) return;
  check_stack(s->loc);
  emit_source_comment(s->loc);
  switch (s.kind()) {
#define TILEC_STMT_CASE(n)                               \
  case ir::StmtKind::n:                                  \
    emit_##n(*static_cast<const ir::n*>(s.get()));       \
    return;
    TILEC_FOR_EACH_STMT(TILEC_STMT_CASE)
#undef TILEC_STMT_CASE
  }
}

void CFamilyPrinter::emit_BufferStore(const ir::BufferStore& op) {
  CExpr value = convert(print(op.value), op.value->dtype, op.buffer->dtype);
  emit_line(buffer_element(op.buffer, op.indices) + " = " + value.text + ";");
}

// The loop end is computed once: written in place when it is a literal or a
// name, else hoisted into a const before the loop.
void CFamilyPrinter::emit_For(const ir::For& op) {
  DType t = op.var->dtype;
  CExpr min = convert(print(op.min), op.min->dtype, t);
  CExpr extent = convert(print(op.extent), op.extent->dtype, t);
  int64_t min_value = 0, extent_value = 0;
  bool min_const = ir::is_const_int(op.min, &min_value);
  bool extent_const = ir::is_const_int(op.extent, &extent_value);
  std::string end;
  bool hoist = true;
  if (min_const && extent_const) {
    end = int_literal(min_value + extent_value, t).text;
    hoist = false;
  } else if (min_const && min_value == 0) {
    end = extent.text;
    hoist = !op.extent.as<ir::Var>();
  } else {
    end = wrap(min, Prec::Additive) + " + " + wrap(extent, Prec::Multiplicative);
  }
  std::string name = bind_var(op.var, true);
  if (hoist) {
    std::string end_name = fresh_name(name + "_end");
    emit_line("const " + type_name(t) + " " + end_name + " = " + end + ";");
    end = end_name;
  }
  std::string pragma = loop_pragma(op);
  if (!pragma.empty()) emit_line(pragma);
  open_block("for (" + type_name(t) + " " + name + " = " + min.text + "; " + name + " < " + end +
             "; ++" + name + ")");
  emit_stmt(op.body);
  close_block();
  unbind_var(op.var);
}

void CFamilyPrinter::emit_While(const ir::While& op) {
  open_block("while (" + print_expr(op.condition) + ")");
  emit_stmt(op.body);
  close_block();
}

void CFamilyPrinter::emit_IfThenElse(const ir::IfThenElse& op) {
  open_block("if (" + print_expr(op.condition) + ")");
  emit_stmt(op.then_case);
  if (op.else_case) {
    reopen_block("} else {");
    emit_stmt(op.else_case);
  }
  close_block();
}

void CFamilyPrinter::emit_Seq(const ir::Seq& op) {
  for (const ir::Stmt& s : op.stmts) emit_stmt(s);
}

void CFamilyPrinter::emit_LetStmt(const ir::LetStmt& op) {
  DType t = op.var->dtype;
  CExpr value = convert(print(op.value), op.value->dtype, t);
  std::string name = bind_var(op.var);
  emit_line("const " + type_name(t) + " " + name + " = " + value.text + ";");
  emit_stmt(op.body);
  unbind_var(op.var);
}

// Binds every tensor, int slot and float param in ABI order. A Var that
// fills two slots (a dim that is also a stride) is bound by the first.
void CFamilyPrinter::emit_abi_prologue(const ir::PrimFunc& func, const KernelAbi& abi, const std::string& tensors,
                                     const std::string& ints, const std::string& floats) {
  std::vector<std::pair<ir::Buffer, std::string>> row_major;
  struct Viewed : ir::IRVisitor {
    std::unordered_set<const ir::BufferNode*> tensors;
    void visit_Allocate(const ir::Allocate* op) override {
      if (op->buffer->view_of) tensors.insert(op->buffer->view_of.get());
      IRVisitor::visit_Allocate(op);
    }
  } viewed;
  viewed.visit(func.body);
  for (size_t i = 0; i < abi.tensor_params.size(); ++i) {
    const ir::Param& param = func.params[abi.tensor_params[i]];
    std::string name = fresh_name(param.name);
    std::string type = type_name(param.buffer->dtype);
    // A tensor that a view reads too (T.Tensor(shape, dtype, x.data)) has two names.
    const char* restrict = viewed.tensors.count(param.buffer.get()) ? "* " : "* __restrict__ ";
    emit_line(type + restrict + name + " = static_cast<" + type + "*>(" + tensors + "[" +
              std::to_string(i) + "]);");
    if (param.buffer->strides.empty())
      row_major.emplace_back(param.buffer, name);
    else
      bind_buffer(param.buffer, name);
  }
  std::unordered_set<const ir::ExprNode*> bound;
  for (size_t k = 0; k < abi.int_slots.size(); ++k) {
    const ir::Expr& var = abi.int_slots[k].var;
    if (!bound.insert(var.get()).second) continue;
    DType t = var->dtype;
    CExpr value = convert({ints + "[" + std::to_string(k) + "]"}, DType::Int64, t);
    emit_line("const " + type_name(t) + " " + bind_var(var) + " = " + value.text + ";");
  }
  for (size_t k = 0; k < abi.float_params.size(); ++k) {
    const ir::Expr& var = func.params[abi.float_params[k]].var;
    DType t = var->dtype;
    CExpr value = convert({floats + "[" + std::to_string(k) + "]"}, DType::Float64, t);
    emit_line("const " + type_name(t) + " " + bind_var(var) + " = " + value.text + ";");
  }
  // Strides of tensors that have none in the IR come from their shapes,
  // which the int slots have just bound.
  for (auto& [buffer, name] : row_major) {
    bool wide = false;
    std::vector<Stride> strides = declare_row_major_strides(buffer, name, &wide);
    bind_buffer(buffer, name, std::move(strides), true);
  }
}


void CFamilyPrinter::emit_Allocate(const ir::Allocate& op) {
  std::string name = fresh_name(op.buffer->name);
  if (op.buffer->view_of)  // the viewed tensor's pointer (not __restrict__: both name its bytes)
    emit_line(type_name(op.buffer->dtype) + "* const " + name + " = " + buffer_name(op.buffer->view_of) + ";");
  bool wide = false;
  std::vector<Stride> strides = declare_row_major_strides(op.buffer, name, &wide);
  if (!op.buffer->view_of) declare_buffer(op.buffer, name);
  bind_buffer(op.buffer, name, std::move(strides), wide);
  emit_stmt(op.body);
  unbind_buffer(op.buffer);
}

void CFamilyPrinter::emit_Evaluate(const ir::Evaluate& op) {
  if (op.value.as<ir::IntImm>() || op.value.as<ir::FloatImm>()) return;
  emit_line("static_cast<void>(" + print_expr(op.value) + ");");
}

void CFamilyPrinter::emit_Copy(const ir::Copy& op) { unlowered(op.kind, op.loc); }
void CFamilyPrinter::emit_Gemm(const ir::Gemm& op) { unlowered(op.kind, op.loc); }
void CFamilyPrinter::emit_Gemv(const ir::Gemv& op) { unlowered(op.kind, op.loc); }
void CFamilyPrinter::emit_Fill(const ir::Fill& op) { unlowered(op.kind, op.loc); }
void CFamilyPrinter::emit_Reduce(const ir::Reduce& op) { unlowered(op.kind, op.loc); }

void CFamilyPrinter::emit_CumSum(const ir::CumSum& op) { unlowered(op.kind, op.loc); }

void CFamilyPrinter::emit_AtomicAdd(const ir::AtomicAdd& op) {
  bool scalar = !op.src.buffer && op.value && op.dst.buffer &&
                op.dst.region.size() == op.dst.buffer->shape.size();
  for (const ir::Range& r : op.dst.region) scalar = scalar && ir::is_one(r.extent);
  if (!scalar) fail("AtomicAdd of a tile must be lowered before code generation", op.loc);
  std::vector<ir::Expr> indices;
  for (const ir::Range& r : op.dst.region) indices.push_back(r.min);
  DType t = op.dst.buffer->dtype;
  CExpr value = convert(print(op.value), op.value->dtype, t);
  std::string add = atomic_add("&" + buffer_element(op.dst.buffer, indices), value.text, t);
  if (op.prev.buffer) {
    std::vector<ir::Expr> at;
    for (const ir::Range& r : op.prev.region) at.push_back(r.min);
    add = buffer_element(op.prev.buffer, at) + " = " + add;
  }
  emit_line(add);
}

}  // namespace tilec::codegen
