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

// T.copy's Copy of a["src"] to a["dst"] (a point-indexed side takes the other's shape), at
// `loc`, not yet checked (op::check) or emitted; `fn` names the call in errors.
std::shared_ptr<ir::Copy> copy_between(Elaborator& el, const CallArgs& a, const std::string& fn,
                                       const SourceLoc& loc);

// Argument eviction_policy of `fn` (T.copy, T.tma_copy, T.ptx_cp_async, T.copy_cluster):
// "evict_first", "evict_normal" or "evict_last" (None: evict_normal).
ir::EvictionPolicy eviction_policy(const CallArgs& a, const std::string& fn);

// builtins_warp_specialize.cc: warp specialization by hand (T.alloc_barrier, the mbarrier
// waits and arrivals, T.tma_copy, T.set_max_nreg); T.ws itself is a with block
// (Elaborator::exec_thread_group).
void add_warp_specialize_builtins(BuiltinTable& table);

// The rank of a block of the kernel's thread block cluster from argument `name`: an int32
// expression, checked against the cluster's size where it is a constant.
ir::Expr peer_rank(Elaborator& el, const CallArgs& a, const std::string& name, const std::string& fn);
// The address of the T.alloc_cluster_barrier barrier of argument `name`, which peer blocks
// arrive at (an error for another barrier).
ir::Expr cluster_barrier_address(Elaborator& el, const CallArgs& a, const std::string& name, const std::string& fn);
// Shared mbarriers of these arrival counts, initialized by thread 0 here, where the block's (with
// in_cluster, the cluster's) threads then wait for each other (T.alloc_barrier's).
ir::Buffer make_barriers(Elaborator& el, const std::vector<int64_t>& arrivals, bool in_cluster, const SourceLoc& loc);
// Argument cluster_mask of `fn` (T.tma_copy, T.copy_cluster): a constant naming blocks of the
// kernel's cluster, at least one, by their ranks' bits.
int64_t multicast_mask(Elaborator& el, const CallArgs& a, const std::string& fn);
// `load` (a TMA load of a global tile into a shared one, its barrier set), issued by the first
// thread of the T.ws group (of the block outside one) after it adds the tile's bytes to the
// barrier's phase; with a cluster mask, T.tma_copy(cluster_mask=...)'s multicast.
void emit_tma_load(Elaborator& el, std::shared_ptr<ir::Copy> load, int64_t mask, const SourceLoc& loc);
// builtins_cluster.cc: thread block clusters (T.block_rank_in_cluster, T.cluster_sync,
// T.copy_cluster).
void add_cluster_builtins(BuiltinTable& table);
// builtins_extern.cc: the program's own CUDA code (T.import_source, T.call_extern).
void add_extern_builtins(BuiltinTable& table);

// builtins_simt.cc: what a kernel's threads see one at a time (T.alloc_var,
// T.get_thread_binding, T.sync_threads, the block and thread extents).
void add_simt_builtins(BuiltinTable& table);
// builtins_simt.cc: TVM's thread allreduce (T.tvm_thread_allreduce, in a with T.attr(
// T.comm_reducer(...), "reduce_scope", ...) block; Elaborator::exec_reduce_scope) and T.evaluate.
void add_thread_allreduce_builtins(BuiltinTable& table);

// builtins_tirx.cc: TVM's tirx expression helpers (tirx.const, Select, Cast, reinterpret, Min,
// Max) under "tilec.tvm.tirx.", and DataType as "tilec.DataType".
void add_tirx_builtins(BuiltinTable& table);

// builtins_math.cc: tilec.math's next_power_of_2 and cdiv (also tilec.next_power_of_2 and
// tilec.cdiv).
void add_tilec_math_builtins(BuiltinTable& table);

}  // namespace tilec::frontend
