// One input of the compile fuzzer (compile_fuzzer.cc) and of the replayed fuzz
// regressions (tests/cpp/fuzz_regressions_test.cc): a Python file of kernel
// source whose leading "#!" lines (comments to Python) say how to compile it.
//
//   #!target cuda sm_90a        target and arch ("cpu" when absent; no arch: none)
//   #!func main                 the function (absent: the file's one jit/prim_func)
//   #!emit source               tile-ir | ir | source (default source)
//   #!config tilec.wgmma=false  a pass config, repeatable
//   #!bind M = 128              a binding, repeatable; VALUE is one of
//                                 None True False 128 -3 1.5 "text" float16
//                                 sym(n)                   a symbolic dim
//                                 arith(mul, sym(n), 64)   arithmetic on it (add sub mul
//                                                          floordiv mod), as T.symbolic's
//                                 tensor(float16, 64, 32)  an eager call's tensor
//                                 module(tilec.language)   the T namespace
//                                 opaque(TypeName)         a value tilec can't use
//                                 func(name)               the function `name` of this file
//                                 (VALUE, ...)  [VALUE, ...]
//   ... the Python source ...
//
// The file's text, header included, is the source compile() gets (so reported
// lines are the file's); module-level imports and constant assignments become
// bindings too (load_function), and #!bind lines override them.
#pragma once

#include <optional>
#include <string>

#include "tilec/tilec.h"

namespace tilec::fuzz {

struct FuzzInput {
  FunctionSource func;
  CompileOptions options;
  EmitStage stage = EmitStage::Source;
};

// The input `text` (named `filename` in diagnostics), or nullopt when its header
// is malformed, its options are not ones tilec knows, or it has no function to
// compile: an input that says nothing about the compiler.
std::optional<FuzzInput> parse_fuzz_input(const std::string& text, const std::string& filename);

// The two parts of a CompileError's text as error_at writes it:
// "file:line:col: error: message", then the source line and a caret line.
bool has_location(const std::string& what);
bool has_source_line_and_caret(const std::string& what);

// The kind of failure a compile_failure text says, without its particulars:
// its first line with each number (decimal or hex) as N and each quoted name as '_', so that
// inputs failing the same way share it (the fuzzer's known failures, triage.py).
std::string failure_signature(const std::string& failure);

// Compiles `input` to its stage. "" when it compiled or failed the way every
// bad kernel must (a CompileError naming file:line:col with the line and a
// caret, or an ArgumentError for an eager call's tensors); otherwise what went
// wrong instead, e.g. "uncaught std::logic_error: internal compiler error ...".
std::string compile_failure(const FuzzInput& input);

}  // namespace tilec::fuzz
