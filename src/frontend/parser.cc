#include "frontend/parser.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>

#include "base/stack_guard.h"
#include "frontend/lexer.h"
#include "frontend/limits.h"

namespace tilec::frontend {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::ExprPtr;
using ast::Stmt;
using ast::StmtKind;
using ast::StmtList;
using ast::StmtPtr;

ExprPtr make_expr(ExprKind kind, const SourceLoc& loc) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->loc = loc;
  return e;
}

ExprPtr unsupported_expr(const SourceLoc& loc, const std::string& what) {
  ExprPtr e = make_expr(ExprKind::Unsupported, loc);
  e->id = what;
  return e;
}

StmtPtr make_stmt(StmtKind kind, const SourceLoc& loc) {
  auto s = std::make_unique<Stmt>();
  s->kind = kind;
  s->loc = loc;
  return s;
}

StmtPtr unsupported_stmt(const SourceLoc& loc, const std::string& what, StmtList body = {}) {
  StmtPtr s = make_stmt(StmtKind::Unsupported, loc);
  s->name = what;
  s->body = std::move(body);
  return s;
}

void append(StmtList& to, StmtList from) {
  for (StmtPtr& s : from) to.push_back(std::move(s));
}

// How an expression is named in "cannot assign to ..." errors.
std::string describe(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Call: return "function call";
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::String: return "literal";
    case ExprKind::Bool: return e.bool_value ? "True" : "False";
    case ExprKind::NoneLit: return "None";
    case ExprKind::Compare: return "comparison";
    case ExprKind::IfExp: return "conditional expression";
    case ExprKind::Tuple: return "tuple";
    case ExprKind::List: return "list";
    case ExprKind::Starred: return "starred";
    case ExprKind::Attribute: return "attribute";
    case ExprKind::Subscript: return "subscript";
    case ExprKind::Comprehension: return e.id == "list" ? "list comprehension" : "generator expression";
    case ExprKind::Lambda: return "lambda";
    case ExprKind::Dict: return "dict literal";
    case ExprKind::Unsupported: return e.id;
    case ExprKind::Name:
    case ExprKind::Slice:
    case ExprKind::BinOp:
    case ExprKind::UnaryOp:
    case ExprKind::BoolOp: break;
  }
  return "expression";
}

