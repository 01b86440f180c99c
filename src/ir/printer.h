// The textual form of the IR: Python-like, in TileLang's T.* style, stable
// enough for golden tests and `--emit ir`.
//
// Distinct Vars (and buffers) that share a name are printed as name, name_1,
// name_2, ... in order of first appearance, so the text is unambiguous and the
// same tree always prints the same way.
#pragma once

#include <ostream>
#include <string>

#include "ir/ir.h"

namespace tilec::ir {

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s);  // one line per statement, each ending in '\n'
std::string to_string(const PrimFunc& f);

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

}  // namespace tilec::ir
