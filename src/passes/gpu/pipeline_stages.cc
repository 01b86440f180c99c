#include "passes/gpu/pipeline_stages.h"

#include <algorithm>

#include "ir/visitor.h"
#include "op/accesses.h"

namespace tilec::passes {

using ir::Expr;
using ir::Stmt;

namespace {

// How many statements touch each buffer (tile-op regions, loads and stores). A view
// (T.reshape) and the buffer it views count one more each for the view's Allocate, at the top
// of the kernel: neither lives only in a loop, so neither is staged (a stage of one would
// leave the other reading the first).
class BufferUses : public ir::IRVisitor {
 public:
  std::unordered_map<const ir::BufferNode*, int> count;

 protected:
  void visit_Allocate(const ir::Allocate* op) override {
    if (op->buffer->view_of) {
      ++count[op->buffer.get()];
      ++count[op->buffer->view_of.get()];
    }
    IRVisitor::visit_Allocate(op);
  }
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

}  // namespace

std::unordered_map<const ir::BufferNode*, int> count_uses(const Stmt& s) {
  BufferUses uses;
  uses.visit(s);
  return uses.count;
}

op::BufferSet loop_invariant_locals(const Stmt& loop_body) {
  op::Accesses accesses(ir::MemoryScope::Local);
  accesses.visit(loop_body);
  op::BufferSet invariant;
  for (const ir::BufferNode* b : accesses.reads)
    if (!accesses.writes.count(b)) invariant.insert(b);
  return invariant;
}

bool reads_on_chip(const Expr& e, const op::BufferSet& invariant) {
  op::Accesses accesses;
  accesses.visit(e);
  return std::any_of(accesses.reads.begin(), accesses.reads.end(), [&](const ir::BufferNode* b) {
    return b->scope != ir::MemoryScope::Global && !invariant.count(b);
  });
}

bool is_pure_arithmetic(const Expr& e) {
  struct Impure : ir::IRVisitor {
    bool found = false;
    void visit_BufferLoad(const ir::BufferLoad*) override { found = true; }
    void visit_Call(const ir::Call*) override { found = true; }
  } impure;
  impure.visit(e);
  return !impure.found;
}

std::vector<Stmt> loop_body_statements(const Stmt& body) {
  Stmt s = body;
  ir::VarMap lets;
  while (const auto* let = s.as<ir::LetStmt>()) {
    if (!is_pure_arithmetic(let->value)) break;
    lets[let->var.get()] = ir::substitute(let->value, lets);
    s = let->body;
  }
  if (!lets.empty()) s = ir::substitute(s, lets);
  if (const auto* seq = s.as<ir::Seq>()) return seq->stmts;
  return {s};
}

bool is_producer(const Stmt& s, const op::BufferSet& invariant) {
  const auto* copy = s.as<ir::Copy>();
  if (!copy || copy->src.buffer->scope != ir::MemoryScope::Global ||
      copy->dst.buffer->scope != ir::MemoryScope::Shared)
    return false;
  for (const auto* region : {&copy->src.region, &copy->dst.region})
    for (const auto& r : *region)
      if (reads_on_chip(r.min, invariant) || reads_on_chip(r.extent, invariant)) return false;
  return true;
}


ir::BufferRegion StageAccesses::mutate_region(const ir::BufferRegion& region) {
  ir::BufferRegion r = IRMutator::mutate_region(region);
  auto it = r.buffer ? staged_.find(r.buffer.get()) : staged_.end();
  if (it == staged_.end()) return r;
  r.buffer = it->second;
  r.region.insert(r.region.begin(), ir::Range{stage_, ir::make_int(1)});
  return r;
}

Expr StageAccesses::mutate_BufferLoad(const ir::BufferLoad* op, const Expr& self) {
  Expr e = IRMutator::mutate_BufferLoad(op, self);
  const auto* load = e.as<ir::BufferLoad>();
  auto it = staged_.find(load->buffer.get());
  if (it == staged_.end()) return e;
  std::vector<Expr> indices = load->indices;
  indices.insert(indices.begin(), stage_);
  return ir::with_loc(ir::make_load(it->second, indices), op->loc);
}

Stmt StageAccesses::mutate_BufferStore(const ir::BufferStore* op, const Stmt& self) {
  Stmt s = IRMutator::mutate_BufferStore(op, self);
  const auto* store = s.as<ir::BufferStore>();
  auto it = staged_.find(store->buffer.get());
  if (it == staged_.end()) return s;
  auto n = std::make_shared<ir::BufferStore>(*store);
  n->buffer = it->second;
  n->indices.insert(n->indices.begin(), stage_);
  return Stmt(n);
}

}  // namespace tilec::passes
