// The syntax tree of the kernel language: the Python subset that kernels,
// macros and jit factories are written in. Every node has its source location.
//
// Nodes are tagged structs (like CPython's `ast` module): one struct for all
// expressions and one for all statements, with the fields each kind uses
// documented next to the kind.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/diagnostics.h"

namespace tilec::ast {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

enum class ExprKind {
  Name,       // `id`
  Int,        // int_value (Python ints that fit int64; larger is a parse error)
  Float,      // float_value
  String,     // id holds the decoded text (adjacent literals concatenated)
  Bool,       // bool_value: True / False
  NoneLit,    // None
  Attribute,  // value.id           (value: the object)
  Subscript,  // value[items...]    (one item per comma-separated index; a
              //                     parenthesized tuple index is one Tuple item)
  Slice,      // lower:upper:step inside a subscript; absent parts are null
  Call,       // value(items..., keywords...)  (value: the callee)
  BinOp,      // lhs op rhs         op: "+","-","*","/","//","%","**","@","<<",">>","&","|","^"
  UnaryOp,    // op value           op: "-","+","~","not"
  Compare,    // items[0] ops[0] items[1] ops[1] items[2] ...
              //                    ops: "<","<=",">",">=","==","!=","is","is not","in","not in"
  BoolOp,     // items joined by op: "and" / "or"
  IfExp,      // body if test else orelse  (lhs: body, value: test, rhs: orelse)
  Tuple,      // items (parenthesized or bare `a, b`)
  List,       // items
  Starred,    // *value (in call arguments only)
  Lambda,     // lambda items...: value   (items: the parameters, Names; plain ones only)
  Dict,       // {items[0]: values[0], ...}  (key: value entries only)
  Comprehension,  // [value for ... in ... if ...] (id "list") or the parenthesized
                  // generator expression (id "generator"): clauses, in order
  Unsupported,  // valid Python outside the kernel language (set and dict comprehensions,
                // f-string, yield, await, walrus...): id names the construct, so
                // elaboration reports it where it is used, if it is used
};

struct Keyword {
  std::string name;  // empty for **kwargs (rejected by elaboration)
  ExprPtr value;
  SourceLoc loc;
};

// One `for target in iter` of a comprehension, with the `if` conditions that follow it.
struct ComprehensionClause {
  ExprPtr target;
  ExprPtr iter;
  std::vector<ExprPtr> conditions;
};

struct Expr {
  ExprKind kind;
  SourceLoc loc;  // where the expression starts
  std::string id;
  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::string op;
  std::vector<std::string> ops;
  ExprPtr value, lhs, rhs;
  ExprPtr lower, upper, step;  // Slice
  std::vector<ExprPtr> items;
  std::vector<ExprPtr> values;  // Dict
  std::vector<Keyword> keywords;
  std::vector<ComprehensionClause> clauses;  // Comprehension
};

struct Param {
  std::string name;
  ExprPtr annotation;  // may be null
  ExprPtr default_value;  // may be null
  bool star = false;      // *args / **kwargs (rejected by elaboration)
  SourceLoc loc;
};

struct WithItem {
  ExprPtr context;
  ExprPtr target;  // `as` target, may be null; a Name or Tuple of Names
};

enum class StmtKind {
  FunctionDef,  // name, params, decorators, body, returns (annotation, may be null)
  Assign,       // targets = value (`a = b = v` gives two targets; a target may be
                // a Name, Tuple/List of targets, Subscript or Attribute)
  AnnAssign,    // target: annotation [= value]  (value may be null)
  AugAssign,    // target op= value  (op without the '=': "+", "-", ...)
  For,          // for target in iter: body  [else is a parse error]
  While,        // while test: body
  If,           // if test: body else: orelse (elif is a nested If in orelse)
  With,         // with items: body
  Return,       // return [value]
  ExprStmt,     // value
  Pass,
  Break,
  Continue,
  Import,       // import/from-import: names holds "module as alias" pairs
  Global,       // global/nonlocal (ignored names)
  Assert,       // assert test[, msg]
  Unsupported,  // valid Python outside the kernel language (class, try, raise, del,
                // async, match...): name holds the construct ("try statement"),
                // body its parsed inner block where it has one
};

struct ImportName {
  std::string module;  // "tilec.language" or for `from a import b`: "a.b"
  std::string alias;   // bound name
};

struct Stmt {
  StmtKind kind;
  SourceLoc loc;
  // FunctionDef
  std::string name;
  std::vector<Param> params;
  std::vector<ExprPtr> decorators;
  ExprPtr returns;
  // Assign / AnnAssign / AugAssign / For / Return / ExprStmt / If / While / Assert
  std::vector<ExprPtr> targets;  // Assign: one or more; AnnAssign/AugAssign/For: one
  ExprPtr annotation;
  ExprPtr value;  // Assign/AnnAssign/AugAssign/Return/ExprStmt value, For iter,
                  // If/While/Assert test
  ExprPtr msg;    // Assert message
  std::string op; // AugAssign
  std::vector<WithItem> with_items;
  StmtList body;
  StmtList orelse;
  std::vector<ImportName> imports;
};

// A parsed source text: its top-level statements.
struct Module {
  SourceFilePtr file;
  StmtList body;
};

}  // namespace tilec::ast
