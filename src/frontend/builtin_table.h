// The table of builtins kernels may call (T.copy, T.alloc_var, len, ...): each name's handler
// checks the call's arguments and returns its value or emits its statements. builtins.cc
// builds the table; the files named here add their own entries to it.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>

#include "frontend/elaborator.h"

namespace tilec::frontend {

using BuiltinHandler = std::function<CtValue(Elaborator&, const EvaluatedCall&)>;
using BuiltinTable = std::unordered_map<std::string, BuiltinHandler>;

// builtins_simt.cc: what a kernel's threads see one at a time (T.alloc_var,
// T.get_thread_binding, T.sync_threads, the block and thread extents).
void add_simt_builtins(BuiltinTable& table);

// builtins_tirx.cc: TVM's tirx expression helpers (tirx.const, Select, Cast, reinterpret, Min,
// Max) under "tilec.tvm.tirx.", and DataType as "tilec.DataType".
void add_tirx_builtins(BuiltinTable& table);

// builtins_math.cc: tilec.math's next_power_of_2 and cdiv (also tilec.next_power_of_2 and
// tilec.cdiv).
void add_tilec_math_builtins(BuiltinTable& table);

}  // namespace tilec::frontend
