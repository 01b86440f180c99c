#include "passes/gpu/insert_barriers.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "ir/device_calls.h"
#include "ir/shared_layout.h"
#include "ir/equal.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "ir/visitor.h"
#include "op/accesses.h"
#include "op/op.h"
#include "passes/gpu/index_apart.h"
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

// The shared tile a TMA store or reduce-add reads after thread 0 has issued it, while the
// threads go on; or null.
const ir::BufferNode* tma_store_source(const Stmt& s) {
  if (const auto* copy = s.as<ir::Copy>(); copy && copy->instruction.kind == ir::CopyInstructionKind::TmaStore)
    return copy->src.buffer.get();
  if (const auto* add = s.as<ir::AtomicAdd>(); add && add->instruction.kind == ir::CopyInstructionKind::TmaReduceAdd)
    return add->src.buffer.get();
  return nullptr;
}

// Whether a statement in `s` (itself included) is one `is`.
template <typename Predicate>
bool contains(const Stmt& s, Predicate is) {
  struct Find : ir::IRVisitor {
    explicit Find(Predicate& p) : is(p) {}
    Predicate& is;
    bool found = false;
    void visit(const Stmt& st) override {
      found |= st && is(st);
      IRVisitor::visit(st);
    }
    using IRVisitor::visit;
  } find(is);
  find.visit(s);
  return find.found;
}

// Whether an evaluated `value` waits for an mbarrier's phase (T.barrier_wait).
bool is_mbarrier_wait(const ir::Expr& value) {
  const auto* call = value.as<ir::Call>();
  return call && call->name.rfind(std::string(ir::kDeviceCallPrefix) + "mbarrier_wait_parity", 0) == 0;
}

// Thread 0's wait for its TMA stores to have read their tiles.
Stmt wait_for_tma_reads(const SourceLoc& loc) {
  return ir::make_if(ir::thread_in(0, 1), ir::device_call("tma_store_wait_read", {}, loc));
}

// Where thread 0 may wait for its TMA stores' reads: before barrier `id` (BarrierPlacer's
// candidates, kept or dropped once the kernel is placed).
constexpr const char* kTmaWaitCandidate = "tma_store_wait_read_candidate";

// Buffers filled by async copies (T.copy's, T.tma_copy's, and T.Parallel gathers' that
// pipeline_loops staged).
class AsyncTargets : public ir::IRVisitor {
 public:
  BufferSet buffers;

 protected:
  void visit_Copy(const ir::Copy* op) override {
    if (op->instruction.asynchronous()) buffers.insert(op->dst.buffer.get());
    IRVisitor::visit_Copy(op);
  }
  // A T.Parallel gather that pipeline_loops staged (every store in it fills its buffer).
  void visit_For(const ir::For* op) override {
    if (op->async_fill) {
      struct Stores : ir::IRVisitor {
        BufferSet* out;
        void visit_BufferStore(const ir::BufferStore* store) override {
          out->insert(store->buffer.get());
          IRVisitor::visit_BufferStore(store);
        }
      } stores;
      stores.out = &buffers;
      stores.visit(op->body);
    }
    IRVisitor::visit_For(op);
  }
};

// The shared buffer an atomic add (not a TMA reduce-add) adds into, or null.
const ir::BufferNode* atomic_add_into_shared(const Stmt& s) {
  const auto* add = s.as<ir::AtomicAdd>();
  if (!add || add->instruction.kind == ir::CopyInstructionKind::TmaReduceAdd) return nullptr;
  const ir::BufferNode* dst = add->dst.buffer.get();
  return dst && dst->scope == ir::MemoryScope::Shared ? dst : nullptr;
}

// Slots claimed from a shared counter: each let var bound to what T.atomic_add(counter, n,
// return_prev=True) returned, n a positive constant and the counter an element at constant
// indices, with the counter (its buffer's address and indices, printed). While every atomic
// add into the counter's buffer is such an add and nothing else writes the counter (a plain
// write of it meets the adds in flight, which puts a barrier before it), no two return the
// same value, so the stores of a stream compaction (`at = T.atomic_add(count[0], 1,
// return_prev=True); kept[at] = v`) never meet each other. Any other add into the buffer (of a
// value that may be 0 or negative, at an index not constant, a tile's) leaves it no claims.
using Claims = std::map<const ir::ExprNode*, std::string>;

Claims claimed_slots(const Stmt& body) {
  struct Counter {
    const ir::BufferNode* buffer;
    std::string key;
  };
  struct Find : ir::IRVisitor {
    std::map<const ir::BufferNode*, Counter> counter_of_prev;     // return_prev's local
    std::set<const ir::BufferNode*> other_adds;                   // buffers added into otherwise
    std::map<const ir::ExprNode*, const ir::BufferNode*> claimed;  // let var -> return_prev's local
    void visit_AtomicAdd(const ir::AtomicAdd* op) override {
      int64_t n = 0;
      const ir::BufferNode* buffer = op->dst.buffer.get();
      std::string indices;
      bool constant = buffer && buffer->scope == ir::MemoryScope::Shared && !op->src.buffer;
      for (const ir::Range& r : op->dst.region) {
        int64_t at = 0;
        constant = constant && ir::is_const_int(r.min, &at);
        indices += std::to_string(at) + ",";
      }
      const bool counts_up = constant && op->value && ir::is_const_int(op->value, &n) && n > 0;
      if (!counts_up) other_adds.insert(buffer);
      if (counts_up && op->prev.buffer)
        counter_of_prev[op->prev.buffer.get()] = {
            buffer, buffer->name + "@" + std::to_string(reinterpret_cast<uintptr_t>(buffer)) + "[" + indices + "]"};
      IRVisitor::visit_AtomicAdd(op);
    }
    void visit_LetStmt(const ir::LetStmt* op) override {
      if (const auto* load = op->value.as<ir::BufferLoad>())
        if (counter_of_prev.count(load->buffer.get())) claimed[op->var.get()] = load->buffer.get();
      IRVisitor::visit_LetStmt(op);
    }
  } find;
  find.visit(body);
  Claims claims;
  for (const auto& [var, prev] : find.claimed) {
    const Counter& counter = find.counter_of_prev.at(prev);
    if (!find.other_adds.count(counter.buffer)) claims[var] = counter.key;
  }
  return claims;
}

