#include "frontend/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "tilec/tilec.h"

namespace tilec::frontend {

bool FunctionValue::has_decorator(const std::string& attr) const {
  for (const auto& d : def->decorators) {
    const ast::Expr* e = d.get();
    if (e->kind == ast::ExprKind::Call) e = e->value.get();
    if (e->kind == ast::ExprKind::Attribute && e->id == attr) return true;
    if (e->kind == ast::ExprKind::Name && e->id == attr) return true;
  }
  return false;
}

bool FunctionValue::is_prim_func() const { return has_decorator("prim_func"); }
bool FunctionValue::is_macro() const { return has_decorator("macro"); }

// The items, with what is known of them all (kept as items are added: the
// items of a list never change once made).
struct ItemList::Shared {
  std::vector<CtValue> items;
  int depth = 1;
  bool all_constant = true;

  void note(const CtValue& item) {
    depth = std::max(depth, 1 + (item.is_sequence() ? item.items.depth() : 0));
    all_constant = all_constant && item.is_constant();
  }
};

ItemList::ItemList(std::vector<CtValue> items) {
  if (items.empty()) return;
  shared_ = std::make_shared<Shared>();
  for (const CtValue& item : items) shared_->note(item);
  shared_->items = std::move(items);
}

size_t ItemList::size() const { return shared_ ? shared_->items.size() : 0; }

const CtValue& ItemList::operator[](size_t i) const { return vector()[i]; }

const std::vector<CtValue>& ItemList::vector() const {
  static const std::vector<CtValue> none;
  return shared_ ? shared_->items : none;
}

std::vector<CtValue>::const_iterator ItemList::begin() const { return vector().begin(); }
std::vector<CtValue>::const_iterator ItemList::end() const { return vector().end(); }

int ItemList::depth() const { return shared_ ? shared_->depth : 1; }

bool ItemList::all_constant() const { return !shared_ || shared_->all_constant; }

ItemList::Shared& ItemList::own() {
  if (!shared_) shared_ = std::make_shared<Shared>();
  else if (shared_.use_count() > 1) shared_ = std::make_shared<Shared>(*shared_);
  return *shared_;
}

void ItemList::push_back(CtValue item) {
  Shared& s = own();
  s.note(item);
  s.items.push_back(std::move(item));
}

void ItemList::append(const ItemList& other) {
  if (other.empty()) return;
  if (empty()) {
    shared_ = other.shared_;
    return;
  }
  ItemList keep = other;  // `other` may be this list
  Shared& s = own();
  s.depth = std::max(s.depth, keep.depth());
  s.all_constant = s.all_constant && keep.all_constant();
  s.items.insert(s.items.end(), keep.begin(), keep.end());
}

bool RegionValue::all_points() const {
  if (ranges.size() != buffer->shape.size()) return false;
  for (const auto& r : ranges)
    if (r.extent) return false;
  return true;
}

CtValue CtValue::of_bool(bool v) {
  CtValue r;
  r.kind = Kind::Bool;
  r.bool_value = v;
  r.int_value = v;
  return r;
}
CtValue CtValue::of_int(int64_t v) {
  CtValue r;
  r.kind = Kind::Int;
  r.int_value = v;
  return r;
}
CtValue CtValue::of_float(double v) {
  CtValue r;
  r.kind = Kind::Float;
  r.float_value = v;
  return r;
}
CtValue CtValue::of_string(std::string v) {
  CtValue r;
  r.kind = Kind::String;
  r.text = std::move(v);
  return r;
}
CtValue CtValue::of_dtype(DType t) {
  CtValue r;
  r.kind = Kind::DType;
  r.dtype = t;
  return r;
}
CtValue CtValue::of_expr(ir::Expr e) {
  CtValue r;
  r.kind = Kind::Expr;
  r.expr = std::move(e);
  return r;
}
CtValue CtValue::of_buffer(ir::Buffer b) {
  CtValue r;
  r.kind = Kind::Buffer;
  r.buffer = std::move(b);
  return r;
}
CtValue CtValue::builtin(std::string name) {
  CtValue r;
  r.kind = Kind::Builtin;
  r.text = std::move(name);
  return r;
}
CtValue CtValue::tuple(std::vector<CtValue> items) {
  CtValue r;
  r.kind = Kind::Tuple;
  r.items = std::move(items);
  return r;
}

bool CtValue::is_constant() const {
  switch (kind) {
    case Kind::None: case Kind::Bool: case Kind::Int: case Kind::Float: case Kind::String:
    case Kind::DType:
      return true;
    case Kind::Tuple: case Kind::List:
      return items.all_constant();
    default:
      return false;
  }
}

std::string describe(const CtValue& v) {
  using K = CtValue::Kind;
  switch (v.kind) {
    case K::None: return "None";
    case K::Bool: return "bool";
    case K::Int: return "int";
    case K::Float: return "float";
    case K::String: return "str '" + (v.text.size() > 40 ? v.text.substr(0, 37) + "..." : v.text) + "'";
    case K::DType: return std::string("dtype ") + v.dtype.name();
    case K::Tuple: return "tuple";
    case K::List: return "list";
    case K::Expr: return std::string("runtime ") + v.expr->dtype.name() + " value";
    case K::MutableVar: return std::string("runtime ") + v.buffer->dtype.name() + " variable";
    case K::Buffer: return std::string(ir::scope_name(v.buffer->scope)) + " buffer '" + v.buffer->name + "'";
    case K::Region: return "region of buffer '" + v.region->buffer->name + "'";
    case K::Function: return "function '" + v.function->def->name + "'";
    case K::Module: return "module " + v.text;
    case K::Builtin: return "builtin " + v.text;
    case K::TensorType: return "tensor type";
    case K::PendingDim: return "T.const dim '" + v.text + "'";
    case K::TensorSpec: return "tensor argument";
    case K::Host: return "Python " + v.host->description();
    case K::Opaque: return "Python value of type '" + v.text + "'";
    case K::Layout: return "layout";
  }
  return "?";
}

// Python's repr of a float: the shortest digits that read back as it, fixed-point for
// decimal exponents -4..15 (with ".0" when integral), else d.ddde+XX.
static std::string python_float(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buffer[64];
  auto end = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::scientific).ptr;
  std::string text(buffer, end);  // [-]d[.ddd]e(+|-)XX
  const bool negative = text[0] == '-';
  if (negative) text.erase(0, 1);
  const size_t e_at = text.find('e');
  const int exponent = std::atoi(text.c_str() + e_at + 1);
  std::string digits = text.substr(0, e_at);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out;
  if (exponent < -4 || exponent >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out.append(".").append(digits, 1);
    out.append(exponent < 0 ? "e-" : "e+");
    if (std::abs(exponent) < 10) out.append("0");
    out.append(std::to_string(std::abs(exponent)));
  } else if (exponent < 0) {
    out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  } else {
    if (digits.size() < static_cast<size_t>(exponent) + 1) digits.append(exponent + 1 - digits.size(), '0');
    const std::string whole = digits.substr(0, exponent + 1), fraction = digits.substr(exponent + 1);
    out = whole + "." + (fraction.empty() ? "0" : fraction);
  }
  return (negative ? "-" : "") + out;
}

// Python's repr of a str: single-quoted, or double-quoted when it holds a ' and no ".
static std::string python_repr_of_text(const std::string& text) {
  const char quote = text.find('\'') != std::string::npos && text.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char c : text) {
    if (c == quote || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + quote;
}

std::optional<std::string> python_str(const CtValue& v) {
  using K = CtValue::Kind;
  switch (v.kind) {
    case K::None: return "None";
    case K::Bool: return v.bool_value ? "True" : "False";
    case K::Int: return std::to_string(v.int_value);
    case K::Float: return python_float(v.float_value);
    case K::String: return v.text;
    case K::DType: return v.dtype.name();
    case K::Tuple:
    case K::List: {
      std::string out = v.kind == K::Tuple ? "(" : "[";
      for (size_t i = 0; i < v.items.size(); ++i) {
        const CtValue& item = v.items[i];
        auto text = python_str(item);
        if (!text) return std::nullopt;
        out += (i ? ", " : "") + (item.kind == K::String ? python_repr_of_text(*text) : *text);
      }
      if (v.kind == K::Tuple && v.items.size() == 1) out += ",";
      return out + (v.kind == K::Tuple ? ")" : "]");
    }
    default: return std::nullopt;
  }
}

}  // namespace tilec::frontend
