#include "passes/gpu/lower_to_threads.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <unordered_set>

#include "base/diagnostics.h"
#include "ir/device_calls.h"
#include "ir/layout.h"
#include "ir/shared_layout.h"
#include "ir/substitute.h"
#include "ir/visitor.h"
#include "op/accesses.h"
#include "op/parallel.h"
#include "passes/gpu/nest_vectors.h"
#include "passes/gpu/pair_conversions.h"
#include "passes/lower_tile_ops.h"
#include "passes/thread_groups.h"
#include "passes/thread_values.h"
#include "passes/tile_lowering.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Fragment;
using ir::Stmt;

// Slot loops index register arrays: only fully unrolled loops keep those in registers.
constexpr int64_t kMaxUnrolledSlots = 1024;
// The shared memory a cross-warp reduction exchanges a round's partials through: a 256-thread
// block's two float rows (an attention step's row maxima) in one round.
constexpr int64_t kExchangeBytes = 2048;

bool is_fragment(const ir::Buffer& b) { return b && b->scope == ir::MemoryScope::Fragment; }

// Whether a statement writes a fragment or local buffer from outside it: each replica thread
// of its layout holds its own copy, so each must make the write. Otherwise (it writes shared
// or global memory, and names values or allocates buffers for itself alone) the replicas would
// only repeat its writes, and they sit out: an atomic add each of them made would count 2 or
// 4 times.
class WritesPrivate : public ir::IRVisitor {
 public:
  bool found = false;

 protected:
  void visit_BufferStore(const ir::BufferStore* op) override {
    if ((op->buffer->scope == ir::MemoryScope::Fragment || op->buffer->scope == ir::MemoryScope::Local) &&
        !own_.count(op->buffer.get()))
      found = true;
    IRVisitor::visit_BufferStore(op);
  }
  void visit_Allocate(const ir::Allocate* op) override {
    own_.insert(op->buffer.get());
    IRVisitor::visit_Allocate(op);
  }

 private:
  std::set<const ir::BufferNode*> own_;
};

class ThreadLowering : public TileLowering, public InstructionLoweringContext {
 public:
  ThreadLowering(const PassContext& ctx, InstructionLowering lowering) : ctx_(ctx), lowering_(lowering) {}

  // Loads carry no source location of their own: their errors name the
  // statement being lowered.
  Stmt mutate(const Stmt& s) override {
    if (!s.defined() || !s->loc.valid()) return TileLowering::mutate(s);
    SourceLoc enclosing = statement_loc_;
    statement_loc_ = s->loc;
    Stmt result = TileLowering::mutate(s);
    statement_loc_ = enclosing;
    return result;
  }
  using TileLowering::mutate;

  // What the target's instruction lowering works with (passes/gpu/instruction_lowering.h).
  const Expr& thread_index() const override { return tid_; }
  Expr lowered(const Expr& e) override { return mutate(e); }
  Expr registers(const ir::Buffer& fragment) const override {
    return ir::address_of(local_of(fragment), {ir::make_int(0)});
  }

  // &tile[stage..., 0, 0]: the first element of the trailing 2-D tile of a region.
  Expr tile_address(const ir::BufferRegion& r) override {
    std::vector<Expr> idx;
    for (const ir::Range& range : r.region) idx.push_back(mutate(range.min));
    return ir::address_of(r.buffer, idx);
  }

  Stmt fill_registers(const ir::Buffer& fragment, const Expr& value) override {
    const ir::Buffer& local = local_of(fragment);
    Expr s = ir::make_var("s");
    int64_t slots = fragment->fragment->slots();
    return ir::make_for(s, ir::make_int(0), ir::make_int(slots),
                        slots <= kMaxUnrolledSlots ? ir::ForKind::Unrolled : ir::ForKind::Serial,
                        ir::make_store(local, {s}, ir::make_cast(local->dtype, value)));
  }