// The shared-memory accesses of a statement or expression: an element access keeps its
// indices; a tile op's region, or any access inside a T.Parallel nest (its elements are other
// threads'), is the whole buffer. Keyed by buffer and printed indices ("*": whole). Atomic adds
// into a buffer are kept apart from its reads and writes: they commute with each other (a
// histogram's threads add into it with no barrier between them), not with the rest. So are
// stores at slots claimed from one counter (Claims), keyed by buffer and counter: they meet
// each other's only through another counter's. So are the writes of asynchronous fills, whose
// completion the program waits for itself: `fills`, cp.async copies' and the gathers
// pipeline_loops staged (it orders them against the buffer's other accesses), and `tma_fills`,
// TMA loads' (an mbarrier wait orders what comes after; the accesses before one are separated
// from it as from thread 0's write).
struct SharedAccesses : ir::IRVisitor {
  using Indices = std::optional<std::vector<ir::Expr>>;
  using Set = std::map<std::pair<const ir::BufferNode*, std::string>, Indices>;
  Set reads, writes, atomics, claimed, fills, tma_fills;
  const Claims* claims = nullptr;
  const ir::VarMap* lets = nullptr;  // values put in for names in element indices

  explicit SharedAccesses(const Claims* claims_ = nullptr, const ir::VarMap* lets_ = nullptr)
      : claims(claims_), lets(lets_) {}

  void visit(const Stmt& s) override {
    if (s && op::is_tile_op(s.kind())) {
      op::Regions r = op::regions_of(*s);
      const ir::BufferNode* atomic = atomic_add_into_shared(s);
      const auto* copy = s.as<ir::Copy>();
      Set& written = !copy || !copy->instruction.asynchronous()                     ? writes
                     : copy->instruction.kind == ir::CopyInstructionKind::TmaLoad ? tma_fills
                                                                                   : fills;
      for (const ir::BufferRegion& region : r.reads)
        if (region.buffer.get() != atomic) whole(region.buffer.get(), reads);
      for (const ir::BufferRegion& region : r.writes)
        whole(region.buffer.get(), region.buffer.get() == atomic ? atomics : written);
    }
    const auto* loop = s.as<ir::For>();
    parallel_ += loop && loop->for_kind == ir::ForKind::Parallel;
    staged_ += loop && loop->async_fill;
    IRVisitor::visit(s);
    parallel_ -= loop && loop->for_kind == ir::ForKind::Parallel;
    staged_ -= loop && loop->async_fill;
  }
  using IRVisitor::visit;

  static void whole(const ir::BufferNode* b, Set& set) {
    if (b && b->scope == ir::MemoryScope::Shared) set[{b, "*"}] = std::nullopt;
  }
  // Every access of `set` as a whole-buffer one.
  static Set wholes(const Set& set) {
    Set out;
    for (const auto& [key, indices] : set) whole(key.first, out);
    return out;
  }
  // `set` with the vars of `map` replaced in its indices; with `loads_whole`, an access whose
  // indices read memory is whole (the memory may hold other values by the time it is compared).
  static Set renamed(const Set& set, const ir::VarMap& map, bool loads_whole) {
    Set out;
    for (const auto& [key, indices] : set) {
      if (!indices || (loads_whole && std::any_of(indices->begin(), indices->end(), reads_memory))) {
        whole(key.first, out);
        continue;
      }
      std::vector<ir::Expr> changed;
      bool same = true;
      for (const ir::Expr& i : *indices) {
        changed.push_back(map.empty() ? i : ir::substitute(i, map));
        same = same && changed.back().get() == i.get();
      }
      out[{key.first, same ? key.second : key_of(changed)}] = std::move(changed);
    }
    return out;
  }
  static std::string key_of(const std::vector<ir::Expr>& indices) {
    std::string key;
    for (const ir::Expr& i : indices) key += ir::to_string(i) + ",";
    return key;
  }
  static bool reads_memory(const ir::Expr& e) {
    struct Find : ir::IRVisitor {
      bool found = false;
      void visit_BufferLoad(const ir::BufferLoad*) override { found = true; }
      void visit_Call(const ir::Call*) override { found = true; }
    } find;
    find.visit(e);
    return find.found;
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
    if (const std::string* counter = claimed_counter(*op))
      claimed[{op->buffer.get(), "claimed from " + *counter}] = std::nullopt;
    else if (staged_ > 0)
      whole(op->buffer.get(), fills);
    else
      note(op->buffer.get(), op->indices, writes);
    IRVisitor::visit_BufferStore(op);
  }

  // The counter a store's one index was claimed from, or null.
  const std::string* claimed_counter(const ir::BufferStore& store) const {
    if (!claims || parallel_ > 0 || store.buffer->scope != ir::MemoryScope::Shared || store.indices.size() != 1)
      return nullptr;
    auto it = claims->find(store.indices[0].get());
    return it == claims->end() ? nullptr : &it->second;
  }

