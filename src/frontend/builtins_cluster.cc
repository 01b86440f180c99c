// Thread block clusters (T.Kernel's cluster_dims, sm_90 on): a block's rank in its cluster, the
// cluster's barrier, and T.copy_cluster, which writes into a peer block's shared memory. The
// barriers peer blocks arrive at (T.alloc_cluster_barrier, T.mbarrier_arrive(bar, cta_id=...))
// are with the block's own in builtins_warp_specialize.cc.
#include "frontend/builtin_table.h"
#include "ir/device_calls.h"
#include "ir/region.h"
#include "ir/shared_layout.h"
#include "ir/simplify.h"
#include "op/check.h"
#include "op/copy.h"

namespace tilec::frontend {

using K = CtValue::Kind;

namespace {

// An mbarrier phase's transaction count is at most 2^20 - 1 bytes (PTX's mbarrier).
constexpr int64_t kMaxTransactionBytes = (int64_t{1} << 20) - 1;

void require_cluster(const Elaborator& el, const EvaluatedCall& call, const std::string& what) {
  if (!el.in_kernel_) error_at(call.node->loc, call.callee_name + " goes inside a T.Kernel block");
  if (!el.kernel_->clustered())
    error_at(call.node->loc, call.callee_name + " " + what + "; this T.Kernel has no cluster_dims");
}

// How many elements each of T.copy_cluster's stores moves: 16, 8 or 4 bytes of them where the
// tile's rows are runs of whole such vectors in both buffers (same dtype, the tile's last dim the
// buffers' last, its start, extent and the buffers' rows multiples of the vector), else 0 (an
// element a store, of fewer than 4 bytes or converted).
// tilec's own shared layouts (row-major, the mma swizzle, panels) keep each 16-byte run of a row
// together; a user's (T.annotate_layout) may not, and is copied an element at a time.
int64_t vector_elements(const Elaborator& el, const ir::Copy& copy, const std::vector<int>& src_dims,
                        const std::vector<int>& dst_dims) {
  const DType t = copy.dst.buffer->dtype;
  if (copy.src.buffer->dtype != t || src_dims.empty() || dst_dims.empty()) return 0;
  auto user_laid_out = [&](const ir::Buffer& b) {
    auto it = el.annotated_layouts_.find(b.get());
    return b->view_of || (it != el.annotated_layouts_.end() && it->second->kind() == ir::SharedLayout::Kind::User);
  };
  if (user_laid_out(copy.src.buffer) || user_laid_out(copy.dst.buffer)) return t.bytes() == 4 ? 1 : 0;
  int64_t extent;
  if (!ir::is_const_int(ir::simplify(copy.dst.region[dst_dims.back()].extent), &extent)) return t.bytes() == 4 ? 1 : 0;
  for (int64_t bytes : {16, 8, 4}) {
    const int64_t n = bytes / t.bytes();
    if (n < 1) break;
    auto runs_of_whole_vectors = [&](const ir::BufferRegion& r, int last) {
      if (n == 1) return true;
      int64_t start, row;
      return last + 1 == static_cast<int>(r.region.size()) && ir::is_const_int(ir::simplify(r.region[last].min), &start) &&
             ir::is_const_int(ir::simplify(r.buffer->shape.back()), &row) && start % n == 0 && row % n == 0;
    };
    if (extent % n == 0 && runs_of_whole_vectors(copy.src, src_dims.back()) &&
        runs_of_whole_vectors(copy.dst, dst_dims.back()))
      return n;
  }
  return 0;
}

// T.copy_cluster(src, dst, cluster_mask=m), src global and dst shared: TileLang's multicast copy,
// whole in each block when the call returns. A cluster barrier of its own (initialized here,
// where the cluster's blocks wait for each other), then T.tma_copy(src, dst, barrier=...,
// cluster_mask=m)'s load (the lowest masked rank multicasting it), every thread's arrival and
// its wait. Its barrier serves this one copy, so it goes in the T.Kernel block itself; a copy
// in a loop is T.tma_copy's with barriers of the program's own.
CtValue multicast_copy(Elaborator& el, const CallArgs& a, const SourceLoc& loc) {
  for (const char* other : {"dst_block", "remote_barrier", "annotations", "loop_layout"})
    if (a[other].kind != K::None)
      error_at(a.loc(other), std::string("T.copy_cluster: cluster_mask (a TMA multicast from global memory) takes no ") +
                                 other + "=...");
  if (el.under_runtime_control() || el.thread_group_ || el.parallel_depth_ > 0)
    error_at(loc, "T.copy_cluster(..., cluster_mask=...) goes in the T.Kernel block itself, outside loops, branches "
                  "and T.ws groups (every block of the cluster waits there for its barrier); in a loop, use "
                  "T.tma_copy(src, dst, barrier=bars[i], cluster_mask=...) with barriers of your own");
  const int64_t mask = multicast_mask(el, a, "T.copy_cluster");
  auto load = copy_between(el, a, "T.copy_cluster", loc);
  load->eviction = eviction_policy(a, "T.copy_cluster");
  op::check(*load, a.loc("src"));
  if (load->src.buffer->scope != ir::MemoryScope::Global || load->dst.buffer->scope != ir::MemoryScope::Shared)
    error_at(loc, "T.copy_cluster(..., cluster_mask=...) multicasts a global tile into shared memory, not " +
                      std::string(ir::scope_name(load->src.buffer->scope)) + " '" + load->src.buffer->name + "' to " +
                      ir::scope_name(load->dst.buffer->scope) + " '" + load->dst.buffer->name + "'");
  const ir::Buffer bar = make_barriers(el, {el.kernel_->threads}, true, loc);
  load->barrier = ir::address_of(bar, {ir::make_int(0)});
  emit_tma_load(el, load, mask, loc);
  el.emit(ir::device_call("mbarrier_arrive", {load->barrier}, loc));
  el.emit(ir::device_call("mbarrier_wait_parity_in_cluster", {load->barrier, ir::make_int(0)}, loc));
  return CtValue::none();
}

// T.copy_cluster(src, dst, dst_block=r, remote_barrier=None): the tile `src` of this block's
// shared memory into the tile `dst` of block r's (the cluster's block of rank r), each thread
// storing its share of the elements, up to 16 bytes at a time where the tile allows
// (vector_elements). With remote_barrier (a T.alloc_cluster_barrier barrier) the copy is one
// arrival at block r's copy of it, and block r's wait on it sees the whole tile; without it a
// T.cluster_sync does. Block r's wgmma may read the tile after either (its buffer counts as one
// the generic proxy writes: passes/gpu/insert_barriers.h fences before such reads). With
// cluster_mask, multicast_copy's. TileLang's hints are accepted: coalesced_width changes
// nothing, eviction_policy is the multicast's TMA load's (ir::EvictionPolicy).
CtValue copy_cluster(Elaborator& el, const EvaluatedCall& call) {
  CallArgs a = el.bind(call, {"src", "dst", "dst_block=None", "cluster_mask=None", "remote_barrier=None",
                              "eviction_policy=None", "coalesced_width=None", "annotations=None", "loop_layout=None"});
  require_cluster(el, call, "copies between the shared memory of a thread block cluster's blocks");
  eviction_policy(a, "T.copy_cluster");
  const SourceLoc& loc = call.node->loc;
  if (a["cluster_mask"].kind != K::None) return multicast_copy(el, a, loc);
  for (const char* unsupported : {"annotations", "loop_layout"})
    if (a[unsupported].kind != K::None)
      error_at(a.loc(unsupported), std::string("T.copy_cluster(") + unsupported + "=...) is not supported");
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
  std::vector<ir::Expr> extents = ir::squeezed_extents(node->dst);
  const int64_t vector = vector_elements(el, *node, src_dims, dst_dims);
  if (vector > 1) extents.back() = ir::simplify(ir::make_FloorDiv(extents.back(), ir::make_int(vector)));
  std::vector<ir::Expr> vars;
  for (size_t k = 0; k < extents.size(); ++k) vars.push_back(ir::make_var("i" + std::to_string(k), DType::Int32));
  auto at = [&](const ir::BufferRegion& r, const std::vector<int>& dims) {
    std::vector<ir::Expr> indices;
    for (const ir::Range& range : r.region) indices.push_back(range.min);
    for (size_t k = 0; k < dims.size(); ++k) {
      ir::Expr step = vars[k];
      if (vector > 1 && k + 1 == dims.size()) step = ir::make_Mul(step, ir::make_int(vector));
      indices[dims[k]] = ir::make_Add(indices[dims[k]], ir::make_cast(indices[dims[k]]->dtype, step));
    }
    return indices;
  };
  const int64_t leader = el.thread_group_ ? el.thread_group_->first : 0;
  const std::string bytes = std::to_string(vector * node->dst.buffer->dtype.bytes());
  const ir::Expr dst_at = ir::address_of(node->dst.buffer, at(node->dst, dst_dims));
  // With a barrier, vectors go by st.async, whose bytes the barrier counts: its one arrival
  // (first, adding the tile's bytes to what the phase waits for) needs no barrier of the
  // copying threads, nor does their data a fence. Otherwise plain stores, fenced, then (with a
  // barrier) the threads' barrier and one arrival that releases them.
  const bool asynchronous = barrier && vector > 0;
  ir::Stmt body;
  if (asynchronous) {
    ir::Expr tile_bytes = ir::make_int(node->dst.buffer->dtype.bytes());
    for (const ir::Expr& e : ir::squeezed_extents(node->dst))
      tile_bytes = ir::make_Mul(tile_bytes, ir::make_cast(DType::Int32, e));
    tile_bytes = ir::simplify(tile_bytes);
    int64_t constant_bytes;
    if (ir::is_const_int(tile_bytes, &constant_bytes) && constant_bytes > kMaxTransactionBytes)
      error_at(loc, "T.copy_cluster: a barrier's phase counts at most " + std::to_string(kMaxTransactionBytes) +
                        " bytes, and this tile is " + std::to_string(constant_bytes) + "; copy it in parts");
    el.emit(ir::with_loc(ir::make_if(ir::thread_in(leader, leader + 1),
                                     ir::device_call("mbarrier_arrive_expect_tx_in_block", {*barrier, rank, tile_bytes},
                                                     loc)),
                         loc));
    body = ir::device_call("copy_to_block_async<" + bytes + ">",
                           {dst_at, rank, ir::address_of(node->src.buffer, at(node->src, src_dims)), *barrier}, loc);
  } else if (vector > 0) {
    body = ir::device_call("copy_to_block<" + bytes + ">",
                           {dst_at, rank, ir::address_of(node->src.buffer, at(node->src, src_dims))}, loc);
  } else {
    ir::Expr value = ir::make_cast(node->dst.buffer->dtype, ir::make_load(node->src.buffer, at(node->src, src_dims)));
    body = ir::device_call("store_to_block", {dst_at, rank, value}, loc);
  }
  if (vector > 1)
    for (const ir::BufferRegion* r : {&node->src, &node->dst}) el.copied_in_vectors_.emplace(r->buffer.get(), loc);
  for (size_t k = extents.size(); k-- > 0;)
    body = ir::with_loc(ir::make_for(vars[k], ir::make_int(0), ir::simplify(ir::make_cast(DType::Int32, extents[k])),
                                     ir::ForKind::Parallel, body),
                        loc);
  el.emit(body);
  el.reaches_peer_blocks_ = true;
  if (asynchronous) return CtValue::none();
  el.emit(ir::device_call("fence_proxy_async_cluster", {}, loc));
  if (barrier) {
    el.emit(ir::device_call("sync_threads", {}, loc));
    el.emit(ir::with_loc(ir::make_if(ir::thread_in(leader, leader + 1),
                                     ir::device_call("mbarrier_arrive_release_in_block", {*barrier, rank}, loc)),
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
