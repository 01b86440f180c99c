#include "passes/cuda/pipeline_loops.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/mutator.h"
#include "ir/substitute.h"
#include "ir/visitor.h"
#include "passes/cuda/device_calls.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;

// How many statements touch each buffer (tile-op regions, loads and stores).
class BufferUses : public ir::IRVisitor {
 public:
  std::unordered_map<const ir::BufferNode*, int> count;

 protected:
  void visit_region(const ir::BufferRegion& r) override {
    if (r.buffer) ++count[r.buffer.get()];
    IRVisitor::visit_region(r);
  }
  void visit_BufferLoad(const ir::BufferLoad* op) override {
    ++count[op->buffer.get()];
    IRVisitor::visit_BufferLoad(op);
  }
  void visit_BufferStore(const ir::BufferStore* op) override {
    ++count[op->buffer.get()];
    IRVisitor::visit_BufferStore(op);
  }
};

std::unordered_map<const ir::BufferNode*, int> count_uses(const Stmt& s) {
  BufferUses uses;
  uses.visit(s);
  return uses.count;
}

// Whether an expression reads an on-chip buffer (whose contents the loop body may change).
class ReadsOnChip : public ir::IRVisitor {
 public:
  bool found = false;

 protected:
  void visit_BufferLoad(const ir::BufferLoad* op) override {
    if (op->buffer->scope != ir::MemoryScope::Global) found = true;
    IRVisitor::visit_BufferLoad(op);
  }
};

bool is_producer(const Stmt& s) {
  const auto* copy = s.as<ir::Copy>();
  if (!copy || copy->src.buffer->scope != ir::MemoryScope::Global ||
      copy->dst.buffer->scope != ir::MemoryScope::Shared)
    return false;
  ReadsOnChip reads;
  for (const auto& r : copy->src.region) {
    reads.visit(r.min);
    reads.visit(r.extent);
  }
  for (const auto& r : copy->dst.region) {
    reads.visit(r.min);
    reads.visit(r.extent);
  }
  return !reads.found;
}

// Accesses of the staged buffers as accesses of their stage `stage`.
class StageAccesses : public ir::IRMutator {
 public:
  StageAccesses(const ir::BufferMap& staged, Expr stage) : staged_(staged), stage_(std::move(stage)) {}

 protected:
  ir::BufferRegion mutate_region(const ir::BufferRegion& region) override {
    ir::BufferRegion r = IRMutator::mutate_region(region);
    auto it = r.buffer ? staged_.find(r.buffer.get()) : staged_.end();
    if (it == staged_.end()) return r;
    r.buffer = it->second;
    r.region.insert(r.region.begin(), ir::Range{stage_, ir::make_int(1)});
    return r;
  }
  Expr mutate_BufferLoad(const ir::BufferLoad* op, const Expr& self) override {
    Expr e = IRMutator::mutate_BufferLoad(op, self);
    const auto* load = e.as<ir::BufferLoad>();
    auto it = staged_.find(load->buffer.get());
    if (it == staged_.end()) return e;
    std::vector<Expr> indices = load->indices;
    indices.insert(indices.begin(), stage_);
    return ir::with_loc(ir::make_load(it->second, indices), op->loc);
  }
  Stmt mutate_BufferStore(const ir::BufferStore* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_BufferStore(op, self);
    const auto* store = s.as<ir::BufferStore>();
    auto it = staged_.find(store->buffer.get());
    if (it == staged_.end()) return s;
    auto n = std::make_shared<ir::BufferStore>(*store);
    n->buffer = it->second;
    n->indices.insert(n->indices.begin(), stage_);
    return Stmt(n);
  }

 private:
  const ir::BufferMap& staged_;
  Expr stage_;
};

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
    if (stages < 2) return Stmt();
    std::vector<Stmt> body_stmts;
    if (const auto* seq = loop.body.as<ir::Seq>()) body_stmts = seq->stmts;
    else body_stmts = {loop.body};

    std::unordered_map<const ir::BufferNode*, int> uses_in_loop = count_uses(loop.body);
    std::vector<Stmt> producers, consumers;
    ir::BufferMap loop_staged;
    for (const Stmt& s : body_stmts) {
      const ir::Buffer* dst = nullptr;
      if (is_producer(s)) dst = &s.as<ir::Copy>()->dst.buffer;
      // Its buffer must live only in this loop: stages have no meaning outside it.
      if (dst && uses_[dst->get()] == uses_in_loop[dst->get()] && !staged.count(dst->get())) {
        producers.push_back(s);
        if (!loop_staged.count(dst->get())) {
          const ir::Buffer& b = *dst;
          std::vector<Expr> shape = b->shape;
          shape.insert(shape.begin(), ir::make_int(stages));
          loop_staged[b.get()] = ir::make_buffer(b->name, b->dtype, shape, {}, b->scope, b->loc);
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
        auto copy = std::make_shared<ir::Copy>(*s.as<ir::Copy>());
        copy->async = true;
        copy->loc = p->loc;
        copies.push_back(Stmt(copy));
      }
      return ir::with_loc(ir::make_if(ir::make_LT(iteration, n), ir::make_seq(copies)), loop.loc);
    };

    std::vector<Stmt> out;
    for (int p = 0; p + 1 < stages; ++p) {
      out.push_back(issue(int_of(p), ir::make_int(p)));
      out.push_back(device_call("cp_async_commit", {}, loop.loc));
    }
    Expr i = ir::make_var(loop.var.as<ir::Var>()->name + "_stage_iter", t);
    Expr next = ir::make_Add(i, int_of(stages - 1));
    std::vector<Stmt> steady = {
        device_call("cp_async_wait<" + std::to_string(stages - 2) + ">", {}, loop.loc),
        device_call("sync_threads", {}, loop.loc),
        issue(next, ir::make_cast(DType::Int32, ir::make_FloorMod(next, int_of(stages)))),
        device_call("cp_async_commit", {}, loop.loc),
    };
    Stmt rest = ir::substitute(ir::make_seq(consumers), ir::VarMap{{loop.var.get(), ir::make_Add(loop.min, i)}});
    steady.push_back(StageAccesses(loop_staged, ir::make_cast(DType::Int32, ir::make_FloorMod(i, int_of(stages))))
                         .mutate(rest));
    Stmt steady_loop = ir::make_for(i, int_of(0), n, ir::ForKind::Serial, ir::make_seq(steady));
    out.push_back(ir::with_loc(steady_loop, loop.loc));
    out.push_back(device_call("cp_async_wait_all", {}, loop.loc));
    for (auto& [from, to] : loop_staged) staged[from] = to;
    return ir::with_loc(ir::make_seq(out), loop.loc);
  }

  std::unordered_map<const ir::BufferNode*, int> uses_;
};

}  // namespace

ir::Stmt pipeline_loops(const ir::Stmt& body, const PassContext&) {
  LoopPipeliner pipeliner(count_uses(body));
  Stmt result = pipeliner.mutate(body);
  // The allocations of the staged buffers (their only remaining mention).
  return ir::replace_buffers(result, pipeliner.staged);
}

}  // namespace tilec::passes
