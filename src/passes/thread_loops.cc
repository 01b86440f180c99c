#include "passes/thread_loops.h"

#include "passes/thread_groups.h"
#include "passes/thread_values.h"

#include "base/diagnostics.h"
#include "ir/device_calls.h"
#include "ir/mutator.h"
#include "ir/substitute.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;

// A statement as thread `thread` runs it: the thread index is `thread`, and each
// thread-local buffer is the thread's row of its per-thread copy.
class AsThread : public ir::IRMutator {
 public:
  AsThread(const Expr& thread_index, const Expr& thread,
           const ir::BufferMap& copies)
      : thread_index_(thread_index), thread_(thread), copies_(copies) {}

 protected:
  Expr mutate_Var(const ir::Var* op, const Expr& self) override {
    return op == thread_index_.get() ? thread_ : self;
  }
  Expr mutate_Call(const ir::Call* op, const Expr& self) override {
    if (op->name != ir::kThreadIn) return ir::IRMutator::mutate_Call(op, self);
    return ir::make_And(ir::make_GE(thread_, op->args.at(0)), ir::make_LT(thread_, op->args.at(1)));
  }
  Stmt mutate_IfThenElse(const ir::IfThenElse* op, const Stmt& self) override {
    if (thread_group_of(*op))
      error_at(op->loc, "a thread group under a condition or in a loop that differs from thread to thread: "
                        "the group's threads would not all reach it");
    return ir::IRMutator::mutate_IfThenElse(op, self);
  }
  Expr mutate_BufferLoad(const ir::BufferLoad* op, const Expr& self) override {
    auto it = copies_.find(op->buffer.get());
    if (it == copies_.end()) return ir::IRMutator::mutate_BufferLoad(op, self);
    return ir::with_loc(ir::make_load(it->second, row_indices(op->indices)), op->loc);
  }
  Stmt mutate_BufferStore(const ir::BufferStore* op, const Stmt& self) override {
    auto it = copies_.find(op->buffer.get());
    if (it == copies_.end()) return ir::IRMutator::mutate_BufferStore(op, self);
    return ir::with_loc(ir::make_store(it->second, row_indices(op->indices), mutate(op->value)), op->loc);
  }

  ir::BufferRegion mutate_region(const ir::BufferRegion& region) override {
    ir::BufferRegion out = ir::IRMutator::mutate_region(region);
    auto it = copies_.find(region.buffer.get());
    if (it == copies_.end()) return out;
    out.buffer = it->second;
    out.region.insert(out.region.begin(), {thread_, ir::make_int(1)});
    return out;
  }

 private:
  std::vector<Expr> row_indices(const std::vector<Expr>& indices) {
    std::vector<Expr> out{thread_};
    for (const auto& i : indices) out.push_back(mutate(i));
    return out;
  }

  Expr thread_index_, thread_;
  const ir::BufferMap& copies_;
};

class BlockThreads {
 public:
  BlockThreads(const ir::KernelLaunch& launch)
      : launch_(launch), values_(launch.thread_index, launch.body), span_{0, launch.threads} {}

  Stmt run() { return split(launch_.body); }

