#include "frontend/parser.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace tilec::frontend {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Stmt;
using ast::StmtKind;

SourceFilePtr source(const std::string& text) {
  auto file = std::make_shared<SourceFile>();
  file->name = "t.py";
  file->text = text;
  return file;
}

ast::Module parse_text(const std::string& text) { return parse(source(text)); }

// ---- A small dumper: expressions as S-expressions, statements as indented lines ----

std::string dump(const ast::ExprPtr& e);

std::string join(const std::vector<ast::ExprPtr>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + dump(items[i]);
  return out;
}

std::string dump(const ast::ExprPtr& e) {
  if (!e) return "_";
  switch (e->kind) {
    case ExprKind::Name: return e->id;
    case ExprKind::Int: return std::to_string(e->int_value);
    case ExprKind::Float: {
      std::ostringstream os;
      os << e->float_value;
      std::string s = os.str();
      return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
    }
    case ExprKind::String: return "\"" + e->id + "\"";
    case ExprKind::Bool: return e->bool_value ? "True" : "False";
    case ExprKind::NoneLit: return "None";
    case ExprKind::Attribute: return dump(e->value) + "." + e->id;
    case ExprKind::Subscript: return dump(e->value) + "[" + join(e->items, ", ") + "]";
    case ExprKind::Slice:
      return "(slice " + dump(e->lower) + " " + dump(e->upper) + " " + dump(e->step) + ")";
    case ExprKind::Call: {
      std::string out = "(call " + dump(e->value);
      for (const auto& item : e->items) out += " " + dump(item);
      for (const auto& k : e->keywords)
        out += " " + (k.name.empty() ? "**" : k.name + "=") + dump(k.value);
      return out + ")";
    }
    case ExprKind::BinOp: return "(" + e->op + " " + dump(e->lhs) + " " + dump(e->rhs) + ")";
    case ExprKind::UnaryOp: return "(" + e->op + " " + dump(e->value) + ")";
    case ExprKind::Compare: {
      std::string out = "(cmp " + dump(e->items[0]);
      for (size_t i = 0; i < e->ops.size(); ++i)
        out += " " + e->ops[i] + " " + dump(e->items[i + 1]);
      return out + ")";
    }
    case ExprKind::BoolOp: return "(" + e->op + " " + join(e->items, " ") + ")";
    case ExprKind::IfExp:
      return "(ifexp " + dump(e->lhs) + " " + dump(e->value) + " " + dump(e->rhs) + ")";
    case ExprKind::Tuple:
      return "(tuple" + std::string(e->items.empty() ? "" : " ") + join(e->items, " ") + ")";
    case ExprKind::List:
      return "(list" + std::string(e->items.empty() ? "" : " ") + join(e->items, " ") + ")";
    case ExprKind::Starred: return "*" + dump(e->value);
    case ExprKind::Lambda: return "(lambda (" + join(e->items, " ") + ") " + dump(e->value) + ")";
    case ExprKind::Dict: {
      std::string out = "(dict";
      for (size_t i = 0; i < e->items.size(); ++i) out += " " + dump(e->items[i]) + ": " + dump(e->values[i]);
      return out + ")";
    }
    case ExprKind::Comprehension: {
      std::string out = "(" + e->id + "comp " + dump(e->value);
      for (const auto& c : e->clauses) {
        out += " (for " + dump(c.target) + " " + dump(c.iter);
        for (const auto& cond : c.conditions) out += " (if " + dump(cond) + ")";
        out += ")";
      }
      return out + ")";
    }
    case ExprKind::Unsupported: return "<" + e->id + ">";
  }
  return "?";
}

void dump(const ast::StmtList& body, int indent, std::string& out);

void dump(const Stmt& s, int indent, std::string& out) {
  std::string pad(indent, ' ');
  std::string line;
  switch (s.kind) {
    case StmtKind::FunctionDef: {
      for (const auto& d : s.decorators) out += pad + "@" + dump(d) + "\n";
      line = "def " + s.name + "(";
      for (size_t i = 0; i < s.params.size(); ++i) {
        const ast::Param& p = s.params[i];
        line += (i ? ", " : "") + std::string(p.star ? "*" : "") + p.name;
        if (p.annotation) line += ": " + dump(p.annotation);
        if (p.default_value) line += " = " + dump(p.default_value);
      }
      line += ")";
      if (s.returns) line += " -> " + dump(s.returns);
      break;
    }
    case StmtKind::Assign: line = join(s.targets, " = ") + " = " + dump(s.value); break;
    case StmtKind::AnnAssign:
      line = dump(s.targets[0]) + ": " + dump(s.annotation);
      if (s.value) line += " = " + dump(s.value);
      break;
    case StmtKind::AugAssign: line = dump(s.targets[0]) + " " + s.op + "= " + dump(s.value); break;
    case StmtKind::For: line = "for " + dump(s.targets[0]) + " in " + dump(s.value); break;
    case StmtKind::While: line = "while " + dump(s.value); break;
    case StmtKind::If: line = "if " + dump(s.value); break;
    case StmtKind::With:
      line = "with";
      for (size_t i = 0; i < s.with_items.size(); ++i) {
        line += (i ? ", " : " ") + dump(s.with_items[i].context);
        if (s.with_items[i].target) line += " as " + dump(s.with_items[i].target);
      }
      break;
    case StmtKind::Return: line = "return" + (s.value ? " " + dump(s.value) : ""); break;
    case StmtKind::ExprStmt: line = dump(s.value); break;
    case StmtKind::Pass: line = "pass"; break;
    case StmtKind::Break: line = "break"; break;
    case StmtKind::Continue: line = "continue"; break;
    case StmtKind::Import:
      line = "import";
      for (size_t i = 0; i < s.imports.size(); ++i)
        line += (i ? ", " : " ") + s.imports[i].module + " as " + s.imports[i].alias;
      break;
    case StmtKind::Global: line = "global " + join(s.targets, ", "); break;
    case StmtKind::Assert:
      line = "assert " + dump(s.value) + (s.msg ? ", " + dump(s.msg) : "");
      break;
    case StmtKind::Unsupported: line = "<" + s.name + ">"; break;
  }
  out += pad + line + "\n";
  dump(s.body, indent + 2, out);
  if (!s.orelse.empty()) {
    out += pad + "else\n";
    dump(s.orelse, indent + 2, out);
  }
}

void dump(const ast::StmtList& body, int indent, std::string& out) {
  for (const auto& s : body) dump(*s, indent, out);
}

std::string dump_module(const std::string& text) {
  std::string out;
  dump(parse_text(text).body, 0, out);
  return out;
}

// The dump of `text` parsed as one expression statement.
std::string expr(const std::string& text) {
  ast::Module m = parse_text(text);
  EXPECT_EQ(m.body.size(), 1u);
  EXPECT_EQ(m.body.at(0)->kind, StmtKind::ExprStmt);
  return dump(m.body.at(0)->value);
}

