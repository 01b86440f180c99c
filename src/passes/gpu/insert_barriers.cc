#include "passes/gpu/insert_barriers.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "ir/device_calls.h"
#include "ir/shared_layout.h"
#include "ir/equal.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/simplify.h"
#include "op/accesses.h"
#include "op/op.h"
#include "passes/thread_groups.h"
#include "passes/thread_values.h"

namespace tilec::passes {
namespace {

using ir::Stmt;
using op::BufferSet;

// Whether tile op `s` reads shared memory through the async proxy, by its instruction.
bool reads_through_async_proxy(const Stmt& s) {
  if (const auto* gemm = s.as<ir::Gemm>()) return gemm->instruction.reads_through_async_proxy();
  if (const auto* copy = s.as<ir::Copy>()) return copy->instruction.reads_through_async_proxy();
  if (const auto* add = s.as<ir::AtomicAdd>()) return add->instruction.reads_through_async_proxy();
  return false;
}

// Buffers filled by async copies: pipeline_loops synchronizes them itself.
class AsyncTargets : public ir::IRVisitor {
 public:
  BufferSet buffers;

 protected:
  void visit_Copy(const ir::Copy* op) override {
    if (op->instruction.asynchronous()) buffers.insert(op->dst.buffer.get());
    IRVisitor::visit_Copy(op);
  }
};

// The shared-memory accesses of a statement or expression: an element access keeps its
// indices; a tile op's region, or any access inside a T.Parallel nest (its elements are other
// threads'), is the whole buffer. Keyed by buffer and printed indices ("*": whole).
struct SharedAccesses : ir::IRVisitor {
  using Indices = std::optional<std::vector<ir::Expr>>;
  using Set = std::map<std::pair<const ir::BufferNode*, std::string>, Indices>;
  Set reads, writes;

  void visit(const Stmt& s) override {
    if (s && op::is_tile_op(s.kind())) {
      op::Regions r = op::regions_of(*s);
      for (const ir::BufferRegion& region : r.reads) whole(region.buffer.get(), reads);
      for (const ir::BufferRegion& region : r.writes) whole(region.buffer.get(), writes);
    }
    const auto* loop = s.as<ir::For>();
    parallel_ += loop && loop->for_kind == ir::ForKind::Parallel;
    IRVisitor::visit(s);
    parallel_ -= loop && loop->for_kind == ir::ForKind::Parallel;
  }
  using IRVisitor::visit;

  static void whole(const ir::BufferNode* b, Set& set) {
    if (b && b->scope == ir::MemoryScope::Shared) set[{b, "*"}] = std::nullopt;
  }
  // Every access of `set` as a whole-buffer one (accesses carried around a loop's back edge:
  // their indices name the last iteration's values).
  static Set wholes(const Set& set) {
    Set out;
    for (const auto& [key, indices] : set) whole(key.first, out);
    return out;
  }
  template <typename V>
  static bool any(const Set& set, V&& v) {
    for (const auto& [key, indices] : set)
      if (v(key.first)) return true;
    return false;
  }

 protected:
  void visit_BufferLoad(const ir::BufferLoad* op) override {
    note(op->buffer.get(), op->indices, reads);
    IRVisitor::visit_BufferLoad(op);
  }
  void visit_BufferStore(const ir::BufferStore* op) override {
    note(op->buffer.get(), op->indices, writes);
    IRVisitor::visit_BufferStore(op);
  }

 private:
  void note(const ir::BufferNode* b, const std::vector<ir::Expr>& indices, Set& set) {
    if (b->scope != ir::MemoryScope::Shared) return;
    if (parallel_ > 0) return whole(b, set);
    std::string key;
    for (const ir::Expr& i : indices) key += ir::to_string(i) + ",";
    set[{b, key}] = indices;
  }
  int parallel_ = 0;
};

// Whether an access of one set and one of another by different threads can touch the same
// bytes: one buffer (unless async copies fill it: pipeline_loops orders those itself), unless
// in some dim both index the buffer alike on every thread and provably apart (`s[r, i]` and
// `s[r ^ 1, j]`); or two buffers whose planned places in shared memory overlap
// (plan_shared_memory gives them disjoint lifetimes, so the barrier between them is the one
// that lets the later reuse the earlier's bytes).
class Overlap {
 public:
  Overlap(BufferSet async, const ThreadValues& thread_values)
      : async_(std::move(async)), thread_values_(thread_values) {}

  bool any(const SharedAccesses::Set& x, const SharedAccesses::Set& y) const {
    for (const auto& [a, ia] : x)
      for (const auto& [b, ib] : y)
        if (meet(a.first, ia, b.first, ib)) return true;
    return false;
  }