 private:
  Stmt split(const Stmt& s) {
    if (!s) return s;
    if (const auto* branch = s.as<ir::IfThenElse>()) {
      // a thread group's statements are its threads' (run as a fiber, device/cpu/thread_groups.h)
      if (auto group = thread_group_of(*branch))
        return ir::with_loc(ir::make_if(branch->condition, in_span(*group, branch->then_case),
                                        split(branch->else_case)), s->loc);
      // those threads run it: once, or thread after thread where it reads their own values
      if (auto span = thread_in_of(*branch)) {
        if (branch->else_case) throw std::logic_error("thread_loops: a thread_in branch has no else");
        return in_span(*span, branch->then_case);
      }
    }
    Footprint f = footprint_of(s);
    if (!values_.differs(f) && !f.barrier && !f.thread_parts) return s;
    if (is_block_barrier(s)) return ir::make_seq({});
    if (is_cluster_barrier(s)) return s;  // once for the block, after all its threads' statements before
    if (const auto* seq = s.as<ir::Seq>()) {
      std::vector<Stmt> stmts;
      for (const auto& child : seq->stmts) stmts.push_back(split(child));
      return ir::with_loc(ir::make_seq(std::move(stmts)), s->loc);
    }
    if (const auto* alloc = s.as<ir::Allocate>()) {
      ir::Buffer buffer = copy_of(alloc->buffer);  // before the body, whose statements use it
      return ir::with_loc(ir::make_allocate(buffer, split(alloc->body)), s->loc);
    }
    if (const auto* let = s.as<ir::LetStmt>()) {
      if (!values_.is_thread_value(let->var))
        return ir::with_loc(ir::make_let(let->var, let->value, split(let->body)), s->loc);
      // A value computed from indices alone is computed again where it is used.
      if (footprint_of(let->value).buffers.empty())
        return split(ir::substitute(let->body, ir::VarMap{{let->var.get(), let->value}}));
      // Each thread's value, kept in a row of its own for the statements after.
      const auto* var = let->var.as<ir::Var>();
      ir::Buffer row = ir::make_buffer(var->name, var->dtype, {ir::make_int(launch_.threads)}, {},
                                       ir::MemoryScope::Local, s->loc);
      Expr index = launch_.thread_index;
      Stmt set = per_thread(ir::with_loc(ir::make_store(row, {index}, let->value), s->loc));
      Stmt body = ir::substitute(let->body, ir::VarMap{{let->var.get(), ir::make_load(row, {index})}});
      return ir::with_loc(ir::make_allocate(row, ir::make_seq({set, split(body)})), s->loc);
    }
    bool together = f.barrier || f.shared;
    if (const auto* loop = s.as<ir::For>(); loop && together && !values_.differs(loop->min) &&
                                            !values_.differs(loop->extent)) {
      ir::ForKind kind = loop->for_kind == ir::ForKind::Vectorized ? ir::ForKind::Serial : loop->for_kind;
      return ir::with_loc(ir::make_for(loop->var, loop->min, loop->extent, kind, split(loop->body)), s->loc);
    }
    if (const auto* loop = s.as<ir::While>(); loop && together && !values_.differs(loop->condition))
      return ir::with_loc(ir::make_while(loop->condition, split(loop->body)), s->loc);
    if (const auto* branch = s.as<ir::IfThenElse>(); branch && !values_.differs(branch->condition))
      return ir::with_loc(ir::make_if(branch->condition, split(branch->then_case), split(branch->else_case)), s->loc);
    if (f.barrier) barrier_not_reached_by_all(f.barrier->loc);
    return per_thread(s);
  }

  // `s` once for each thread of the span, thread after thread.
  Stmt per_thread(const Stmt& s) {
    Expr thread = ir::make_var("tx");
    AsThread as_thread(launch_.thread_index, thread, copies_);
    Stmt body = as_thread.mutate(s);
    return ir::with_loc(ir::make_for(thread, ir::make_int(span_.lo), ir::make_int(span_.threads()),
                                     ir::ForKind::Serial, body),
                        s->loc);
  }

  // `s` split for the threads of `span`.
  Stmt in_span(ThreadSpan span, const Stmt& s) {
    ThreadSpan enclosing = span_;
    span_ = span;
    Stmt out = split(s);
    span_ = enclosing;
    return out;
  }


  // The per-thread copy of a thread-local buffer (a row per thread), or the buffer itself.
  ir::Buffer copy_of(const ir::Buffer& b) {
    if (!values_.is_thread_local(b.get())) return b;
    auto it = copies_.find(b.get());
    if (it != copies_.end()) return it->second;
    std::vector<Expr> shape{ir::make_int(launch_.threads)};
    shape.insert(shape.end(), b->shape.begin(), b->shape.end());
    auto copy = std::make_shared<ir::BufferNode>(*ir::make_buffer(b->name, b->dtype, shape, {}, b->scope, b->loc));
    if (b->view_of) copy->view_of = copy_of(b->view_of);  // a view's row reads its buffer's row
    copies_[b.get()] = copy;
    return copy;
  }

  const ir::KernelLaunch& launch_;
  ThreadValues values_;
  ir::BufferMap copies_;
  ThreadSpan span_;  // the threads that run the statements split now
};

class LaunchThreads : public ir::IRMutator {
 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    if (op->clustered()) ThreadValues::across_cluster(*op).check_cluster_barriers(op->body);
    Stmt body = BlockThreads(*op).run();
    if (body.get() == op->body.get() && !op->thread_index) return self;
    auto n = std::make_shared<ir::KernelLaunch>(*op);
    n->body = body;
    n->thread_index = Expr();
    return Stmt(n);
  }
};

}  // namespace

ir::Stmt thread_loops(const ir::Stmt& body, const PassContext&) { return LaunchThreads().mutate(body); }

}  // namespace tilec::passes