 private:
  void note(const ir::BufferNode* b, const std::vector<ir::Expr>& indices, Set& set) {
    if (b->scope != ir::MemoryScope::Shared) return;
    if (parallel_ > 0) return whole(b, set);
    if (!lets || lets->empty()) {
      set[{b, key_of(indices)}] = indices;
      return;
    }
    std::vector<ir::Expr> put_in;
    for (const ir::Expr& i : indices) put_in.push_back(ir::substitute(i, *lets));
    set[{b, key_of(put_in)}] = std::move(put_in);
  }
  int parallel_ = 0;
  int staged_ = 0;  // inside a gather pipeline_loops staged
};

// A var that stands for another iteration's value of a loop's var, in the accesses an iteration
// leaves unseparated for the next (BarrierPlacer::place_iterations).
struct OtherIteration {
  ir::Expr other, var;
};

// Whether an access of one set and one of another by different threads can touch the same
// bytes: one buffer, unless in some dim the indices are provably apart: both index the buffer
// alike on every thread and differ (`s[r, i]` and `s[r ^ 1, j]`), or their ranges don't meet,
// or they are one access in two iterations of a loop that gives each iteration elements of its
// own (index_apart.h); or two buffers whose planned places in shared memory overlap
// (plan_shared_memory gives them disjoint lifetimes, so the barrier between them is the one that
// lets the later reuse the earlier's bytes).
class Overlap {
 public:
  Overlap(const ThreadValues& thread_values, const ir::BoundAnalyzer& bounds,
          const std::vector<OtherIteration>& iterations, const ir::VarMap& originals)
      : thread_values_(thread_values),
        bounds_(bounds),
        iterations_(iterations),
        originals_(originals) {}

  bool any(const SharedAccesses::Set& x, const SharedAccesses::Set& y) const {
    for (const auto& [a, ia] : x)
      for (const auto& [b, ib] : y)
        if (meet(a.first, ia, b.first, ib)) return true;
    return false;
  }

  // Only accesses of two buffers whose planned places overlap (an asynchronous fill's with the
  // accesses its own buffer's completion wait orders).
  bool any_other(const SharedAccesses::Set& x, const SharedAccesses::Set& y) const {
    for (const auto& [a, ia] : x)
      for (const auto& [b, ib] : y)
        if (a.first != b.first && meet(a.first, ia, b.first, ib)) return true;
    return false;
  }

  // Two sets of stores at claimed slots (SharedAccesses::claimed): those of one buffer and
  // counter never meet.
  bool any_claims(const SharedAccesses::Set& x, const SharedAccesses::Set& y) const {
    for (const auto& [a, ia] : x)
      for (const auto& [b, ib] : y)
        if (a != b && meet(a.first, ia, b.first, ib)) return true;
    return false;
  }

 private:
  bool meet(const ir::BufferNode* a, const SharedAccesses::Indices& ia, const ir::BufferNode* b,
            const SharedAccesses::Indices& ib) const {
    if (a == b) return !(ia && ib && apart(*ia, *ib));
    if (a->shared_offset < 0 || b->shared_offset < 0) return false;
    return a->shared_offset < b->shared_offset + ir::shared_footprint(*b) &&
           b->shared_offset < a->shared_offset + ir::shared_footprint(*a);
  }

