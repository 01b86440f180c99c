// Thread block clusters (T.Kernel's cluster_dims, sm_90 on): a block's rank in its cluster, the
// cluster's barrier, and T.copy_cluster, which writes into a peer block's shared memory. The
// barriers peer blocks arrive at (T.alloc_cluster_barrier, T.mbarrier_arrive(bar, cta_id=...))
// are with the block's own in builtins_warp_specialize.cc.
#include "frontend/builtin_table.h"
#include "ir/device_calls.h"
#include "ir/region.h"
#include "ir/simplify.h"
#include "op/check.h"

namespace tilec::frontend {

using K = CtValue::Kind;

namespace {

void require_cluster(const Elaborator& el, const EvaluatedCall& call, const std::string& what) {
  if (!el.in_kernel_) error_at(call.node->loc, call.callee_name + " goes inside a T.Kernel block");
  if (!el.kernel_->clustered())
    error_at(call.node->loc, call.callee_name + " " + what + "; this T.Kernel has no cluster_dims");
}

// T.copy_cluster(src, dst, dst_block=r, remote_barrier=None): the tile `src` of this block's
// shared memory into the tile `dst` of block r's (the cluster's block of rank r), each thread
// storing its share of the elements. With remote_barrier (a T.alloc_cluster_barrier barrier),
// once the copying threads are all done, one of them arrives at block r's copy of it: one arrival
// a call, and block r's wait on it sees the tile. Without it, a T.cluster_sync does. Each thread
// fences its stores for the async proxy, so the peer's wgmma may read the tile. TileLang's
// cluster_mask (TMA multicast) is not supported; its hints (eviction_policy, coalesced_width)
// are accepted.
CtValue copy_cluster(Elaborator& el, const EvaluatedCall& call) {
  CallArgs a = el.bind(call, {"src", "dst", "dst_block=None", "cluster_mask=None", "remote_barrier=None",
                              "eviction_policy=None", "coalesced_width=None", "annotations=None", "loop_layout=None"});
  require_cluster(el, call, "copies between the shared memory of a thread block cluster's blocks");
  const SourceLoc& loc = call.node->loc;
  for (const char* unsupported : {"cluster_mask", "annotations", "loop_layout"})
    if (a[unsupported].kind != K::None)
      error_at(a.loc(unsupported), std::string("T.copy_cluster(") + unsupported +
                                       "=...) is not supported: tilec's T.copy_cluster copies shared memory into a "
                                       "peer block's (dst_block=...), not by TMA multicast");
  if (a["dst_block"].kind == K::None)
    error_at(loc, "T.copy_cluster: name the block of the cluster whose shared memory 'dst' is in (dst_block=rank)");
  if (el.parallel_depth_ > 0)
    error_at(loc, "T.copy_cluster is a tile operation of the block's threads; it goes outside T.Parallel loops");
  if (el.thread_group_) el.thread_group_needed_ = true;
  auto node = copy_between(el, a, "T.copy_cluster", loc);
  op::check_same_tile(node->src, a.loc("src"), node->dst, "T.copy_cluster", "source", "destination");
  auto require_tile_in_shared = [&](const ir::BufferRegion& r, const char* name) {
    if (r.buffer->scope != ir::MemoryScope::Shared)
      error_at(a.loc(name), "T.copy_cluster copies shared memory to shared memory; '" + r.buffer->name + "' is " +
                                ir::scope_name(r.buffer->scope));
    if (el.barrier_buffers_.count(r.buffer.get()))
      error_at(a.loc(name), "T.copy_cluster: '" + r.buffer->name + "' holds barriers, which are arrived at "
                                "(T.mbarrier_arrive), not copied");
  };
  require_tile_in_shared(node->src, "src");
  require_tile_in_shared(node->dst, "dst");
  ir::Expr rank = peer_rank(el, a, "dst_block", "T.copy_cluster");
  std::optional<ir::Expr> barrier;
  if (a["remote_barrier"].kind != K::None)
    barrier = cluster_barrier_address(el, a, "remote_barrier", "T.copy_cluster");

  const std::vector<int> src_dims = ir::squeezed_dims(node->src), dst_dims = ir::squeezed_dims(node->dst);
  const std::vector<ir::Expr> extents = ir::squeezed_extents(node->dst);
  std::vector<ir::Expr> vars, src_at, dst_at;
  for (size_t k = 0; k < extents.size(); ++k) vars.push_back(ir::make_var("i" + std::to_string(k), DType::Int32));
  auto at = [&](const ir::BufferRegion& r, const std::vector<int>& dims) {
    std::vector<ir::Expr> indices;
    for (const ir::Range& range : r.region) indices.push_back(range.min);
    for (size_t k = 0; k < dims.size(); ++k)
      indices[dims[k]] = ir::make_Add(indices[dims[k]], ir::make_cast(indices[dims[k]]->dtype, vars[k]));
    return indices;
  };
  ir::Expr value = ir::make_cast(node->dst.buffer->dtype, ir::make_load(node->src.buffer, at(node->src, src_dims)));
  ir::Stmt body = ir::device_call("store_to_block", {ir::address_of(node->dst.buffer, at(node->dst, dst_dims)), rank, value},
                                  loc);
  for (size_t k = extents.size(); k-- > 0;)
    body = ir::with_loc(ir::make_for(vars[k], ir::make_int(0), ir::simplify(ir::make_cast(DType::Int32, extents[k])),
                                     ir::ForKind::Parallel, body),
                        loc);
  el.emit(body);
  el.reaches_peer_blocks_ = true;
  el.emit(ir::device_call("fence_proxy_async_cluster", {}, loc));
  if (barrier) {
    const int64_t leader = el.thread_group_ ? el.thread_group_->first : 0;
    el.emit(ir::device_call("sync_threads", {}, loc));
    el.emit(ir::with_loc(
        ir::make_if(ir::thread_in(leader, leader + 1), ir::device_call("mbarrier_arrive_in_block", {*barrier, rank}, loc)),
        loc));
  }
  return CtValue::none();
}

}  // namespace

void add_cluster_builtins(BuiltinTable& t) {
  // T.block_rank_in_cluster(): the block's place in its thread block cluster (T.Kernel's
  // cluster_dims), x fastest; 0 in a kernel without clusters, as CUDA's %cluster_ctarank is.
  t["T.block_rank_in_cluster"] = [](Elaborator& el, const EvaluatedCall& c) {
    if (!el.in_kernel_) error_at(c.node->loc, c.callee_name + " goes inside a T.Kernel block");
    el.bind(c, {});
    if (!el.kernel_->clustered()) return CtValue::of_int(0);
    return CtValue::of_expr(ir::device_value(DType::Int32, "block_rank_in_cluster", {}));
  };
  // T.cluster_sync(): every thread of every block of the cluster waits here for the others; what
  // each wrote before (to global or to a peer's shared memory) is seen by all after.
  t["T.cluster_sync"] = [](Elaborator& el, const EvaluatedCall& c) {
    el.bind(c, {});
    require_cluster(el, c, "waits for the blocks of a thread block cluster");
    if (el.thread_group_ || el.parallel_depth_ > 0)
      error_at(c.node->loc, "T.cluster_sync waits for every thread of the cluster; it goes outside T.Parallel loops "
                            "and thread groups");
    el.emit(ir::device_call("cluster_sync", {}, c.node->loc));
    return CtValue::none();
  };
  t["T.copy_cluster"] = copy_cluster;
}

}  // namespace tilec::frontend
