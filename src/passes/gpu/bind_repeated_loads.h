// A device call is an asm statement that clobbers memory, so the CUDA compiler can't carry a value
// read from memory across one: each call reads afresh what its arguments read. A gather's cp.async
// names its row's index in the source address and in the zero-fill predicate, under conditions
// (index_at: `slot < topk ? Indices[..] : -1`) the compiler doesn't merge either; a staged gather
// of 64 rows read each index 9 times, one load waiting on the next (the sparse MLA prefill ran
// at half speed). Each value of a call's arguments that reads memory and is named more than once
// is bound to a local before the call, so it is read once:
//
//   cp_async_16(&S[..], &KV[max(i < n ? Ix[i] : -1, 0) * 576 + ..], (i < n ? Ix[i] : -1) >= 0)
//     ->
//   reused = i < n ? Ix[i] : -1
//   cp_async_16(&S[..], &KV[max(reused, 0) * 576 + ..], reused >= 0)
//
// Only a value the call evaluates unconditionally somewhere is bound (not one named only under a
// select's branch or past && or ||), so that nothing is read that the call would not read. The
// largest such values go first; a value inside another is bound before it.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt bind_repeated_loads(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes
