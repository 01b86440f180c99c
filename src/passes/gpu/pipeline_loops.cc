#include "passes/gpu/pipeline_loops.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/device_calls.h"
#include "ir/mutator.h"
#include "ir/shared_layout.h"
#include "ir/substitute.h"
#include "ir/visitor.h"
#include "op/parallel.h"
#include "passes/gpu/nest_vectors.h"
#include "passes/gpu/pipeline_stages.h"
#include "passes/thread_groups.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;

class LoopPipeliner : public ir::IRMutator {
 public:
  explicit LoopPipeliner(std::unordered_map<const ir::BufferNode*, int> uses) : uses_(std::move(uses)) {}

  // Original shared buffer -> its staged version, for every pipelined loop.
  ir::BufferMap staged;

 protected:
  Stmt mutate_For(const ir::For* op, const Stmt& self) override {
    Stmt mutated = IRMutator::mutate_For(op, self);
    const auto* loop = mutated.as<ir::For>();
    if (loop->for_kind != ir::ForKind::Pipelined) return mutated;
    Stmt pipelined = pipeline(*loop);
    if (pipelined) return pipelined;
    auto serial = std::make_shared<ir::For>(*loop);
    serial->for_kind = ir::ForKind::Serial;
    serial->num_stages = 0;
    return Stmt(serial);
  }

 private:
  Stmt pipeline(const ir::For& loop) {
    int stages = loop.num_stages;
    // T.ws groups in the loop: the program pipelines it itself, with its own barriers.
    if (stages < 2 || has_thread_groups(loop.body)) return Stmt();
    std::vector<Stmt> body_stmts = loop_body_statements(loop.body);

    std::unordered_map<const ir::BufferNode*, int> uses_in_loop = count_uses(loop.body);
    // a copy that runs ahead may read the thread's scalars the loop leaves alone (a key range's
    // start, computed before the loop)
    const op::BufferSet invariant = loop_invariant_locals(loop.body);
    std::vector<Stmt> producers, consumers;
    ir::BufferMap loop_staged;
    for (const Stmt& s : body_stmts) {
      const ir::Buffer* dst = nullptr;
      ir::Buffer filled = gather_fill_buffer(s, invariant);
      if (is_producer(s, invariant) && s.as<ir::Copy>()->allow_async) dst = &s.as<ir::Copy>()->dst.buffer;
      if (filled) dst = &filled;
      // Its buffer must live only in this loop: stages have no meaning outside it.
      if (dst && uses_[dst->get()] == uses_in_loop[dst->get()] && !staged.count(dst->get())) {
        producers.push_back(s);
        if (!loop_staged.count(dst->get())) {
          const ir::Buffer& b = *dst;
          std::vector<Expr> shape = b->shape;
          shape.insert(shape.begin(), ir::make_int(stages));
          auto staged = std::make_shared<ir::BufferNode>(*ir::make_buffer(b->name, b->dtype, shape, {}, b->scope, b->loc));
          if (b->layout) staged->layout = b->layout->staged(stages);  // T.annotate_layout's, per stage
          loop_staged[b.get()] = staged;
        }
      } else {
        consumers.push_back(s);
      }
    }
    if (producers.empty()) return Stmt();

    DType t = loop.var->dtype;
    auto int_of = [t](int64_t v) { return ir::make_int(v, t); };
    const Expr& n = loop.extent;
    auto issue = [&](const Expr& iteration, const Expr& stage) {
      Expr k = ir::make_Add(loop.min, iteration);
      std::vector<Stmt> copies;
      for (const Stmt& p : producers) {
        Stmt s = ir::substitute(p, ir::VarMap{{loop.var.get(), k}});
        s = StageAccesses(loop_staged, stage).mutate(s);
        if (const auto* gather = s.as<ir::For>()) {
          auto fill = std::make_shared<ir::For>(*gather);
          fill->async_fill = true;
          copies.push_back(Stmt(fill));
          continue;
        }
        auto copy = std::make_shared<ir::Copy>(*s.as<ir::Copy>());
        copy->instruction = {.kind = ir::CopyInstructionKind::CpAsync};
        copy->loc = p->loc;
        copies.push_back(Stmt(copy));
      }
      return ir::with_loc(ir::make_if(ir::make_LT(iteration, n), ir::make_seq(copies)), loop.loc);
    };

    std::vector<Stmt> out;
    for (int p = 0; p + 1 < stages; ++p) {
      out.push_back(issue(int_of(p), ir::make_int(p)));
      out.push_back(ir::device_call("cp_async_commit", {}, loop.loc));
    }
    Expr i = ir::make_var(loop.var.as<ir::Var>()->name + "_stage_iter", t);
    Expr next = ir::make_Add(i, int_of(stages - 1));
    std::vector<Stmt> steady = {ir::device_call("cp_async_wait<" + std::to_string(stages - 2) + ">", {}, loop.loc)};
    // wgmma reads shared memory through the async proxy: cp.async's writes are ordered
    // before it by each writer's proxy fence, then the barrier.
    if (reads_through_async_proxy(consumers)) steady.push_back(ir::device_call("fence_proxy_async", {}, loop.loc));
    steady.push_back(ir::device_call("sync_threads", {}, loop.loc));
    // The body's leading asynchronous wgmma gemms read stage i only: they are issued before the
    // copies of stage i + s - 1, whose issue then runs under them on the tensor cores.
    const size_t leading = leading_async_gemms(consumers);
    auto at_stage = [&](std::vector<Stmt> stmts) {
      Stmt s = ir::substitute(ir::make_seq(std::move(stmts)), ir::VarMap{{loop.var.get(), ir::make_Add(loop.min, i)}});
      return StageAccesses(loop_staged, ir::make_cast(DType::Int32, ir::make_FloorMod(i, int_of(stages)))).mutate(s);
    };
    if (leading > 0) steady.push_back(at_stage({consumers.begin(), consumers.begin() + leading}));
    steady.push_back(issue(next, ir::make_cast(DType::Int32, ir::make_FloorMod(next, int_of(stages)))));
    steady.push_back(ir::device_call("cp_async_commit", {}, loop.loc));
    steady.push_back(at_stage({consumers.begin() + leading, consumers.end()}));
    Stmt steady_loop = ir::make_for(i, int_of(0), n, ir::ForKind::Serial, ir::make_seq(steady));
    out.push_back(ir::with_loc(steady_loop, loop.loc));
    out.push_back(ir::device_call("cp_async_wait_all", {}, loop.loc));
    for (auto& [from, to] : loop_staged) staged[from] = to;
    return ir::with_loc(ir::make_seq(out), loop.loc);
  }

