// `if tx < 128:` in a kernel written thread by thread (tx = T.get_thread_binding()), over whole
// warps and with tile ops, barriers, T.tma_copy or the like in its body, is a thread group as
// T.ws makes one (TileLang's programs write their warp specialization so): its ops are spread
// over the threads that run them (Elaborator::exec_if).
#pragma once

#include <optional>
#include <utility>

#include "ir/ir.h"

namespace tilec::frontend {

// A thread group is whole warps of NVIDIA's 32 threads (bar.sync counts warps); T.ws(i) is
// TileLang's warp group i, threads [128 i, 128 (i + 1)).
inline constexpr int64_t kWarpThreads = 32, kWarpGroupThreads = 128;

// [lo, hi) when `cond` is a conjunction of comparisons of the block's thread index `tx` with
// constants (tx < 128, tx >= 128 and tx < 256, 256 <= tx) that holds for those threads of the
// block's `threads`, else nullopt.
std::optional<std::pair<int64_t, int64_t>> thread_range_of(const ir::Expr& cond, const ir::Expr& tx,
                                                          int64_t threads);

// Whether `s` holds a tile op or a T.Parallel loop: code whose work is spread over threads;
// the second, leaving out the thread groups in it (Ifs on thread_group).
bool has_tile_code(const ir::Stmt& s);
bool has_tile_code_outside_groups(const ir::Stmt& s);

}  // namespace tilec::frontend