 private:
  bool meet(const ir::BufferNode* a, const SharedAccesses::Indices& ia, const ir::BufferNode* b,
            const SharedAccesses::Indices& ib) const {
    if (a == b) return !async_.count(a) && !(ia && ib && apart(*ia, *ib));
    if (a->shared_offset < 0 || b->shared_offset < 0) return false;
    return a->shared_offset < b->shared_offset + ir::shared_footprint(*b) &&
           b->shared_offset < a->shared_offset + ir::shared_footprint(*a);
  }

  bool apart(const std::vector<ir::Expr>& x, const std::vector<ir::Expr>& y) const {
    for (size_t d = 0; d < x.size() && d < y.size(); ++d)
      if (!thread_values_.differs(x[d]) && !thread_values_.differs(y[d]) && different(x[d], y[d])) return true;
    return false;
  }

  // Whether two integer indices differ whatever their variables are: by a nonzero constant, or
  // one is the other with nonzero bits flipped (e ^ 1).
  static bool different(const ir::Expr& x, const ir::Expr& y) {
    int64_t d;
    if (ir::is_const_int(ir::simplify(ir::make_Sub(ir::make_cast(DType::Int64, x), ir::make_cast(DType::Int64, y))), &d))
      return d != 0;
    auto flipped = [](const ir::Expr& e, const ir::Expr& other) {
      const auto* x_or = e.as<ir::BitXor>();
      int64_t bits;
      return x_or && ir::is_const_int(x_or->b, &bits) && bits != 0 && ir::structural_equal(x_or->a, other);
    };
    return flipped(x, y) || flipped(y, x);
  }

  BufferSet async_;
  const ThreadValues& thread_values_;
};

// Accesses made since the last barrier, by any thread.
struct Pending {
  SharedAccesses::Set reads, writes;
  void add(const SharedAccesses& acc) {
    reads.insert(acc.reads.begin(), acc.reads.end());
    writes.insert(acc.writes.begin(), acc.writes.end());
  }
  void add(const Pending& other) {
    reads.insert(other.reads.begin(), other.reads.end());
    writes.insert(other.writes.begin(), other.writes.end());
  }
  bool operator==(const Pending& o) const {
    auto keys = [](const SharedAccesses::Set& s) {
      std::vector<std::pair<const ir::BufferNode*, std::string>> k;
      for (const auto& [key, indices] : s) k.push_back(key);
      return k;
    };
    return keys(reads) == keys(o.reads) && keys(writes) == keys(o.writes);
  }
};

class BarrierPlacer {
 public:
  // `consumer_threads` > 0: the launch is warp-specialized (warp_specialize.h), and the
  // branch its producer warpgroup doesn't take synchronizes only that many threads.
  // `group_barriers`: those of the kernel's T.ws groups; `program_orders_groups`: the kernel
  // orders its groups' accesses itself, with mbarriers (T.alloc_barrier).
  BarrierPlacer(BufferSet async, int consumer_threads, const ThreadValues& thread_values,
                const GroupBarriers& group_barriers, bool program_orders_groups, BufferSet generic_writes)
      : overlap_(std::move(async), thread_values),
        generic_writes_(std::move(generic_writes)),
        consumer_threads_(consumer_threads),
        thread_values_(thread_values),
        group_barriers_(group_barriers),
        program_orders_groups_(program_orders_groups) {}

  // `s` with barriers before each statement that would otherwise see another thread's
  // access of the same buffer (read after write, write after read or write) unseparated;
  // `pending` is updated to what is unseparated after it.
  Stmt place(const Stmt& s, Pending& pending) {
    if (!s) return s;
    if (ir::is_device_call(s, partial_barrier())) {
      pending = Pending();
      return s;
    }
    if (ir::is_device_call(s, "sync_threads")) {
      // The block's barrier (T.sync_threads, a reduction's exchange) in a warp-specialized
      // launch's consumer code waits for the consumers alone: the producer warpgroup never
      // reaches it. In a T.ws group it waits for the group.
      if (!in_consumers_ && !in_producer_ && !group_) {
        pending = Pending();
        return s;
      }
      return reset(pending, s->loc);
    }
    if (auto span = thread_group_of(s)) return place_group(*s.as<ir::IfThenElse>(), *span, pending);
    if (divides_threads(s)) return place_divergent(s, pending);
    return place_parts(s, pending);
  }