std::string parse_error(const std::string& text) {
  try {
    parse_text(text);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "<no error>";
}

// The complete text of an error at line:col of `text`.
std::string diagnostic(const std::string& text, int line, int col, const std::string& message) {
  std::istringstream in(text);
  std::string source_line;
  for (int i = 0; i < line; ++i) std::getline(in, source_line);
  return "t.py:" + std::to_string(line) + ":" + std::to_string(col) + ": error: " + message +
         "\n    " + source_line + "\n    " + std::string(col - 1, ' ') + "^";
}

#define EXPECT_PARSE_ERROR(text, line, col, message) \
  EXPECT_EQ(parse_error(text), diagnostic(text, line, col, message))

// ---- Expressions ----

TEST(ParserExpr, Atoms) {
  EXPECT_EQ(expr("x"), "x");
  EXPECT_EQ(expr("42"), "42");
  EXPECT_EQ(expr("0x10"), "16");
  EXPECT_EQ(expr("1.5"), "1.5");
  EXPECT_EQ(expr("1e-6"), "1e-06");
  EXPECT_EQ(expr("5."), "5.0");
  EXPECT_EQ(expr("'float16'"), "\"float16\"");
  EXPECT_EQ(expr("'a' \"b\"\n"), "\"ab\"");
  EXPECT_EQ(expr("('a'\n 'b' '''c''')"), "\"abc\"");
  EXPECT_EQ(expr("True"), "True");
  EXPECT_EQ(expr("False"), "False");
  EXPECT_EQ(expr("None"), "None");
  EXPECT_EQ(expr("(x)"), "x");
  EXPECT_EQ(expr("((x))"), "x");
}

TEST(ParserExpr, TuplesAndLists) {
  EXPECT_EQ(expr("()"), "(tuple)");
  EXPECT_EQ(expr("(a,)"), "(tuple a)");
  EXPECT_EQ(expr("(a, b)"), "(tuple a b)");
  EXPECT_EQ(expr("(a, b,)"), "(tuple a b)");
  EXPECT_EQ(expr("a, b"), "(tuple a b)");
  EXPECT_EQ(expr("a,"), "(tuple a)");
  EXPECT_EQ(expr("a, *b"), "(tuple a *b)");
  EXPECT_EQ(expr("(1, (2, 3))"), "(tuple 1 (tuple 2 3))");
  EXPECT_EQ(expr("[]"), "(list)");
  EXPECT_EQ(expr("[a]"), "(list a)");
  EXPECT_EQ(expr("[a, *b, c,]"), "(list a *b c)");
  EXPECT_EQ(expr("[[1, 2], [3]]"), "(list (list 1 2) (list 3))");
}

TEST(ParserExpr, ArithmeticPrecedence) {
  EXPECT_EQ(expr("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(expr("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(expr("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(expr("a / b // c % d @ e"), "(@ (% (// (/ a b) c) d) e)");
  EXPECT_EQ(expr("(a + b) * c"), "(* (+ a b) c)");
  EXPECT_EQ(expr("a << b + c >> d"), "(>> (<< a (+ b c)) d)");
  EXPECT_EQ(expr("a | b ^ c & d << e"), "(| a (^ b (& c (<< d e))))");
  EXPECT_EQ(expr("a & b | c ^ d"), "(| (& a b) (^ c d))");
}

TEST(ParserExpr, UnaryAndPower) {
  EXPECT_EQ(expr("-2**2"), "(- (** 2 2))");
  EXPECT_EQ(expr("2**-1"), "(** 2 (- 1))");
  EXPECT_EQ(expr("2**3**2"), "(** 2 (** 3 2))");
  EXPECT_EQ(expr("-a * b"), "(* (- a) b)");
  EXPECT_EQ(expr("- - a"), "(- (- a))");
  EXPECT_EQ(expr("~a + +b"), "(+ (~ a) (+ b))");
  EXPECT_EQ(expr("a.b ** c[0]"), "(** a.b c[0])");
  EXPECT_EQ(expr("-x.y(1)"), "(- (call x.y 1))");
}

TEST(ParserExpr, ComparisonsAndLogic) {
  EXPECT_EQ(expr("a < b"), "(cmp a < b)");
  EXPECT_EQ(expr("a < b <= c == d"), "(cmp a < b <= c == d)");
  EXPECT_EQ(expr("a > b >= c != d"), "(cmp a > b >= c != d)");
  EXPECT_EQ(expr("a is b"), "(cmp a is b)");
  EXPECT_EQ(expr("a is not b"), "(cmp a is not b)");
  EXPECT_EQ(expr("a in b"), "(cmp a in b)");
  EXPECT_EQ(expr("a not in b"), "(cmp a not in b)");
  EXPECT_EQ(expr("a + 1 < b * 2"), "(cmp (+ a 1) < (* b 2))");
  EXPECT_EQ(expr("a | b == c"), "(cmp (| a b) == c)");
  EXPECT_EQ(expr("not a == b"), "(not (cmp a == b))");
  EXPECT_EQ(expr("not not a"), "(not (not a))");
  EXPECT_EQ(expr("a or b and c"), "(or a (and b c))");
  EXPECT_EQ(expr("a and b or c and d"), "(or (and a b) (and c d))");
  EXPECT_EQ(expr("a or b or c"), "(or a b c)");
  EXPECT_EQ(expr("a and b and c"), "(and a b c)");
  EXPECT_EQ(expr("not a and b"), "(and (not a) b)");
  EXPECT_EQ(expr("(a or b) and c"), "(and (or a b) c)");
}

TEST(ParserExpr, Conditional) {
  EXPECT_EQ(expr("a if c else b"), "(ifexp a c b)");
  EXPECT_EQ(expr("a if c else b if d else e"), "(ifexp a c (ifexp b d e))");
  EXPECT_EQ(expr("a or b if c and d else e"), "(ifexp (or a b) (and c d) e)");
  EXPECT_EQ(expr("(a if c else b) + 1"), "(+ (ifexp a c b) 1)");
  EXPECT_EQ(expr("x, y if c else z"), "(tuple x (ifexp y c z))");
}

TEST(ParserExpr, AttributesCallsSubscripts) {
  EXPECT_EQ(expr("a.b.c"), "a.b.c");
  EXPECT_EQ(expr("a.b(c)[d].e"), "(call a.b c)[d].e");
  EXPECT_EQ(expr("f()"), "(call f)");
  EXPECT_EQ(expr("f(a, *b, k=v, **d)"), "(call f a *b k=v **d)");
  EXPECT_EQ(expr("f(a,)"), "(call f a)");
  EXPECT_EQ(expr("f(k=1, *b)"), "(call f *b k=1)");
  EXPECT_EQ(expr("f(**d, k=1)"), "(call f **d k=1)");
  EXPECT_EQ(expr("f(a)(b)"), "(call (call f a) b)");
  EXPECT_EQ(expr("T.Pipelined(n, num_stages=3)"), "(call T.Pipelined n num_stages=3)");
  EXPECT_EQ(expr("f(match=1, type=2)"), "(call f match=1 type=2)");
  EXPECT_EQ(expr("x.match.case"), "x.match.case");
}

TEST(ParserExpr, SubscriptItems) {
  EXPECT_EQ(expr("x[a, b:c, ::2]"), "x[a, (slice b c _), (slice _ _ 2)]");
  EXPECT_EQ(expr("x[i]"), "x[i]");
  EXPECT_EQ(expr("x[(a, b)]"), "x[(tuple a b)]");
  EXPECT_EQ(expr("x[(a, b), c]"), "x[(tuple a b), c]");
  EXPECT_EQ(expr("x[a,]"), "x[(tuple a)]");
  EXPECT_EQ(expr("x[a, b,]"), "x[a, b]");
  EXPECT_EQ(expr("x[()]"), "x[(tuple)]");
  EXPECT_EQ(expr("x[:]"), "x[(slice _ _ _)]");
  EXPECT_EQ(expr("x[::]"), "x[(slice _ _ _)]");
  EXPECT_EQ(expr("x[1:]"), "x[(slice 1 _ _)]");
  EXPECT_EQ(expr("x[:n]"), "x[(slice _ n _)]");
  EXPECT_EQ(expr("x[a:b:c]"), "x[(slice a b c)]");
  EXPECT_EQ(expr("x[:, 0]"), "x[(slice _ _ _), 0]");
  EXPECT_EQ(expr("x[i * 2 : i * 2 + 2]"), "x[(slice (* i 2) (+ (* i 2) 2) _)]");
  EXPECT_EQ(expr("x[*a]"), "x[*a]");
  EXPECT_EQ(expr("T.Tensor[(M, K), 'float32']"), "T.Tensor[(tuple M K), \"float32\"]");
}

TEST(ParserExpr, LambdasAndDicts) {
  EXPECT_EQ(expr("lambda: 0"), "(lambda () 0)");
  EXPECT_EQ(expr("lambda i, j: i * 8 + (j ^ i)"), "(lambda (i j) (+ (* i 8) (^ j i)))");
  EXPECT_EQ(expr("f(lambda x: x if x else -x, 2)"), "(call f (lambda (x) (ifexp x x (- x))) 2)");
  EXPECT_EQ(expr("{}"), "(dict)");
  EXPECT_EQ(expr("{A_s: f(A_s), 'b': 2,}"), "(dict A_s: (call f A_s) \"b\": 2)");
}

TEST(ParserExpr, Comprehensions) {
  EXPECT_EQ(expr("[x * 2 for x in range(4) if x if x > 1]"),
            "(listcomp (* x 2) (for x (call range 4) (if x) (if (cmp x > 1))))");
  EXPECT_EQ(expr("[y for x in a for y in x]"), "(listcomp y (for x a) (for y x))");
  EXPECT_EQ(expr("(x for x, y in z)"), "(generatorcomp x (for (tuple x y) z))");
  EXPECT_EQ(expr("sum(x for x in a)"), "(call sum (generatorcomp x (for x a)))");
  EXPECT_EQ(expr("sum((x for x in a), 1)"), "(call sum (generatorcomp x (for x a)) 1)");
}

TEST(ParserExpr, UnsupportedExpressions) {
  EXPECT_EQ(expr("lambda x, y=1, *a, k, **kw: x + y"), "<lambda with default or star parameters>");
  EXPECT_EQ(expr("{x for x in a}"), "<set comprehension>");
  EXPECT_EQ(expr("{k: v for k, v in a.items()}"), "<dict comprehension>");
  EXPECT_EQ(expr("[x async for x in a]"), "<asynchronous comprehension>");
  EXPECT_EQ(expr("{'a': 1, **b, 'c': 2,}"), "<dict display with **>");
  EXPECT_EQ(expr("{**b}"), "<dict display with **>");
  EXPECT_EQ(expr("{1, *b, 2}"), "<set display>");
  EXPECT_EQ(expr("..."), "<Ellipsis>");
  EXPECT_EQ(expr("x[..., 0]"), "x[<Ellipsis>, 0]");
  EXPECT_EQ(expr("f'{x}'"), "<f-string>");
  EXPECT_EQ(expr("'a' f'{x}' 'b'"), "<f-string>");
  EXPECT_EQ(expr("b'abc'"), "<bytes literal>");
  EXPECT_EQ(expr("b'a' b'c'"), "<bytes literal>");
  EXPECT_EQ(expr("'x' '\\N{BULLET}'"), "<named Unicode escape>");
  EXPECT_EQ(expr("1 + 2j"), "(+ 1 <complex literal>)");
  EXPECT_EQ(expr("(y := f(x))"), "<assignment expression>");
  EXPECT_EQ(expr("f(y := 1)"), "(call f <assignment expression>)");
  EXPECT_EQ(expr("await f(x)"), "<await>");
  EXPECT_EQ(expr("await x ** 2"), "(** <await> 2)");
  EXPECT_EQ(expr("(yield)"), "<yield>");
  EXPECT_EQ(expr("(yield from g())"), "<yield>");
}

// ---- Statements ----

TEST(ParserStmt, FunctionDefinitions) {
  EXPECT_EQ(dump_module("@a.b\n"
                        "@c(1)\n"
                        "def f(a, b: int, c=1, *args: int, d, e: float = 2.0, **kw) -> T.Tensor:\n"
                        "    pass\n"),
            "@a.b\n"
            "@(call c 1)\n"
            "def f(a, b: int, c = 1, *args: int, d, e: float = 2.0, *kw) -> T.Tensor\n"
            "  pass\n");
  EXPECT_EQ(dump_module("def f(a, /, b=1, *, c, d=2): return\n"),
            "def f(a, b = 1, c, d = 2)\n"
            "  return\n");
  EXPECT_EQ(dump_module("def f(): pass\n"), "def f()\n  pass\n");
  EXPECT_EQ(dump_module("def f(a,): pass\n"), "def f(a)\n  pass\n");
  EXPECT_EQ(dump_module("def f(*, a=1, b): pass\n"), "def f(a = 1, b)\n  pass\n");
  EXPECT_EQ(dump_module("def match(type): pass\n"), "def match(type)\n  pass\n");
  EXPECT_EQ(dump_module("def f(*args: *Ts): pass\n"), "def f(*args: *Ts)\n  pass\n");
  EXPECT_EQ(dump_module("def outer():\n"
                        "    x = 1\n"
                        "    def inner(y):\n"
                        "        return x + y\n"
                        "    return inner\n"),
            "def outer()\n"
            "  x = 1\n"
            "  def inner(y)\n"
            "    return (+ x y)\n"
            "  return inner\n");
}

TEST(ParserStmt, ParamStarFlags) {
  ast::Module m = parse_text("def f(a, *b, c, **d): pass\n");
  const auto& params = m.body[0]->params;
  ASSERT_EQ(params.size(), 4u);
  EXPECT_FALSE(params[0].star);
  EXPECT_TRUE(params[1].star);
  EXPECT_FALSE(params[2].star);
  EXPECT_TRUE(params[3].star);
  EXPECT_EQ(params[3].name, "d");
}

TEST(ParserStmt, Assignments) {
  EXPECT_EQ(dump_module("a = 1\n"), "a = 1\n");
  EXPECT_EQ(dump_module("a = b = c\n"), "a = b = c\n");
  EXPECT_EQ(dump_module("a, b = c\n"), "(tuple a b) = c\n");
  EXPECT_EQ(dump_module("a, b = b, a\n"), "(tuple a b) = (tuple b a)\n");
  EXPECT_EQ(dump_module("(a, b) = [c, d] = e\n"), "(tuple a b) = (list c d) = e\n");
  EXPECT_EQ(dump_module("a, = f()\n"), "(tuple a) = (call f)\n");
  EXPECT_EQ(dump_module("a, *b = c\n"), "(tuple a *b) = c\n");
  EXPECT_EQ(dump_module("[a, (b, c)] = d\n"), "(list a (tuple b c)) = d\n");
  EXPECT_EQ(dump_module("x.y = z[0] = 1\n"), "x.y = z[0] = 1\n");
  EXPECT_EQ(dump_module("C[i, j] = A[i, k] * B[k, j]\n"), "C[i, j] = (* A[i, k] B[k, j])\n");
  EXPECT_EQ(dump_module("b, m, n = T.symbolic('b'), T.symbolic('m'), T.symbolic('n')\n"),
            "(tuple b m n) = (tuple (call T.symbolic \"b\") (call T.symbolic \"m\") "
            "(call T.symbolic \"n\"))\n");
  EXPECT_EQ(dump_module("a = *b, c\n"), "a = (tuple *b c)\n");
  EXPECT_EQ(dump_module("x = yield y\n"), "x = <yield>\n");
}

TEST(ParserStmt, AnnotatedAndAugmentedAssignments) {
  EXPECT_EQ(dump_module("x: int = 5\n"), "x: int = 5\n");
  EXPECT_EQ(dump_module("x: T.Tensor[(M,), 'f']\n"), "x: T.Tensor[(tuple M), \"f\"]\n");
  EXPECT_EQ(dump_module("self.x: int = 1\n"), "self.x: int = 1\n");
  EXPECT_EQ(dump_module("a[0]: int\n"), "a[0]: int\n");
  EXPECT_EQ(dump_module("x: tuple = 1, 2\n"), "x: tuple = (tuple 1 2)\n");
  EXPECT_EQ(dump_module("a += 1\nb -= 1\nc *= 1\nd /= 1\ne //= 1\nf %= 1\ng **= 1\n"
                        "h &= 1\ni |= 1\nj ^= 1\nk <<= 1\nl >>= 1\nm @= 1\n"),
            "a += 1\nb -= 1\nc *= 1\nd /= 1\ne //= 1\nf %= 1\ng **= 1\n"
            "h &= 1\ni |= 1\nj ^= 1\nk <<= 1\nl >>= 1\nm @= 1\n");
  EXPECT_EQ(dump_module("x[i] += y.z * 2\n"), "x[i] += (* y.z 2)\n");
  ast::Module m = parse_text("x //= 2\n");
  EXPECT_EQ(m.body[0]->kind, StmtKind::AugAssign);
  EXPECT_EQ(m.body[0]->op, "//");
}

TEST(ParserStmt, Loops) {
  EXPECT_EQ(dump_module("for i in range(10):\n"
                        "    if i == 3:\n"
                        "        continue\n"
                        "    break\n"),
            "for i in (call range 10)\n"
            "  if (cmp i == 3)\n"
            "    continue\n"
            "  break\n");
  EXPECT_EQ(dump_module("for i, j in zip(a, b): pass\n"),
            "for (tuple i j) in (call zip a b)\n  pass\n");
  EXPECT_EQ(dump_module("for (i, j) in x: pass\n"), "for (tuple i j) in x\n  pass\n");
  EXPECT_EQ(dump_module("for x, in a, b: pass\n"), "for (tuple x) in (tuple a b)\n  pass\n");
  EXPECT_EQ(dump_module("for a.b[0] in c: pass\n"), "for a.b[0] in c\n  pass\n");
  EXPECT_EQ(dump_module("for x in a if c else b: pass\n"), "for x in (ifexp a c b)\n  pass\n");
  EXPECT_EQ(dump_module("while i < n:\n    i += 1\n"), "while (cmp i < n)\n  i += 1\n");
  EXPECT_EQ(dump_module("while (x := f()): pass\n"), "while <assignment expression>\n  pass\n");
}

TEST(ParserStmt, IfElifElse) {
  EXPECT_EQ(dump_module("if a:\n"
                        "    x = 1\n"
                        "elif b:\n"
                        "    x = 2\n"
                        "elif c:\n"
                        "    x = 3\n"
                        "else:\n"
                        "    x = 4\n"),
            "if a\n"
            "  x = 1\n"
            "else\n"
            "  if b\n"
            "    x = 2\n"
            "  else\n"
            "    if c\n"
            "      x = 3\n"
            "    else\n"
            "      x = 4\n");
  EXPECT_EQ(dump_module("if a:\n"
                        "    if b:\n"
                        "        pass\n"
                        "else:\n"
                        "    pass\n"),
            "if a\n  if b\n    pass\nelse\n  pass\n");
  EXPECT_EQ(dump_module("if x: y = 1; z = 2\nelse: pass\n"),
            "if x\n  y = 1\n  z = 2\nelse\n  pass\n");
}

TEST(ParserStmt, With) {
  EXPECT_EQ(dump_module("with T.Kernel(b, m, threads=128) as (bx, by):\n    pass\n"),
            "with (call T.Kernel b m threads=128) as (tuple bx by)\n  pass\n");
  EXPECT_EQ(dump_module("with a as x, b, c as (y, z): pass\n"),
            "with a as x, b, c as (tuple y z)\n  pass\n");
  EXPECT_EQ(dump_module("with (a as x,\n      b as y,): pass\n"), "with a as x, b as y\n  pass\n");
  EXPECT_EQ(dump_module("with (a, b): pass\n"), "with a, b\n  pass\n");
  EXPECT_EQ(dump_module("with (a) as b: pass\n"), "with a as b\n  pass\n");
  EXPECT_EQ(dump_module("with (a, b) as c: pass\n"), "with (tuple a b) as c\n  pass\n");
  EXPECT_EQ(dump_module("with (): pass\n"), "with (tuple)\n  pass\n");
  EXPECT_EQ(dump_module("with f() as x.y: pass\n"), "with (call f) as x.y\n  pass\n");
}

TEST(ParserStmt, SimpleStatements) {
  EXPECT_EQ(dump_module("return\n"), "return\n");
  EXPECT_EQ(dump_module("return a, b\n"), "return (tuple a b)\n");
  EXPECT_EQ(dump_module("return -x\n"), "return (- x)\n");
  EXPECT_EQ(dump_module("pass; break; continue;\n"), "pass\nbreak\ncontinue\n");
  EXPECT_EQ(dump_module("T.clear(C_local)\n"), "(call T.clear C_local)\n");
  EXPECT_EQ(dump_module("x\n'doc'\n"), "x\n\"doc\"\n");
  EXPECT_EQ(dump_module("global a, b\nnonlocal c\n"), "global a, b\nglobal c\n");
  EXPECT_EQ(dump_module("assert x > 0\nassert x, 'message'\n"),
            "assert (cmp x > 0)\nassert x, \"message\"\n");
}

TEST(ParserStmt, Imports) {
  EXPECT_EQ(dump_module("import tilec.language as T\n"), "import tilec.language as T\n");
  EXPECT_EQ(dump_module("import tilec\n"), "import tilec as tilec\n");
  EXPECT_EQ(dump_module("import tilec.language\n"), "import tilec as tilec\n");
  EXPECT_EQ(dump_module("import a as b, c.d\n"), "import a as b, c as c\n");
  EXPECT_EQ(dump_module("from tilec import language as T\n"), "import tilec.language as T\n");
  EXPECT_EQ(dump_module("from a.b import c, d as e\n"), "import a.b.c as c, a.b.d as e\n");
  EXPECT_EQ(dump_module("from a import (b,\n  c,)\n"), "import a.b as b, a.c as c\n");
  EXPECT_EQ(dump_module("from . import x\n"), "import .x as x\n");
  EXPECT_EQ(dump_module("from ..m.n import x\n"), "import ..m.n.x as x\n");
  EXPECT_EQ(dump_module("from ... import x\n"), "import ...x as x\n");
  EXPECT_EQ(dump_module("from x import *\n"), "<wildcard import>\n");
}

TEST(ParserStmt, UnsupportedStatements) {
  EXPECT_EQ(dump_module("@dataclass\n"
                        "class A(B, metaclass=M):\n"
                        "    x: int = 0\n"
                        "    def f(self): return self.x\n"),
            "<class definition>\n"
            "  x: int = 0\n"
            "  def f(self)\n"
            "    return self.x\n");
  EXPECT_EQ(dump_module("class A: pass\n"), "<class definition>\n  pass\n");
  EXPECT_EQ(dump_module("try:\n"
                        "    a = 1\n"
                        "except (KeyError, ValueError) as e:\n"
                        "    b = 2\n"
                        "except Exception:\n"
                        "    pass\n"
                        "except:\n"
                        "    raise\n"
                        "else:\n"
                        "    c = 3\n"
                        "finally:\n"
                        "    d = 4\n"),
            "<try statement>\n"
            "  a = 1\n"
            "  b = 2\n"
            "  pass\n"
            "  <raise statement>\n"
            "  c = 3\n"
            "  d = 4\n");
  EXPECT_EQ(dump_module("try: a\nfinally: b\n"), "<try statement>\n  a\n  b\n");
  EXPECT_EQ(dump_module("try: a\nexcept* E: b\n"), "<try statement>\n  a\n  b\n");
  EXPECT_EQ(dump_module("raise ValueError('x') from e\n"), "<raise statement>\n");
  EXPECT_EQ(dump_module("del a, b[0], c.d\n"), "<del statement>\n");
  EXPECT_EQ(dump_module("async def f():\n    await g()\n"),
            "<async function definition>\n  <await>\n");
  EXPECT_EQ(dump_module("@d\nasync def f(): pass\n"), "<async function definition>\n  pass\n");
  EXPECT_EQ(dump_module("async for x in y: pass\n"), "<async for statement>\n  pass\n");
  EXPECT_EQ(dump_module("async with a as b: pass\n"), "<async with statement>\n  pass\n");
  EXPECT_EQ(dump_module("yield\nyield x, y\nyield from z\n"),
            "<yield statement>\n<yield statement>\n<yield statement>\n");
  EXPECT_EQ(dump_module("match command.split():\n"
                        "    case [action, *rest] if action in ('go', 'run'):\n"
                        "        x = 1\n"
                        "    case {'k': v, **kw} | Point(x=0, y=0) as p:\n"
                        "        x = 2\n"
                        "    case _:\n"
                        "        pass\n"),
            "<match statement>\n  x = 1\n  x = 2\n  pass\n");
  EXPECT_EQ(dump_module("match w := x, *y,:\n    case _: pass\n"), "<match statement>\n  pass\n");
  // `match` stays an ordinary name elsewhere.
  EXPECT_EQ(dump_module("match = re.match(p, s)\nmatch(x)\nmatch: int = 1\n"),
            "match = (call re.match p s)\n(call match x)\nmatch: int = 1\n");
}

TEST(ParserStmt, UnsupportedCodeAroundAKernel) {
  std::string text =
      "import torch\n"
      "class Helper:\n"
      "    def __init__(self, **kw):\n"
      "        self.d = {k: v for k, v in kw.items()}\n"
      "        self.f = lambda x: x ** 2\n"
      "    async def run(self):\n"
      "        async with self.lock:\n"
      "            return [await t for t in self.tasks]\n"
      "def kernel(n):\n"
      "    with T.Kernel(n) as bx:\n"
      "        T.clear(x)\n";
  EXPECT_EQ(dump_module(text),
            "import torch as torch\n"
            "<class definition>\n"
            "  def __init__(self, *kw)\n"
            "    self.d = <dict comprehension>\n"
            "    self.f = (lambda (x) (** x 2))\n"
            "  <async function definition>\n"
            "    <async with statement>\n"
            "      return (listcomp <await> (for t self.tasks))\n"
            "def kernel(n)\n"
            "  with (call T.Kernel n) as bx\n"
            "    (call T.clear x)\n");
}

// ---- Locations ----

TEST(ParserLoc, NodesStartAtTheirFirstToken) {
  std::string text =
      "@T.prim_func\n"
      "def f(a, *b, c: int = 1):\n"
      "    x = (a + b) * c\n"
      "    y.z[i] = g(k=1, **d)\n"
      "    if p:\n"
      "        pass\n"
      "    elif q or r:\n"
      "        pass\n";
  ast::Module m = parse_text(text);
  EXPECT_EQ(m.file->name, "t.py");
  const Stmt& f = *m.body[0];
  EXPECT_EQ(f.loc.line, 2);  // at `def`, not at the decorator
  EXPECT_EQ(f.loc.col, 1);
  EXPECT_EQ(f.decorators[0]->loc.line, 1);
  EXPECT_EQ(f.decorators[0]->loc.col, 2);
  EXPECT_EQ(f.params[1].loc.col, 10);  // the '*' of *b
  EXPECT_EQ(f.params[2].loc.col, 14);
  EXPECT_EQ(f.params[2].annotation->loc.col, 17);

  const Stmt& assign = *f.body[0];
  EXPECT_EQ(assign.loc.line, 3);
  EXPECT_EQ(assign.loc.col, 5);
  const Expr& mul = *assign.value;
  EXPECT_EQ(mul.op, "*");
  EXPECT_EQ(mul.loc.col, 9);        // the '(' around the left operand
  EXPECT_EQ(mul.lhs->loc.col, 10);  // a parenthesized expression keeps its own start
  EXPECT_EQ(mul.lhs->rhs->loc.col, 14);
  EXPECT_EQ(mul.rhs->loc.col, 19);

  const Stmt& store = *f.body[1];
  EXPECT_EQ(store.loc.col, 5);
  EXPECT_EQ(store.targets[0]->loc.col, 5);         // y.z[i]
  EXPECT_EQ(store.targets[0]->value->loc.col, 5);  // y.z
  EXPECT_EQ(store.targets[0]->items[0]->loc.col, 9);
  const Expr& call = *store.value;
  EXPECT_EQ(call.loc.col, 14);
  EXPECT_EQ(call.keywords[0].loc.col, 16);
  EXPECT_EQ(call.keywords[0].value->loc.col, 18);
  EXPECT_EQ(call.keywords[1].loc.col, 21);

  const Stmt& if_stmt = *f.body[2];
  EXPECT_EQ(if_stmt.loc.line, 5);
  const Stmt& elif = *if_stmt.orelse[0];
  EXPECT_EQ(elif.kind, StmtKind::If);
  EXPECT_EQ(elif.loc.line, 7);
  EXPECT_EQ(elif.loc.col, 5);
  EXPECT_EQ(elif.value->loc.col, 10);  // the BoolOp starts at its first operand
  EXPECT_EQ(elif.value->items[1]->loc.col, 15);
}

TEST(ParserLoc, OperatorsPointAtTheExpressionStart) {
  ast::Module m = parse_text("z = -a ** 2 < f(b)[0] + c.d if e else g\n");
  const Expr& ifexp = *m.body[0]->value;
  EXPECT_EQ(ifexp.loc.col, 5);
  const Expr& cmp = *ifexp.lhs;
  EXPECT_EQ(cmp.kind, ExprKind::Compare);
  EXPECT_EQ(cmp.loc.col, 5);
  EXPECT_EQ(cmp.items[0]->loc.col, 5);         // the unary '-'
  EXPECT_EQ(cmp.items[0]->value->loc.col, 6);  // a ** 2
  const Expr& add = *cmp.items[1];
  EXPECT_EQ(add.loc.col, 15);
  EXPECT_EQ(add.lhs->loc.col, 15);  // f(b)[0]
  EXPECT_EQ(add.rhs->loc.col, 25);  // c.d
  EXPECT_EQ(ifexp.value->loc.col, 32);
  EXPECT_EQ(ifexp.rhs->loc.col, 39);
}

TEST(ParserLoc, TuplesSlicesAndStarred) {
  ast::Module m = parse_text("a, *b = x[1:2, :3], (c, d)\n");
  const Stmt& s = *m.body[0];
  EXPECT_EQ(s.targets[0]->loc.col, 1);
  EXPECT_EQ(s.targets[0]->items[1]->loc.col, 4);
  const Expr& value = *s.value;
  EXPECT_EQ(value.kind, ExprKind::Tuple);
  EXPECT_EQ(value.loc.col, 9);
  EXPECT_EQ(value.items[0]->items[0]->loc.col, 11);  // 1:2
  EXPECT_EQ(value.items[0]->items[1]->loc.col, 16);  // :3
  EXPECT_EQ(value.items[1]->loc.col, 21);            // the '(' of (c, d)
}

TEST(ParserLoc, UnsupportedExpressions) {
  ast::Module m = parse_text("f(lambda: 0, [x for x in y], {1: 2}, b'x')\ng(x for x in y)\n");
  const Expr& call = *m.body[0]->value;
  EXPECT_EQ(call.items[0]->loc.col, 3);
  EXPECT_EQ(call.items[1]->loc.col, 14);
  EXPECT_EQ(call.items[2]->loc.col, 30);
  EXPECT_EQ(call.items[3]->loc.col, 38);
  // A generator expression that is the only argument shares the call's parentheses.
  EXPECT_EQ(m.body[1]->value->items[0]->loc.col, 2);
}

TEST(ParserLoc, CutOutTextKeepsItsColumns) {
  std::string text =
      "    @T.prim_func\n"
      "    def kernel_func(x):\n"
      "        y = x\n";
  ast::Module m = parse_text(text);
  ASSERT_EQ(m.body.size(), 1u);
  EXPECT_EQ(m.body[0]->loc.line, 2);
  EXPECT_EQ(m.body[0]->loc.col, 5);
  EXPECT_EQ(m.body[0]->body[0]->loc.col, 9);
  EXPECT_EQ(m.body[0]->body[0]->value->loc.col, 13);
}

// ---- The seed kernels ----

const char* kSeedKernels =
    "import tilec as tilelang\n"
    "import tilec.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit\n"
    "def matmul_kernel(M, N, K):\n"
    "    A = T.Tensor[(M, K), \"float32\"]\n"
    "    B = T.Tensor[(K, N), \"float32\"]\n"
    "    C = T.Tensor[(M, N), \"float32\"]\n"
    "    with T.Kernel(T.ceildiv(M, 32), T.ceildiv(N, 32)) as (bx, by):\n"
    "        A_shared = T.alloc_shared((32, 32), \"float32\")\n"
    "        C_local = T.alloc_fragment((32, 32), \"float32\")\n"
    "        T.clear(C_local)\n"
    "        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=3):\n"
    "            T.copy(A[by*32, k*32], A_shared)\n"
    "            T.gemm(A_shared, B_shared, C_local)\n"
    "        T.copy(C_local, C[by*32, bx*32])\n"
    "\n"
    "@tilelang.jit\n"
    "def dsa_index_kernel(h: int, d: int):\n"
    "    b, m, n = T.symbolic(\"b\"), T.symbolic(\"m\"), T.symbolic(\"n\")\n"
    "    @T.prim_func\n"
    "    def kernel_func(\n"
    "        q: T.Tensor[(b, m, h, d), \"float16\"],\n"
    "        k: T.Tensor[(b, n, d), \"float16\"],\n"
    "        scores: T.Tensor[(b, m, n), \"float32\"]\n"
    "    ):\n"
    "        with T.Kernel(b, m) as (i_b, i_m):\n"
    "            q_frag = T.alloc_fragment((h, d), \"float16\")\n"
    "            for i_n in T.Pipelined(n):\n"
    "                T.copy(k[i_b, i_n, 0], k_frag)\n"
    "                scores[i_b, i_m, i_n] = score_frag[0]\n";

TEST(ParserSeed, BothKernelsParse) {
  EXPECT_EQ(
      dump_module(kSeedKernels),
      "import tilec as tilelang\n"
      "import tilec.language as T\n"
      "@tilelang.jit\n"
      "def matmul_kernel(M, N, K)\n"
      "  A = T.Tensor[(tuple M K), \"float32\"]\n"
      "  B = T.Tensor[(tuple K N), \"float32\"]\n"
      "  C = T.Tensor[(tuple M N), \"float32\"]\n"
      "  with (call T.Kernel (call T.ceildiv M 32) (call T.ceildiv N 32)) as (tuple bx by)\n"
      "    A_shared = (call T.alloc_shared (tuple 32 32) \"float32\")\n"
      "    C_local = (call T.alloc_fragment (tuple 32 32) \"float32\")\n"
      "    (call T.clear C_local)\n"
      "    for k in (call T.Pipelined (call T.ceildiv K 32) num_stages=3)\n"
      "      (call T.copy A[(* by 32), (* k 32)] A_shared)\n"
      "      (call T.gemm A_shared B_shared C_local)\n"
      "    (call T.copy C_local C[(* by 32), (* bx 32)])\n"
      "@tilelang.jit\n"
      "def dsa_index_kernel(h: int, d: int)\n"
      "  (tuple b m n) = (tuple (call T.symbolic \"b\") (call T.symbolic \"m\") "
      "(call T.symbolic \"n\"))\n"
      "  @T.prim_func\n"
      "  def kernel_func(q: T.Tensor[(tuple b m h d), \"float16\"], "
      "k: T.Tensor[(tuple b n d), \"float16\"], scores: T.Tensor[(tuple b m n), \"float32\"])\n"
      "    with (call T.Kernel b m) as (tuple i_b i_m)\n"
      "      q_frag = (call T.alloc_fragment (tuple h d) \"float16\")\n"
      "      for i_n in (call T.Pipelined n)\n"
      "        (call T.copy k[i_b, i_n, 0] k_frag)\n"
      "        scores[i_b, i_m, i_n] = score_frag[0]\n");
}

TEST(ParserSeed, SeedLocations) {
  ast::Module m = parse_text(kSeedKernels);
  ASSERT_EQ(m.body.size(), 4u);
  const Stmt& dsa = *m.body[3];
  EXPECT_EQ(dsa.loc.line, 20);
  const Stmt& inner = *dsa.body[1];
  EXPECT_EQ(inner.name, "kernel_func");
  EXPECT_EQ(inner.loc.line, 23);
  EXPECT_EQ(inner.loc.col, 5);
  EXPECT_EQ(inner.params[2].loc.line, 26);
  EXPECT_EQ(inner.params[2].loc.col, 9);
  const Stmt& store = *inner.body[0]->body[1]->body[1];
  EXPECT_EQ(store.kind, StmtKind::Assign);
  EXPECT_EQ(store.loc.line, 32);
  EXPECT_EQ(store.loc.col, 17);
}

TEST(ParserSeed, NestedFunctionCutOut) {
  std::string text =
      "    @T.prim_func\n"
      "    def kernel_func(\n"
      "        q: T.Tensor[(b, m, h, d), \"float16\"],\n"
      "        k: T.Tensor[(b, n, d), \"float16\"],\n"
      "        scores: T.Tensor[(b, m, n), \"float32\"]\n"
      "    ):\n"
      "        with T.Kernel(b, m) as (i_b, i_m):\n"
      "            q_frag = T.alloc_fragment((h, d), \"float16\")\n"
      "            for i_n in T.Pipelined(n):\n"
      "                T.copy(k[i_b, i_n, 0], k_frag)\n"
      "                scores[i_b, i_m, i_n] = score_frag[0]\n";
  EXPECT_EQ(
      dump_module(text),
      "@T.prim_func\n"
      "def kernel_func(q: T.Tensor[(tuple b m h d), \"float16\"], "
      "k: T.Tensor[(tuple b n d), \"float16\"], scores: T.Tensor[(tuple b m n), \"float32\"])\n"
      "  with (call T.Kernel b m) as (tuple i_b i_m)\n"
      "    q_frag = (call T.alloc_fragment (tuple h d) \"float16\")\n"
      "    for i_n in (call T.Pipelined n)\n"
      "      (call T.copy k[i_b, i_n, 0] k_frag)\n"
      "      scores[i_b, i_m, i_n] = score_frag[0]\n");
  // Errors in cut-out text are reported at the lines of the original file.
  auto file = std::make_shared<SourceFile>();
  file->name = "dsa.py";
  file->text = text + "                x = (1 +)\n";
  file->first_line = 22;
  try {
    parse(file);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dsa.py:33:25: error: invalid syntax: unexpected token ')'\n"
              "                    x = (1 +)\n"
              "                            ^");
  }
}

// ---- Errors ----

TEST(ParserError, FullTextOfAnError) {
  EXPECT_EQ(parse_error("for i in range(3):\n    x = f(1, 2))\n"),
            "t.py:2:16: error: unmatched ')'\n"
            "        x = f(1, 2))\n"
            "                   ^");
  EXPECT_EQ(parse_error("if x\n    y = 1\n"),
            "t.py:1:5: error: expected ':' after 'if' condition\n"
            "    if x\n"
            "        ^");
}

TEST(ParserError, Indentation) {
  EXPECT_PARSE_ERROR("x = 1\n    y = 2\n", 2, 5, "unexpected indent");
  EXPECT_PARSE_ERROR("if x:\n    y = 1\n        z = 2\n", 3, 9, "unexpected indent");
  EXPECT_PARSE_ERROR("@d\n    def f(): pass\n", 2, 5, "unexpected indent");
  EXPECT_PARSE_ERROR("if x:\n        y = 1\n    z = 2\n", 3, 5,
                     "unindent does not match any outer indentation level");
  EXPECT_PARSE_ERROR("    x = 1\ny = 2\n", 2, 1,
                     "line is indented less than the first line of the code");
}

TEST(ParserError, MissingIndentedBlock) {
  struct Case {
    const char* text;
    int line, col;
    const char* after;
  };
  const Case cases[] = {
      {"if x:\ny = 1\n", 2, 1, "'if'"},
      {"if x:\n    pass\nelif y:\nz\n", 4, 1, "'elif'"},
      {"if x: pass\nelse:\nz\n", 3, 1, "'else'"},
      {"for i in x:\ny = 1\n", 2, 1, "'for'"},
      {"while x:\ny = 1\n", 2, 1, "'while'"},
      {"with x:\ny = 1\n", 2, 1, "'with'"},
      {"def f():\nreturn 1\n", 2, 1, "'def'"},
      {"class A:\nx = 1\n", 2, 1, "'class'"},
      {"try:\nx = 1\n", 2, 1, "'try'"},
      {"try: pass\nexcept E:\nx\n", 3, 1, "'except'"},
      {"try: pass\nfinally:\nx\n", 3, 1, "'finally'"},
      {"match x:\ncase 1: pass\n", 2, 1, "'match'"},
      {"match x:\n    case 1:\n    case 2: pass\n", 3, 5, "'case'"},
  };
  for (const Case& c : cases)
    EXPECT_PARSE_ERROR(c.text, c.line, c.col,
                       std::string("expected an indented block after ") + c.after);
  // At the end of the text, the caret is after the header.
  EXPECT_PARSE_ERROR("for i in x:\n", 1, 12, "expected an indented block after 'for'");
}

TEST(ParserError, CompoundStatementHeaders) {
  EXPECT_PARSE_ERROR("if x y:\n    pass\n", 1, 6, "expected ':' after 'if' condition");
  EXPECT_PARSE_ERROR("if x: pass\nelif y\n", 2, 7, "expected ':' after 'elif' condition");
  EXPECT_PARSE_ERROR("if x: pass\nelse pass\n", 2, 6, "expected ':' after 'else'");
  EXPECT_PARSE_ERROR("while x\n", 1, 8, "expected ':' after 'while' condition");
  EXPECT_PARSE_ERROR("for i range(3):\n", 1, 7, "expected 'in' after 'for' target");
  EXPECT_PARSE_ERROR("for i in range(3)\n", 1, 18, "expected ':' after 'for' iterable");
  EXPECT_PARSE_ERROR("with a as b c:\n", 1, 13, "expected ':' after 'with' items");
  EXPECT_PARSE_ERROR("with (a as b c):\n", 1, 14, "expected ',' or ')' after 'with' item");
  EXPECT_PARSE_ERROR("for i in x: pass\nelse pass\n", 2, 6, "expected ':' after 'else'");
}

TEST(Parser, LoopElseIsParsedAsUnsupported) {
  for (const char* text : {"for i in x:\n    a = 1\nelse:\n    b = 2\n",
                           "while x:\n    a = 1\nelse:\n    b = 2\n"}) {
    auto file = std::make_shared<SourceFile>();
    file->name = "t.py";
    file->text = text;
    ast::Module m = frontend::parse(file);
    ASSERT_EQ(m.body.size(), 1u);
    const ast::Stmt& s = *m.body[0];
    EXPECT_EQ(s.kind, ast::StmtKind::Unsupported);
    EXPECT_EQ(s.loc.line, 3);
    EXPECT_EQ(s.loc.col, 1);
    EXPECT_EQ(s.body.size(), 2u);  // both blocks' statements
    EXPECT_NE(s.name.find("'else' after a"), std::string::npos);
  }
}

TEST(ParserError, FunctionDefinitions) {
  EXPECT_PARSE_ERROR("def (x): pass\n", 1, 5, "expected function name after 'def'");
  EXPECT_PARSE_ERROR("def if(): pass\n", 1, 5, "expected function name after 'def'");
  EXPECT_PARSE_ERROR("def f: pass\n", 1, 6, "expected '(' after function name");
  EXPECT_PARSE_ERROR("def f()\n", 1, 8, "expected ':' after function signature");
  EXPECT_PARSE_ERROR("def f() -> int pass\n", 1, 16, "expected ':' after function signature");
  EXPECT_PARSE_ERROR("def f(a b): pass\n", 1, 9, "expected ',' or ')' after parameter");
  EXPECT_PARSE_ERROR("def f(1): pass\n", 1, 7, "expected parameter name");
  EXPECT_PARSE_ERROR("def f(a, a): pass\n", 1, 10, "duplicate argument 'a' in function definition");
  EXPECT_PARSE_ERROR("def f(a=1, b): pass\n", 1, 12,
                     "parameter without a default follows parameter with a default");
  EXPECT_PARSE_ERROR("def f(a, *): pass\n", 1, 10, "named arguments must follow bare *");
  EXPECT_PARSE_ERROR("def f(*, **k): pass\n", 1, 7, "named arguments must follow bare *");
  EXPECT_PARSE_ERROR("def f(*a, *b): pass\n", 1, 11, "* argument may appear only once");
  EXPECT_PARSE_ERROR("def f(*a, *, b): pass\n", 1, 11, "* argument may appear only once");
  EXPECT_PARSE_ERROR("def f(a, /, b, /): pass\n", 1, 16, "/ may appear only once");
  EXPECT_PARSE_ERROR("def f(*, a, /): pass\n", 1, 13, "/ must be ahead of *");
  EXPECT_PARSE_ERROR("def f(/, a): pass\n", 1, 7, "at least one argument must precede /");
  EXPECT_PARSE_ERROR("def f(**k, a): pass\n", 1, 12,
                     "arguments cannot follow var-keyword argument");
  EXPECT_PARSE_ERROR("def f(*a=1): pass\n", 1, 9,
                     "var-positional or var-keyword parameter cannot have a default value");
  EXPECT_PARSE_ERROR("f = lambda a b: a\n", 1, 14, "expected ',' or ':' after lambda parameter");
  EXPECT_PARSE_ERROR("f = lambda a: int: a\n", 1, 18, "invalid syntax: unexpected token ':'");
  EXPECT_PARSE_ERROR("@d\nx = 1\n", 2, 1,
                     "expected a function or class definition after decorator");
  EXPECT_PARSE_ERROR("@d x\ndef f(): pass\n", 1, 4, "invalid syntax: unexpected token 'x'");
}

TEST(ParserError, OtherCompoundStatements) {
  EXPECT_PARSE_ERROR("class (A): pass\n", 1, 7, "expected class name after 'class'");
  EXPECT_PARSE_ERROR("class A(B) pass\n", 1, 12, "expected ':' after class header");
  EXPECT_PARSE_ERROR("try pass\n", 1, 5, "expected ':' after 'try'");
  EXPECT_PARSE_ERROR("try: pass\nx = 1\n", 2, 1, "expected 'except' or 'finally' block");
  EXPECT_PARSE_ERROR("try: pass\nexcept E e: pass\n", 2, 10, "expected ':' after 'except' clause");
  EXPECT_PARSE_ERROR("try: pass\nexcept E as: pass\n", 2, 12, "expected name after 'as'");
  EXPECT_PARSE_ERROR("try: pass\nfinally pass\n", 2, 9, "expected ':' after 'finally'");
  EXPECT_PARSE_ERROR("async x = 1\n", 1, 7, "expected 'def', 'for' or 'with' after 'async'");
  EXPECT_PARSE_ERROR("match a b:\n    case 1: pass\n", 1, 9, "expected ':' after 'match' subject");
  EXPECT_PARSE_ERROR("match a:\n    x = 1\n", 2, 5, "expected 'case' in 'match' block");
  EXPECT_PARSE_ERROR("match a:\n    case: pass\n", 2, 9, "expected a pattern after 'case'");
  EXPECT_PARSE_ERROR("match a:\n    case (1,\n 2)\n", 3, 4, "expected ':' after 'case' pattern");
  EXPECT_PARSE_ERROR("match a:\n    case 1 if x y: pass\n", 2, 17,
                     "expected ':' after 'case' pattern");
}

TEST(ParserError, ImportsAndSimpleStatements) {
  EXPECT_PARSE_ERROR("import\n", 1, 7, "expected module name after 'import'");
  EXPECT_PARSE_ERROR("import a.\n", 1, 10, "expected name after '.'");
  EXPECT_PARSE_ERROR("import a as\n", 1, 12, "expected name after 'as'");
  EXPECT_PARSE_ERROR("from import a\n", 1, 6, "expected module name after 'from'");
  EXPECT_PARSE_ERROR("from a b\n", 1, 8, "expected 'import' after module name");
  EXPECT_PARSE_ERROR("from a import\n", 1, 14, "expected name to import");
  EXPECT_PARSE_ERROR("from a import b,\n", 1, 17, "expected name to import");
  EXPECT_PARSE_ERROR("from a import (b c)\n", 1, 18, "expected ',' or ')' after imported name");
  EXPECT_PARSE_ERROR("global 1\n", 1, 8, "expected name after 'global'");
  EXPECT_PARSE_ERROR("nonlocal a,\n", 1, 12, "expected name after 'nonlocal'");
  EXPECT_PARSE_ERROR("x = 1 2\n", 1, 7, "invalid syntax: unexpected token '2'");
  EXPECT_PARSE_ERROR("print 'hello'\n", 1, 7, "invalid syntax: unexpected token ''hello''");
  EXPECT_PARSE_ERROR("x = 1; if x: pass\n", 1, 8, "invalid syntax: unexpected token 'if'");
  EXPECT_PARSE_ERROR("x = if\n", 1, 5, "invalid syntax: unexpected token 'if'");
  EXPECT_PARSE_ERROR("x := 1\n", 1, 3, "invalid syntax: unexpected token ':='");
  EXPECT_PARSE_ERROR("x = \n", 1, 4, "expected an expression");
  EXPECT_PARSE_ERROR("x = 1 +\ny = 2\n", 1, 8, "expected an expression");
  EXPECT_PARSE_ERROR("return ,\n", 1, 8, "invalid syntax: unexpected token ','");
}

TEST(ParserError, AssignmentTargets) {
  EXPECT_PARSE_ERROR("f(x) = 1\n", 1, 1, "cannot assign to function call");
  EXPECT_PARSE_ERROR("a, f() = 1, 2\n", 1, 4, "cannot assign to function call");
  EXPECT_PARSE_ERROR("x = f() = 1\n", 1, 5, "cannot assign to function call");
  EXPECT_PARSE_ERROR("1 = x\n", 1, 1, "cannot assign to literal");
  EXPECT_PARSE_ERROR("'a' = x\n", 1, 1, "cannot assign to literal");
  EXPECT_PARSE_ERROR("True = x\n", 1, 1, "cannot assign to True");
  EXPECT_PARSE_ERROR("None = x\n", 1, 1, "cannot assign to None");
  EXPECT_PARSE_ERROR("a + b = x\n", 1, 1, "cannot assign to expression");
  EXPECT_PARSE_ERROR("-a = x\n", 1, 1, "cannot assign to expression");
  EXPECT_PARSE_ERROR("a < b = x\n", 1, 1, "cannot assign to comparison");
  EXPECT_PARSE_ERROR("a if b else c = x\n", 1, 1, "cannot assign to conditional expression");
  EXPECT_PARSE_ERROR("[x for x in y] = z\n", 1, 1, "cannot assign to list comprehension");
  EXPECT_PARSE_ERROR("(x for x in y) = z\n", 1, 1, "cannot assign to generator expression");
  EXPECT_PARSE_ERROR("(lambda i: i) = z\n", 1, 2, "cannot assign to lambda");
  EXPECT_PARSE_ERROR("{1: 2} = z\n", 1, 1, "cannot assign to dict literal");
  EXPECT_PARSE_ERROR("f(x for x in y, 1)\n", 1, 3, "generator expression must be parenthesized");
  EXPECT_PARSE_ERROR("*a = b\n", 1, 1, "starred assignment target must be in a list or tuple");
  EXPECT_PARSE_ERROR("for f() in x: pass\n", 1, 5, "cannot assign to function call");
  EXPECT_PARSE_ERROR("for *a in x: pass\n", 1, 5,
                     "starred assignment target must be in a list or tuple");
  EXPECT_PARSE_ERROR("with a as f(): pass\n", 1, 11, "cannot assign to function call");
  EXPECT_PARSE_ERROR("[x for 1 in y]\n", 1, 8, "cannot assign to literal");
  EXPECT_PARSE_ERROR("del f()\n", 1, 5, "cannot delete function call");
  EXPECT_PARSE_ERROR("del a, *b\n", 1, 8, "cannot delete starred");
  EXPECT_PARSE_ERROR("a, b: int = 1\n", 1, 1, "only single target (not tuple) can be annotated");
  EXPECT_PARSE_ERROR("[a]: int = 1\n", 1, 1, "only single target (not list) can be annotated");
  EXPECT_PARSE_ERROR("f(): int = 1\n", 1, 1, "illegal target for annotation");
  EXPECT_PARSE_ERROR("a, b += 1\n", 1, 1,
                     "'tuple' is an illegal expression for augmented assignment");
  EXPECT_PARSE_ERROR("f() += 1\n", 1, 1,
                     "'function call' is an illegal expression for augmented assignment");
  EXPECT_PARSE_ERROR("(a.b := 1)\n", 1, 2, "cannot use assignment expressions with attribute");
  EXPECT_PARSE_ERROR("x = *a\n", 1, 5, "cannot use starred expression here");
  EXPECT_PARSE_ERROR("return *a\n", 1, 8, "cannot use starred expression here");
  EXPECT_PARSE_ERROR("print((*a))\n", 1, 8, "cannot use starred expression here");
  EXPECT_PARSE_ERROR("x += *a\n", 1, 6, "cannot use starred expression here");
}

TEST(ParserError, Expressions) {
  EXPECT_PARSE_ERROR("x = a if b\n", 1, 11, "expected 'else' after 'if' expression");
  EXPECT_PARSE_ERROR("x = a.1\n", 1, 6, "invalid syntax: unexpected token '.1'");
  EXPECT_PARSE_ERROR("x = a.if\n", 1, 7, "expected attribute name after '.'");
  EXPECT_PARSE_ERROR("f(**a, *b)\n", 1, 8,
                     "iterable argument unpacking follows keyword argument unpacking");
  EXPECT_PARSE_ERROR("f(a=1, a=2)\n", 1, 8, "keyword argument repeated: a");
  EXPECT_PARSE_ERROR("f(a.b=1)\n", 1, 3, "expected a name before '=' in keyword argument");
  EXPECT_PARSE_ERROR("f(x for x in y, 1)\n", 1, 3, "generator expression must be parenthesized");
  EXPECT_PARSE_ERROR("f(1, x for x in y)\n", 1, 6, "generator expression must be parenthesized");
  EXPECT_PARSE_ERROR("f(**a, b)\n", 1, 8, "positional argument follows keyword argument unpacking");
  EXPECT_PARSE_ERROR("f(a=1, b)\n", 1, 8, "positional argument follows keyword argument");
  EXPECT_PARSE_ERROR("f(a b)\n", 1, 5, "expected ',' or ')' after argument");
  EXPECT_PARSE_ERROR("x[a b]\n", 1, 5, "expected ',' or ']' after index");
  EXPECT_PARSE_ERROR("x[]\n", 1, 3, "invalid syntax: unexpected token ']'");
  EXPECT_PARSE_ERROR("x = 'a' b'c'\n", 1, 5, "cannot mix bytes and nonbytes literals");
  EXPECT_PARSE_ERROR("(yield x y)\n", 1, 10, "expected ')' after yield expression");
  EXPECT_PARSE_ERROR("(x for x in y z)\n", 1, 15, "expected ')' after generator expression");
  EXPECT_PARSE_ERROR("(a b)\n", 1, 4, "expected ',' or ')'");
  EXPECT_PARSE_ERROR("(a, b c)\n", 1, 7, "expected ',' or ')'");
  EXPECT_PARSE_ERROR("[x for x in y z]\n", 1, 15, "expected ']' after list comprehension");
  EXPECT_PARSE_ERROR("[a b]\n", 1, 4, "expected ',' or ']'");
  EXPECT_PARSE_ERROR("{'a': 1, 'b'}\n", 1, 13, "expected ':' after dict key");
  EXPECT_PARSE_ERROR("{x for x in y z}\n", 1, 15, "expected '}' after comprehension");
  EXPECT_PARSE_ERROR("{a b}\n", 1, 4, "expected ',' or '}'");
  EXPECT_PARSE_ERROR("[x for x y]\n", 1, 10, "expected 'in' after comprehension target");
  EXPECT_PARSE_ERROR("x = (1,\n     2\n", 1, 5, "'(' was never closed");
  EXPECT_PARSE_ERROR("x = 'abc\n", 1, 5, "unterminated string literal");
}

std::string power_chain(int operators) {
  std::string text = "x = 1";
  for (int i = 0; i < operators; ++i) text += " ** 1";
  return text + "\n";
}

TEST(ParserError, PowerChainsAreDepthLimited) {
  // ** nests to the right; a chain of 14000 overflowed the stack.
  const std::string message = "expression nested too deeply (more than 500 levels of operators and brackets)";
  // One level is the expression itself: the 500th ** is one too many, at column 7 + 5 * 499.
  EXPECT_PARSE_ERROR(power_chain(14000), 1, 7 + 5 * 499, message);
  EXPECT_PARSE_ERROR(power_chain(500), 1, 7 + 5 * 499, message);
  EXPECT_EQ(expr("1 ** 2 ** 3"), "(** 1 (** 2 3))");
  parse_text(power_chain(499));
}

}  // namespace
}  // namespace tilec::frontend
