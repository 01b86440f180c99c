// AST + bindings -> tile IR. The entry points for the three ways a kernel is
// written: a @T.prim_func (lazy jit), an eager jit function whose body is the
// kernel, and a jit factory evaluated in the core (the command line's case,
// where no Python runs it).
#pragma once

#include <map>
#include <string>

#include "frontend/value.h"
#include "ir/ir.h"
#include "tilec/tilec.h"

namespace tilec::frontend {

// Parses `func.source` and turns the function into a PrimFunc. What the
// function is (prim_func, eager kernel, factory) is read from its decorators
// and body.
ir::PrimFunc elaborate(const FunctionSource& func);

FunctionStyle function_style(const FunctionSource& func);

}  // namespace tilec::frontend
