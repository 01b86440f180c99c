#include "fuzz_input.h"

#include <cxxabi.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <typeinfo>
#include <utility>
#include <vector>

namespace tilec::fuzz {
namespace {

// A #!bind value before its func(...) names are resolved.
struct ValueText {
  Value value;                    // everything but func(...)
  std::string function;           // func(NAME): NAME
  std::vector<ValueText> items;   // tuples and lists
};

// Reads one VALUE of a #!bind line (the grammar in fuzz_input.h).
class ValueReader {
 public:
  explicit ValueReader(const std::string& text) : text_(text) {}

  std::optional<ValueText> whole() {
    auto v = value(0);
    skip_space();
    if (!v || pos_ != text_.size()) return std::nullopt;
    return v;
  }

 private:
  static constexpr int kMaxDepth = 32;

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  std::string word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            text_[pos_] == '.'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // The text of `(WORD)`.
  std::optional<std::string> word_argument() {
    if (!eat('(')) return std::nullopt;
    std::string w = word();
    if (w.empty() || !eat(')')) return std::nullopt;
    return w;
  }

  std::optional<ValueText> value(int depth) {
    if (depth > kMaxDepth) return std::nullopt;
    skip_space();
    if (pos_ >= text_.size()) return std::nullopt;
    char c = text_[pos_];
    if (c == '"') return string();
    if (c == '(' || c == '[') return sequence(depth);
    if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) return number();
    std::string w = word();
    if (w == "None") return wrap(Value::none());
    if (w == "True") return wrap(Value::of_bool(true));
    if (w == "False") return wrap(Value::of_bool(false));
    if (w == "sym" || w == "module" || w == "opaque" || w == "func") {
      auto arg = word_argument();
      if (!arg) return std::nullopt;
      if (w == "sym") return wrap(Value::symbolic(*arg));
      if (w == "module") return wrap(Value::module(*arg));
      if (w == "opaque") return wrap(Value::opaque(*arg));
      ValueText f;
      f.function = *arg;
      return f;
    }
    if (w == "tensor") return tensor();
    if (w == "arith") return arithmetic(depth);
    if (auto dtype = DType::from_name(w)) return wrap(Value::of_dtype(*dtype));
    return std::nullopt;
  }

  static ValueText wrap(Value v) {
    ValueText t;
    t.value = std::move(v);
    return t;
  }

  std::optional<ValueText> string() {
    std::string s;
    for (++pos_; pos_ < text_.size(); ++pos_) {
      char c = text_[pos_];
      if (c == '"') return ++pos_, wrap(Value::of_string(s));
      if (c != '\\') {
        s += c;
        continue;
      }
      if (++pos_ == text_.size()) return std::nullopt;
      switch (text_[pos_]) {
        case '\\': s += '\\'; break;
        case '"': s += '"'; break;
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        default: return std::nullopt;
      }
    }
    return std::nullopt;
  }