 private:
  // A T.ws group's statements (and an elif chain of other groups after it), separated from what
  // the block did before by a barrier of the block before them all (unless the program orders
  // them with mbarriers), and within each group by the group's own barrier. Between the groups
  // of a chain there is none: they are other threads.
  Stmt place_group(const ir::IfThenElse& branch, ThreadSpan span, Pending& pending) {
    if (group_) throw std::logic_error("insert_barriers: a T.ws group inside another");
    SharedAccesses acc;
    acc.visit(Stmt(std::make_shared<ir::IfThenElse>(branch)));
    Stmt before;
    if (!program_orders_groups_ && chain_depth_ == 0 && needs_barrier(acc, pending)) before = reset(pending, branch.loc);
    auto n = std::make_shared<ir::IfThenElse>(branch);
    {
      Pending inside;
      const int divergent = divergent_depth_;
      divergent_depth_ = 0;  // every thread of the group runs its statements
      group_ = span;
      n->then_case = place(branch.then_case, inside);
      group_.reset();
      divergent_depth_ = divergent;
    }
    if (branch.else_case) {
      // The other threads: more groups, whose statements outside them no thread of this one runs.
      Pending others;
      ++chain_depth_;
      ++divergent_depth_;
      n->else_case = place(branch.else_case, others);
      --divergent_depth_;
      --chain_depth_;
    }
    pending.add(acc);
    return ir::make_seq({before, Stmt(n)});
  }

  // `s`'s parts placed: the statements of a sequence, a branch's sides, a loop's body; a leaf
  // with the barrier it needs.
  Stmt place_parts(const Stmt& s, Pending& pending) {
    if (const auto* seq = s.as<ir::Seq>()) {
      std::vector<Stmt> out;
      for (const Stmt& inner : seq->stmts) out.push_back(place(inner, pending));
      return ir::make_seq(out);
    }
    if (const auto* let = s.as<ir::LetStmt>()) {
      leaf_expr_reads(let->value, pending);
      Stmt body = place(let->body, pending);
      auto n = std::make_shared<ir::LetStmt>(*let);
      n->body = body;
      return Stmt(n);
    }
    if (const auto* alloc = s.as<ir::Allocate>()) {
      auto n = std::make_shared<ir::Allocate>(*alloc);
      n->body = place(alloc->body, pending);
      return Stmt(n);
    }
    if (const auto* branch = s.as<ir::IfThenElse>()) {
      Stmt cond_barrier = leaf_expr_reads(branch->condition, pending);
      Pending then_pending = pending, else_pending = pending;
      auto n = std::make_shared<ir::IfThenElse>(*branch);
      const bool split = splits_producer(branch->condition);
      in_producer_ = split;
      n->then_case = place(branch->then_case, then_pending);
      in_producer_ = false;
      if (branch->else_case) {
        const bool saved = in_consumers_;
        in_consumers_ = in_consumers_ || split;
        n->else_case = place(branch->else_case, else_pending);
        in_consumers_ = saved;
      }
      pending = then_pending;
      pending.add(else_pending);
      return ir::make_seq({cond_barrier, Stmt(n)});
    }
    const auto* loop = s.as<ir::For>();
    if (loop && loop->for_kind != ir::ForKind::Parallel) {
      auto n = std::make_shared<ir::For>(*loop);
      Stmt before;
      n->body = place_loop_body(loop->body, pending, before);
      return ir::make_seq({before, Stmt(n)});
    }
    if (const auto* w = s.as<ir::While>()) {
      Stmt cond_barrier = leaf_expr_reads(w->condition, pending);
      auto n = std::make_shared<ir::While>(*w);
      Stmt before;
      n->body = place_loop_body(w->body, pending, before);
      return ir::make_seq({cond_barrier, before, Stmt(n)});
    }
    // A leaf: a tile op, a T.Parallel nest, a store, an evaluated call.
    SharedAccesses acc;
    acc.visit(s);
    Stmt barrier = needs_barrier(acc, pending) ? reset(pending, s->loc) : Stmt();
    // wgmma, TMA stores and reduce-adds (tma_copies.h) read shared memory through the async proxy: the
    // writers' generic stores are ordered before them by their proxy fence, then the barrier.
    // Only those instructions need it (a target that has none never makes the call).
    if (barrier && reads_through_async_proxy(s))
      barrier = ir::make_seq({ir::device_call("fence_proxy_async", {}, s->loc), barrier});
    // In a group of a kernel that orders its groups with mbarriers, the generic writes of
    // other threads (stores, cp.async) reach this thread through the barrier it waited on; its
    // proxy fence makes them seen by the async proxy it reads them through.
    else if (!barrier && group_ && program_orders_groups_ && reads_through_async_proxy(s) &&
             SharedAccesses::any(acc.reads, [&](const ir::BufferNode* b) { return generic_writes_.count(b) > 0; }))
      barrier = ir::device_call("fence_proxy_async", {}, s->loc);
    pending.add(acc);
    return ir::make_seq({barrier, s});
  }

