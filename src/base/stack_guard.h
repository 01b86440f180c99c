// A check for the recursive walks over trees whose depth a kernel's source
// decides (the parser, the elaborator, IR visitors, mutators, printers and
// code generators): each calls check_stack() before it goes a level deeper, so
// that a thread whose stack is too small for the tree ends the compile with an
// error instead of a crash. The front end's limits (frontend/limits.h) keep
// every tree within a few MiB of stack; this is for threads given less.
#pragma once

#include <cstddef>

#include "base/diagnostics.h"

namespace tilec {

// What a walk may still use after a check passes: its deepest step between two
// checks, and reporting the error.
constexpr size_t kStackReserve = size_t{128} << 10;

// Throws CompileError (at `loc`, when it is valid) when less than kStackReserve
// bytes of the calling thread's stack are left. Where the platform does not say
// where the stack ends, it checks nothing.
void check_stack(const SourceLoc& loc = {});

// The bytes of the calling thread's stack left below the caller's frame, or 0
// when the platform does not say.
size_t stack_left();

}  // namespace tilec