  std::optional<ValueText> number() {
    size_t start = pos_;
    ++pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '.' ||
                                   ((text_[pos_] == '-' || text_[pos_] == '+') &&
                                    (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E'))))
      ++pos_;
    std::string digits = text_.substr(start, pos_ - start);
    char* end = nullptr;
    errno = 0;
    long long i = std::strtoll(digits.c_str(), &end, 10);
    if (*end == '\0') return errno ? std::nullopt : std::optional(wrap(Value::of_int(i)));
    double f = std::strtod(digits.c_str(), &end);
    if (*end == '\0') return wrap(Value::of_float(f));
    return std::nullopt;
  }

  // tensor(DTYPE, DIM, ...)
  std::optional<ValueText> tensor() {
    if (!eat('(')) return std::nullopt;
    auto dtype = DType::from_name(word());
    if (!dtype) return std::nullopt;
    std::vector<int64_t> shape;
    while (eat(',')) {
      auto dim = number();
      if (!dim || dim->value.kind != Value::Kind::Int) return std::nullopt;
      shape.push_back(dim->value.int_value);
    }
    if (!eat(')')) return std::nullopt;
    return wrap(Value::tensor_spec(shape, *dtype));
  }

  // arith(OP, VALUE, VALUE), as Python's arithmetic on symbolic dims arrives
  std::optional<ValueText> arithmetic(int depth) {
    static const std::map<std::string, std::string> kOperators = {
        {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"floordiv", "//"}, {"mod", "%"}};
    if (!eat('(')) return std::nullopt;
    auto op = kOperators.find(word());
    if (op == kOperators.end()) return std::nullopt;
    Value arithmetic;
    arithmetic.kind = Value::Kind::Arithmetic;
    arithmetic.text = op->second;
    ValueText out = wrap(std::move(arithmetic));
    for (int i = 0; i < 2; ++i) {
      if (!eat(',')) return std::nullopt;
      auto operand = value(depth + 1);
      if (!operand) return std::nullopt;
      out.items.push_back(std::move(*operand));
    }
    if (!eat(')')) return std::nullopt;
    return out;
  }

  // (VALUE, ...) is a tuple even with one item and no comma; [VALUE, ...] a list.
  std::optional<ValueText> sequence(int depth) {
    char close = text_[pos_] == '(' ? ')' : ']';
    ValueText seq = wrap(close == ')' ? Value::tuple({}) : Value::list({}));
    ++pos_;
    if (eat(close)) return seq;
    do {
      if (eat(close)) return seq;  // a trailing comma
      auto item = value(depth + 1);
      if (!item) return std::nullopt;
      seq.items.push_back(std::move(*item));
    } while (eat(','));
    if (!eat(close)) return std::nullopt;
    return seq;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

// Turns #!bind values into Values, cutting func(NAME) out of the file with the
// header's bindings; a function that binds itself, directly or not, gets an
// opaque value there (as Python's capture does for recursion).
class BindingResolver {
 public:
  BindingResolver(const std::string& text, const std::string& filename,
                  const std::map<std::string, ValueText>& binds)
      : text_(text), filename_(filename), binds_(binds) {}

  std::map<std::string, Value> bindings() {
    std::map<std::string, Value> out;
    for (const auto& [name, v] : binds_) out[name] = resolve(v);
    return out;
  }

 private:
  // A header binding many functions must not cost factorial time.
  static constexpr int kMaxFunctions = 64;

  Value resolve(const ValueText& v) {
    if (!v.function.empty()) return function(v.function);
    Value out = v.value;
    for (const auto& item : v.items) out.items.push_back(resolve(item));
    return out;
  }

  Value function(const std::string& name) {
    for (const auto& open : resolving_)
      if (open == name) return Value::opaque("function " + name + " (recursive)");
    if (++functions_ > kMaxFunctions) throw std::length_error("too many func() bindings");
    resolving_.push_back(name);
    auto f = std::make_shared<FunctionSource>(load_function(text_, filename_, name, bindings()));
    resolving_.pop_back();
    return Value::of_function(std::move(f));
  }

  const std::string& text_;
  const std::string& filename_;
  const std::map<std::string, ValueText>& binds_;
  std::vector<std::string> resolving_;
  int functions_ = 0;
};

std::optional<EmitStage> stage_named(const std::string& name) {
  if (name == "tile-ir") return EmitStage::TileIR;
  if (name == "ir") return EmitStage::IR;
  if (name == "source") return EmitStage::Source;
  return std::nullopt;  // ptx needs NVRTC: not inside the fuzz loop
}

// Splits "KEY REST" at the first space; the key must be one of the header's.
std::pair<std::string, std::string> split_word(const std::string& line) {
  size_t space = line.find(' ');
  if (space == std::string::npos) return {line, ""};
  return {line.substr(0, space), line.substr(space + 1)};
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status),
                                              std::free);
  return status == 0 ? name.get() : type.name();
}

}  // namespace

bool has_location(const std::string& what) {
  size_t first_end = what.find('\n');
  size_t error = what.find(": error: ");
  if (error == std::string::npos || error > first_end) return false;
  // ...:LINE:COL before ": error: "
  size_t p = error;
  for (int number = 0; number < 2; ++number) {
    size_t digits_end = p;
    while (p > 0 && std::isdigit(static_cast<unsigned char>(what[p - 1]))) --p;
    if (p == digits_end || p == 0 || what[p - 1] != ':') return false;
    --p;
  }
  return p > 0;  // and a file name
}

bool has_source_line_and_caret(const std::string& what) {
  // The message may run over lines (a quoted multi-line token): the source
  // line is the indented one above the caret line (itself maybe a lone '^').
  std::string previous;
  for (size_t start = what.find('\n'); start != std::string::npos && start + 1 < what.size();) {
    ++start;
    size_t end = what.find('\n', start);
    std::string line = what.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t caret = line.find_first_not_of(" \t");
    if (line.rfind("    ", 0) == 0 && caret != std::string::npos && line[caret] == '^' &&
        caret + 1 == line.size() && previous.rfind("    ", 0) == 0)
      return true;
    previous = std::move(line);
    start = end;
  }
  return false;
}

std::string failure_signature(const std::string& failure) {
  std::string first = failure.substr(0, failure.find('\n'));
  std::string out;
  for (size_t i = 0; i < first.size() && out.size() < 200; ++i) {
    char c = first[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i + 1 < first.size() && std::isxdigit(static_cast<unsigned char>(first[i + 1]))) ++i;
      out += 'N';
    } else if (c == '\'') {
      size_t close = first.find('\'', i + 1);
      if (close == std::string::npos) close = first.size() - 1;
      out += "'_'";
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<FuzzInput> parse_fuzz_input(const std::string& text, const std::string& filename) {
  FuzzInput input;
  std::string func_name;
  std::map<std::string, ValueText> binds;
  for (size_t start = 0; text.compare(start, 2, "#!") == 0;) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    auto [key, rest] = split_word(trim(text.substr(start + 2, end - start - 2)));
    rest = trim(rest);
    start = end + 1;
    if (key == "target") {
      auto [target, arch] = split_word(rest);
      input.options.target = target;
      input.options.arch = trim(arch);
    } else if (key == "func" && !rest.empty()) {
      func_name = rest;
    } else if (key == "emit") {
      auto stage = stage_named(rest);
      if (!stage) return std::nullopt;
      input.stage = *stage;
    } else if (key == "config") {
      size_t eq = rest.find('=');
      if (eq == std::string::npos) return std::nullopt;
      input.options.pass_configs[trim(rest.substr(0, eq))] = trim(rest.substr(eq + 1));
    } else if (key == "bind") {
      size_t eq = rest.find('=');
      if (eq == std::string::npos) return std::nullopt;
      std::string name = trim(rest.substr(0, eq));
      auto value = ValueReader(rest.substr(eq + 1)).whole();
      if (name.empty() || !value) return std::nullopt;
      binds[name] = std::move(*value);
    } else {
      return std::nullopt;
    }
    if (end == text.size()) break;
  }
  try {
    check_options(input.options);
    BindingResolver resolver(text, filename, binds);
    input.func = load_function(text, filename, func_name, resolver.bindings());
  } catch (const std::invalid_argument&) {  // options tilec doesn't know; no such function
    return std::nullopt;
  } catch (const std::length_error&) {
    return std::nullopt;
  } catch (const CompileError&) {
    // The file doesn't parse: compile() reports that with the function's name
    // unknown, so hand it the whole text under the name the header asked for.
    input.func = FunctionSource{text, filename, 1, func_name, {}};
  }
  return input;
}

std::string compile_failure(const FuzzInput& input) {
  try {
    std::string out = emit(input.func, input.options, input.stage);
    if (out.empty()) return "compiled to empty text";
    return "";
  } catch (const CompileError& e) {
    std::string what = e.what();
    if (!has_location(what)) return "a CompileError without file:line:col: " + what;
    // One kind of failure whatever the message (its first line is the signature).
    if (!has_source_line_and_caret(what)) return "a CompileError without its source line and caret:\n" + what;
    return "";
  } catch (const ArgumentError&) {
    return "";
  } catch (const std::exception& e) {
    return "uncaught " + type_name(typeid(e)) + ": " + e.what();
  } catch (...) {
    return "uncaught exception of an unknown type";
  }
}

}  // namespace tilec::fuzz