  bool apart(const std::vector<ir::Expr>& x, const std::vector<ir::Expr>& y) const {
    for (size_t d = 0; d < x.size() && d < y.size(); ++d) {
      if (!thread_values_.differs(x[d]) && !thread_values_.differs(y[d]) && different(x[d], y[d])) return true;
      if (ranges_apart(x[d], y[d], bounds_)) return true;
      for (const OtherIteration& it : iterations_)
        if (iterations_apart(x[d], y[d], it.other, it.var, originals_, bounds_) ||
            iterations_apart(y[d], x[d], it.other, it.var, originals_, bounds_))
          return true;
    }
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

  const ThreadValues& thread_values_;
  const ir::BoundAnalyzer& bounds_;
  const std::vector<OtherIteration>& iterations_;
  const ir::VarMap& originals_;
};

// A shared tile a TMA store may still be reading. A barrier doesn't end the read: thread 0
// waits for it (tma_store_wait_read) before the last barrier ahead of the tile's next write,
// so that the read runs on under what comes between. `barriers`: the candidates that came
// after the store, the latest on each path so far; `unseparated`: some path has had none.
struct TmaRead {
  std::set<int> barriers;
  bool unseparated = true;
  bool operator==(const TmaRead& o) const { return barriers == o.barriers && unseparated == o.unseparated; }
};

// Accesses made since the last barrier, by any thread, and the TMA stores' reads in flight.
// `fenced`: the writes and fills (their keys) that every thread has followed with a proxy fence
// of its own (T.fence_proxy_async) since: a barrier after them needs none for them.
// `acquired`: the threads may have waited on an mbarrier since their last proxy fence, so what
// other threads wrote before arriving may not yet be seen by the async proxy here (a barrier
// doesn't change that; a fence does).
struct Pending {
  using Key = SharedAccesses::Set::key_type;
  SharedAccesses::Set reads, writes, atomics, claimed, fills, tma_fills;
  std::set<Key> fenced;
  bool acquired = false;
  std::map<const ir::BufferNode*, TmaRead> tma_reads;
  void add(const SharedAccesses& acc) {
    for (const SharedAccesses::Set* written : {&acc.writes, &acc.fills})
      for (const auto& [key, indices] : *written) fenced.erase(key);
    reads.insert(acc.reads.begin(), acc.reads.end());
    writes.insert(acc.writes.begin(), acc.writes.end());
    atomics.insert(acc.atomics.begin(), acc.atomics.end());
    claimed.insert(acc.claimed.begin(), acc.claimed.end());
    fills.insert(acc.fills.begin(), acc.fills.end());
    tma_fills.insert(acc.tma_fills.begin(), acc.tma_fills.end());
  }
  bool empty_of_accesses() const {
    return reads.empty() && writes.empty() && atomics.empty() && claimed.empty() && fills.empty() &&
           tma_fills.empty();
  }
  // A proxy fence every thread runs: what they have written so far is fenced, and what they
  // acquired is seen.
  void fence() {
    for (const SharedAccesses::Set* written : {&writes, &fills})
      for (const auto& [key, indices] : *written) fenced.insert(key);
    acquired = false;
  }
  // What a barrier of these threads leaves: no access unseparated.
  Pending after_barrier() const {
    Pending after;
    after.acquired = acquired;
    return after;
  }
  // Whether a write or fill of a buffer `read_so` picks out is pending and not fenced.
  template <typename Predicate>
  bool unfenced_write(Predicate read_so) const {
    for (const SharedAccesses::Set* written : {&writes, &fills})
      for (const auto& [key, indices] : *written)
        if (read_so(key.first) && !fenced.count(key)) return true;
    return false;
  }
  // Where control flow joins: what either side left (a write is fenced where each side that
  // has it fenced it).
  void add(const Pending& other) {
    std::set<Key> joined;
    for (const Pending* side : {static_cast<const Pending*>(this), &other})
      for (const Key& key : side->fenced)
        if ((!writes.count(key) && !fills.count(key)) || fenced.count(key))
          if ((!other.writes.count(key) && !other.fills.count(key)) || other.fenced.count(key)) joined.insert(key);
    fenced = std::move(joined);
    acquired |= other.acquired;
    reads.insert(other.reads.begin(), other.reads.end());
    writes.insert(other.writes.begin(), other.writes.end());
    atomics.insert(other.atomics.begin(), other.atomics.end());
    claimed.insert(other.claimed.begin(), other.claimed.end());
    fills.insert(other.fills.begin(), other.fills.end());
    tma_fills.insert(other.tma_fills.begin(), other.tma_fills.end());
    for (const auto& [tile, read] : other.tma_reads) {
      auto [at, fresh] = tma_reads.emplace(tile, read);
      if (fresh) continue;
      at->second.barriers.insert(read.barriers.begin(), read.barriers.end());
      at->second.unseparated |= read.unseparated;
    }
  }
  bool operator==(const Pending& o) const {
    auto keys = [](const SharedAccesses::Set& s) {
      std::vector<std::pair<const ir::BufferNode*, std::string>> k;
      for (const auto& [key, indices] : s) k.push_back(key);
      return k;
    };
    return keys(reads) == keys(o.reads) && keys(writes) == keys(o.writes) && keys(atomics) == keys(o.atomics) &&
           keys(claimed) == keys(o.claimed) && keys(fills) == keys(o.fills) &&
           keys(tma_fills) == keys(o.tma_fills) && fenced == o.fenced &&
           acquired == o.acquired && tma_reads == o.tma_reads;
  }
};

// The wait candidates BarrierPlacer left: thread 0's wait where `kept` has them, else nothing.
class KeepTmaWaits : public ir::IRMutator {
 public:
  explicit KeepTmaWaits(const std::set<int>& kept) : kept_(kept) {}

 protected:
  Stmt mutate_Seq(const ir::Seq* op, const Stmt&) override {
    std::vector<Stmt> stmts;
    for (const Stmt& s : op->stmts) {
      if (!ir::is_device_call(s, kTmaWaitCandidate)) {
        stmts.push_back(mutate(s));
        continue;
      }
      int64_t id;
      ir::is_const_int(s.as<ir::Evaluate>()->value.as<ir::Call>()->args.at(0), &id);
      if (kept_.count(static_cast<int>(id))) stmts.push_back(wait_for_tma_reads(s->loc));
    }
    return ir::make_seq(stmts);
  }

 private:
  const std::set<int>& kept_;
};

BufferSet async_proxy_reads(const BufferSet& written, const Stmt& body);

class BarrierPlacer {
 public:
  // `consumer_threads` > 0: the launch is warp-specialized (warp_specialize.h), and the
  // branch its producer warpgroup doesn't take synchronizes only that many threads.
  // `group_barriers`: those of the kernel's T.ws groups, if `groups`; `program_orders_groups`:
  // the kernel orders its groups' accesses itself, with mbarriers (T.alloc_barrier).
  // `thread_index`: the thread index the kernel reads (null if none), in [0, threads).
  BarrierPlacer(BufferSet async, int consumer_threads, const ThreadValues& thread_values,
                const GroupBarriers& group_barriers, bool groups, bool program_orders_groups, BufferSet generic_writes,
                BufferSet async_proxy_reads, Claims claims, const ir::Expr& thread_index, int64_t threads)
      : async_(std::move(async)),
        overlap_(thread_values, bounds_, iterations_, originals_),
        generic_writes_(std::move(generic_writes)),
        async_proxy_reads_(std::move(async_proxy_reads)),
        claims_(std::move(claims)),
        consumer_threads_(consumer_threads),
        thread_values_(thread_values),
        group_barriers_(group_barriers),
        program_orders_groups_(program_orders_groups),
        defer_tma_reads_(consumer_threads == 0 && !groups),
        thread_index_(thread_index) {
    if (thread_index_) bounds_.bind(thread_index_, {0, threads - 1});
  }