  // A branch or loop whose condition or bounds differ from thread to thread (a kernel written
  // thread by thread, passes/thread_values.h): not every thread reaches a barrier in it, so
  // its accesses are separated from earlier ones by a barrier before it, and one its own
  // statements would need between them is an error.
  bool divides_threads(const Stmt& s) const {
    if (const auto* branch = s.as<ir::IfThenElse>()) {
      // thread_in(lo, hi): a part of the block (one thread issuing copies, initializing
      // barriers), but for the producer warpgroup's side of a warp-specialized launch.
      const auto* call = branch->condition.as<ir::Call>();
      if (call && call->name == ir::kThreadIn) return !splits_producer(branch->condition);
      return thread_values_.differs(branch->condition);
    }
    if (const auto* loop = s.as<ir::For>())
      return thread_values_.differs(loop->min) || thread_values_.differs(loop->extent);
    if (const auto* w = s.as<ir::While>()) return thread_values_.differs(w->condition);
    return false;
  }

  Stmt place_divergent(const Stmt& s, Pending& pending) {
    SharedAccesses acc;
    acc.visit(s);
    Stmt barrier = needs_barrier(acc, pending) ? reset(pending, s->loc) : Stmt();
    Pending inside;
    ++divergent_depth_;
    place_parts(s, inside);  // for its errors: a barrier it would place is one not every thread reaches
    --divergent_depth_;
    pending.add(acc);
    return ir::make_seq({barrier, s});
  }

  // The loop body placed so that every iteration is safe after the previous one. Where the
  // body's barriers are there only for what came before the loop (attention's Q tile, filled
  // before the k loop and read by each iteration's GEMM), one barrier before the loop (`before`)
  // takes their place: it runs once, not every iteration, and doesn't hold the threads in
  // step each time round.
  Stmt place_loop_body(const Stmt& body, Pending& pending, Stmt& before) {
    Pending after_lazy = pending;
    Stmt lazy = place_iterations(body, after_lazy);
    const size_t lazy_barriers = barriers_in(lazy);
    if (lazy_barriers > barriers_in(body) && (!pending.reads.empty() || !pending.writes.empty())) {
      Pending after_hoisted;
      Stmt hoisted = place_iterations(body, after_hoisted);
      if (barriers_in(hoisted) < lazy_barriers) {
        before = reset(pending, body->loc);
        if (reads_through_async_proxy_in(body))
          before = ir::make_seq({ir::device_call("fence_proxy_async", {}, body->loc), before});
        pending = after_hoisted;
        return hoisted;
      }
    }
    pending = after_lazy;
    return lazy;
  }

  // The barriers of a block, of a group or of a warp-specialized launch's consumers in `s`.
  static size_t barriers_in(const Stmt& s) {
    struct Count : ir::IRVisitor {
      size_t n = 0;
      void visit_Evaluate(const ir::Evaluate* op) override {
        const auto* call = op->value.as<ir::Call>();
        n += call && call->name.rfind(std::string(ir::kDeviceCallPrefix) + "sync_threads", 0) == 0;
      }
    } count;
    count.visit(s);
    return count.n;
  }

  static bool reads_through_async_proxy_in(const Stmt& s) {
    struct Find : ir::IRVisitor {
      bool found = false;
      void visit(const Stmt& st) override {
        found |= st && reads_through_async_proxy(st);
        IRVisitor::visit(st);
      }
      using IRVisitor::visit;
    } find;
    find.visit(s);
    return find.found;
  }

  // The loop body placed from `pending` on: placing again with the accesses left unseparated
  // at its end until nothing changes.
  Stmt place_iterations(const Stmt& body, Pending& pending) {
    Pending entry = pending;
    Stmt placed;
    for (int round = 0; round < 4; ++round) {
      Pending p = entry;
      placed = place(body, p);
      // What an iteration leaves unseparated meets the next one's accesses whole: its indices
      // name that iteration's values.
      Pending next = entry, carried;
      carried.reads = SharedAccesses::wholes(p.reads);
      carried.writes = SharedAccesses::wholes(p.writes);
      next.add(carried);
      if (next == entry) {
        pending = next;
        return placed;
      }
      entry = next;
    }
    pending = entry;
    return placed;
  }