  // The shared buffer `s` fills when it is a T.Parallel nest whose one store puts a value read
  // from global memory alone into shared memory (a gather by index: the value, its indices and
  // its condition read no on-chip buffer but those in `invariant`), so that it can run
  // iterations ahead; else null.
  static ir::Buffer gather_fill_buffer(const Stmt& s, const op::BufferSet& invariant) {
    auto nest = op::parallel_nest(s);
    if (!nest) return nullptr;
    nest->body = op::inline_pure_lets(nest->body);
    auto body = nest_store(*nest);
    if (!body || body->store->buffer->scope != ir::MemoryScope::Shared ||
        reads_on_chip(body->store->value, invariant) || (body->guard && reads_on_chip(body->guard, invariant)))
      return nullptr;
    for (const Expr& i : body->store->indices)
      if (reads_on_chip(i, invariant)) return nullptr;
    return body->store->buffer;
  }

  // How many of `stmts`' first statements are gemms on wgmma that don't wait for themselves
  // (wg_wait -1).
  static size_t leading_async_gemms(const std::vector<Stmt>& stmts) {
    size_t n = 0;
    while (n < stmts.size()) {
      const auto* gemm = stmts[n].as<ir::Gemm>();
      if (!gemm || gemm->wg_wait >= 0 || !gemm->instruction.reads_through_async_proxy()) break;
      ++n;
    }
    return n;
  }

  // Whether a gemm among `stmts` reads shared memory through the async proxy (wgmma).
  static bool reads_through_async_proxy(const std::vector<Stmt>& stmts) {
    struct Finder : ir::IRVisitor {
      bool found = false;
      void visit_Gemm(const ir::Gemm* op) override { found |= op->instruction.reads_through_async_proxy(); }
    } finder;
    for (const Stmt& s : stmts) finder.visit(s);
    return finder.found;
  }

  std::unordered_map<const ir::BufferNode*, int> uses_;
};

}  // namespace

ir::Stmt pipeline_loops(const ir::Stmt& body, const PassContext& /*ctx: nothing target-specific*/) {
  LoopPipeliner pipeliner(count_uses(body));
  Stmt result = pipeliner.mutate(body);
  // The allocations of the staged buffers (their only remaining mention).
  return ir::replace_buffers(result, pipeliner.staged);
}

}  // namespace tilec::passes