  // The kernel body `s` placed: with barriers, and with thread 0's waits for its TMA stores'
  // reads before the barriers ahead of their tiles' next writes, and at the end.
  Stmt place_kernel(const Stmt& s) {
    Pending pending;
    Stmt body = place(s, pending);
    // The block's shared memory must outlive a read still in flight at its end.
    if (!pending.tma_reads.empty()) body = ir::make_seq({body, wait_for_tma_reads(s->loc)});
    return KeepTmaWaits(waits_kept_).mutate(body);
  }

  // `s` with barriers before each statement that would otherwise see another thread's
  // access of the same buffer (read after write, write after read or write) unseparated;
  // `pending` is updated to what is unseparated after it.
  Stmt place(const Stmt& s, Pending& pending) {
    if (!s) return s;
    if (ir::is_device_call(s, partial_barrier())) {
      pending = pending.after_barrier();
      return s;
    }
    if (const auto* eval = s.as<ir::Evaluate>(); eval && is_mbarrier_wait(eval->value)) pending.acquired = true;
    if (ir::is_device_call(s, "fence_proxy_async") && divergent_depth_ == 0) {
      pending.fence();
      return s;
    }
    if (ir::is_device_call(s, "sync_threads")) {
      // The block's barrier (T.sync_threads, a reduction's exchange) in a warp-specialized
      // launch's consumer code waits for the consumers alone: the producer warpgroup never
      // reaches it. In a T.ws group it waits for the group.
      if (!in_consumers_ && !in_producer_ && !group_) return ir::make_seq({separate(pending, s.get(), s->loc), s});
      return reset(pending, s->loc, s.get());
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
    SharedAccesses acc(&claims_, &lets_);
    acc.visit(Stmt(std::make_shared<ir::IfThenElse>(branch)));
    Stmt before;
    if (!program_orders_groups_ && chain_depth_ == 0 && needs_barrier(acc, pending))
      before = reset(pending, branch.loc, &branch);
    auto n = std::make_shared<ir::IfThenElse>(branch);
    {
      Pending inside;
      inside.acquired = true;  // what the block wrote before the group may be read in it
      const int divergent = divergent_depth_;
      divergent_depth_ = 0;  // every thread of the group runs its statements
      group_ = span;
      const ir::BoundAnalyzer outside = bounds_;
      if (thread_index_) bounds_.bind(thread_index_, {span.lo, span.hi - 1});
      const BufferSet all_reads = std::exchange(async_proxy_reads_, async_proxy_reads(generic_writes_, branch.then_case));
      n->then_case = place(branch.then_case, inside);
      async_proxy_reads_ = all_reads;
      bounds_ = outside;
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
      Stmt barrier = leaf_expr_reads(let->value, pending);
      ir::Expr value = ir::substitute(let->value, lets_);
      if (!SharedAccesses::reads_memory(value)) lets_[let->var.get()] = value;
      Stmt body = place(let->body, pending);
      lets_.erase(let->var.get());
      auto n = std::make_shared<ir::LetStmt>(*let);
      n->body = body;
      return ir::make_seq({barrier, Stmt(n)});
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
        const BufferSet all_reads =
            split ? std::exchange(async_proxy_reads_, async_proxy_reads(generic_writes_, branch->else_case))
                  : async_proxy_reads_;
        n->else_case = place(branch->else_case, else_pending);
        async_proxy_reads_ = all_reads;
        in_consumers_ = saved;
      }
      pending = then_pending;
      pending.add(else_pending);
      return ir::make_seq({cond_barrier, Stmt(n)});
    }
    const auto* loop = s.as<ir::For>();
    if (loop && loop->for_kind != ir::ForKind::Parallel) {
      bind_loop(*loop);
      auto n = std::make_shared<ir::For>(*loop);
      Stmt before;
      n->body = place_loop_body(loop->body, pending, before, loop->var);
      forget_iterations(pending, loop->body, loop->var);
      return ir::make_seq({before, Stmt(n)});
    }
    if (const auto* w = s.as<ir::While>()) {
      Stmt cond_barrier = leaf_expr_reads(w->condition, pending);
      auto n = std::make_shared<ir::While>(*w);
      Stmt before;
      n->body = place_loop_body(w->body, pending, before, ir::Expr());
      forget_iterations(pending, w->body, ir::Expr());
      return ir::make_seq({cond_barrier, before, Stmt(n)});
    }
    // A leaf: a tile op, a T.Parallel nest, a store, an evaluated call.
    SharedAccesses acc(&claims_, &lets_);
    acc.visit(s);
    Stmt barrier = separating_barrier(acc, pending, s.get(), s->loc);
    // In a group of a kernel that orders its groups with mbarriers, the generic writes of
    // other threads (stores, cp.async) reach this thread through the barrier it waited on; its
    // proxy fence after the wait makes them seen by the async proxy it reads them through.
    if (pending.acquired && group_ && program_orders_groups_ && reads_through_async_proxy(s) &&
        SharedAccesses::any(acc.reads, [&](const ir::BufferNode* b) { return generic_writes_.count(b) > 0; })) {
      barrier = ir::make_seq({ir::device_call("fence_proxy_async", {}, s->loc), barrier});
      pending.acquired = false;
    }
    pending.add(acc);
    return ir::make_seq({barrier, s, tma_store_issued(s, pending)});
  }

