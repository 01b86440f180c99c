// Replaces variables by expressions.
#pragma once

#include <unordered_map>

#include "ir/ir.h"

namespace tilec::ir {

// Var node -> its replacement.
using VarMap = std::unordered_map<const ExprNode*, Expr>;

// Every use of a mapped Var is replaced (region bounds and indices included;
// buffer shapes are not touched). Vars are unique by identity, so the map
// should not name a Var that the tree itself defines (a For or Let var, a block
// var): those positions would be replaced too. Unchanged trees come back as the
// same handle.
Expr substitute(const Expr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);
Expr substitute(const Expr& e, const Expr& var, const Expr& value);

// Each let var of `body` -> its value, with the lets it reads (bound earlier) replaced by theirs:
// what a name stands for, for proofs about the expressions that use it.
VarMap let_values(const Stmt& body);

// Buffer node -> the buffer that takes its place.
using BufferMap = std::unordered_map<const BufferNode*, Buffer>;

// Every load, store, tile-op region and allocation of a mapped buffer uses its
// replacement instead (indices unchanged).
Stmt replace_buffers(const Stmt& s, const BufferMap& map);

}  // namespace tilec::ir