  int64_t tensor_map(const ir::TensorMapSpec& spec) override {
    auto it = std::find(tensor_maps_.begin(), tensor_maps_.end(), spec);
    if (it != tensor_maps_.end()) return it - tensor_maps_.begin();
    tensor_maps_.push_back(spec);
    return static_cast<int64_t>(tensor_maps_.size()) - 1;
  }

 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    // Warp shuffles, barriers and tensor-core ops take whole warps.
    if (!whole_warps(op->threads, ctx_))
      error_at(op->loc, "threads=" + std::to_string(op->threads) + ": " + whole_warps_rule(ctx_));
    threads_ = op->threads;
    block_barrier_ = op->producer_threads > 0 ? ir::consumer_barrier(op->threads) : "sync_threads";
    tid_ = op->thread_index ? op->thread_index : ir::make_var("tx");
    thread_values_.reset();
    if (op->thread_index) {
      thread_values_.emplace(op->thread_index, op->body);
      thread_values_->check_barriers(op->body);
    }
    if (op->clustered()) ThreadValues::across_cluster(*op).check_cluster_barriers(op->body);
    block_tid_ = tid_;
    bounds_.bind(tid_, {0, op->threads + op->producer_threads - 1});
    tensor_maps_.clear();
    group_barriers_.emplace(op->body, op->loc);
    Stmt body = TileLowering::mutate_KernelLaunch(op, self);
    auto n = std::make_shared<ir::KernelLaunch>(*body.as<ir::KernelLaunch>());
    n->thread_var = block_tid_;
    n->tensor_maps = tensor_maps_;
    return Stmt(n);
  }

  // A T.ws group's tile code, lowered for its threads: numbered from 0 (its first thread), its
  // barriers its own named barrier.
  Stmt mutate_IfThenElse(const ir::IfThenElse* op, const Stmt& self) override {
    auto span = thread_group_of(*op);
    if (!span) return TileLowering::mutate_IfThenElse(op, self);
    Expr local = ir::make_var("group_tx", tid_->dtype);
    const Expr block_tid = tid_;
    const int block_threads = threads_;
    const std::string block_barrier = block_barrier_;
    ir::BoundAnalyzer saved = bounds_;
    tid_ = local;
    threads_ = static_cast<int>(span->threads());
    block_barrier_ = group_barriers_->barrier(*span);
    bounds_.bind(local, {0, span->threads() - 1});
    Stmt body = mutate(op->then_case);
    tid_ = block_tid;
    threads_ = block_threads;
    block_barrier_ = block_barrier;
    bounds_ = saved;
    Expr lo = ir::make_int(span->lo, block_tid_->dtype);
    Expr cond = ir::make_And(ir::make_GE(block_tid_, lo), ir::make_LT(block_tid_, ir::make_int(span->hi, lo->dtype)));
    return ir::with_loc(
        ir::make_if(cond, ir::make_let(local, ir::make_Sub(block_tid_, lo), body), mutate(op->else_case)), op->loc);
  }

  // A fragment becomes each thread's registers: a local array of its slots. A view of one
  // (T.reshape) is its buffer's array, in the same slots (Fragment::reshaped).
  Stmt mutate_Allocate(const ir::Allocate* op, const Stmt& self) override {
    if (!is_fragment(op->buffer)) return TileLowering::mutate_Allocate(op, self);
    if (op->buffer->view_of) {
      locals_[op->buffer.get()] = local_of(op->buffer->view_of);
      return mutate(op->body);
    }
    const Fragment& f = *op->buffer->fragment;
    ir::Buffer local = ir::make_buffer(op->buffer->name, op->buffer->dtype, {ir::make_int(f.slots())}, {},
                                       ir::MemoryScope::Local, op->buffer->loc);
    locals_[op->buffer.get()] = local;
    return ir::with_loc(ir::make_allocate(local, mutate(op->body)), op->loc);
  }

  Stmt mutate_For(const ir::For* op, const Stmt& self) override {
    if (op->for_kind == ir::ForKind::Vectorized && nest_depth_ == 0)
      if (Stmt vectors = thread_vectors(*op); vectors) return vectors;
    if (op->for_kind != ir::ForKind::Parallel) return TileLowering::mutate_For(op, self);
    if (auto nest = op::parallel_nest(self)) return partition(*nest);
    return strided(op);
  }

  // A T.vectorized loop of each thread's own (`for e in T.vectorized(16): s[r, c + e] = X[..]`)
  // as T.Parallel's vector accesses make it: every thread runs all of it, its global and shared
  // accesses in runs of up to 16 bytes where they line up. Null where none do (or its body is
  // not one store), and the loop stays as it is.
  Stmt thread_vectors(const ir::For& loop) {
    int64_t first, extent;
    if (!ir::is_const_int(loop.min, &first) || first != 0 || !ir::is_const_int(loop.extent, &extent) || extent < 2)
      return Stmt();
    op::ParallelNest nest{{loop.var}, {extent}, op::inline_pure_lets(loop.body), loop.loc};
    if (!nest_store(nest)) return Stmt();
    const Fragment layout = ir::replicated_fragment(nest.extents);
    auto vectors = nest_vectors(nest, layout, ctx_.contiguous_args);
    if (!vectors) return Stmt();
    return vector_slot_loop(nest, layout, *vectors, false);
  }

  // Outside T.Parallel loops, a fragment is usable only where every thread holds all of it.
  Expr mutate_BufferLoad(const ir::BufferLoad* op, const Expr& self) override {
    if (!is_fragment(op->buffer)) return TileLowering::mutate_BufferLoad(op, self);
    std::vector<Expr> indices;
    for (const auto& i : op->indices) indices.push_back(mutate(i));
    SourceLoc loc = op->loc.valid() ? op->loc : statement_loc_;
    return ir::with_loc(ir::make_load(local_of(op->buffer), {scalar_slot(op->buffer, indices, loc)}), op->loc);
  }

  Stmt mutate_BufferStore(const ir::BufferStore* op, const Stmt& self) override {
    if (!is_fragment(op->buffer)) return TileLowering::mutate_BufferStore(op, self);
    std::vector<Expr> indices;
    for (const auto& i : op->indices) indices.push_back(mutate(i));
    return ir::with_loc(
        ir::make_store(local_of(op->buffer), {scalar_slot(op->buffer, indices, op->loc)}, mutate(op->value)),
        op->loc);
  }

  Expr mutate_Call(const ir::Call* op, const Expr& self) override {
    if (op->name == ir::kThreadIn) {
      Expr lo = mutate(op->args.at(0)), hi = mutate(op->args.at(1));
      return ir::make_And(ir::make_GE(block_tid_, lo), ir::make_LT(block_tid_, hi));
    }
    // The address of a fragment is its thread's registers.
    if (op->name == ir::kAddressOf) {
      const auto* load = op->args[0].as<ir::BufferLoad>();
      if (is_fragment(load->buffer)) return registers(load->buffer);
    }
    return TileLowering::mutate_Call(op, self);
  }

  // The gemms left to this pass are on the target's matrix cores, lowered by its hook.
  Stmt mutate_Gemm(const ir::Gemm* op, const Stmt&) override {
    if (!op->instruction.on_matrix_cores())
      throw std::logic_error("lower_to_threads: a gemm off the tensor-core paths was left");
    std::optional<Stmt> calls;
    if (lowering_.gemm) calls = lowering_.gemm(*op, *this);
    if (!calls) throw no_lowering("gemm", ir::to_string(op->instruction));
    return located(*calls, op->loc);
  }

  Stmt mutate_Reduce(const ir::Reduce* op, const Stmt&) override { return reduce_fragment(*op); }

  // A scalar atomic outside T.Parallel loops is the block's one update: one thread makes it;
  // unless its operands, or a condition it runs under, differ from thread to thread
  // (T.get_thread_binding): then it is each thread's own.
  Stmt mutate_AtomicAdd(const ir::AtomicAdd* op, const Stmt& self) override {
    if (op->instruction.on_target_instruction()) {
      std::optional<Stmt> calls;
      if (lowering_.atomic_add) calls = lowering_.atomic_add(*op, *this);
      if (!calls) throw no_lowering("T.atomic_add", ir::to_string(op->instruction));
      return located(*calls, op->loc);
    }
    Stmt s = TileLowering::mutate_AtomicAdd(op, self);
    if (nest_depth_ > 0 || op->src.buffer) return s;
    // return_prev: each thread gets back what it found (the frontend allows it only in kernels
    // written thread by thread).
    if (op->prev.buffer) return s;
    if (thread_values_ && (thread_values_->under_thread_control(op) || thread_values_->differs(self))) return s;
    return ir::with_loc(ir::make_if(ir::make_EQ(tid_, ir::make_int(0)), s), op->loc);
  }

  Stmt mutate_Copy(const ir::Copy* op, const Stmt&) override {
    const ir::CopyInstruction& in = op->instruction;
    if (in.on_target_instruction()) {
      std::optional<Stmt> calls;
      if (lowering_.copy) calls = lowering_.copy(*op, *this);
      if (!calls) throw no_lowering("copy", ir::to_string(in));
      return located(*calls, op->loc);
    }
    if (in.kind == ir::CopyInstructionKind::Unselected)
      throw std::logic_error("lower_to_threads: a T.copy without an instruction (select_instructions runs first)");
    return copy_global_shared(*op);
  }

 private:
  // The internal error of a tile op on an instruction the target's lowering does not know.
  std::logic_error no_lowering(const std::string& op, const std::string& instruction) const {
    return std::logic_error("lower_to_threads: target " + ctx_.target.name + " cannot lower a " + op + " via " +
                            instruction + " (its hook in passes/gpu/instruction_lowering.h knows no such instruction)");
  }

  const ir::Buffer& local_of(const ir::Buffer& fragment) const {
    auto it = locals_.find(fragment.get());
    if (it == locals_.end()) throw std::logic_error("lower_to_threads: fragment '" + fragment->name + "' not allocated");
    return it->second;
  }

  Expr scalar_slot(const ir::Buffer& b, const std::vector<Expr>& indices, const SourceLoc& loc) const {
    const Fragment& f = *b->fragment;
    if (!f.replicated())
      error_at(loc, "fragment '" + b->name + "' is used outside a T.Parallel loop or tile op, but its elements "
                    "are spread over threads (" + f.to_string() + "); read it inside a T.Parallel loop, or "
                    "copy it to shared memory first");
    return f.slot_of(indices);
  }

  // ------------------------------------------------------------ T.Parallel

  // The slot loop of `layout` over a nest's body: each thread visits the elements it holds.
  Stmt slot_loop(const Fragment& layout, const std::vector<int64_t>& extents,
                 const std::function<Stmt(const std::vector<Expr>& indices, const Expr& slot)>& body_of,
                 const SourceLoc& loc, bool replicas_sit_out) {
    Expr slot = ir::make_var("s");
    ir::BoundAnalyzer saved = bounds_;
    bounds_.bind(slot, {0, layout.slots() - 1});
    Stmt body = guarded_slot(layout, extents, body_of, slot, replicas_sit_out);
    bounds_ = saved;
    if (slot_loop_kind(layout) == ir::ForKind::Unrolled)
      if (Stmt pairs = pair_max_conversions(body, slot, layout.slots()); pairs.defined())
        return ir::with_loc(pairs, loc);
    return ir::with_loc(ir::make_for(slot, ir::make_int(0), ir::make_int(layout.slots()), slot_loop_kind(layout), body),
                        loc);
  }

  static ir::ForKind slot_loop_kind(const Fragment& layout) {
    return layout.slots() <= kMaxUnrolledSlots ? ir::ForKind::Unrolled : ir::ForKind::Serial;
  }

  // A slot's body, under the guards of an element past the extents or of a replica that sits
  // out.
  Stmt guarded_slot(const Fragment& layout, const std::vector<int64_t>& extents,
                    const std::function<Stmt(const std::vector<Expr>& indices, const Expr& slot)>& body_of,
                    const Expr& slot, bool replicas_sit_out) {
    std::vector<Expr> idx = layout.indices(tid_, slot);
    for (auto& i : idx) i = ir::simplify(i);
    Stmt body = body_of(idx, slot);
    Expr guard;
    if (layout.covers_more())
      for (size_t d = 0; d < idx.size(); ++d) guard = conjoin(guard, ir::make_LT(idx[d], ir::make_int(extents[d])));
    if (replicas_sit_out) {
      if (layout.threads() < threads_) guard = conjoin(guard, ir::make_LT(tid_, ir::make_int(layout.threads())));
      for (const auto& d : layout.digits())
        if (d.on_thread && d.dim < 0)
          guard = conjoin(guard, ir::make_EQ(layout.digit_value(d, tid_, slot), ir::make_int(0)));
    }
    return guard ? ir::make_if(ir::simplify(guard), body) : body;
  }

  // A nest whose body is `if cond: ...` with cond reading only some of its loop variables (a
  // row's flag in a loop over rows and columns) and nothing the body writes: the slot loop by
  // digits, those variables' digits outside, cond tested once for each of their values, the
  // others inside. The test is then a branch around the thread's elements of those rows, which
  // the compiler would otherwise make a select an element. Null where the body is no such
  // `if`, cond reads every variable the thread's slots vary, or the slots are not one dense
  // mixed radix.
  Stmt unswitched_slot_loop(const op::ParallelNest& nest, const Fragment& layout,
                            const std::function<Stmt(const Stmt&, const std::vector<Expr>&, const Expr&)>& lower_at,
                            bool replicas_sit_out) {
    const auto* branch = nest.body.as<ir::IfThenElse>();
    if (!branch || branch->else_case.defined()) return Stmt();
    std::vector<bool> tested(nest.vars.size());
    for (size_t k = 0; k < nest.vars.size(); ++k) tested[k] = ir::uses_var(branch->condition, nest.vars[k].get());
    op::Accesses condition_reads, body_writes;
    condition_reads.visit(branch->condition);
    body_writes.visit(branch->then_case);
    for (const ir::BufferNode* b : condition_reads.reads)
      if (body_writes.writes.count(b)) return Stmt();
    std::vector<ir::FragmentDigit> slot_digits;
    for (const auto& d : layout.digits())
      if (!d.on_thread) slot_digits.push_back(d);
    std::sort(slot_digits.begin(), slot_digits.end(), [](const auto& a, const auto& b) { return a.stride < b.stride; });
    int64_t dense = 1;
    bool varies_untested = false;
    for (const auto& d : slot_digits) {
      if (d.stride != dense || d.dim < 0) return Stmt();
      dense *= d.radix;
      varies_untested = varies_untested || (d.radix > 1 && !tested[d.dim]);
    }
    if (dense != layout.slots() || !varies_untested) return Stmt();

    // One variable a digit: slot = sum of digit * stride, the tested dims' part outer_slot.
    ir::BoundAnalyzer saved = bounds_;
    std::vector<std::pair<Expr, int64_t>> outer, inner;
    Expr outer_slot = ir::make_int(0), slot = ir::make_int(0);
    for (const auto& d : slot_digits) {
      if (d.radix == 1) continue;
      Expr v = ir::make_var("s");
      bounds_.bind(v, {0, d.radix - 1});
      Expr term = d.stride == 1 ? v : ir::make_Mul(v, ir::make_int(d.stride));
      slot = ir::make_Add(slot, term);
      if (tested[d.dim]) outer_slot = ir::make_Add(outer_slot, term);
      (tested[d.dim] ? outer : inner).emplace_back(v, d.radix);
    }
    outer_slot = ir::simplify(outer_slot);
    slot = ir::simplify(slot);
    Stmt body = guarded_slot(
        layout, nest.extents, [&](const auto& idx, const Expr& at) { return lower_at(branch->then_case, idx, at); },
        slot, replicas_sit_out);
    for (auto it = inner.rbegin(); it != inner.rend(); ++it)
      body = ir::make_for(it->first, ir::make_int(0), ir::make_int(it->second), slot_loop_kind(layout), body);
    std::vector<Expr> outer_idx = layout.indices(tid_, outer_slot);
    for (auto& i : outer_idx) i = ir::simplify(i);
    Stmt test = lower_at(ir::make_if(branch->condition, ir::make_evaluate(ir::make_int(0))), outer_idx, outer_slot);
    body = ir::make_if(test.as<ir::IfThenElse>()->condition, body);
    for (auto it = outer.rbegin(); it != outer.rend(); ++it)
      body = ir::make_for(it->first, ir::make_int(0), ir::make_int(it->second), slot_loop_kind(layout), body);
    bounds_ = saved;
    return ir::with_loc(body, nest.loc);
  }

  Stmt partition(const op::ParallelNest& nest) {
    // A nest that fills a thread's own local buffer runs whole on every thread.
    ir::Buffer outer_local = outer_local_written(nest.body);
    if (outer_local) refuse_spread_fragments(nest, outer_local);
    Fragment layout = outer_local ? ir::replicated_fragment(nest.extents) : op::nest_layout(nest, threads_);
    WritesPrivate writes;
    writes.visit(nest.body);
    // Values the body names are put in its store where that makes vector accesses; otherwise
    // the names stay (the generated code reads better with them).
    op::ParallelNest inlined = nest;
    inlined.body = op::inline_pure_lets(nest.body);
    if (auto vectors = nest_vectors(inlined, layout, ctx_.contiguous_args))
      return vector_slot_loop(inlined, layout, *vectors, !writes.found);
    auto lower_at = [&](const Stmt& stmt, const std::vector<Expr>& idx, const Expr& slot) {
      Stmt body = FragmentSlots(*this, nest.vars, layout, slot).mutate(stmt);
      ir::VarMap map;
      for (size_t k = 0; k < nest.vars.size(); ++k) map[nest.vars[k].get()] = idx[k];
      ir::BoundAnalyzer saved = bounds_;
      for (size_t k = 0; k < nest.vars.size(); ++k) bounds_.bind(nest.vars[k], {0, nest.extents[k] - 1});
      ++nest_depth_;
      body = mutate(body);
      --nest_depth_;
      bounds_ = saved;
      return ir::substitute(body, map);
    };
    if (Stmt unswitched = unswitched_slot_loop(nest, layout, lower_at, !writes.found); unswitched.defined())
      return unswitched;
    return slot_loop(
        layout, nest.extents,
        [&](const std::vector<Expr>& idx, const Expr& slot) { return lower_at(nest.body, idx, slot); }, nest.loc,
        !writes.found);
  }

  // The nest's slots in groups of `v.width` consecutive elements along its last dim: the
  // vector loads fill a local run each, the store's values are computed one by one (into a
  // local run when the store is a vector too), then stored at once; a guarded store's
  // condition is tested once a group.
  Stmt vector_slot_loop(const op::ParallelNest& nest, const Fragment& layout, const NestVectors& v,
                        bool replicas_sit_out) {
    const NestStore nest_body = *nest_store(nest);
    const auto& store = *nest_body.store;
    const int64_t width = v.width;
    Expr group = ir::make_var("g"), lane = ir::make_var("u");
    Expr first_slot = ir::make_Mul(group, ir::make_int(width));
    std::vector<Expr> first = layout.indices(tid_, first_slot);
    for (auto& i : first) i = ir::simplify(i);
    auto at_first = [&](const std::vector<Expr>& indices) {
      ir::VarMap map;
      for (size_t k = 0; k < nest.vars.size(); ++k) map[nest.vars[k].get()] = first[k];
      std::vector<Expr> out;
      for (const auto& i : indices) out.push_back(ir::simplify(ir::substitute(i, map)));
      return out;
    };
    auto run_of = [&](const ir::Buffer& b, const std::string& name) {
      return ir::make_buffer(name, b->dtype, {ir::make_int(width)}, {}, ir::MemoryScope::Local, nest.loc);
    };
    // A nest that only moves a tensor's elements into shared memory (a gather by row index,
    // zeros where a condition fails) copies each group by cp.async: nothing passes through
    // registers, and all groups' copies are issued before the one wait.
    const NestVectors::Load* moved = shared_fills_async_ ? shared_fill_source(store, v) : nullptr;
    if (moved) {
      std::vector<Expr> args = {ir::address_of(store.buffer, at_first(store.indices)),
                                ir::address_of(moved->load->buffer, at_first(moved->load->indices)),
                                moved->guard ? at_first({moved->guard})[0] : ir::make_bool(true)};
      Stmt copy = ir::device_call("cp_async_" + std::to_string(width * store.buffer->dtype.bytes()), args, nest.loc);
      Stmt copies = group_loop(nest, layout, nest_body, first, group, first_slot, width, copy, {}, replicas_sit_out);
      if (nest.async_fill) return copies;  // the enclosing pipeline commits and waits
      return ir::with_loc(ir::make_seq({copies, ir::device_call("cp_async_commit", {}, nest.loc),
                                        ir::device_call("cp_async_wait_all", {}, nest.loc)}),
                          nest.loc);
    }
    // A nest that only moves a vector load into a thread's local array (a T.vectorized fill of
    // raw bytes a thread converts later), at consecutive elements from an aligned one: the load
    // fills the array's elements themselves, not a run copied into them element by element.
    if (const NestVectors::Load* moved = local_fill_source(store, v)) {
      const std::vector<Expr> at = at_first(store.indices);
      if (fills_aligned_run(store, nest, layout, at, first_slot, lane, width)) {
        std::vector<Expr> args = {ir::address_of(store.buffer, at),
                                  ir::address_of(moved->load->buffer, at_first(moved->load->indices))};
        if (moved->guard) args.push_back(at_first({moved->guard})[0]);
        Stmt fill = ir::device_call(
            std::string(moved->guard ? "load_vector_or_zero<" : "load_vector<") + std::to_string(width) + ">", args,
            nest.loc);
        return group_loop(nest, layout, nest_body, first, group, first_slot, width, fill, {}, replicas_sit_out);
      }
    }
    // The loads' runs, and the body with each vector load read from its run.
    std::vector<ir::Buffer> runs;
    std::vector<Stmt> prologue;
    std::unordered_map<const ir::ExprNode*, ir::Buffer> run_of_load;
    for (const NestVectors::Load& vector : v.loads) {
      const ir::BufferLoad* load = vector.load;
      ir::Buffer run = run_of(load->buffer, load->buffer->name + "_run");
      runs.push_back(run);
      run_of_load[vector.zero_else ? vector.zero_else : load] = run;
      std::vector<Expr> args = {ir::address_of(run, {ir::make_int(0)}),
                                ir::address_of(load->buffer, at_first(load->indices))};
      // A load the value reads only under a condition is made only where it holds (for the
      // whole group), zeros otherwise: a predicated load, which the compiler may issue ahead
      // of the group's other work, as it may not a load behind a branch.
      if (vector.guard) args.push_back(at_first({vector.guard})[0]);
      prologue.push_back(ir::device_call(
          std::string(vector.guard ? "load_vector_or_zero<" : "load_vector<") + std::to_string(width) + ">", args,
          nest.loc));
    }
    // Each vector load (or the if_then_else(guard, load, 0) around it) reads its run.
    struct ReadRuns : ir::IRMutator {
      const std::unordered_map<const ir::ExprNode*, ir::Buffer>* runs;
      Expr lane;
      Expr mutate_BufferLoad(const ir::BufferLoad* op, const Expr& self) override {
        auto it = runs->find(op);
        return it == runs->end() ? IRMutator::mutate_BufferLoad(op, self) : ir::make_load(it->second, {lane});
      }
      Expr mutate_Select(const ir::Select* op, const Expr& self) override {
        auto it = runs->find(op);
        return it == runs->end() ? IRMutator::mutate_Select(op, self) : ir::make_load(it->second, {lane});
      }
    } read_runs;
    read_runs.runs = &run_of_load;
    read_runs.lane = lane;
    Expr value = read_runs.mutate(store.value);
    ir::Buffer out_run;
    Stmt element;
    if (v.store) {
      out_run = run_of(store.buffer, store.buffer->name + "_run");
      runs.push_back(out_run);
      element = ir::with_loc(ir::make_store(out_run, {lane}, value), nest.body->loc);
    } else {
      element = ir::with_loc(ir::make_store(store.buffer, store.indices, value), nest.body->loc);
    }
    // One element of the group, as partition lowers a slot.
    Expr slot = ir::make_Add(first_slot, lane);
    std::vector<Expr> idx = layout.indices(tid_, slot);
    for (auto& i : idx) i = ir::simplify(i);
    ir::BoundAnalyzer saved = bounds_;
    bounds_.bind(group, {0, layout.slots() / width - 1});
    bounds_.bind(lane, {0, width - 1});
    Stmt body = FragmentSlots(*this, nest.vars, layout, slot).mutate(element);
    ir::VarMap map;
    for (size_t k = 0; k < nest.vars.size(); ++k) map[nest.vars[k].get()] = idx[k];
    for (size_t k = 0; k < nest.vars.size(); ++k) bounds_.bind(nest.vars[k], {0, nest.extents[k] - 1});
    ++nest_depth_;
    body = mutate(body);
    --nest_depth_;
    bounds_ = saved;
    body = ir::substitute(body, map);
    std::vector<Stmt> group_body = prologue;
    Stmt pairs = v.store ? pair_conversions(body, lane, width, runs, ctx_.target.is_cuda()) : Stmt();
    group_body.push_back(pairs ? pairs : ir::make_for(lane, ir::make_int(0), ir::make_int(width), ir::ForKind::Unrolled, body));
    if (v.store)
      group_body.push_back(ir::device_call(
          "store_vector<" + std::to_string(width) + ">",
          {ir::address_of(store.buffer, at_first(store.indices)), ir::address_of(out_run, {ir::make_int(0)})},
          nest.loc));
    return group_loop(nest, layout, nest_body, first, group, first_slot, width, ir::make_seq(group_body), runs,
                      replicas_sit_out);
  }

  // The nest's store value when it is one vector load of global memory into the shared buffer
  // it stores (of the same type, in an access cp.async makes: 4, 8 or 16 bytes), or that load
  // where its condition holds and zeros elsewhere; null otherwise.
  static const NestVectors::Load* shared_fill_source(const ir::BufferStore& store, const NestVectors& v) {
    if (!v.store || v.loads.size() != 1 || store.buffer->scope != ir::MemoryScope::Shared) return nullptr;
    const NestVectors::Load& only = v.loads[0];
    const int64_t bytes = v.width * store.buffer->dtype.bytes();
    if (only.load->buffer->scope != ir::MemoryScope::Global || only.load->buffer->dtype != store.buffer->dtype ||
        (bytes != 4 && bytes != 8 && bytes != 16))
      return nullptr;
    const ir::ExprNode* value = store.value.get();
    return value == only.load || (only.zero_else && value == only.zero_else) ? &only : nullptr;
  }

  // The nest's store value when it is one vector load into the thread-local array it stores
  // (of the same type), or that load where its condition holds and zeros elsewhere; null
  // otherwise.
  static const NestVectors::Load* local_fill_source(const ir::BufferStore& store, const NestVectors& v) {
    if (v.store || v.loads.size() != 1 || store.buffer->scope != ir::MemoryScope::Local) return nullptr;
    const NestVectors::Load& only = v.loads[0];
    if (only.load->buffer->dtype != store.buffer->dtype) return nullptr;
    const ir::ExprNode* value = store.value.get();
    return value == only.load || (only.zero_else && value == only.zero_else) ? &only : nullptr;
  }

  // Whether a group's stores into a local array (`at`: the first's indices) are its elements
  // first.. first + width - 1 along the last dim, first a multiple of width, and the array a
  // whole number of 16-byte vectors (codegen aligns it to 16): one vector access fills them.
  bool fills_aligned_run(const ir::BufferStore& store, const op::ParallelNest& nest, const Fragment& layout,
                         const std::vector<Expr>& at, const Expr& first_slot, const Expr& lane, int64_t width) const {
    int64_t elements = 1;
    for (const auto& extent : store.buffer->shape) {
      int64_t e;
      if (!ir::is_const_int(extent, &e)) return false;
      elements *= e;
    }
    const int64_t bytes = width * store.buffer->dtype.bytes();
    if ((elements * store.buffer->dtype.bytes()) % 16 != 0 || bytes > 16) return false;
    std::vector<Expr> idx = layout.indices(tid_, ir::make_Add(first_slot, lane));
    ir::VarMap map;
    for (size_t k = 0; k < nest.vars.size(); ++k) map[nest.vars[k].get()] = ir::simplify(idx[k]);
    Expr flat = ir::make_int(0);
    for (size_t d = 0; d < store.indices.size(); ++d) {
      Expr step = ir::simplify(ir::make_Sub(ir::substitute(store.indices[d], map), at[d]));
      if (!ir::is_zero(d + 1 < store.indices.size() ? step : ir::simplify(ir::make_Sub(step, lane)))) return false;
      flat = ir::make_Add(ir::make_Mul(flat, store.buffer->shape[d]), at[d]);
    }
    return ir::is_zero(ir::simplify(ir::make_FloorMod(flat, ir::make_int(width))));
  }

  // The loop over a vectorized nest's groups of `width` slots, each running `result` (under
  // the nest's store guard, at the group's first element; with its local `runs`) on the
  // threads that hold the group.
  Stmt group_loop(const op::ParallelNest& nest, const Fragment& layout, const NestStore& nest_body,
                  const std::vector<Expr>& first, const Expr& group, const Expr& first_slot, int64_t width,
                  Stmt result, const std::vector<ir::Buffer>& runs, bool replicas_sit_out) {
    if (nest_body.guard) {
      ir::VarMap at_group;
      for (size_t k = 0; k < nest.vars.size(); ++k) at_group[nest.vars[k].get()] = first[k];
      result = ir::make_if(ir::simplify(ir::substitute(nest_body.guard, at_group)), result);
    }
    for (const auto& run : runs) result = ir::make_allocate(run, result);
    Expr guard;
    if (replicas_sit_out) {
      if (layout.threads() < threads_) guard = conjoin(guard, ir::make_LT(tid_, ir::make_int(layout.threads())));
      for (const auto& d : layout.digits())
        if (d.on_thread && d.dim < 0)
          guard = conjoin(guard, ir::make_EQ(layout.digit_value(d, tid_, first_slot), ir::make_int(0)));
    }
    if (guard) result = ir::make_if(ir::simplify(guard), result);
    int64_t groups = layout.slots() / width;
    ir::ForKind kind = groups <= kMaxUnrolledSlots ? ir::ForKind::Unrolled : ir::ForKind::Serial;
    return ir::with_loc(ir::make_for(group, ir::make_int(0), ir::make_int(groups), kind, result), nest.loc);
  }

  // A local buffer allocated outside `body` that it stores into (each thread's own copy), or
  // none.
  static ir::Buffer outer_local_written(const Stmt& body) {
    struct Finder : ir::IRVisitor {
      std::unordered_set<const ir::BufferNode*> inner;
      ir::Buffer found;
      void visit_Allocate(const ir::Allocate* op) override {
        inner.insert(op->buffer.get());
        IRVisitor::visit_Allocate(op);
      }
      void visit_BufferStore(const ir::BufferStore* op) override {
        if (!found && op->buffer->scope == ir::MemoryScope::Local && !inner.count(op->buffer.get()))
          found = op->buffer;
        IRVisitor::visit_BufferStore(op);
      }
    } finder;
    finder.visit(body);
    return finder.found;
  }

  // A nest run whole on every thread reaches every element of the fragments it uses, but a
  // thread holds only its own part of a fragment spread over the threads.
  void refuse_spread_fragments(const op::ParallelNest& nest, const ir::Buffer& outer_local) const {
    struct Finder : ir::IRVisitor {
      ir::Buffer found;
      void visit_BufferLoad(const ir::BufferLoad* op) override {
        note(op->buffer);
        IRVisitor::visit_BufferLoad(op);
      }
      void visit_BufferStore(const ir::BufferStore* op) override {
        note(op->buffer);
        IRVisitor::visit_BufferStore(op);
      }
      void note(const ir::Buffer& b) {
        if (!found && is_fragment(b) && b->fragment && !b->fragment->replicated()) found = b;
      }
    } finder;
    finder.visit(nest.body);
    if (!finder.found) return;
    error_at(nest.loc, "this T.Parallel loop stores into '" + outer_local->name + "', a local of each thread "
                       "made outside the loop, so every thread runs the whole loop; but it also uses fragment '" +
                       finder.found->name + "', whose elements are spread over the threads (" +
                       finder.found->fragment->to_string() + "): give the elements a variable of their own (a name "
                       "first assigned inside the loop), or store into a buffer indexed by the loop variables");
  }

  // Fragment accesses in a nest's body as slots of the thread's registers.
  class FragmentSlots : public ir::IRMutator {
   public:
    FragmentSlots(ThreadLowering& outer, const std::vector<Expr>& vars, const Fragment& loop, Expr slot)
        : outer_(outer), vars_(vars), loop_(loop), slot_(std::move(slot)) {}

   protected:
    Expr mutate_BufferLoad(const ir::BufferLoad* op, const Expr& self) override {
      Expr e = IRMutator::mutate_BufferLoad(op, self);
      const auto* load = e.as<ir::BufferLoad>();
      if (!is_fragment(load->buffer)) return e;
      return ir::with_loc(ir::make_load(outer_.local_of(load->buffer), {slot_of(load->buffer, load->indices)}),
                          op->loc);
    }
    Stmt mutate_BufferStore(const ir::BufferStore* op, const Stmt& self) override {
      Stmt s = IRMutator::mutate_BufferStore(op, self);
      const auto* store = s.as<ir::BufferStore>();
      if (!is_fragment(store->buffer)) return s;
      return ir::with_loc(ir::make_store(outer_.local_of(store->buffer), {slot_of(store->buffer, store->indices)},
                                         store->value),
                          op->loc);
    }

   private:
    Expr slot_of(const ir::Buffer& b, const std::vector<Expr>& indices) const {
      const Fragment& f = *b->fragment;
      std::vector<Expr> loop_idx = loop_.indices(outer_.tid_, slot_);
      Expr slot;
      for (const auto& d : f.digits()) {
        if (d.on_thread) continue;
        Expr idx = ir::simplify(indices.at(d.dim));
        int k = -1;
        for (size_t v = 0; v < vars_.size(); ++v)
          if (idx.same_as(vars_[v])) k = static_cast<int>(v);
        Expr value;
        if (k >= 0) {
          for (const auto& l : loop_.digits())
            if (l.dim == k && l.place == d.place && l.radix == d.radix) value = loop_.digit_value(l, outer_.tid_, slot_);
          if (!value) idx = loop_idx[k];
        }
        if (!value) {
          value = ir::make_cast(DType::Int32, idx);
          if (d.place != 1) value = ir::make_FloorDiv(value, ir::make_int(d.place));
          value = ir::make_FloorMod(value, ir::make_int(d.radix));
        }
        if (d.stride != 1) value = ir::make_Mul(value, ir::make_int(d.stride));
        slot = slot ? ir::make_Add(slot, value) : value;
      }
      return slot ? slot : ir::make_int(0);
    }

    ThreadLowering& outer_;
    const std::vector<Expr>& vars_;
    const Fragment& loop_;
    Expr slot_;
  };

  // A T.Parallel nest of non-constant extents: threads take flat indices tid, tid + threads, ...
  Stmt strided(const ir::For* op) {
    std::vector<Expr> vars, extents;
    Stmt cur(std::make_shared<ir::For>(*op));
    while (const auto* f = cur.as<ir::For>()) {
      if (f->for_kind != ir::ForKind::Parallel) break;
      vars.push_back(f->var);
      extents.push_back(ir::make_cast(DType::Int64, ir::make_Add(f->min, f->extent)));
      cur = f->body;
    }
    const auto* outer = op;
    Expr total = ir::make_int(1, DType::Int64);
    for (const auto& e : extents) total = ir::make_Mul(total, e);
    Expr step = ir::make_var("e", DType::Int64);
    Expr flat = ir::make_Add(ir::make_Mul(step, ir::make_int(threads_, DType::Int64)),
                             ir::make_cast(DType::Int64, tid_));
    ir::VarMap map;
    Expr rest = flat;
    for (size_t k = vars.size(); k-- > 0;) {
      Expr value = k == 0 ? rest : ir::make_FloorMod(rest, extents[k]);
      map[vars[k].get()] = ir::make_cast(vars[k]->dtype, value);
      if (k) rest = ir::make_FloorDiv(rest, extents[k]);
    }
    ++nest_depth_;
    Stmt body = mutate(cur);
    --nest_depth_;
    body = ir::make_if(ir::make_LT(flat, total), ir::substitute(body, map));
    Expr steps = ir::make_FloorDiv(ir::make_Add(total, ir::make_int(threads_ - 1, DType::Int64)),
                                   ir::make_int(threads_, DType::Int64));
    return ir::with_loc(ir::make_for(step, ir::make_int(0, DType::Int64), steps, ir::ForKind::Serial, body),
                        outer->loc);
  }

  // ------------------------------------------------------------ tile ops

  // A reduction of a fragment along `dim` into the fragment of its projected layout: each
  // thread combines the elements it holds, then the threads that split the reduced dim
  // exchange partial results (warp shuffles, then shared memory across warps).
  Stmt reduce_fragment(const ir::Reduce& op) {
    const Fragment& src = *op.src.buffer->fragment;
    const ir::Buffer& dst_buffer = op.dst.buffer;
    std::vector<int> keep;
    for (size_t d = 0; d < src.shape().size(); ++d)
      if (static_cast<int>(d) != op.dim) keep.push_back(static_cast<int>(d));
    Fragment dst = src.project(keep);
    // a result that keeps extent-1 dims holds the same slots in its own shape
    if (is_fragment(dst_buffer) && dst_buffer->fragment->shape() != dst.shape())
      if (std::optional<Fragment> same = ir::reduced_fragment(src, keep, dst_buffer->fragment->shape())) dst = *same;
    // infer_layout may have given the result the scattered layout (each partial on one replica)
    const std::optional<Fragment> scattered = src.scattered(keep, op.dim, ctx_.target.warp_size);
    const bool scatter = is_fragment(dst_buffer) && scattered && !dst_buffer->fragment->same_placement(dst) &&
                         dst_buffer->fragment->same_placement(*scattered);
    if (!is_fragment(dst_buffer) || !(scatter || dst_buffer->fragment->same_placement(dst)))
      error_at(op.loc, "this reduction's result '" + dst_buffer->name + "' must be laid out as " + dst.to_string() +
                       " (its source without the reduced dim); reduce into a fragment of its own");
    DType t = dst_buffer->dtype;
    const ir::Buffer& src_local = local_of(op.src.buffer);
    const ir::Buffer& dst_local = local_of(dst_buffer);
    ir::Buffer partial = ir::make_buffer(dst_buffer->name + "_partial", t, {ir::make_int(dst.slots())}, {},
                                         ir::MemoryScope::Local, op.loc);
    std::vector<Stmt> out;
    out.push_back(fill_local(partial, identity_of(op.reduce_kind, t)));

    // This thread's elements.
    Expr s = ir::make_var("s");
    std::vector<Expr> idx = src.indices(tid_, s);
    Expr x = ir::make_cast(t, ir::make_load(src_local, {s}));
    if (op.reduce_kind == ir::ReduceKind::AbsSum || op.reduce_kind == ir::ReduceKind::AbsMax)
      x = ir::make_call(t, "abs", {x});
    Expr ps = src.projected_slot(keep, s);
    Stmt step = ir::make_store(partial, {ps}, combine(op.reduce_kind, ir::make_load(partial, {ps}), x));
    Expr guard = reduced_range_guard(op, src, s);
    if (src.covers_more())
      for (size_t d = 0; d < idx.size(); ++d)
        guard = conjoin(guard, ir::make_LT(idx[d], ir::make_int(src.shape()[d])));
    if (guard) step = ir::make_if(guard, step);
    out.push_back(ir::make_for(s, ir::make_int(0), ir::make_int(src.slots()),
                               src.slots() <= kMaxUnrolledSlots ? ir::ForKind::Unrolled : ir::ForKind::Serial, step));

    if (scatter) {
      out.push_back(scatter_partials(op, src, partial, dst_local, t));
      return located(ir::make_allocate(partial, ir::make_seq(out)), op.loc);
    }

    // The other threads' elements.
    std::vector<Stmt> shared_steps;
    ir::Buffer scratch;
    for (const auto& d : src.digits()) {
      if (!d.on_thread || d.dim != op.dim) continue;
      bool pow2 = (d.radix & (d.radix - 1)) == 0;
      const int64_t warp = ctx_.target.warp_size;
      int64_t in_warp = 1;  // how much of the digit shuffles cover
      if (pow2 && d.stride < warp) in_warp = std::min<int64_t>(d.radix, warp / d.stride);
      for (int64_t offset = d.stride; offset < d.stride * in_warp; offset *= 2)
        out.push_back(for_each_slot(partial, [&](const Expr& p) {
          Expr v = ir::make_load(partial, {p});
          return ir::make_store(partial, {p},
                                combine(op.reduce_kind, v, ir::device_value(t, "shfl_xor", {v, ir::make_int(offset)})));
        }));
      if (in_warp == d.radix) continue;
      // The rest through shared memory: each thread reads the partials of the threads that
      // differ from it only in this digit's remaining part, `chunk` slots a round: one pair of
      // barriers a round, not one a slot (a block split into 2 warpgroups along the reduced dim
      // exchanges both of its rows' partials at once).
      int64_t stride = d.stride * in_warp, radix = d.radix / in_warp;
      const int64_t slots = dst.slots();
      const int64_t chunk = std::clamp<int64_t>(kExchangeBytes / (threads_ * t.bytes()), 1, slots);
      if (!scratch)
        scratch = ir::make_buffer(dst_buffer->name + "_exchange", t, {ir::make_int(threads_ * chunk)}, {},
                                  ir::MemoryScope::Shared, op.loc);
      Expr digit = ir::make_FloorMod(ir::make_FloorDiv(tid_, ir::make_int(stride)), ir::make_int(radix));
      Expr base = ir::make_Sub(tid_, ir::make_Mul(digit, ir::make_int(stride)));
      Expr round = ir::make_var("r");
      // body(q, p) for each slot p = round * chunk + q of the round (q: its row of the exchange)
      auto each_slot = [&](const std::function<Stmt(const Expr&, const Expr&)>& body) {
        Expr q = ir::make_var("q");
        Expr p = ir::make_Add(ir::make_Mul(round, ir::make_int(chunk)), q);
        Stmt at = body(q, p);
        if (slots % chunk) at = ir::make_if(ir::make_LT(p, ir::make_int(slots)), at);
        return ir::make_for(q, ir::make_int(0), ir::make_int(chunk), ir::ForKind::Unrolled, at);
      };
      auto write = [&](const Expr& q, const Expr& p) {
        return ir::make_store(scratch, {ir::make_Add(ir::make_Mul(q, ir::make_int(threads_)), tid_)},
                              ir::make_load(partial, {p}));
      };
      auto read = [&](const Expr& q, const Expr& p) {
        Expr v = ir::make_var("v");
        Expr peer = ir::make_Add(ir::make_Mul(q, ir::make_int(threads_)),
                                 ir::make_Add(base, ir::make_Mul(v, ir::make_int(stride))));
        ir::Buffer acc = ir::make_buffer("acc", t, {ir::make_int(1)}, {}, ir::MemoryScope::Local, op.loc);
        Stmt gather = ir::make_store(acc, {ir::make_int(0)},
                                     combine(op.reduce_kind, ir::make_load(acc, {ir::make_int(0)}),
                                             ir::make_load(scratch, {peer})));
        return ir::make_allocate(acc, ir::make_seq({
                                          ir::make_store(acc, {ir::make_int(0)}, identity_of(op.reduce_kind, t)),
                                          ir::make_for(v, ir::make_int(0), ir::make_int(radix), ir::ForKind::Unrolled,
                                                       gather),
                                          ir::make_store(partial, {p}, ir::make_load(acc, {ir::make_int(0)})),
                                      }));
      };
      const int64_t rounds = (slots + chunk - 1) / chunk;
      out.push_back(ir::make_for(round, ir::make_int(0), ir::make_int(rounds),
                                 rounds <= kMaxUnrolledSlots ? ir::ForKind::Unrolled : ir::ForKind::Serial,
                                 ir::make_seq({
                                     ir::device_call(block_barrier_, {}, op.loc),
                                     each_slot(write),
                                     ir::device_call(block_barrier_, {}, op.loc),
                                     each_slot(read),
                                 })));
    }
    if (scratch) out.push_back(ir::device_call(block_barrier_, {}, op.loc));
    out.push_back(for_each_slot(partial, [&](const Expr& p) {
      Expr r = ir::make_load(partial, {p});
      if (!op.clear) r = combine(op.reduce_kind, ir::make_load(dst_local, {p}), r);
      return ir::make_store(dst_local, {p}, r);
    }));
    Stmt body = ir::make_allocate(partial, ir::make_seq(out));
    if (scratch) body = ir::make_allocate(scratch, body);
    return located(body, op.loc);
  }

  // The rest of a reduction into ir::Fragment::scattered's layout: `partial` holds this
  // thread's share of each of the projection's slots; lane bit k of the reduced dim (stride
  // lane_k) takes slot bit k. Bit by bit, a thread keeps the half of the slots whose bit k is
  // its lane bit, adding its partner's share of them (one shuffle a kept slot), and sends the
  // other half. What is left is in the slots whose low bits are 0: slot p << bits of partial is
  // slot p of the result.
  Stmt scatter_partials(const ir::Reduce& op, const Fragment& src, const ir::Buffer& partial,
                        const ir::Buffer& dst_local, DType t) {
    const std::vector<int64_t> lanes = *src.thread_bits(op.dim, ctx_.target.warp_size);
    int64_t slots;
    ir::is_const_int(partial->shape[0], &slots);
    std::vector<Stmt> steps;
    for (size_t k = 0; k < lanes.size(); ++k) {
      const int64_t bit = int64_t{1} << k;
      Expr upper = ir::make_EQ(ir::make_FloorMod(ir::make_FloorDiv(tid_, ir::make_int(lanes[k])), ir::make_int(2)),
                               ir::make_int(1));
      for (int64_t p = 0; p < slots; p += 2 * bit) {
        Expr low = ir::make_load(partial, {ir::make_int(p)}), high = ir::make_load(partial, {ir::make_int(p + bit)});
        Expr kept = ir::make_select(upper, high, low), sent = ir::make_select(upper, low, high);
        steps.push_back(ir::make_store(
            partial, {ir::make_int(p)},
            combine(op.reduce_kind, kept, ir::device_value(t, "shfl_xor", {sent, ir::make_int(lanes[k])}))));
      }
    }
    for (int64_t r = 0; r < (slots >> lanes.size()); ++r) {
      Expr v = ir::make_load(partial, {ir::make_int(r << lanes.size())});
      if (!op.clear) v = combine(op.reduce_kind, ir::make_load(dst_local, {ir::make_int(r)}), v);
      steps.push_back(ir::make_store(dst_local, {ir::make_int(r)}, v));
    }
    return ir::make_seq(steps);
  }

  // A reduction of part of a fragment: whole in the kept dims (op::check), a range [lo, lo +
  // extent) of the reduced dim. The condition that a thread's element `slot` lies in that range,
  // or null when the range is the whole dim. Where the range's ends are multiples of the place
  // above which the dim's digits are all slot digits, the condition reads those digits alone: it
  // depends on the slot only, and an unrolled loop over the slots folds it away.
  Expr reduced_range_guard(const ir::Reduce& op, const Fragment& src, const Expr& slot) {
    const auto& region = op.src.region;
    Expr lo = ir::simplify(region[op.dim].min), extent = ir::simplify(region[op.dim].extent);
    int64_t lo_value = -1, extent_value = -1;
    bool constant = ir::is_const_int(lo, &lo_value) && ir::is_const_int(extent, &extent_value);
    if (constant && lo_value == 0 && extent_value == src.shape()[op.dim]) return Expr();
    std::vector<const ir::FragmentDigit*> digits;
    for (const auto& d : src.digits())
      if (d.dim == op.dim) digits.push_back(&d);
    std::sort(digits.begin(), digits.end(), [](auto* a, auto* b) { return a->place < b->place; });
    size_t high = digits.size();  // the first of the slot digits that end the dim's digits
    while (high > 0 && !digits[high - 1]->on_thread) --high;
    Expr index;
    if (constant && high < digits.size() && lo_value % digits[high]->place == 0 &&
        extent_value % digits[high]->place == 0) {
      for (size_t k = high; k < digits.size(); ++k) {
        Expr term = src.digit_value(*digits[k], tid_, slot);
        if (digits[k]->place != 1) term = ir::make_Mul(term, ir::make_int(digits[k]->place));
        index = index ? ir::make_Add(index, term) : term;
      }
    } else {
      index = src.indices(tid_, slot)[op.dim];
    }
    return conjoin(ir::make_LE(lo, index), ir::make_LT(index, ir::simplify(ir::make_Add(lo, extent))));
  }

  Stmt fill_local(const ir::Buffer& local, const Expr& value) {
    return for_each_slot(local, [&](const Expr& p) { return ir::make_store(local, {p}, value); });
  }

  Stmt for_each_slot(const ir::Buffer& local, const std::function<Stmt(const Expr&)>& body) {
    int64_t n;
    ir::is_const_int(local->shape[0], &n);
    Expr p = ir::make_var("p");
    return ir::make_for(p, ir::make_int(0), ir::make_int(n),
                        n <= kMaxUnrolledSlots ? ir::ForKind::Unrolled : ir::ForKind::Serial, body(p));
  }

  // Global <-> shared: vector accesses (cp.async into shared) of the widest of 16, 8 and 4
  // bytes that the tile's rows allow and the tensor's known shape and strides don't rule out
  // (at run time its address and strides must allow it too); element by element otherwise.
  // A tensor whose rows are an odd multiple of 8 bytes (K = 3900 in bf16) so still loads
  // asynchronously, 8 bytes at a time.
  Stmt copy_global_shared(const ir::Copy& op) {
    // T.copy(..., prefer_instruction="sync"): its element-by-element form takes no cp.async either.
    const bool fills_async = shared_fills_async_;
    shared_fills_async_ = fills_async && op.allow_async;
    Stmt elementwise = mutate(element_copy(op));
    shared_fills_async_ = fills_async;
    const int64_t bytes = op.dst.buffer->dtype.bytes();
    if (op.src.buffer->dtype != op.dst.buffer->dtype) return elementwise;
    for (int64_t access_bytes : {16, 8, 4}) {
      if (access_bytes % bytes != 0) break;
      // Unchanged below 2 elements a vector, unless cp.async makes a single element asynchronous.
      const bool to_shared = op.dst.buffer->scope == ir::MemoryScope::Shared;
      if (access_bytes / bytes < (to_shared ? 1 : 2)) break;
      if (auto copy = vector_copy(op, access_bytes, elementwise)) return *copy;
    }
    return elementwise;
  }

  // copy_global_shared's copy in accesses of `access_bytes`, falling back to `elementwise`
  // where the run-time test fails; nothing when the tile or the tensor's known shape rules the
  // width out.
  std::optional<Stmt> vector_copy(const ir::Copy& op, int64_t access_bytes, const Stmt& elementwise) {
    bool to_shared = op.dst.buffer->scope == ir::MemoryScope::Shared;
    // T.copy(..., prefer_instruction="sync"): the threads' own loads and stores, not cp.async.
    if (to_shared && !op.allow_async) return std::nullopt;
    const ir::BufferRegion& global = to_shared ? op.src : op.dst;
    const ir::BufferRegion& shared = to_shared ? op.dst : op.src;
    // A tensor that T.annotate_layout laid out has no rows of consecutive elements to move.
    if (global.buffer->layout) return std::nullopt;
    const int64_t vec = access_bytes / op.dst.buffer->dtype.bytes();
    std::vector<int64_t> extents;
    for (const auto& e : ir::squeezed_extents(op.dst)) {
      int64_t v;
      if (!ir::is_const_int(ir::simplify(e), &v)) return std::nullopt;
      extents.push_back(v);
    }
    std::vector<int> gdims = ir::squeezed_dims(global), sdims = ir::squeezed_dims(shared);
    size_t grank = global.region.size(), srank = shared.region.size();
    if (extents.empty() || gdims.back() != static_cast<int>(grank) - 1 ||
        sdims.back() != static_cast<int>(srank) - 1 || extents.back() % vec != 0)
      return std::nullopt;
    int64_t shared_cols, shared_min;
    if (!ir::is_const_int(ir::simplify(shared.buffer->shape.back()), &shared_cols) ||
        !ir::is_const_int(ir::simplify(shared.region.back().min), &shared_min) || shared_cols % vec ||
        shared_min % vec || (shared.buffer->layout && shared.buffer->layout->contiguous_elements() % vec))
      return std::nullopt;
    Expr aligned = ir::simplify(vector_ready(global, vec, access_bytes));
    if (ir::is_zero(aligned)) return std::nullopt;
    const std::string width = std::to_string(access_bytes);
    // T.copy's eviction_policy: the Policy of device/cuda/memory.h's cp_async
    const std::string hint = op.eviction == ir::EvictionPolicy::Normal
                                 ? ""
                                 : "<" + std::to_string(static_cast<int>(op.eviction)) + ", 0>";

    std::vector<int64_t> chunks = extents;
    chunks.back() /= vec;
    Fragment layout = ir::default_fragment(chunks, threads_, 1);
    Stmt vectorized = slot_loop(
        layout, chunks,
        [&](const std::vector<Expr>& idx, const Expr&) {
          std::vector<Expr> element = idx;
          element.back() = ir::make_Mul(element.back(), ir::make_int(vec));
          Access g = access(global, element), s = access(shared, element);
          // The region's bounds may read scalars of the kernel's (a fragment's element): lowered too.
          for (Access* a : {&g, &s})
            for (Expr& i : a->indices) i = mutate(i);
          if (g.in_bounds) g.in_bounds = mutate(g.in_bounds);
          Expr g_addr = ir::address_of(global.buffer, g.indices), s_addr = ir::address_of(shared.buffer, s.indices);
          Expr in_bounds = g.in_bounds ? ir::simplify(g.in_bounds) : ir::make_bool(true);
          if (to_shared) return ir::device_call("cp_async_" + width + hint, {s_addr, g_addr, in_bounds}, op.loc);
          Stmt store = ir::device_call("copy<" + width + ">", {g_addr, s_addr}, op.loc);
          return g.in_bounds ? ir::make_if(in_bounds, store) : store;
        },
        op.loc, /*replicas_sit_out=*/true);
    std::vector<Stmt> fast = {vectorized};
    if (to_shared && op.instruction.kind != ir::CopyInstructionKind::CpAsync) {
      fast.push_back(ir::device_call("cp_async_commit", {}, op.loc));
      fast.push_back(ir::device_call("cp_async_wait_all", {}, op.loc));
    }
    if (ir::is_one(aligned)) return located(ir::make_seq(fast), op.loc);
    return located(ir::make_if(aligned, ir::make_seq(fast), elementwise), op.loc);
  }

  // Whether, at run time, every vector of `global`'s rows starts `access_bytes` aligned: the
  // tensor's base address is (known, to 16 bytes, in the contiguous-arguments variant), its
  // row strides and the tile's first column are multiples of `vec`, and so is its last extent
  // (so a vector is in bounds exactly when its first element is). Only the first column may
  // change from one loop iteration to the next, and it usually folds away (k * 32 % 8),
  // leaving a test the loop can hoist.
  Expr vector_ready(const ir::BufferRegion& global, int64_t vec, int64_t access_bytes) {
    const ir::Buffer& b = global.buffer;
    std::vector<Expr> origin(b->shape.size(), ir::make_int(0));
    Expr ready = ctx_.contiguous_args && b->scope == ir::MemoryScope::Global
                     ? ir::make_bool(true)
                     : ir::device_value(DType::Bool, "is_aligned", {ir::address_of(b, origin), ir::make_int(access_bytes)});
    auto multiple = [&](const Expr& e) {
      // Tested in e's own type first: the simplifier sees through `k * 32 % 8` but not a cast.
      if (ir::is_zero(ir::simplify(ir::make_FloorMod(e, ir::make_int(vec, e->dtype))))) return ir::make_bool(true);
      return ir::make_EQ(ir::make_FloorMod(ir::make_cast(DType::Int64, e), ir::make_int(vec, DType::Int64)),
                         ir::make_int(0, DType::Int64));
    };
    ready = ir::make_And(ready, multiple(b->shape.back()));
    ready = ir::make_And(ready, multiple(mutate(global.region.back().min)));
    for (size_t d = 0; d + 1 < b->strides.size(); ++d) ready = ir::make_And(ready, multiple(b->strides[d]));
    return ready;
  }

  // dst = src one element at a time, as a T.Parallel nest over the tile.
  Stmt element_copy(const ir::Copy& op) {
    std::vector<Expr> vars;
    for (size_t i = 0; i < ir::squeezed_dims(op.dst).size(); ++i) vars.push_back(ir::make_var("i" + std::to_string(i)));
    Access src = access(op.src, vars), dst = access(op.dst, vars);
    Expr value = ir::make_cast(op.dst.buffer->dtype, ir::make_load(op.src.buffer, src.indices));
    if (src.in_bounds) value = ir::make_select(src.in_bounds, value, zero_of(op.dst.buffer->dtype));
    Stmt store = ir::make_store(op.dst.buffer, dst.indices, value);
    if (dst.in_bounds) store = ir::make_if(dst.in_bounds, store);
    auto extents = ir::squeezed_extents(op.dst);
    for (size_t i = vars.size(); i-- > 0;)
      store = ir::make_for(vars[i], ir::make_int(0), ir::make_cast(DType::Int32, extents[i]), ir::ForKind::Parallel,
                           store);
    return located(store, op.loc);
  }

  const PassContext& ctx_;
  const InstructionLowering lowering_;
  SourceLoc statement_loc_;  // of the innermost located statement being lowered
  int threads_ = 128;
  std::string block_barrier_ = "sync_threads";  // the barrier of the threads_ threads
  std::optional<GroupBarriers> group_barriers_;  // the kernel's T.ws groups'
  Expr block_tid_;  // threadIdx.x (tid_ is a T.ws group's own index inside one)
  int nest_depth_ = 0;  // inside the body of a partitioned T.Parallel nest
  // Whether a nest that fills shared memory from a tensor may copy by cp.async (not under a
  // T.copy that asked for the threads' own loads and stores).
  bool shared_fills_async_ = true;
  Expr tid_;
  std::optional<ThreadValues> thread_values_;  // when the kernel reads the thread index
  std::unordered_map<const ir::BufferNode*, ir::Buffer> locals_;
  std::vector<ir::TensorMapSpec> tensor_maps_;
};

}  // namespace

