// Thread groups: the parts of a block that T.ws gives tile code of their own, as an If on
// thread_group(lo, hi) (ir/device_calls.h). Inside one, the GPU passes take its hi - lo threads
// as the block: instruction selection and layouts spread tile ops over them, lowering numbers
// them from 0 (thread lo), and a barrier between its statements is a named barrier of theirs
// (bar.sync id, hi - lo), ids 2, 3, ... in the order of (lo, hi) over the kernel (0 is the
// block's __syncthreads, 1 the consumers' of a warp-specialized launch).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ir/ir.h"

namespace tilec::passes {

struct ThreadSpan {
  int64_t lo = 0, hi = 0;
  int64_t threads() const { return hi - lo; }
  bool operator<(const ThreadSpan& o) const { return lo != o.lo ? lo < o.lo : hi < o.hi; }
};

// The span of an If on thread_group(lo, hi), else nullopt.
std::optional<ThreadSpan> thread_group_of(const ir::IfThenElse& branch);
std::optional<ThreadSpan> thread_group_of(const ir::Stmt& s);
// The span of an If on thread_in(lo, hi), else nullopt.
std::optional<ThreadSpan> thread_in_of(const ir::IfThenElse& branch);

// Whether `s` holds an If on thread_group.
bool has_thread_groups(const ir::Stmt& s);

// The named barriers of a kernel's thread groups.
class GroupBarriers {
 public:
  // Throws CompileError (at the kernel's `loc`) when the groups need more than the 14 named
  // barriers a block has past ids 0 and 1.
  GroupBarriers(const ir::Stmt& kernel_body, const SourceLoc& loc);
  // The device call name of the barrier of `span`'s threads.
  std::string barrier(ThreadSpan span) const;

 private:
  std::map<ThreadSpan, int> ids_;
};

}  // namespace tilec::passes