  // The barrier `acc` needs before it (placed before `key`): one for another thread's access
  // unseparated, or for a tile it writes that a TMA store may still be reading. For such a
  // tile, thread 0 waits for the read before the barrier, this one or the last one since the
  // store (on each path).
  Stmt separating_barrier(const SharedAccesses& acc, Pending& pending, const void* key, const SourceLoc& loc) {
    std::vector<const ir::BufferNode*> rewritten;
    bool unseparated = false;
    for (const auto& [tile, read] : pending.tma_reads) {
      const SharedAccesses::Set whole_tile = {{{tile, "*"}, std::nullopt}};
      if (!overlap_.any(acc.writes, whole_tile) && !overlap_.any(acc.claimed, whole_tile)) continue;
      rewritten.push_back(tile);
      unseparated |= read.unseparated;
    }
    Stmt barrier = needs_barrier(acc, pending) || unseparated ? reset(pending, loc, key) : Stmt();
    for (const ir::BufferNode* tile : rewritten) {
      const std::set<int>& at = pending.tma_reads.at(tile).barriers;
      waits_kept_.insert(at.begin(), at.end());
      pending.tma_reads.erase(tile);
    }
    return barrier;
  }

  // After `s`: if it is a TMA store (a tile op in a block whose barriers all threads reach), its
  // tile in flight, for the barriers to come to wait for; otherwise thread 0's wait right away.
  Stmt tma_store_issued(const Stmt& s, Pending& pending) {
    const ir::BufferNode* tile = tma_store_source(s);
    if (!tile) return Stmt();
    if (!defer_tma_reads_ || divergent_depth_ > 0 || async_.count(tile)) return wait_for_tma_reads(s->loc);
    pending.tma_reads[tile] = TmaRead();
    return Stmt();
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
    SharedAccesses acc(&claims_, &lets_);
    acc.visit(s);
    Stmt barrier = separating_barrier(acc, pending, s.get(), s->loc);
    Pending inside;
    ++divergent_depth_;
    place_parts(s, inside);  // for its errors: a barrier it would place is one not every thread reaches
    --divergent_depth_;
    pending.add(acc);
    return ir::make_seq({barrier, s, contains(s, tma_store_source) ? wait_for_tma_reads(s->loc) : Stmt()});
  }