ir::Stmt lower_to_threads(const ir::Stmt& body, const PassContext& ctx) {
  return lower_to_threads(body, ctx, instruction_lowering(ctx.target));
}

ir::Stmt lower_to_threads(const ir::Stmt& body, const PassContext& ctx, InstructionLowering lowering) {
  return ThreadLowering(ctx, lowering).mutate(body);
}

ir::Stmt lower_tile_ops_for_threads(const ir::Stmt& body, const PassContext& ctx) {
  return lower_tile_ops_threaded(body, [](const ir::StmtNode& op, int) {
    auto scope = [](const ir::BufferRegion& r) { return r.buffer->scope; };
    switch (op.kind) {
      case ir::StmtKind::Copy: {
        const auto& copy = static_cast<const ir::Copy&>(op);
        return (scope(copy.src) == ir::MemoryScope::Global && scope(copy.dst) == ir::MemoryScope::Shared) ||
               (scope(copy.src) == ir::MemoryScope::Shared && scope(copy.dst) == ir::MemoryScope::Global) ||
               copy.instruction.on_target_instruction();
      }
      case ir::StmtKind::Gemm: return static_cast<const ir::Gemm&>(op).instruction.on_matrix_cores();
      case ir::StmtKind::AtomicAdd: return static_cast<const ir::AtomicAdd&>(op).instruction.on_target_instruction();
      case ir::StmtKind::Reduce: return scope(static_cast<const ir::Reduce&>(op).src) == ir::MemoryScope::Fragment;
      default: return false;
    }
  });
}

}  // namespace tilec::passes
