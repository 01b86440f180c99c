// An integer expression as a sum of constant multiples of atoms, for proofs about indices:
// which accesses never meet (passes/gpu/index_apart.h), which offsets are aligned.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.h"

namespace tilec::ir {

// Atoms are anything but +, -, a product by a constant and a widening integer cast.
struct LinearForm {
  struct Term {
    Expr atom;
    int64_t coefficient;
  };
  std::vector<Term> terms;
  int64_t constant = 0;

  // Adds `scale` times e; false where a coefficient would overflow.
  bool add(const Expr& e, int64_t scale);
};

// Whether integer `e` is a multiple of `k` (> 0) whatever its atoms' values: its constant and
// every coefficient are (`(x // 4) * 16 + 512 * m` of 16, not `x * 4 + 1`).
bool provably_multiple_of(const Expr& e, int64_t k);

}  // namespace tilec::ir