  // The loop body placed so that every iteration is safe after the previous one. Where the
  // body's barriers are there only for what came before the loop (attention's Q tile, filled
  // before the k loop and read by each iteration's GEMM), one barrier before the loop (`before`)
  // takes their place: it runs once, not every iteration, and doesn't hold the threads in
  // step each time round.
  Stmt place_loop_body(const Stmt& body, Pending& pending, Stmt& before, const ir::Expr& var) {
    Pending after_lazy = pending;
    Stmt lazy = place_iterations(body, after_lazy, var);
    const size_t lazy_barriers = barriers_in(lazy);
    if (lazy_barriers > barriers_in(body) && !pending.empty_of_accesses()) {
      Pending after_hoisted;
      Stmt hoisted = place_iterations(body, after_hoisted, var);
      if (barriers_in(hoisted) < lazy_barriers) {
        before = reset(pending, body->loc, body.get());
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

  // The loop body placed from `pending` on: placing again with the accesses left unseparated
  // at its end until nothing changes.
  Stmt place_iterations(const Stmt& body, Pending& pending, const ir::Expr& var) {
    Pending entry = pending;
    Stmt placed;
    // What an iteration leaves unseparated meets the next one's accesses with the loop var
    // standing for another iteration's value, and the vars bound inside the body for any value.
    ir::VarMap carry = vars_of_iteration(body);
    if (var) carry[var.get()] = fresh(other_of_, var, "'");
    for (int round = 0; round < 4; ++round) {
      Pending p = entry;
      placed = place(body, p);
      Pending next = entry, carried;
      carried.reads = SharedAccesses::renamed(p.reads, carry, true);
      carried.writes = SharedAccesses::renamed(p.writes, carry, true);
      carried.atomics = SharedAccesses::wholes(p.atomics);
      carried.claimed = p.claimed;  // keyed whole already
      carried.fills = p.fills;
      carried.tma_fills = p.tma_fills;
      carried.tma_reads = p.tma_reads;
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

  // The var `memo` holds for `var` (made on first use), named after it.
  ir::Expr fresh(std::map<const ir::ExprNode*, ir::Expr>& memo, const ir::Expr& var, const char* mark) {
    auto it = memo.find(var.get());
    if (it != memo.end()) return it->second;
    // named apart from every other (accesses are told apart by their printed indices)
    ir::Expr made = ir::make_var(var.as<ir::Var>()->name + mark + std::to_string(memo.size()), var->dtype);
    memo.emplace(var.get(), made);
    originals_[made.get()] = var;
    return made;
  }

  // The loop's var ranges over its iterations, and so do the vars for its other iterations
  // and for any of its values.
  void bind_loop(const ir::For& loop) {
    auto first = bounds_.bound(loop.min), count = bounds_.bound(loop.extent);
    if (!first || !count || count->max < 1 || first->max > INT64_MAX - count->max) return;
    const ir::Interval range{first->min, first->max + count->max - 1};
    if (range.min > range.max) return;
    ir::Expr other = fresh(other_of_, loop.var, "'");
    if (std::none_of(iterations_.begin(), iterations_.end(), [&](const OtherIteration& it) { return it.var.get() == loop.var.get(); }))
      iterations_.push_back({other, loop.var});
    for (const ir::Expr& v : {loop.var, other, fresh(any_of_, loop.var, "*")}) bounds_.bind(v, range);
  }

  // The vars bound inside `body` (its loops' and lets'), each to the var for any of its values.
  ir::VarMap vars_of_iteration(const Stmt& body) {
    struct Bound : ir::IRVisitor {
      std::vector<ir::Expr> vars;
      void visit_For(const ir::For* op) override {
        vars.push_back(op->var);
        IRVisitor::visit_For(op);
      }
      void visit_LetStmt(const ir::LetStmt* op) override {
        vars.push_back(op->var);
        IRVisitor::visit_LetStmt(op);
      }
    } bound;
    bound.visit(body);
    ir::VarMap map;
    for (const ir::Expr& v : bound.vars) map[v.get()] = fresh(any_of_, v, "*");
    return map;
  }

  // pending once a loop is done: its var, the var for its other iterations and the vars bound
  // in its body stand for any of their values.
  void forget_iterations(Pending& pending, const Stmt& body, const ir::Expr& var) {
    ir::VarMap done = vars_of_iteration(body);
    if (var) {
      done[var.get()] = fresh(any_of_, var, "*");
      done[fresh(other_of_, var, "'").get()] = done[var.get()];
    }
    pending.reads = SharedAccesses::renamed(pending.reads, done, true);
    pending.writes = SharedAccesses::renamed(pending.writes, done, true);
    pending.atomics = SharedAccesses::renamed(pending.atomics, done, true);
  }

  Stmt leaf_expr_reads(const ir::Expr& e, Pending& pending) {
    SharedAccesses acc(&claims_, &lets_);
    acc.visit(e);
    Stmt barrier = needs_barrier(acc, pending) ? reset(pending, e->loc, e.get()) : Stmt();
    pending.reads.insert(acc.reads.begin(), acc.reads.end());
    return barrier;
  }

  bool needs_barrier(const SharedAccesses& acc, const Pending& pending) const {
    const Overlap& o = overlap_;
    // a TMA load is a write of thread 0's after what came before; a cp.async fill meets only
    // other buffers' accesses, and so does any fill still pending
    SharedAccesses::Set writes = acc.writes;
    writes.insert(acc.tma_fills.begin(), acc.tma_fills.end());
    const SharedAccesses::Set* all[] = {&acc.reads, &writes, &acc.atomics, &acc.claimed, &acc.fills};
    for (const SharedAccesses::Set* a : all)
      if (o.any_other(*a, pending.fills) || o.any_other(*a, pending.tma_fills)) return true;
    for (const SharedAccesses::Set* p : {&pending.reads, &pending.writes, &pending.atomics, &pending.claimed})
      if (o.any_other(acc.fills, *p)) return true;
    return o.any(acc.reads, pending.writes) || o.any(writes, pending.writes) || o.any(writes, pending.reads) ||
           o.any(acc.atomics, pending.reads) || o.any(acc.atomics, pending.writes) ||
           o.any(acc.reads, pending.atomics) || o.any(writes, pending.atomics) ||
           o.any(acc.claimed, pending.reads) || o.any(acc.claimed, pending.writes) ||
           o.any(acc.claimed, pending.atomics) || o.any(acc.reads, pending.claimed) ||
           o.any(writes, pending.claimed) || o.any(acc.atomics, pending.claimed) ||
           o.any_claims(acc.claimed, pending.claimed);
  }

  // A barrier placed before `key` (an input statement or expression: the same in each round of
  // place_iterations), with pending's accesses separated by it.
  Stmt reset(Pending& pending, const SourceLoc& loc, const void* key) {
    if (divergent_depth_ > 0) barrier_not_reached_by_all(loc);
    if (in_producer_) throw std::logic_error("insert_barriers: a barrier in a producer warpgroup's code");
    // wgmma, TMA stores and reduce-adds (tma_copies.h) read shared memory through the async
    // proxy: generic writes that the barrier's threads may read so after it, whatever it was
    // placed for, are ordered before them by the writers' proxy fence, then the barrier. (A
    // target without those instructions reads nothing so.)
    const bool read_async =
        pending.unfenced_write([&](const ir::BufferNode* b) { return async_proxy_reads_.count(b) > 0; });
    Stmt fence = read_async ? ir::device_call("fence_proxy_async", {}, loc) : Stmt();
    const bool acquired = pending.acquired && !fence;
    if (group_) {
      pending = pending.after_barrier();
      pending.acquired = acquired;
      return ir::make_seq({fence, ir::device_call(group_barriers_.barrier(*group_), {}, loc)});
    }
    if (in_consumers_) {
      pending = pending.after_barrier();
      pending.acquired = acquired;
      return ir::make_seq({fence, ir::device_call(partial_barrier(), {}, loc)});
    }
    Stmt wait = separate(pending, key, loc);
    pending.acquired = acquired;
    return ir::make_seq({fence, wait, ir::device_call("sync_threads", {}, loc)});
  }

  // pending after a barrier of the whole block before `key`: no access unseparated, and each
  // TMA store's read in flight has it for its latest barrier. Returns the barrier's wait
  // candidate, if a read is in flight.
  Stmt separate(Pending& pending, const void* key, const SourceLoc& loc) {
    Pending after = pending.after_barrier();
    after.tma_reads = std::move(pending.tma_reads);
    pending = std::move(after);
    if (pending.tma_reads.empty()) return Stmt();
    const int id = candidate_ids_.emplace(key, static_cast<int>(candidate_ids_.size())).first->second;
    for (auto& [tile, read] : pending.tma_reads) read = TmaRead{{id}, false};
    return ir::device_call(kTmaWaitCandidate, {ir::make_int(id)}, loc);
  }

  // Whether `condition` is thread_in(T, ...): the producer warpgroup's side of the split.
  bool splits_producer(const ir::Expr& condition) const {
    const auto* call = condition.as<ir::Call>();
    int64_t lo;
    return consumer_threads_ > 0 && call && call->name == ir::kThreadIn && ir::is_const_int(call->args.at(0), &lo) &&
           lo == consumer_threads_;
  }

  std::string partial_barrier() const { return ir::consumer_barrier(consumer_threads_); }

  BufferSet async_;
  // The ranges of the vars in scope (loops', the thread index's) and of those that stand for
  // other iterations' values; read by overlap_.
  ir::BoundAnalyzer bounds_;
  std::vector<OtherIteration> iterations_;
  ir::VarMap originals_;  // each var made for another iteration's or any value: the var it stands for
  Overlap overlap_;
  BufferSet generic_writes_;  // shared buffers the kernel writes through the generic proxy
  // Those of them that the threads being placed (the kernel's, a T.ws group's, the consumers')
  // read through the async proxy
  BufferSet async_proxy_reads_;
  Claims claims_;
  int consumer_threads_;
  const ThreadValues& thread_values_;
  const GroupBarriers& group_barriers_;
  const bool program_orders_groups_;
  int divergent_depth_ = 0;  // inside a branch or loop that differs from thread to thread
  bool in_consumers_ = false, in_producer_ = false;
  std::optional<ThreadSpan> group_;  // the T.ws group being placed
  int chain_depth_ = 0;              // in the else branch of a group (an elif chain's other groups)
  // Whether TMA stores may leave their reads in flight past barriers (a launch whose barriers
  // are all the whole block's: no T.ws groups, no producer warpgroup); else each waits at once.
  const bool defer_tma_reads_;
  std::map<const void*, int> candidate_ids_;  // the wait candidates, by what their barrier precedes
  std::set<int> waits_kept_;                  // those a tile's next write needs
  const ir::Expr thread_index_;
  // The lets in scope whose values read no memory: their values, lets put in, which the
  // accesses' indices take in place of their names.
  ir::VarMap lets_;
  // For a loop var: the var for another iteration's value, and the one for any value (once the
  // loop is done, or for an inner loop's or let's var once its iteration is).
  std::map<const ir::ExprNode*, ir::Expr> other_of_, any_of_;
};

// The shared buffers a kernel writes through the generic proxy: by stores, copies other than
// TMA loads, cp.async (T.ptx_cp_async's destination addresses), and a peer block's stores
// (T.copy_cluster's, into this block's copy of the buffer its destination address names).
BufferSet generic_writes(const Stmt& body) {
  struct Writes : op::Accesses {
    Writes() : op::Accesses(ir::MemoryScope::Shared) {}
    void visit(const Stmt& st) override {
      const auto* copy = st.as<ir::Copy>();
      if (!copy || copy->instruction.kind != ir::CopyInstructionKind::TmaLoad) op::Accesses::visit(st);
    }
    using op::Accesses::visit;
    void visit_Call(const ir::Call* op) override {
      auto named = [&](const char* prefix) { return op->name.rfind(std::string(ir::kDeviceCallPrefix) + prefix, 0) == 0; };
      if ((named("cp_async_") || named("store_to_block") || named("copy_to_block")) && !op->args.empty())
        if (const auto* at = op->args[0].as<ir::Call>(); at && at->name == ir::kAddressOf)
          writes.insert(at->args.at(0).as<ir::BufferLoad>()->buffer.get());
      op::Accesses::visit_Call(op);
    }
  } w;
  w.visit(body);
  return w.writes;
}

// Of `written` (the kernel's generic writes), the shared buffers it reads through the async proxy
// (wgmma operands, TMA stores' and reduce-adds' sources).
BufferSet async_proxy_reads(const BufferSet& written, const Stmt& body) {
  struct Reads : ir::IRVisitor {
    BufferSet found;
    void visit(const Stmt& st) override {
      if (!st.defined()) return;
      if (!reads_through_async_proxy(st)) return ir::IRVisitor::visit(st);
      op::Accesses accesses(ir::MemoryScope::Shared);
      accesses.visit(st);
      found.insert(accesses.reads.begin(), accesses.reads.end());
    }
    using ir::IRVisitor::visit;
  } reads;
  reads.visit(body);
  BufferSet out;
  for (const ir::BufferNode* b : reads.found)
    if (written.count(b)) out.insert(b);
  return out;
}

// Whether a kernel waits on mbarriers of its own (T.alloc_barrier's and T.alloc_cluster_barrier's,
// T.barrier_wait).
bool waits_on_mbarriers(const Stmt& body) {
  struct Waits : ir::IRVisitor {
    bool found = false;
    void visit_Evaluate(const ir::Evaluate* op) override { found |= is_mbarrier_wait(op->value); }
  } waits;
  waits.visit(body);
  return waits.found;
}

class KernelBarriers : public ir::IRMutator {
 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt&) override {
    AsyncTargets async;
    async.visit(op->body);
    auto n = std::make_shared<ir::KernelLaunch>(*op);
    ThreadValues thread_values(op->thread_index, op->body);
    GroupBarriers group_barriers(op->body, op->loc);
    const bool groups = has_thread_groups(op->body);
    const BufferSet written = generic_writes(op->body);
    n->body = BarrierPlacer(async.buffers, op->producer_threads > 0 ? op->threads : 0, thread_values, group_barriers,
                            groups, groups && waits_on_mbarriers(op->body), written,
                            async_proxy_reads(written, op->body), claimed_slots(op->body), op->thread_index,
                            op->threads)
                  .place_kernel(op->body);
    return Stmt(n);
  }
};

}  // namespace

ir::Stmt insert_barriers(const ir::Stmt& body, const PassContext&) { return KernelBarriers().mutate(body); }

}  // namespace tilec::passes