  Stmt leaf_expr_reads(const ir::Expr& e, Pending& pending) {
    SharedAccesses acc;
    acc.visit(e);
    Stmt barrier = needs_barrier(acc, pending) ? reset(pending, e->loc) : Stmt();
    pending.reads.insert(acc.reads.begin(), acc.reads.end());
    return barrier;
  }

  bool needs_barrier(const SharedAccesses& acc, const Pending& pending) const {
    return overlap_.any(acc.reads, pending.writes) || overlap_.any(acc.writes, pending.writes) ||
           overlap_.any(acc.writes, pending.reads);
  }

  Stmt reset(Pending& pending, const SourceLoc& loc) const {
    if (divergent_depth_ > 0) barrier_not_reached_by_all(loc);
    if (in_producer_) throw std::logic_error("insert_barriers: a barrier in a producer warpgroup's code");
    pending = Pending();
    if (group_) return ir::device_call(group_barriers_.barrier(*group_), {}, loc);
    return ir::device_call(in_consumers_ ? partial_barrier() : "sync_threads", {}, loc);
  }

  // Whether `condition` is thread_in(T, ...): the producer warpgroup's side of the split.
  bool splits_producer(const ir::Expr& condition) const {
    const auto* call = condition.as<ir::Call>();
    int64_t lo;
    return consumer_threads_ > 0 && call && call->name == ir::kThreadIn && ir::is_const_int(call->args.at(0), &lo) &&
           lo == consumer_threads_;
  }

  std::string partial_barrier() const { return ir::consumer_barrier(consumer_threads_); }

  Overlap overlap_;
  BufferSet generic_writes_;  // shared buffers the kernel writes through the generic proxy
  int consumer_threads_;
  const ThreadValues& thread_values_;
  const GroupBarriers& group_barriers_;
  const bool program_orders_groups_;
  int divergent_depth_ = 0;  // inside a branch or loop that differs from thread to thread
  bool in_consumers_ = false, in_producer_ = false;
  std::optional<ThreadSpan> group_;  // the T.ws group being placed
  int chain_depth_ = 0;              // in the else branch of a group (an elif chain's other groups)
};

// The shared buffers a kernel writes through the generic proxy: by stores, copies other than
// TMA loads, and cp.async (T.ptx_cp_async's destination addresses).
BufferSet generic_writes(const Stmt& body) {
  struct Writes : op::Accesses {
    Writes() : op::Accesses(ir::MemoryScope::Shared) {}
    void visit(const Stmt& st) override {
      const auto* copy = st.as<ir::Copy>();
      if (!copy || copy->instruction.kind != ir::CopyInstructionKind::TmaLoad) op::Accesses::visit(st);
    }
    using op::Accesses::visit;
    void visit_Call(const ir::Call* op) override {
      if (op->name.rfind(std::string(ir::kDeviceCallPrefix) + "cp_async_", 0) == 0 && !op->args.empty())
        if (const auto* at = op->args[0].as<ir::Call>(); at && at->name == ir::kAddressOf)
          writes.insert(at->args.at(0).as<ir::BufferLoad>()->buffer.get());
      op::Accesses::visit_Call(op);
    }
  } w;
  w.visit(body);
  return w.writes;
}

// Whether a kernel waits on mbarriers of its own (T.alloc_barrier's, T.barrier_wait).
bool waits_on_mbarriers(const Stmt& body) {
  struct Waits : ir::IRVisitor {
    bool found = false;
    void visit_Evaluate(const ir::Evaluate* op) override {
      const auto* call = op->value.as<ir::Call>();
      found |= call && call->name == std::string(ir::kDeviceCallPrefix) + "mbarrier_wait_parity";
    }
  } waits;
  waits.visit(body);
  return waits.found;
}

class KernelBarriers : public ir::IRMutator {
 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt&) override {
    AsyncTargets async;
    async.visit(op->body);
    Pending pending;
    auto n = std::make_shared<ir::KernelLaunch>(*op);
    ThreadValues thread_values(op->thread_index, op->body);
    GroupBarriers group_barriers(op->body, op->loc);
    const bool groups = has_thread_groups(op->body);
    n->body = BarrierPlacer(async.buffers, op->producer_threads > 0 ? op->threads : 0, thread_values, group_barriers,
                            groups && waits_on_mbarriers(op->body), generic_writes(op->body))
                  .place(op->body, pending);
    return Stmt(n);
  }
};

}  // namespace

ir::Stmt insert_barriers(const ir::Stmt& body, const PassContext&) { return KernelBarriers().mutate(body); }

}  // namespace tilec::passes
