// Warp specialization written by hand, as TileLang's programs write it: mbarriers
// (T.alloc_barrier) that T.ws groups (Elaborator::exec_thread_group) wait on and arrive at,
// T.tma_copy, whose loads complete on one, and T.set_max_nreg. These are sm_90a's
// instructions: the CUDA passes lower them, and the CPU backend refuses them
// (passes/thread_loops.h). The program orders its groups itself; tilec adds no barrier between
// them (passes/gpu/insert_barriers.h).
#include "frontend/builtin_table.h"
#include "ir/device_calls.h"
#include "ir/simplify.h"
#include "ir/printer.h"
#include "op/copy.h"

namespace tilec::frontend {

using K = CtValue::Kind;

namespace {

// An mbarrier's arrival count is at most 2^20 - 1 (PTX's mbarrier.init).
constexpr int64_t kMaxArrivals = (int64_t{1} << 20) - 1;

// Each of these goes in the T.Kernel block; in an `if tx < n:` it makes the branch a thread group
// (Elaborator::exec_if): its threads synchronize as one, which is what it is written for.
void require_kernel(Elaborator& el, const EvaluatedCall& call) {
  if (!el.in_kernel_) error_at(call.node->loc, call.callee_name + " goes inside a T.Kernel block");
  if (el.thread_group_) el.thread_group_needed_ = true;
}

// The barrier buffer of argument `name` (T.alloc_barrier's or T.alloc_cluster_barrier's).
TileOperand barrier_operand(Elaborator& el, const CallArgs& a, const std::string& name, const std::string& fn) {
  const SourceLoc loc = a.loc(name);
  TileOperand op = el.operand(a[name], loc, fn + "() argument '" + name + "'");
  if (!el.barrier_buffers_.count(op.buffer.get()))
    error_at(loc, fn + ": '" + name + "' is a barrier from T.alloc_barrier(...), not '" + op.buffer->name + "'");
  return op;
}

// &bars[i]: one barrier of a T.alloc_barrier buffer, written bars[i], or the buffer itself when
// it holds one.
ir::Expr barrier_address(Elaborator& el, const CallArgs& a, const std::string& name, const std::string& fn) {
  TileOperand op = barrier_operand(el, a, name, fn);
  std::vector<ir::Expr> at;
  for (const ir::Range& r : op.ranges) {
    if (!op.point_only && !ir::is_one(ir::simplify(r.extent)))
      error_at(a.loc(name), fn + ": '" + op.buffer->name + "' holds several barriers; pass one of them (" +
                                op.buffer->name + "[i])");
    at.push_back(r.min);
  }
  return ir::address_of(op.buffer, at);
}

// Whether argument `name` is a barrier of T.alloc_cluster_barrier's.
bool is_cluster_barrier(Elaborator& el, const CallArgs& a, const std::string& name, const std::string& fn) {
  return el.cluster_barrier_buffers_.count(barrier_operand(el, a, name, fn).buffer.get()) > 0;
}

}  // namespace

ir::Buffer make_barriers(Elaborator& el, const std::vector<int64_t>& arrivals, bool in_cluster, const SourceLoc& loc) {
  ir::Buffer bars = ir::make_buffer(el.buffer_name_for("barrier"), DType::UInt64,
                                    {ir::make_int(static_cast<int64_t>(arrivals.size()))}, {},
                                    ir::MemoryScope::Shared, loc);
  el.note_made_buffer(bars);
  el.kernel_allocs_.push_back(bars);
  el.barrier_buffers_.insert(bars.get());
  if (in_cluster) el.cluster_barrier_buffers_.insert(bars.get());
  std::vector<ir::Stmt> init;
  for (size_t i = 0; i < arrivals.size(); ++i)
    init.push_back(ir::device_call(
        "mbarrier_init", {ir::address_of(bars, {ir::make_int(static_cast<int64_t>(i))}), ir::make_int(arrivals[i])},
        loc));
  init.push_back(ir::device_call("fence_mbarrier_init", {}, loc));
  el.emit(ir::with_loc(ir::make_if(ir::thread_in(0, 1), ir::make_seq(init)), loc));
  el.emit(ir::device_call(in_cluster ? "cluster_sync" : "sync_threads", {}, loc));
  return bars;
}

namespace {

// T.alloc_barrier(arrive_count): one mbarrier, or one for each count of a list; a phase of
// barrier i completes when arrive_count[i] threads have arrived and the bytes of the TMA loads
// it expects have come. Thread 0 initializes them where the call is, before the block's
// threads go on together.
// T.alloc_cluster_barrier(arrive_count): the same, in a kernel with thread block clusters, for
// barriers the cluster's other blocks arrive at too (T.mbarrier_arrive(bar, cta_id=...),
// T.copy_cluster's remote_barrier): the cluster's blocks go on together after the
// initialization, so no block arrives at a peer's barrier before it is initialized.
CtValue alloc_barrier(Elaborator& el, const EvaluatedCall& call) {
  require_kernel(el, call);
  const bool in_cluster = call.callee_name == "T.alloc_cluster_barrier";
  const std::string& fn = call.callee_name;
  CallArgs a = el.bind(call, {"arrive_count"});
  if (el.under_runtime_control() || el.thread_group_ || el.parallel_depth_ > 0)
    error_at(call.node->loc, fn + " goes in the T.Kernel block itself, outside loops, branches and T.ws groups: "
                                  "every thread of the " + (in_cluster ? "cluster" : "block") +
                                  " waits there for the barriers' initialization");
  if (in_cluster && !el.kernel_->clustered())
    error_at(call.node->loc, "T.alloc_cluster_barrier makes barriers a thread block cluster's blocks share; this "
                             "T.Kernel has no cluster_dims (T.alloc_barrier makes a block's own)");
  const CtValue& counts = a["arrive_count"];
  std::vector<CtValue> items = counts.is_sequence() ? counts.items.vector() : std::vector<CtValue>{counts};
  if (items.empty()) error_at(a.loc("arrive_count"), fn + ": the list of arrival counts is empty");
  std::vector<int64_t> arrivals;
  for (const CtValue& item : items) {
    int64_t n = el.to_int(item, a.loc("arrive_count"), fn + " arrive_count");
    if (n < 1 || n > kMaxArrivals)
      error_at(a.loc("arrive_count"), fn + ": an arrival count is between 1 and " + std::to_string(kMaxArrivals) +
                                          ", not " + std::to_string(n));
    arrivals.push_back(n);
  }
  return CtValue::of_buffer(make_barriers(el, arrivals, in_cluster, call.node->loc));
}

// T.barrier_wait(mbarrier, parity), T.mbarrier_wait_parity(mbarrier, parity): the thread waits
// until the barrier's phase of this parity (0 first, then 1, 0, ...) has completed. A cluster
// barrier's wait acquires what the peer blocks that arrived released.
CtValue wait_parity(Elaborator& el, const EvaluatedCall& call) {
  require_kernel(el, call);
  CallArgs a = el.bind(call, {"mbarrier", "parity"});
  ir::Expr bar = barrier_address(el, a, "mbarrier", call.callee_name);
  ir::Expr parity = el.to_expr_of(a["parity"], DType::Int32, a.loc("parity"), call.callee_name + " parity");
  const bool in_cluster = is_cluster_barrier(el, a, "mbarrier", call.callee_name);
  el.emit(ir::device_call(in_cluster ? "mbarrier_wait_parity_in_cluster" : "mbarrier_wait_parity", {bar, parity},
                          call.node->loc));
  return CtValue::none();
}

}  // namespace

// The rank of a block of the kernel's cluster from argument `name`: an int32 expression, checked
// against the cluster's size where it is a constant.
ir::Expr peer_rank(Elaborator& el, const CallArgs& a, const std::string& name, const std::string& fn) {
  const int64_t blocks = el.kernel_->cluster_dims[0] * el.kernel_->cluster_dims[1] * el.kernel_->cluster_dims[2];
  ir::Expr rank = el.to_expr_of(a[name], DType::Int32, a.loc(name), fn + " " + name);
  int64_t value;
  if (ir::is_const_int(ir::simplify(rank), &value) && (value < 0 || value >= blocks))
    error_at(a.loc(name), fn + ": " + name + " is the rank of a block of the cluster, from 0 to " +
                              std::to_string(blocks - 1) + ", not " + std::to_string(value));
  return rank;
}

// The address of the cluster barrier of argument `name`, for a peer block's arrival.
ir::Expr cluster_barrier_address(Elaborator& el, const CallArgs& a, const std::string& name, const std::string& fn) {
  ir::Expr bar = barrier_address(el, a, name, fn);
  if (!is_cluster_barrier(el, a, name, fn))
    error_at(a.loc(name), fn + ": a peer block arrives only at barriers from T.alloc_cluster_barrier(...), which "
                              "the cluster's blocks initialize before any of them goes on");
  return bar;
}

namespace {

// T.barrier_arrive(mbarrier), T.mbarrier_arrive(mbarrier, cta_id=None): this thread arrives, at
// the barrier of its own block or, with cta_id, at that block of the cluster's copy of it.
CtValue arrive(Elaborator& el, const EvaluatedCall& call) {
  require_kernel(el, call);
  const bool cluster_form = call.callee_name == "T.mbarrier_arrive";
  CallArgs a = cluster_form ? el.bind(call, {"mbarrier", "cta_id=None"}) : el.bind(call, {"mbarrier"});
  if (cluster_form && a["cta_id"].kind != K::None) {
    if (!el.kernel_->clustered())
      error_at(a.loc("cta_id"), "T.mbarrier_arrive(cta_id=...) arrives at a barrier of another block of the "
                                "thread block cluster; this T.Kernel has no cluster_dims");
    ir::Expr bar = cluster_barrier_address(el, a, "mbarrier", call.callee_name);
    el.reaches_peer_blocks_ = true;
    el.emit(ir::device_call("mbarrier_arrive_in_block", {bar, peer_rank(el, a, "cta_id", call.callee_name)},
                            call.node->loc));
    return CtValue::none();
  }
  el.emit(ir::device_call("mbarrier_arrive", {barrier_address(el, a, "mbarrier", call.callee_name)}, call.node->loc));
  return CtValue::none();
}

// T.mbarrier_expect_tx(mbarrier, tx) / T.mbarrier_arrive_expect_tx(mbarrier, tx): the barrier's
// current phase also waits for tx more bytes of TMA loads (and, the second, this thread arrives).
CtValue expect_tx(Elaborator& el, const EvaluatedCall& call, bool and_arrive) {
  require_kernel(el, call);
  CallArgs a = el.bind(call, {"mbarrier", "tx"});
  ir::Expr bar = barrier_address(el, a, "mbarrier", call.callee_name);
  int64_t bytes = el.to_int(a["tx"], a.loc("tx"), call.callee_name + " tx");
  if (bytes < 0 || bytes > kMaxArrivals)
    error_at(a.loc("tx"), call.callee_name + ": tx is a byte count between 0 and " + std::to_string(kMaxArrivals) +
                              ", not " + std::to_string(bytes));
  el.emit(ir::device_call(and_arrive ? "mbarrier_arrive_expect_tx" : "mbarrier_expect_tx", {bar, ir::make_int(bytes)},
                          call.node->loc));
  return CtValue::none();
}

}  // namespace

int64_t multicast_mask(Elaborator& el, const CallArgs& a, const std::string& fn) {
  if (!el.kernel_->clustered())
    error_at(a.loc("cluster_mask"), fn + "(cluster_mask=...) multicasts a tile to blocks of the thread block "
                                         "cluster; this T.Kernel has no cluster_dims");
  const int64_t blocks = el.kernel_->cluster_dims[0] * el.kernel_->cluster_dims[1] * el.kernel_->cluster_dims[2];
  const int64_t mask = el.to_int(a["cluster_mask"], a.loc("cluster_mask"), fn + " cluster_mask");
  if (mask <= 0 || mask >= (int64_t{1} << blocks))
    error_at(a.loc("cluster_mask"), fn + ": cluster_mask sets the bits of ranks of the cluster's " +
                                        std::to_string(blocks) + " blocks (from 1 to " +
                                        std::to_string((int64_t{1} << blocks) - 1) + "), not " + std::to_string(mask));
  return mask;
}

void emit_tma_load(Elaborator& el, std::shared_ptr<ir::Copy> load, int64_t mask, const SourceLoc& loc) {
  int64_t bytes = load->dst.buffer->dtype.bytes();
  for (const ir::Range& r : load->dst.region) {
    int64_t extent;
    if (!ir::is_const_int(ir::simplify(r.extent), &extent))
      error_at(loc, "T.tma_copy: the tile's extents are constants (a TMA box), not " + ir::to_string(r.extent));
    bytes *= extent;
  }
  ir::Stmt issued(load);
  if (mask) {
    // the lowest masked rank multicasts; the others of the mask take their tiles from it
    auto multicast = std::make_shared<ir::Copy>(*load);
    multicast->multicast = mask;
    const ir::Expr rank = ir::device_value(DType::Int32, "block_rank_in_cluster", {});
    const std::vector<int> ranks = ir::ranks_in_mask(mask);
    const int64_t blocks = el.kernel_->cluster_dims[0] * el.kernel_->cluster_dims[1] * el.kernel_->cluster_dims[2];
    const bool all = static_cast<int64_t>(ranks.size()) == blocks;
    const ir::Expr outside_mask =
        ir::make_EQ(ir::make_BitAnd(ir::make_ShiftRight(ir::make_int(mask), rank), ir::make_int(1)), ir::make_int(0));
    issued = ir::make_if(ir::make_EQ(rank, ir::make_int(ranks.front())), ir::Stmt(multicast),
                         all ? ir::Stmt() : ir::make_if(outside_mask, issued));
    el.reaches_peer_blocks_ = true;
  }
  const int64_t leader = el.thread_group_ ? el.thread_group_->first : 0;
  ir::Stmt issue = ir::make_seq({ir::device_call("mbarrier_expect_tx", {load->barrier, ir::make_int(bytes)}, loc), issued});
  el.emit(ir::with_loc(ir::make_if(ir::thread_in(leader, leader + 1), issue), loc));
}

namespace {

// T.tma_copy(src, dst, barrier=...): a load of a global tile into a shared one by the Tensor
// Memory Accelerator, issued by the first thread of the T.ws group (of the block outside one),
// which first adds the tile's bytes to what the barrier's phase waits for; nothing waits here.
// The group's threads arrive at the barrier themselves (T.barrier_arrive), and a wait for its
// phase (T.barrier_wait) sees the tile. A store (shared to global) is T.copy's, which TMA makes
// when it can and which is complete when the call returns.
// With cluster_mask (TileLang's multicast), of the blocks whose ranks the mask sets, the lowest
// loads the tile into every one's dst, counting its bytes on every one's copy of the barrier (a
// cluster barrier: the cluster's blocks initialize theirs before any goes on); each of them
// adds the bytes to its own barrier's phase. A block outside the mask loads its own tile. That
// the other blocks are done with what the load overwrites is the program's to ensure (as a
// block's own loads are).
CtValue tma_copy(Elaborator& el, const EvaluatedCall& call) {
  require_kernel(el, call);
  CallArgs a = el.bind(call, {"src", "dst", "barrier=None", "cluster_mask=None", "leader_scope_threads=None",
                              "eviction_policy=None", "annotations=None"});
  const SourceLoc& loc = call.node->loc;
  for (const char* unsupported : {"leader_scope_threads", "annotations"})
    if (a[unsupported].kind != K::None)
      error_at(a.loc(unsupported), std::string("T.tma_copy(") + unsupported +
                                       "=...) is not supported: the group's first thread issues the copy");
  auto node = copy_between(el, a, "T.tma_copy", loc);
  node->eviction = eviction_policy(a, "T.tma_copy");
  op::check(*node, a.loc("src"));
  const bool load = node->src.buffer->scope == ir::MemoryScope::Global &&
                    node->dst.buffer->scope == ir::MemoryScope::Shared;
  const bool store = node->src.buffer->scope == ir::MemoryScope::Shared &&
                     node->dst.buffer->scope == ir::MemoryScope::Global;
  if (!load && !store)
    error_at(loc, "T.tma_copy moves a tile between global and shared memory, not from " +
                      std::string(ir::scope_name(node->src.buffer->scope)) + " '" + node->src.buffer->name + "' to " +
                      ir::scope_name(node->dst.buffer->scope) + " '" + node->dst.buffer->name + "'");
  if (store) {
    if (a["barrier"].kind != K::None)
      error_at(a.loc("barrier"), "T.tma_copy: a store to global memory completes on no barrier");
    if (a["cluster_mask"].kind != K::None)
      error_at(a.loc("cluster_mask"), "T.tma_copy: a store to global memory is not multicast (cluster_mask is for "
                                      "loads into the shared memory of a cluster's blocks)");
    el.emit(ir::Stmt(node));
    return CtValue::none();
  }
  if (a["barrier"].kind == K::None)
    error_at(loc, "T.tma_copy: a load into shared memory completes on a barrier; pass barrier=bars[i]");
  const int64_t mask = a["cluster_mask"].kind == K::None ? 0 : multicast_mask(el, a, "T.tma_copy");
  node->barrier = mask ? cluster_barrier_address(el, a, "barrier", "T.tma_copy(cluster_mask=...)")
                       : barrier_address(el, a, "barrier", "T.tma_copy");
  emit_tma_load(el, node, mask, loc);
  return CtValue::none();
}

// T.set_max_nreg(reg_count, is_inc): the registers each thread of the warpgroup keeps drop
// (is_inc 0) or grow (1) to reg_count, a multiple of 8 in [24, 256]; every warp of the warpgroup
// runs it.
CtValue set_max_nreg(Elaborator& el, const EvaluatedCall& call, std::optional<bool> grow) {
  require_kernel(el, call);
  CallArgs a = grow ? el.bind(call, {"reg_count"}) : el.bind(call, {"reg_count", "is_inc"});
  int64_t count = el.to_int(a["reg_count"], a.loc("reg_count"), call.callee_name + " reg_count");
  if (count < 24 || count > 256 || count % 8 != 0)
    error_at(a.loc("reg_count"), call.callee_name + ": reg_count is a multiple of 8 from 24 to 256, not " +
                                     std::to_string(count));
  if (!grow) {
    int64_t inc = el.to_int(a["is_inc"], a.loc("is_inc"), "T.set_max_nreg is_inc");
    if (inc != 0 && inc != 1)
      error_at(a.loc("is_inc"), "T.set_max_nreg: is_inc is 1 (grow) or 0 (drop), not " + std::to_string(inc));
    grow = inc == 1;
  }
  el.emit(ir::device_call(std::string(*grow ? "setmaxnreg_inc<" : "setmaxnreg_dec<") + std::to_string(count) + ">",
                          {}, call.node->loc));
  return CtValue::none();
}

// T.access_ptr(base, access_type="r", *extents, extent=None, offset=0, ignore_last_ndim=0): the
// address of base's first element (a buffer's, a slice's, an element's), for T.ptx_cp_async.
// The access type and extents are TVM's bookkeeping; tilec takes the address alone.
CtValue access_ptr(Elaborator& el, const EvaluatedCall& call_in) {
  require_kernel(el, call_in);
  EvaluatedCall call = call_in;
  if (call.positional.size() > 2) {  // *extents
    call.positional.resize(2);
    call.positional_locs.resize(2);
  }
  CallArgs a = el.bind(call, {"base", "access_type=\"r\"", "extent=None", "offset=0", "ignore_last_ndim=0"});
  for (const char* zero : {"offset", "ignore_last_ndim"})
    if (el.to_int(a[zero], a.loc(zero), std::string("T.access_ptr ") + zero) != 0)
      error_at(a.loc(zero), std::string("T.access_ptr(") + zero + "=...) is not supported: index the element "
                            "whose address you want (T.access_ptr(A[i, j + k]))");
  const CtValue& mode = a["access_type"];
  if (!(mode.kind == K::String && (mode.text == "r" || mode.text == "w" || mode.text == "rw")) && !mode.is_number())
    error_at(a.loc("access_type"), "T.access_ptr's access_type is \"r\", \"w\", \"rw\" or a mask, not " + describe(mode));
  TileOperand op = el.operand(a["base"], a.loc("base"), "T.access_ptr() argument 'base'");
  std::vector<ir::Expr> at;
  for (const ir::Range& r : op.ranges) at.push_back(r.min);
  return CtValue::of_expr(ir::address_of(op.buffer, at));
}

// The buffer of an address T.access_ptr made, else an error naming the argument.
const ir::BufferLoad& accessed_element(const CtValue& v, const SourceLoc& loc, const std::string& what) {
  const auto* call = v.kind == K::Expr ? v.expr.as<ir::Call>() : nullptr;
  if (!call || call->name != ir::kAddressOf) error_at(loc, what + " is an address from T.access_ptr(...), not " + describe(v));
  return *call->args.at(0).as<ir::BufferLoad>();
}

// T.ptx_cp_async(dst, src, num_elems, predicate=None, eviction_policy=None, prefetch_size=None):
// this thread's cp.async of num_elems elements (4, 8 or 16 bytes) from global memory to shared
// memory, both addresses from T.access_ptr; zeros where the predicate is false. It lands by
// T.cp_async_barrier_noinc's barrier phase. The two hints are tilec's, for L2: the priority of
// the lines read when L2 evicts ("evict_first", "evict_normal", "evict_last"), and the bytes L2
// fetches around a miss (64, 128 or 256). They become the device call's template arguments
// (cp_async_16<2, 256>: evict_last, 256 bytes); targets without such hints ignore them.
CtValue ptx_cp_async(Elaborator& el, const EvaluatedCall& call) {
  require_kernel(el, call);
  CallArgs a = el.bind(call, {"dst_access_ptr", "src_access_ptr", "num_elems", "predicate=None",
                              "eviction_policy=None", "prefetch_size=None"});
  const ir::BufferLoad& dst = accessed_element(a["dst_access_ptr"], a.loc("dst_access_ptr"), "T.ptx_cp_async's destination");
  const ir::BufferLoad& src = accessed_element(a["src_access_ptr"], a.loc("src_access_ptr"), "T.ptx_cp_async's source");
  if (dst.buffer->scope != ir::MemoryScope::Shared || src.buffer->scope != ir::MemoryScope::Global)
    error_at(call.node->loc, "T.ptx_cp_async copies from global memory ('" + src.buffer->name + "' is " +
                                 ir::scope_name(src.buffer->scope) + ") to shared memory ('" + dst.buffer->name +
                                 "' is " + ir::scope_name(dst.buffer->scope) + ")");
  if (dst.buffer->dtype.bytes() != src.buffer->dtype.bytes())
    error_at(call.node->loc, "T.ptx_cp_async: '" + src.buffer->name + "' and '" + dst.buffer->name +
                                 "' have elements of different sizes");
  const int64_t n = el.to_int(a["num_elems"], a.loc("num_elems"), "T.ptx_cp_async num_elems");
  const int64_t bytes = n * dst.buffer->dtype.bytes();
  if (bytes != 4 && bytes != 8 && bytes != 16)
    error_at(a.loc("num_elems"), "T.ptx_cp_async moves 4, 8 or 16 bytes; " + std::to_string(n) + " elements of " +
                                     dst.buffer->dtype.name() + " are " + std::to_string(bytes));
  ir::Expr pred = a["predicate"].kind == K::None
                      ? ir::make_bool(true)
                      : el.to_expr_of(a["predicate"], DType::Bool, a.loc("predicate"), "T.ptx_cp_async predicate");
  const int policy = static_cast<int>(eviction_policy(a, "T.ptx_cp_async"));
  int64_t prefetch = 0;
  if (a["prefetch_size"].kind != K::None) {
    prefetch = el.to_int(a["prefetch_size"], a.loc("prefetch_size"), "T.ptx_cp_async prefetch_size");
    if (prefetch != 64 && prefetch != 128 && prefetch != 256)
      error_at(a.loc("prefetch_size"),
               "T.ptx_cp_async's prefetch_size is 64, 128 or 256 bytes, not " + std::to_string(prefetch));
  }
  std::string name = "cp_async_" + std::to_string(bytes);
  if (policy || prefetch) name += "<" + std::to_string(policy) + ", " + std::to_string(prefetch) + ">";
  el.emit(ir::device_call(name, {a["dst_access_ptr"].expr, a["src_access_ptr"].expr, pred}, call.node->loc));
  return CtValue::none();
}

// T.prefetch_l2(X[i, j]): a hint that the 128-byte line holding element X[i, j] of a global
// tensor be brought into L2 now, for a load soon after (CUDA's prefetch.global.L2; nothing on
// targets without one). An element outside X is not prefetched.
CtValue prefetch_l2(Elaborator& el, const EvaluatedCall& call) {
  require_kernel(el, call);
  CallArgs a = el.bind(call, {"element"});
  TileOperand op = el.operand(a["element"], a.loc("element"), "T.prefetch_l2() argument 'element'");
  if (!op.point_only)
    error_at(a.loc("element"), "T.prefetch_l2 takes one element (index every dim of '" + op.buffer->name +
                                   "'), the line that holds it is prefetched");
  if (op.buffer->scope != ir::MemoryScope::Global)
    error_at(a.loc("element"), "T.prefetch_l2 prefetches global memory; '" + op.buffer->name + "' is " +
                                   ir::scope_name(op.buffer->scope));
  std::vector<ir::Expr> at;
  ir::Expr inside;
  for (size_t d = 0; d < op.ranges.size(); ++d) {
    at.push_back(op.ranges[d].min);
    ir::Expr index = ir::make_cast(DType::Int64, op.ranges[d].min);
    ir::Expr dim_in = ir::make_And(ir::make_GE(index, ir::make_int(0, DType::Int64)),
                                   ir::make_LT(index, ir::make_cast(DType::Int64, op.buffer->shape[d])));
    inside = inside ? ir::make_And(inside, dim_in) : dim_in;
  }
  ir::Stmt prefetch = ir::device_call("prefetch_l2", {ir::address_of(op.buffer, at)}, call.node->loc);
  el.emit(ir::with_loc(ir::make_if(ir::simplify(inside), prefetch), call.node->loc));
  return CtValue::none();
}

}  // namespace

void add_warp_specialize_builtins(BuiltinTable& t) {
  t["T.access_ptr"] = access_ptr;
  t["T.ptx_cp_async"] = ptx_cp_async;
  t["T.prefetch_l2"] = prefetch_l2;
  // T.cp_async_barrier_noinc(barrier): the barrier gets this thread's arrival once its
  // cp.async copies so far have landed.
  t["T.cp_async_barrier_noinc"] = [](Elaborator& el, const EvaluatedCall& c) {
    require_kernel(el, c);
    CallArgs a = el.bind(c, {"barrier"});
    el.emit(ir::device_call("cp_async_mbarrier_arrive_noinc", {barrier_address(el, a, "barrier", c.callee_name)},
                            c.node->loc));
    return CtValue::none();
  };
  // T.fence_proxy_async(): this thread's writes to shared memory are seen by the async proxy
  // (wgmma, TMA stores) after the barrier that follows.
  t["T.fence_proxy_async"] = [](Elaborator& el, const EvaluatedCall& c) {
    require_kernel(el, c);
    el.bind(c, {});
    el.emit(ir::device_call("fence_proxy_async", {}, c.node->loc));
    return CtValue::none();
  };
  // T.wait_wgmma(n): until at most n of the thread's wgmma groups (T.wgmma_gemm, T.gemm with
  // wg_wait=-1) are in flight.
  t["T.wait_wgmma"] = [](Elaborator& el, const EvaluatedCall& c) {
    require_kernel(el, c);
    CallArgs a = el.bind(c, {"id"});
    const int64_t n = el.to_int(a["id"], a.loc("id"), "T.wait_wgmma id");
    if (n < 0) error_at(a.loc("id"), "T.wait_wgmma's count of wgmma groups left in flight is 0 or more");
    el.emit(ir::with_loc(ir::make_evaluate(ir::make_call(DType::Int32, ir::kWaitWgmma, {ir::make_int(n)})),
                         c.node->loc));
    return CtValue::none();
  };
  t["T.alloc_barrier"] = alloc_barrier;
  t["T.alloc_cluster_barrier"] = alloc_barrier;
  t["T.barrier_wait"] = wait_parity;
  t["T.mbarrier_wait_parity"] = wait_parity;
  t["T.barrier_arrive"] = arrive;
  t["T.mbarrier_arrive"] = arrive;
  t["T.mbarrier_expect_tx"] = [](Elaborator& el, const EvaluatedCall& c) { return expect_tx(el, c, false); };
  t["T.mbarrier_arrive_expect_tx"] = [](Elaborator& el, const EvaluatedCall& c) { return expect_tx(el, c, true); };
  t["T.tma_copy"] = tma_copy;
  t["T.set_max_nreg"] = [](Elaborator& el, const EvaluatedCall& c) { return set_max_nreg(el, c, std::nullopt); };
  t["T.inc_max_nreg"] = [](Elaborator& el, const EvaluatedCall& c) { return set_max_nreg(el, c, true); };
  t["T.dec_max_nreg"] = [](Elaborator& el, const EvaluatedCall& c) { return set_max_nreg(el, c, false); };
  t["T.ws"] = [](Elaborator&, const EvaluatedCall& c) -> CtValue {
    error_at(c.node->loc, "T.ws is used as 'with T.ws(0):', a block of statements for warp group 0");
  };
}

}  // namespace tilec::frontend
