// The limits of the front end, in one place. Each keeps a mistaken or hostile
// source from exhausting the compiler's stack, time or memory, and each ends in
// a located error that names it; docs/language.md ("Compile-time limits")
// lists them for users.
#pragma once

#include <cstdint>

namespace tilec::frontend {

// Syntax. Python's own limit of nested blocks; bracketed and chained operators
// together in one expression (the parser, the elaborator and every pass walk
// expressions recursively).
constexpr int kMaxIndentLevels = 100;
constexpr int kMaxExpressionDepth = 500;

// Evaluation. Expressions and statements being evaluated inside one another,
// across macro calls: a bound on the elaborator's own recursion.
constexpr int kMaxEvalDepth = 2000;
// Calls of kernel-source functions (macros, helpers) in progress at once.
constexpr int kMaxCallDepth = 64;
// Calls of kernel-source functions in one compile, in all.
constexpr int64_t kMaxCalls = 100000;
// Iterations of compile-time loops (range() outside a kernel, loops over a
// tuple) in one compile, in all.
constexpr int64_t kMaxCompileTimeIterations = 100000;
// Items of one tuple or list, characters of one string made at compile time,
// and tuples and lists inside one another.
constexpr int64_t kMaxSequenceLength = 100000;
constexpr int kMaxValueNesting = 100;
// Items that operations on tuples, lists and strings compare, search or copy
// (==, in, slices, +, *, min/max, unpacking), in one compile, in all: each is
// bounded by the length limit, but a compile-time loop repeats them.
constexpr int64_t kMaxSequenceWork = 100000000;
// Stages of one T.Pipelined loop: the pipeline's prologue and shared tiles grow
// with them (GPU kernels use a handful).
constexpr int kMaxPipelineStages = 32;

// The IR of one runtime expression: its nesting, and its nodes counting a
// shared subexpression once for every use (what printing it would write).
// Every pass and code generator walks expressions recursively.
constexpr int kMaxExprIRDepth = 2000;
constexpr int64_t kMaxExprIRNodes = 100000;

}  // namespace tilec::frontend
