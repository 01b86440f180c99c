// Reading a kernel from a Python file without Python: the command line's way
// in. The file's module-level imports and constant assignments become the
// function's bindings.
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "frontend/parser.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// The value of a literal expression (numbers, strings, True/False/None,
// tuples/lists of those, -x, T.float16), or nullopt.
std::optional<Value> literal(const ast::Expr& e, const std::map<std::string, Value>& known) {
  using E = ast::ExprKind;
  switch (e.kind) {
    case E::Int: return Value::of_int(e.int_value);
    case E::Float: return Value::of_float(e.float_value);
    case E::String: return Value::of_string(e.id);
    case E::Bool: return Value::of_bool(e.bool_value);
    case E::NoneLit: return Value::none();
    case E::Name: {
      auto it = known.find(e.id);
      if (it != known.end()) return it->second;
      return std::nullopt;
    }
    case E::UnaryOp:
      if (e.op == "-") {
        auto v = literal(*e.value, known);
        if (v && v->kind == Value::Kind::Int) return Value::of_int(-v->int_value);
        if (v && v->kind == Value::Kind::Float) return Value::of_float(-v->float_value);
      }
      return std::nullopt;
    case E::Tuple: case E::List: {
      std::vector<Value> items;
      for (const auto& item : e.items) {
        auto v = literal(*item, known);
        if (!v) return std::nullopt;
        items.push_back(*v);
      }
      return e.kind == E::Tuple ? Value::tuple(items) : Value::list(items);
    }
    case E::Attribute: {
      auto base = literal(*e.value, known);
      if (base && base->kind == Value::Kind::Module && base->text == "tilec.language")
        if (auto t = DType::from_name(e.id)) return Value::of_dtype(*t);
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

bool has_decorator(const ast::Stmt& def, const std::string& name) {
  for (const auto& d : def.decorators) {
    const ast::Expr* e = d.get();
    if (e->kind == ast::ExprKind::Call) e = e->value.get();
    if ((e->kind == ast::ExprKind::Attribute || e->kind == ast::ExprKind::Name) && e->id == name) return true;
  }
  return false;
}

}  // namespace

FunctionSource load_function(const std::string& file_text, const std::string& filename,
                             const std::string& name, const std::map<std::string, Value>& defines) {
  auto file = std::make_shared<SourceFile>();
  file->name = filename;
  file->text = file_text;
  ast::Module module = frontend::parse(file);
  FunctionSource out;
  out.source = file_text;
  out.filename = filename;
  out.first_line = 1;
  std::vector<std::string> candidates;
  const ast::Stmt* found = nullptr;
  for (const auto& s : module.body) {
    if (s->kind == ast::StmtKind::Import) {
      for (const auto& imp : s->imports) {
        std::string m = imp.module;
        if (m.rfind("tilelang", 0) == 0) m = "tilec" + m.substr(8);
        if (m == "tilec" || m == "tilec.language" || m == "tilec.layout") out.bindings[imp.alias] = Value::module(m);
      }
    } else if (s->kind == ast::StmtKind::Assign && s->targets.size() == 1 &&
               s->targets[0]->kind == ast::ExprKind::Name) {
      if (auto v = literal(*s->value, out.bindings)) out.bindings[s->targets[0]->id] = *v;
    } else if (s->kind == ast::StmtKind::FunctionDef) {
      if (!name.empty() && s->name == name) found = s.get();
      if (has_decorator(*s, "jit") || has_decorator(*s, "prim_func")) candidates.push_back(s->name);
    }
  }
  if (!name.empty() && !found)
    throw std::invalid_argument("no function '" + name + "' at the top level of " + filename);
  if (name.empty()) {
    if (candidates.size() != 1) {
      std::string list;
      for (const auto& c : candidates) list += (list.empty() ? "" : ", ") + c;
      throw std::invalid_argument(filename + " has " + std::to_string(candidates.size()) +
                                  " jit/prim_func functions" + (list.empty() ? "" : " (" + list + ")") +
                                  "; choose one with --func");
    }
    out.name = candidates[0];
  } else {
    out.name = name;
  }
  for (const auto& [k, v] : defines) out.bindings[k] = v;
  return out;
}

Value parse_define_value(const std::string& text) {
  if (text == "True") return Value::of_bool(true);
  if (text == "False") return Value::of_bool(false);
  if (text == "None") return Value::none();
  char* end = nullptr;
  errno = 0;
  long long i = std::strtoll(text.c_str(), &end, 0);
  if (!text.empty() && end && *end == '\0') {
    if (errno == ERANGE)
      throw std::invalid_argument("-D value " + text + " does not fit in 64 bits (kernel constants are int64)");
    return Value::of_int(i);
  }
  double f = std::strtod(text.c_str(), &end);
  if (!text.empty() && end && *end == '\0') return Value::of_float(f);
  if (auto t = DType::from_name(text)) return Value::of_dtype(*t);
  return Value::of_string(text);
}

}  // namespace tilec