// Binary operator precedence levels, loosest first; all left-associative.
const std::vector<std::vector<std::string_view>> kBinaryLevels = {
    {"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}};

const std::set<std::string_view> kAugAssignOps = {
    "+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>=", "@="};

class Parser {
 public:
  explicit Parser(SourceFilePtr file) : file_(std::move(file)), tokens_(tokenize(file_)) {}

  // Counts one level of the expression tree being built, for as long as it lives.
  class Depth {
   public:
    Depth(Parser& parser, const SourceLoc& loc, int levels = 1) : parser_(parser) { add(loc, levels); }
    ~Depth() { parser_.depth_ -= levels_; }
    void add(const SourceLoc& loc, int levels = 1) {
      check_stack(loc);
      levels_ += levels;
      parser_.depth_ += levels;
      if (parser_.depth_ > kMaxExpressionDepth)
        error_at(loc, "expression nested too deeply (more than " +
                          std::to_string(kMaxExpressionDepth) + " levels of operators and brackets)");
    }

   private:
    Parser& parser_;
    int levels_ = 0;
  };

  ast::Module parse_module() {
    ast::Module module{file_, {}};
    while (peek().kind != TokenKind::End) parse_statement(module.body);
    return module;
  }

 private:
  // Tokens.
  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (t.kind != TokenKind::End) ++pos_;
    return t;
  }
  bool at_op(std::string_view op, size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == TokenKind::Op && t.text == op;
  }
  bool at_keyword(std::string_view keyword, size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == TokenKind::Keyword && t.text == keyword;
  }
  bool accept_op(std::string_view op) {
    if (!at_op(op)) return false;
    next();
    return true;
  }
  bool accept_keyword(std::string_view keyword) {
    if (!at_keyword(keyword)) return false;
    next();
    return true;
  }
  const Token& expect_op(std::string_view op, const std::string& message) {
    if (!at_op(op)) error_at(peek().loc, message);
    return next();
  }
  void expect_keyword(std::string_view keyword, const std::string& message) {
    if (!accept_keyword(keyword)) error_at(peek().loc, message);
  }
  const Token& expect_name(const std::string& message) {
    if (peek().kind != TokenKind::Name) error_at(peek().loc, message);
    return next();
  }
  [[noreturn]] void unexpected(const Token& t) const {
    if (t.kind == TokenKind::Indent) error_at(t.loc, "unexpected indent");
    error_at(t.loc, "invalid syntax: unexpected token '" + t.text + "'");
  }
  bool at_comprehension_for() const {
    return at_keyword("for") || (at_keyword("async") && at_keyword("for", 1));
  }
  // Whether the next token can begin an expression.
  bool at_expression_start() const {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::Name:
      case TokenKind::Int:
      case TokenKind::Float:
      case TokenKind::Imaginary:
      case TokenKind::String: return true;
      case TokenKind::Keyword:
        return t.text == "True" || t.text == "False" || t.text == "None" || t.text == "not" ||
               t.text == "lambda" || t.text == "await";
      case TokenKind::Op:
        return t.text == "(" || t.text == "[" || t.text == "{" || t.text == "-" || t.text == "+" ||
               t.text == "~" || t.text == "..." || t.text == "*";
      default: return false;
    }
  }

  // Statements.
  void parse_statement(StmtList& out);
  StmtList parse_block(const std::string& after);
  void parse_simple_statements(StmtList& out);
  StmtPtr parse_simple_statement();
  StmtPtr parse_expression_statement();
  StmtPtr parse_if();
  StmtPtr parse_for();
  StmtPtr parse_while();
  StmtPtr loop_else(StmtPtr loop, const std::string& what);
  StmtPtr parse_with();
  bool at_parenthesized_with_items() const;
  ast::WithItem parse_with_item();
  StmtPtr parse_decorated();
  StmtPtr parse_def(std::vector<ExprPtr> decorators);
  std::vector<ast::Param> parse_params(std::string_view closer, bool annotations);
  StmtPtr parse_class();
  StmtPtr parse_try();
  StmtPtr parse_async();
  bool at_match_statement() const;
  StmtPtr parse_match();
  StmtPtr parse_import();
  StmtPtr parse_from_import();
  std::string parse_dotted_name(const std::string& message);
  StmtPtr parse_global();
  StmtPtr parse_assert();
  StmtPtr parse_return();
  StmtPtr parse_del();
  StmtPtr parse_raise();

  void check_target(const Expr& e, const std::string& verb) const;
  void check_assign_target(const Expr& e) const;
  ExprPtr checked_value(ExprPtr e) const;

  // Expressions, loosest binding first.
  ExprPtr parse_star_expressions();
  ExprPtr parse_star_expression();
  ExprPtr parse_star_named_expression();
  ExprPtr parse_named_expression();
  ExprPtr parse_yield();
  ExprPtr parse_expression();
  ExprPtr parse_lambda();
  ExprPtr parse_disjunction();
  ExprPtr parse_conjunction();
  ExprPtr parse_inversion();
  ExprPtr parse_comparison();
  std::string take_comparison_op();
  ExprPtr parse_binary(size_t level);
  ExprPtr parse_bitor() { return parse_binary(0); }
  ExprPtr parse_factor();
  ExprPtr parse_power();
  ExprPtr parse_primary();
  ExprPtr parse_call(const SourceLoc& loc, ExprPtr callee);
  ExprPtr parse_subscript(const SourceLoc& loc, ExprPtr value);
  ExprPtr parse_slice_item();
  ExprPtr parse_atom();
  ExprPtr parse_strings();
  ExprPtr parse_parenthesized();
  ExprPtr parse_list();
  ExprPtr parse_brace();
  // The clauses of a comprehension whose element `value` starts at `loc`; `kind` is "list"
  // or "generator". An `async for` makes it Unsupported.
  ExprPtr parse_comprehension(const SourceLoc& loc, ExprPtr value, const std::string& kind);
  ExprPtr parse_target_list();
  ExprPtr parse_target_item();

  int depth_ = 0;
  SourceFilePtr file_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

// ---- Statements ----

void Parser::parse_statement(StmtList& out) {
  const Token& t = peek();
  if (t.kind == TokenKind::Indent) unexpected(t);
  if (at_op("@")) {
    out.push_back(parse_decorated());
    return;
  }
  if (t.kind == TokenKind::Keyword) {
    StmtPtr s;
    if (t.text == "if") s = parse_if();
    else if (t.text == "for") s = parse_for();
    else if (t.text == "while") s = parse_while();
    else if (t.text == "with") s = parse_with();
    else if (t.text == "def") s = parse_def({});
    else if (t.text == "class") s = parse_class();
    else if (t.text == "try") s = parse_try();
    else if (t.text == "async") s = parse_async();
    if (s) {
      out.push_back(std::move(s));
      return;
    }
  }
  if (at_match_statement()) {
    out.push_back(parse_match());
    return;
  }
  parse_simple_statements(out);
}

// The body of a compound statement, after its ':'. `after` names the statement.
StmtList Parser::parse_block(const std::string& after) {
  StmtList body;
  if (peek().kind != TokenKind::Newline) {
    parse_simple_statements(body);
    return body;
  }
  next();
  if (peek().kind != TokenKind::Indent)
    error_at(peek().loc, "expected an indented block after " + after);
  next();
  while (peek().kind != TokenKind::Dedent && peek().kind != TokenKind::End) parse_statement(body);
  if (peek().kind == TokenKind::Dedent) next();
  return body;
}

void Parser::parse_simple_statements(StmtList& out) {
  do {
    out.push_back(parse_simple_statement());
  } while (accept_op(";") && peek().kind != TokenKind::Newline);
  if (peek().kind != TokenKind::Newline) unexpected(peek());
  next();
}

StmtPtr Parser::parse_simple_statement() {
  const Token& t = peek();
  if (t.kind == TokenKind::Keyword) {
    if (t.text == "pass" || t.text == "break" || t.text == "continue") {
      next();
      return make_stmt(t.text == "pass"    ? StmtKind::Pass
                       : t.text == "break" ? StmtKind::Break
                                           : StmtKind::Continue,
                       t.loc);
    }
    if (t.text == "return") return parse_return();
    if (t.text == "import") return parse_import();
    if (t.text == "from") return parse_from_import();
    if (t.text == "global" || t.text == "nonlocal") return parse_global();
    if (t.text == "assert") return parse_assert();
    if (t.text == "del") return parse_del();
    if (t.text == "raise") return parse_raise();
    if (t.text == "yield") {
      parse_yield();
      return unsupported_stmt(t.loc, "yield statement");
    }
  }
  return parse_expression_statement();
}

// Expression statements and assignments of all three kinds.
StmtPtr Parser::parse_expression_statement() {
  SourceLoc loc = peek().loc;
  ExprPtr first = parse_star_expressions();
  auto value = [this] {
    return checked_value(at_keyword("yield") ? parse_yield() : parse_star_expressions());
  };

  if (accept_op(":")) {
    if (first->kind == ExprKind::Tuple || first->kind == ExprKind::List)
      error_at(first->loc, "only single target (not " + describe(*first) + ") can be annotated");
    if (first->kind != ExprKind::Name && first->kind != ExprKind::Attribute &&
        first->kind != ExprKind::Subscript)
      error_at(first->loc, "illegal target for annotation");
    StmtPtr s = make_stmt(StmtKind::AnnAssign, loc);
    s->targets.push_back(std::move(first));
    s->annotation = parse_expression();
    if (accept_op("=")) s->value = value();
    return s;
  }
  if (peek().kind == TokenKind::Op && kAugAssignOps.count(peek().text)) {
    if (first->kind != ExprKind::Name && first->kind != ExprKind::Attribute &&
        first->kind != ExprKind::Subscript)
      error_at(first->loc,
               "'" + describe(*first) + "' is an illegal expression for augmented assignment");
    StmtPtr s = make_stmt(StmtKind::AugAssign, loc);
    s->op = next().text;
    s->op.pop_back();
    s->targets.push_back(std::move(first));
    s->value = value();
    return s;
  }
  if (at_op("=")) {
    StmtPtr s = make_stmt(StmtKind::Assign, loc);
    while (accept_op("=")) {
      check_assign_target(*first);
      s->targets.push_back(std::move(first));
      first = at_keyword("yield") ? parse_yield() : parse_star_expressions();
    }
    s->value = checked_value(std::move(first));
    return s;
  }
  StmtPtr s = make_stmt(StmtKind::ExprStmt, loc);
  s->value = checked_value(std::move(first));
  return s;
}

void Parser::check_target(const Expr& e, const std::string& verb) const {
  switch (e.kind) {
    case ExprKind::Name:
    case ExprKind::Attribute:
    case ExprKind::Subscript: return;
    case ExprKind::Tuple:
    case ExprKind::List:
      for (const ExprPtr& item : e.items) check_target(*item, verb);
      return;
    case ExprKind::Starred:
      if (verb == "delete") break;
      check_target(*e.value, verb);
      return;
    default: break;
  }
  error_at(e.loc, "cannot " + verb + " " + describe(e));
}

void Parser::check_assign_target(const Expr& e) const {
  if (e.kind == ExprKind::Starred)
    error_at(e.loc, "starred assignment target must be in a list or tuple");
  check_target(e, "assign to");
}

// A value where Python forbids a lone starred expression.
ExprPtr Parser::checked_value(ExprPtr e) const {
  if (e->kind == ExprKind::Starred) error_at(e->loc, "cannot use starred expression here");
  return e;
}

StmtPtr Parser::parse_if() {
  const Token& keyword = next();  // `if` or `elif`
  StmtPtr s = make_stmt(StmtKind::If, keyword.loc);
  s->value = parse_named_expression();
  expect_op(":", "expected ':' after '" + keyword.text + "' condition");
  s->body = parse_block("'" + keyword.text + "'");
  if (at_keyword("elif")) {
    s->orelse.push_back(parse_if());
  } else if (accept_keyword("else")) {
    expect_op(":", "expected ':' after 'else'");
    s->orelse = parse_block("'else'");
  }
  return s;
}

// A loop's `else` block is valid Python outside the kernel language: the whole
// loop becomes an Unsupported statement (reported where it is elaborated), so
// files that use it elsewhere still parse.
StmtPtr Parser::loop_else(StmtPtr loop, const std::string& what) {
  if (!at_keyword("else")) return loop;
  SourceLoc else_loc = next().loc;
  expect_op(":", "expected ':' after 'else'");
  StmtList body = std::move(loop->body);
  StmtList orelse = parse_block("'else'");
  for (auto& stmt : orelse) body.push_back(std::move(stmt));
  return unsupported_stmt(else_loc, "'else' after a " + what + " loop", std::move(body));
}

StmtPtr Parser::parse_for() {
  StmtPtr s = make_stmt(StmtKind::For, next().loc);
  ExprPtr target = parse_target_list();
  check_assign_target(*target);
  s->targets.push_back(std::move(target));
  expect_keyword("in", "expected 'in' after 'for' target");
  s->value = checked_value(parse_star_expressions());
  expect_op(":", "expected ':' after 'for' iterable");
  s->body = parse_block("'for'");
  return loop_else(std::move(s), "'for'");
}

StmtPtr Parser::parse_while() {
  StmtPtr s = make_stmt(StmtKind::While, next().loc);
  s->value = parse_named_expression();
  expect_op(":", "expected ':' after 'while' condition");
  s->body = parse_block("'while'");
  return loop_else(std::move(s), "'while'");
}

StmtPtr Parser::parse_with() {
  StmtPtr s = make_stmt(StmtKind::With, next().loc);
  if (at_parenthesized_with_items()) {
    next();
    do {
      if (at_op(")")) break;
      s->with_items.push_back(parse_with_item());
    } while (accept_op(","));
    expect_op(")", "expected ',' or ')' after 'with' item");
  } else {
    do {
      s->with_items.push_back(parse_with_item());
    } while (accept_op(","));
  }
  expect_op(":", "expected ':' after 'with' items");
  s->body = parse_block("'with'");
  return s;
}

// `with (a as b, c):` (Python 3.9): a '(' whose match is followed by ':'.
bool Parser::at_parenthesized_with_items() const {
  if (!at_op("(") || at_op(")", 1)) return false;
  int depth = 0;
  for (size_t i = pos_; tokens_[i].kind != TokenKind::End; ++i) {
    const Token& t = tokens_[i];
    if (t.kind != TokenKind::Op) continue;
    if (t.text == "(" || t.text == "[" || t.text == "{") {
      ++depth;
    } else if ((t.text == ")" || t.text == "]" || t.text == "}") && --depth == 0) {
      return tokens_[i + 1].kind == TokenKind::Op && tokens_[i + 1].text == ":";
    }
  }
  return false;
}

ast::WithItem Parser::parse_with_item() {
  ast::WithItem item;
  item.context = parse_expression();
  if (accept_keyword("as")) {
    item.target = parse_target_item();
    check_assign_target(*item.target);
  }
  return item;
}

StmtPtr Parser::parse_decorated() {
  std::vector<ExprPtr> decorators;
  while (accept_op("@")) {
    decorators.push_back(parse_named_expression());
    if (peek().kind != TokenKind::Newline) unexpected(peek());
    next();
  }
  if (peek().kind == TokenKind::Indent) unexpected(peek());
  if (at_keyword("def")) return parse_def(std::move(decorators));
  if (at_keyword("class")) return parse_class();
  if (at_keyword("async") && at_keyword("def", 1)) return parse_async();
  error_at(peek().loc, "expected a function or class definition after decorator");
}

StmtPtr Parser::parse_def(std::vector<ExprPtr> decorators) {
  StmtPtr s = make_stmt(StmtKind::FunctionDef, next().loc);
  s->decorators = std::move(decorators);
  s->name = expect_name("expected function name after 'def'").text;
  expect_op("(", "expected '(' after function name");
  s->params = parse_params(")", true);
  if (accept_op("->")) s->returns = parse_expression();
  expect_op(":", "expected ':' after function signature");
  s->body = parse_block("'def'");
  return s;
}

// Parameters up to and including `closer` (")" for def, ":" for lambda).
std::vector<ast::Param> Parser::parse_params(std::string_view closer, bool annotations) {
  std::vector<ast::Param> params;
  std::set<std::string> names;
  const Token* bare_star = nullptr;  // a `*` marker still waiting for a named parameter
  bool seen_default = false, seen_star = false, seen_kwargs = false, seen_slash = false;
  while (!at_op(closer)) {
    const Token& t = peek();
    if (seen_kwargs) error_at(t.loc, "arguments cannot follow var-keyword argument");
    if (accept_op("/")) {
      if (seen_slash) error_at(t.loc, "/ may appear only once");
      if (seen_star) error_at(t.loc, "/ must be ahead of *");
      if (params.empty()) error_at(t.loc, "at least one argument must precede /");
      seen_slash = true;
    } else if (at_op("*") && (at_op(",", 1) || at_op(closer, 1))) {
      next();
      if (seen_star) error_at(t.loc, "* argument may appear only once");
      seen_star = true;
      bare_star = &t;
    } else {
      bool star = accept_op("*"), double_star = !star && accept_op("**");
      ast::Param p;
      p.loc = t.loc;
      p.star = star || double_star;
      p.name = expect_name("expected parameter name").text;
      if (!names.insert(p.name).second)
        error_at(t.loc, "duplicate argument '" + p.name + "' in function definition");
      if (annotations && accept_op(":"))
        p.annotation = star ? parse_star_expression() : parse_expression();
      if (at_op("=")) {
        if (p.star)
          error_at(peek().loc,
                   "var-positional or var-keyword parameter cannot have a default value");
        next();
        p.default_value = parse_expression();
        seen_default = true;
      } else if (seen_default && !seen_star && !p.star) {
        error_at(t.loc, "parameter without a default follows parameter with a default");
      }
      if (star) {
        if (seen_star) error_at(t.loc, "* argument may appear only once");
        seen_star = true;
      }
      seen_kwargs = double_star;
      if (!p.star) bare_star = nullptr;
      params.push_back(std::move(p));
    }
    if (!accept_op(",")) break;
  }
  if (bare_star) error_at(bare_star->loc, "named arguments must follow bare *");
  expect_op(closer, closer == ")" ? "expected ',' or ')' after parameter"
                                  : "expected ',' or ':' after lambda parameter");
  return params;
}

StmtPtr Parser::parse_class() {
  SourceLoc loc = next().loc;
  expect_name("expected class name after 'class'");
  if (at_op("(")) parse_call(loc, nullptr);
  expect_op(":", "expected ':' after class header");
  return unsupported_stmt(loc, "class definition", parse_block("'class'"));
}

StmtPtr Parser::parse_try() {
  SourceLoc loc = next().loc;
  expect_op(":", "expected ':' after 'try'");
  StmtList body = parse_block("'try'");
  bool handlers = false, final_block = false;
  while (accept_keyword("except")) {
    accept_op("*");
    if (!at_op(":")) {
      parse_expression();
      if (accept_keyword("as")) expect_name("expected name after 'as'");
    }
    expect_op(":", "expected ':' after 'except' clause");
    append(body, parse_block("'except'"));
    handlers = true;
  }
  if (handlers && accept_keyword("else")) {
    expect_op(":", "expected ':' after 'else'");
    append(body, parse_block("'else'"));
  }
  if (accept_keyword("finally")) {
    expect_op(":", "expected ':' after 'finally'");
    append(body, parse_block("'finally'"));
    final_block = true;
  }
  if (!handlers && !final_block) error_at(peek().loc, "expected 'except' or 'finally' block");
  return unsupported_stmt(loc, "try statement", std::move(body));
}

StmtPtr Parser::parse_async() {
  SourceLoc loc = next().loc;
  StmtPtr inner;
  std::string what;
  if (at_keyword("def")) {
    inner = parse_def({});
    what = "async function definition";
  } else if (at_keyword("for")) {
    inner = parse_for();
    what = "async for statement";
  } else if (at_keyword("with")) {
    inner = parse_with();
    what = "async with statement";
  } else {
    error_at(peek().loc, "expected 'def', 'for' or 'with' after 'async'");
  }
  return unsupported_stmt(loc, what, std::move(inner->body));
}

// `match` is a soft keyword: a line starting with it is a match statement when it
// ends with ':' (no simple statement does) and `match` is not itself annotated.
bool Parser::at_match_statement() const {
  if (peek().kind != TokenKind::Name || peek().text != "match" || at_op(":", 1)) return false;
  size_t i = pos_ + 1;
  while (tokens_[i].kind != TokenKind::Newline && tokens_[i].kind != TokenKind::End) ++i;
  return i > pos_ + 1 && tokens_[i - 1].kind == TokenKind::Op && tokens_[i - 1].text == ":";
}

StmtPtr Parser::parse_match() {
  SourceLoc loc = next().loc;
  do {
    parse_star_named_expression();
  } while (accept_op(",") && !at_op(":"));
  expect_op(":", "expected ':' after 'match' subject");
  if (peek().kind != TokenKind::Newline) unexpected(peek());
  next();
  if (peek().kind != TokenKind::Indent)
    error_at(peek().loc, "expected an indented block after 'match'");
  next();
  StmtList body;
  while (peek().kind != TokenKind::Dedent && peek().kind != TokenKind::End) {
    if (peek().kind != TokenKind::Name || peek().text != "case")
      error_at(peek().loc, "expected 'case' in 'match' block");
    next();
    if (at_op(":")) error_at(peek().loc, "expected a pattern after 'case'");
    int depth = 0;
    while (depth > 0 || !(at_op(":") || at_keyword("if"))) {
      const Token& t = next();
      if (t.kind == TokenKind::Newline || t.kind == TokenKind::End)
        error_at(t.loc, "expected ':' after 'case' pattern");
      if (t.kind != TokenKind::Op) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
      if (t.text == ")" || t.text == "]" || t.text == "}") --depth;
    }
    if (accept_keyword("if")) parse_named_expression();
    expect_op(":", "expected ':' after 'case' pattern");
    append(body, parse_block("'case'"));
  }
  if (peek().kind == TokenKind::Dedent) next();
  return unsupported_stmt(loc, "match statement", std::move(body));
}

std::string Parser::parse_dotted_name(const std::string& message) {
  std::string name = expect_name(message).text;
  while (accept_op(".")) name += "." + expect_name("expected name after '.'").text;
  return name;
}

StmtPtr Parser::parse_import() {
  StmtPtr s = make_stmt(StmtKind::Import, next().loc);
  do {
    std::string module = parse_dotted_name("expected module name after 'import'");
    if (accept_keyword("as")) {
      s->imports.push_back({module, expect_name("expected name after 'as'").text});
    } else {
      std::string top = module.substr(0, module.find('.'));
      s->imports.push_back({top, top});
    }
  } while (accept_op(","));
  return s;
}

StmtPtr Parser::parse_from_import() {
  SourceLoc loc = next().loc;
  std::string module;
  while (at_op(".") || at_op("...")) module += next().text;
  if (module.empty() || peek().kind == TokenKind::Name)
    module += parse_dotted_name("expected module name after 'from'");
  expect_keyword("import", "expected 'import' after module name");
  if (accept_op("*")) return unsupported_stmt(loc, "wildcard import");
  StmtPtr s = make_stmt(StmtKind::Import, loc);
  bool parenthesized = accept_op("(");
  do {
    if (parenthesized && at_op(")")) break;
    std::string name = expect_name("expected name to import").text;
    std::string alias = accept_keyword("as") ? expect_name("expected name after 'as'").text : name;
    s->imports.push_back({module.back() == '.' ? module + name : module + "." + name, alias});
  } while (accept_op(","));
  if (parenthesized) expect_op(")", "expected ',' or ')' after imported name");
  return s;
}

StmtPtr Parser::parse_global() {
  const Token& keyword = next();
  StmtPtr s = make_stmt(StmtKind::Global, keyword.loc);
  do {
    const Token& name = expect_name("expected name after '" + keyword.text + "'");
    ExprPtr e = make_expr(ExprKind::Name, name.loc);
    e->id = name.text;
    s->targets.push_back(std::move(e));
  } while (accept_op(","));
  return s;
}

StmtPtr Parser::parse_assert() {
  StmtPtr s = make_stmt(StmtKind::Assert, next().loc);
  s->value = parse_expression();
  if (accept_op(",")) s->msg = parse_expression();
  return s;
}

StmtPtr Parser::parse_return() {
  StmtPtr s = make_stmt(StmtKind::Return, next().loc);
  if (at_expression_start()) s->value = checked_value(parse_star_expressions());
  return s;
}

StmtPtr Parser::parse_del() {
  SourceLoc loc = next().loc;
  check_target(*parse_target_list(), "delete");
  return unsupported_stmt(loc, "del statement");
}

StmtPtr Parser::parse_raise() {
  SourceLoc loc = next().loc;
  if (at_expression_start()) {
    parse_expression();
    if (accept_keyword("from")) parse_expression();
  }
  return unsupported_stmt(loc, "raise statement");
}

// ---- Expressions ----

// `a, *b, c` as a Tuple when there is a comma.
ExprPtr Parser::parse_star_expressions() {
  SourceLoc loc = peek().loc;
  ExprPtr first = parse_star_expression();
  if (!at_op(",")) return first;
  ExprPtr tuple = make_expr(ExprKind::Tuple, loc);
  tuple->items.push_back(std::move(first));
  while (accept_op(",") && at_expression_start()) tuple->items.push_back(parse_star_expression());
  return tuple;
}

ExprPtr Parser::parse_star_expression() {
  if (!at_op("*")) return parse_expression();
  SourceLoc loc = next().loc;
  ExprPtr e = make_expr(ExprKind::Starred, loc);
  e->value = parse_bitor();
  return e;
}

ExprPtr Parser::parse_star_named_expression() {
  return at_op("*") ? parse_star_expression() : parse_named_expression();
}

ExprPtr Parser::parse_named_expression() {
  SourceLoc loc = peek().loc;
  ExprPtr e = parse_expression();
  if (!at_op(":=")) return e;
  if (e->kind != ExprKind::Name)
    error_at(e->loc, "cannot use assignment expressions with " + describe(*e));
  next();
  parse_expression();
  return unsupported_expr(loc, "assignment expression");
}

ExprPtr Parser::parse_yield() {
  SourceLoc loc = next().loc;
  if (accept_keyword("from")) parse_expression();
  else if (at_expression_start()) parse_star_expressions();
  return unsupported_expr(loc, "yield");
}

ExprPtr Parser::parse_expression() {
  Depth depth(*this, peek().loc);
  if (at_keyword("lambda")) return parse_lambda();
  SourceLoc loc = peek().loc;
  ExprPtr body = parse_disjunction();
  if (!accept_keyword("if")) return body;
  ExprPtr e = make_expr(ExprKind::IfExp, loc);
  e->lhs = std::move(body);
  e->value = parse_disjunction();
  expect_keyword("else", "expected 'else' after 'if' expression");
  e->rhs = parse_expression();
  return e;
}

// A lambda of plain parameters (what T.Layout takes); one with defaults or * is Unsupported.
ExprPtr Parser::parse_lambda() {
  SourceLoc loc = next().loc;
  std::vector<ast::Param> params = parse_params(":", false);
  ExprPtr body = parse_expression();
  ExprPtr e = make_expr(ExprKind::Lambda, loc);
  for (const ast::Param& p : params) {
    if (p.star || p.default_value) return unsupported_expr(loc, "lambda with default or star parameters");
    ExprPtr name = make_expr(ExprKind::Name, p.loc);
    name->id = p.name;
    e->items.push_back(std::move(name));
  }
  e->value = std::move(body);
  return e;
}

ExprPtr Parser::parse_disjunction() {
  SourceLoc loc = peek().loc;
  ExprPtr first = parse_conjunction();
  if (!at_keyword("or")) return first;
  ExprPtr e = make_expr(ExprKind::BoolOp, loc);
  e->op = "or";
  e->items.push_back(std::move(first));
  Depth depth(*this, loc, 0);  // elaboration folds the items into a nested tree
  while (at_keyword("or")) {
    depth.add(next().loc);
    e->items.push_back(parse_conjunction());
  }
  return e;
}

ExprPtr Parser::parse_conjunction() {
  SourceLoc loc = peek().loc;
  ExprPtr first = parse_inversion();
  if (!at_keyword("and")) return first;
  ExprPtr e = make_expr(ExprKind::BoolOp, loc);
  e->op = "and";
  e->items.push_back(std::move(first));
  Depth depth(*this, loc, 0);
  while (at_keyword("and")) {
    depth.add(next().loc);
    e->items.push_back(parse_inversion());
  }
  return e;
}

ExprPtr Parser::parse_inversion() {
  if (!at_keyword("not")) return parse_comparison();
  Depth depth(*this, peek().loc);
  ExprPtr e = make_expr(ExprKind::UnaryOp, next().loc);
  e->op = "not";
  e->value = parse_inversion();
  return e;
}

ExprPtr Parser::parse_comparison() {
  SourceLoc loc = peek().loc;
  ExprPtr first = parse_bitor();
  std::string op = take_comparison_op();
  if (op.empty()) return first;
  ExprPtr e = make_expr(ExprKind::Compare, loc);
  e->items.push_back(std::move(first));
  Depth depth(*this, loc, 0);
  for (; !op.empty(); op = take_comparison_op()) {
    depth.add(loc);
    e->ops.push_back(op);
    e->items.push_back(parse_bitor());
  }
  return e;
}

std::string Parser::take_comparison_op() {
  const Token& t = peek();
  if (t.kind == TokenKind::Op && (t.text == "<" || t.text == "<=" || t.text == ">" ||
                                  t.text == ">=" || t.text == "==" || t.text == "!="))
    return next().text;
  if (accept_keyword("in")) return "in";
  if (at_keyword("not") && at_keyword("in", 1)) {
    next();
    next();
    return "not in";
  }
  if (accept_keyword("is")) return accept_keyword("not") ? "is not" : "is";
  return "";
}

ExprPtr Parser::parse_binary(size_t level) {
  if (level == kBinaryLevels.size()) return parse_factor();
  SourceLoc loc = peek().loc;
  ExprPtr lhs = parse_binary(level + 1);
  const auto& ops = kBinaryLevels[level];
  Depth depth(*this, loc, 0);
  while (peek().kind == TokenKind::Op &&
         std::find(ops.begin(), ops.end(), peek().text) != ops.end()) {
    depth.add(peek().loc);
    ExprPtr e = make_expr(ExprKind::BinOp, loc);
    e->op = next().text;
    e->lhs = std::move(lhs);
    e->rhs = parse_binary(level + 1);
    lhs = std::move(e);
  }
  return lhs;
}

ExprPtr Parser::parse_factor() {
  if (!at_op("-") && !at_op("+") && !at_op("~")) return parse_power();
  const Token& t = next();
  Depth depth(*this, t.loc);
  ExprPtr e = make_expr(ExprKind::UnaryOp, t.loc);
  e->op = t.text;
  e->value = parse_factor();
  return e;
}

// `**` binds tighter than a unary operator on its left and is right-associative:
// its right operand is a factor.
ExprPtr Parser::parse_power() {
  SourceLoc loc = peek().loc;
  ExprPtr base;
  if (accept_keyword("await")) {
    parse_primary();
    base = unsupported_expr(loc, "await");
  } else {
    base = parse_primary();
  }
  if (!at_op("**")) return base;
  Depth depth(*this, next().loc);  // a chain of ** nests to the right
  ExprPtr e = make_expr(ExprKind::BinOp, loc);
  e->op = "**";
  e->lhs = std::move(base);
  e->rhs = parse_factor();
  return e;
}

ExprPtr Parser::parse_primary() {
  SourceLoc loc = peek().loc;
  ExprPtr e = parse_atom();
  Depth depth(*this, loc, 0);
  while (true) {
    if (at_op(".") || at_op("(") || at_op("[")) depth.add(peek().loc);
    if (accept_op(".")) {
      ExprPtr attr = make_expr(ExprKind::Attribute, loc);
      attr->id = expect_name("expected attribute name after '.'").text;
      attr->value = std::move(e);
      e = std::move(attr);
    } else if (at_op("(")) {
      e = parse_call(loc, std::move(e));
    } else if (at_op("[")) {
      e = parse_subscript(loc, std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_call(const SourceLoc& loc, ExprPtr callee) {
  SourceLoc open = next().loc;
  ExprPtr call = make_expr(ExprKind::Call, loc);
  call->value = std::move(callee);
  std::set<std::string> keyword_names;
  bool seen_keyword = false, seen_double_star = false;
  while (!at_op(")")) {
    const Token& t = peek();
    if (accept_op("*")) {
      if (seen_double_star)
        error_at(t.loc, "iterable argument unpacking follows keyword argument unpacking");
      ExprPtr starred = make_expr(ExprKind::Starred, t.loc);
      starred->value = parse_expression();
      call->items.push_back(std::move(starred));
    } else if (accept_op("**")) {
      call->keywords.push_back({"", parse_expression(), t.loc});
      seen_double_star = true;
    } else if (t.kind == TokenKind::Name && at_op("=", 1)) {
      next();
      next();
      if (!keyword_names.insert(t.text).second)
        error_at(t.loc, "keyword argument repeated: " + t.text);
      call->keywords.push_back({t.text, parse_expression(), t.loc});
      seen_keyword = true;
    } else {
      ExprPtr arg = parse_named_expression();
      if (at_op("=")) error_at(arg->loc, "expected a name before '=' in keyword argument");
      if (at_comprehension_for()) {
        SourceLoc element = arg->loc;
        arg = parse_comprehension(open, std::move(arg), "generator");  // its parentheses are the call's
        if (!call->items.empty() || !call->keywords.empty() || !at_op(")"))
          error_at(element, "generator expression must be parenthesized");
      }
      if (seen_double_star)
        error_at(arg->loc, "positional argument follows keyword argument unpacking");
      if (seen_keyword) error_at(arg->loc, "positional argument follows keyword argument");
      call->items.push_back(std::move(arg));
    }
    if (!accept_op(",")) break;
  }
  expect_op(")", "expected ',' or ')' after argument");
  return call;
}

ExprPtr Parser::parse_subscript(const SourceLoc& loc, ExprPtr value) {
  next();  // [
  ExprPtr e = make_expr(ExprKind::Subscript, loc);
  e->value = std::move(value);
  while (true) {
    e->items.push_back(parse_slice_item());
    if (!accept_op(",")) break;
    if (at_op("]")) {
      if (e->items.size() == 1) {
        ExprPtr tuple = make_expr(ExprKind::Tuple, e->items[0]->loc);
        tuple->items.push_back(std::move(e->items[0]));
        e->items[0] = std::move(tuple);
      }
      break;
    }
  }
  expect_op("]", "expected ',' or ']' after index");
  return e;
}

ExprPtr Parser::parse_slice_item() {
  if (at_op("*")) return parse_star_expression();
  SourceLoc loc = peek().loc;
  ExprPtr lower;
  if (!at_op(":")) {
    lower = parse_named_expression();
    if (!at_op(":")) return lower;
  }
  next();  // :
  ExprPtr slice = make_expr(ExprKind::Slice, loc);
  slice->lower = std::move(lower);
  auto bound_follows = [this] { return !at_op(":") && !at_op(",") && !at_op("]"); };
  if (bound_follows()) slice->upper = parse_expression();
  if (accept_op(":") && bound_follows()) slice->step = parse_expression();
  return slice;
}

ExprPtr Parser::parse_atom() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::Name: {
      next();
      ExprPtr e = make_expr(ExprKind::Name, t.loc);
      e->id = t.text;
      return e;
    }
    case TokenKind::Int: {
      next();
      ExprPtr e = make_expr(ExprKind::Int, t.loc);
      e->int_value = t.int_value;
      return e;
    }
    case TokenKind::Float: {
      next();
      ExprPtr e = make_expr(ExprKind::Float, t.loc);
      e->float_value = t.float_value;
      return e;
    }
    case TokenKind::Imaginary: next(); return unsupported_expr(t.loc, "complex literal");
    case TokenKind::String: return parse_strings();
    case TokenKind::Keyword:
      if (t.text == "True" || t.text == "False") {
        next();
        ExprPtr e = make_expr(ExprKind::Bool, t.loc);
        e->bool_value = t.text == "True";
        return e;
      }
      if (t.text == "None") {
        next();
        return make_expr(ExprKind::NoneLit, t.loc);
      }
      break;
    case TokenKind::Op:
      if (t.text == "(") return parse_parenthesized();
      if (t.text == "[") return parse_list();
      if (t.text == "{") return parse_brace();
      if (t.text == "...") {
        next();
        return unsupported_expr(t.loc, "Ellipsis");
      }
      break;
    case TokenKind::Newline:
    case TokenKind::End: error_at(t.loc, "expected an expression");
    default: break;
  }
  unexpected(t);
}

// Adjacent literals concatenate.
ExprPtr Parser::parse_strings() {
  SourceLoc loc = peek().loc;
  std::string value;
  bool plain = false, format = false, bytes = false, named_escape = false;
  while (peek().kind == TokenKind::String) {
    const Token& t = next();
    named_escape |= t.named_escape;
    plain |= t.flavor == StringFlavor::Plain;
    format |= t.flavor == StringFlavor::Format;
    bytes |= t.flavor == StringFlavor::Bytes;
    value += t.str_value;
  }
  if (bytes && (plain || format)) error_at(loc, "cannot mix bytes and nonbytes literals");
  if (format) return unsupported_expr(loc, "f-string");
  if (bytes) return unsupported_expr(loc, "bytes literal");
  if (named_escape) return unsupported_expr(loc, "named Unicode escape");
  ExprPtr e = make_expr(ExprKind::String, loc);
  e->id = std::move(value);
  return e;
}

ExprPtr Parser::parse_parenthesized() {
  SourceLoc loc = next().loc;  // (
  if (accept_op(")")) return make_expr(ExprKind::Tuple, loc);
  if (at_keyword("yield")) {
    ExprPtr e = parse_yield();
    expect_op(")", "expected ')' after yield expression");
    return e;
  }
  ExprPtr first = parse_star_named_expression();
  if (at_comprehension_for()) {
    ExprPtr e = parse_comprehension(loc, std::move(first), "generator");
    expect_op(")", "expected ')' after generator expression");
    return e;
  }
  if (accept_op(")")) return checked_value(std::move(first));
  ExprPtr tuple = make_expr(ExprKind::Tuple, loc);
  tuple->items.push_back(std::move(first));
  while (accept_op(",") && !at_op(")")) tuple->items.push_back(parse_star_named_expression());
  expect_op(")", "expected ',' or ')'");
  return tuple;
}

ExprPtr Parser::parse_list() {
  SourceLoc loc = next().loc;  // [
  ExprPtr list = make_expr(ExprKind::List, loc);
  if (accept_op("]")) return list;
  list->items.push_back(parse_star_named_expression());
  if (at_comprehension_for()) {
    ExprPtr e = parse_comprehension(loc, std::move(list->items[0]), "list");
    expect_op("]", "expected ']' after list comprehension");
    return e;
  }
  while (accept_op(",") && !at_op("]")) list->items.push_back(parse_star_named_expression());
  expect_op("]", "expected ',' or ']'");
  return list;
}

// Dict displays of key: value entries (what T.annotate_layout takes) are Dict nodes; other
// dict displays (with **), set displays and comprehensions are parsed, then Unsupported.
ExprPtr Parser::parse_brace() {
  SourceLoc loc = next().loc;  // {
  ExprPtr e = make_expr(ExprKind::Dict, loc);
  if (accept_op("}")) return e;
  bool dict = false, unpacked = false;
  auto entry = [&] {
    if (dict) {
      if (accept_op("**")) {
        parse_bitor();
        unpacked = true;
        return;
      }
      e->items.push_back(parse_expression());
      expect_op(":", "expected ':' after dict key");
      e->values.push_back(parse_expression());
    } else {
      parse_star_named_expression();
    }
  };
  if (accept_op("**")) {
    parse_bitor();
    dict = unpacked = true;
  } else {
    ExprPtr first = parse_star_named_expression();
    if (accept_op(":")) {
      e->items.push_back(std::move(first));
      e->values.push_back(parse_expression());
      dict = true;
    }
  }
  if (at_comprehension_for()) {
    parse_comprehension(loc, nullptr, dict ? "dict" : "set");
    expect_op("}", "expected '}' after comprehension");
    return unsupported_expr(loc, dict ? "dict comprehension" : "set comprehension");
  }
  while (accept_op(",") && !at_op("}")) entry();
  expect_op("}", "expected ',' or '}'");
  if (!dict || unpacked) return unsupported_expr(loc, dict ? "dict display with **" : "set display");
  return e;
}

ExprPtr Parser::parse_comprehension(const SourceLoc& loc, ExprPtr value, const std::string& kind) {
  ExprPtr e = make_expr(ExprKind::Comprehension, loc);
  e->id = kind;
  e->value = std::move(value);
  bool async_for = false;
  while (at_comprehension_for()) {
    if (accept_keyword("async")) async_for = true;
    next();  // for
    ast::ComprehensionClause clause;
    clause.target = parse_target_list();
    check_assign_target(*clause.target);
    expect_keyword("in", "expected 'in' after comprehension target");
    clause.iter = parse_disjunction();
    while (accept_keyword("if")) clause.conditions.push_back(parse_disjunction());
    e->clauses.push_back(std::move(clause));
  }
  return async_for ? unsupported_expr(loc, "asynchronous comprehension") : std::move(e);
}

// Targets of `for`, comprehensions and `del`: `in` must not be taken as an operator,
// so items are parsed below comparisons.
ExprPtr Parser::parse_target_list() {
  SourceLoc loc = peek().loc;
  ExprPtr first = parse_target_item();
  if (!at_op(",")) return first;
  ExprPtr tuple = make_expr(ExprKind::Tuple, loc);
  tuple->items.push_back(std::move(first));
  while (accept_op(",") && at_expression_start()) tuple->items.push_back(parse_target_item());
  return tuple;
}

ExprPtr Parser::parse_target_item() {
  if (!at_op("*")) return parse_bitor();
  ExprPtr e = make_expr(ExprKind::Starred, next().loc);
  e->value = parse_bitor();
  return e;
}

}  // namespace

ast::Module parse(SourceFilePtr file) { return Parser(std::move(file)).parse_module(); }

}  // namespace tilec::frontend
