// Parser of the kernel language: Python 3 source text to the syntax tree of ast.h.
//
// A whole Python file parses: constructs outside the kernel language become
// Unsupported nodes after their parts are parsed (and dropped), so they are
// reported only where elaboration meets them. Unsupported ids:
//   expressions: "lambda with default or star parameters" (other lambdas are Lambda
//     nodes), "comprehension" (list/set/dict comprehensions and generator expressions),
//     "dict display with **" (other dict displays are Dict nodes), "set display", "Ellipsis", "f-string",
//     "bytes literal", "named Unicode escape" (a string with \N{...}), "complex
//     literal", "assignment expression" (:=), "await", "yield";
//   statements: "class definition", "try statement", "raise statement", "del
//     statement", "async function definition", "async for statement", "async with
//     statement", "match statement", "yield statement", "wildcard import".
//
// Where ast.h leaves the encoding open:
// - A node's loc is its first token; for operators (BinOp, Compare, BoolOp, IfExp)
//   and trailers (Attribute, Subscript, Call) that includes the parentheses around
//   the left operand: `(a + b) * c` starts at '('. A parenthesized expression alone
//   keeps the location of its contents. A decorated FunctionDef is at `def`.
// - `x[a,]` has one Tuple item, as `x[(a,)]`.
// - Param.star marks both *args and **kwargs; the bare `*` and `/` markers, which
//   only restrict how arguments are passed, leave no Param.
// - Imports record the bound name: `import a.b` binds `a`, giving {"a", "a"};
//   relative modules keep their dots (`from .m import f` gives {".m.f", "f"}).
// - Global holds its names as Name expressions in `targets`.
// - An Unsupported statement's body holds the statements of all its blocks in
//   order (try, except, else and finally blocks; case blocks). The patterns of
//   `case` clauses are skipped, not parsed.
// - The `for`/`while` `else` clause is a parse error.
#pragma once

#include "base/diagnostics.h"
#include "frontend/ast.h"

namespace tilec::frontend {

// Parses `file->text` as a module. Throws CompileError.
ast::Module parse(SourceFilePtr file);

}  // namespace tilec::frontend
