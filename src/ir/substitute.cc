#include "ir/substitute.h"

#include "ir/mutator.h"
#include "ir/visitor.h"

namespace tilec::ir {

namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}

 protected:
  Expr mutate_Var(const Var* op, const Expr& self) override {
    auto it = map_.find(op);
    return it == map_.end() ? self : it->second;
  }

 private:
  const VarMap& map_;
};

}  // namespace

Expr substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  return Substituter(map).mutate(e);
}

Stmt substitute(const Stmt& s, const VarMap& map) {
  if (map.empty()) return s;
  return Substituter(map).mutate(s);
}

Expr substitute(const Expr& e, const Expr& var, const Expr& value) {
  return substitute(e, VarMap{{var.get(), value}});
}

namespace {

class BufferReplacer : public IRMutator {
 public:
  explicit BufferReplacer(const BufferMap& map) : map_(map) {}

 protected:
  Buffer replaced(const Buffer& b) const {
    auto it = map_.find(b.get());
    return it == map_.end() ? b : it->second;
  }
  BufferRegion mutate_region(const BufferRegion& region) override {
    BufferRegion r = IRMutator::mutate_region(region);
    if (r.buffer) r.buffer = replaced(r.buffer);
    return r;
  }
  Expr mutate_BufferLoad(const BufferLoad* op, const Expr& self) override {
    Expr e = IRMutator::mutate_BufferLoad(op, self);
    const auto* load = e.as<BufferLoad>();
    Buffer b = replaced(load->buffer);
    if (b == load->buffer) return e;
    return with_loc(make_load(b, load->indices), op->loc);
  }
  Stmt mutate_BufferStore(const BufferStore* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_BufferStore(op, self);
    const auto* store = s.as<BufferStore>();
    Buffer b = replaced(store->buffer);
    if (b == store->buffer) return s;
    auto n = std::make_shared<BufferStore>(*store);
    n->buffer = b;
    return Stmt(n);
  }
  Stmt mutate_Allocate(const Allocate* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_Allocate(op, self);
    const auto* alloc = s.as<Allocate>();
    Buffer b = replaced(alloc->buffer);
    if (b == alloc->buffer) return s;
    auto n = std::make_shared<Allocate>(*alloc);
    n->buffer = b;
    return Stmt(n);
  }

 private:
  const BufferMap& map_;
};

}  // namespace

Stmt replace_buffers(const Stmt& s, const BufferMap& map) {
  if (map.empty()) return s;
  // A view of a replaced buffer (BufferNode::view_of) views its replacement (the view's own
  // replacement too, when it has one).
  struct Views : IRVisitor {
    BufferMap map;
    void visit_Allocate(const Allocate* op) override {
      const Buffer& b = op->buffer;
      auto base = b->view_of ? map.find(b->view_of.get()) : map.end();
      if (base != map.end()) {
        auto own = map.find(b.get());
        auto n = std::make_shared<BufferNode>(own == map.end() ? *b : *own->second);
        n->view_of = base->second;
        map[b.get()] = n;
      }
      IRVisitor::visit_Allocate(op);
    }
  } views;
  views.map = map;
  views.visit(s);
  return BufferReplacer(views.map).mutate(s);
}

VarMap let_values(const Stmt& body) {
  struct Lets : IRVisitor {
    VarMap values;
    void visit_LetStmt(const LetStmt* op) override {
      values[op->var.get()] = substitute(op->value, values);
      IRVisitor::visit_LetStmt(op);
    }
  } lets;
  lets.visit(body);
  return std::move(lets.values);
}

}  // namespace tilec::ir
