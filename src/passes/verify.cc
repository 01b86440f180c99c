#include "passes/verify.h"

#include <functional>
#include <set>
#include <stdexcept>

#include "ir/printer.h"
#include "ir/visitor.h"

namespace tilec::passes {
namespace {

class Verifier : public ir::IRVisitor {
 public:
  explicit Verifier(const ir::PrimFunc& func) {
    for (const auto& p : func.params) {
      if (p.var) defined_.insert(p.var.get());
      if (p.buffer) {
        buffers_.insert(p.buffer.get());
        for (const auto& d : p.buffer->shape) define_free_vars(d);
        for (const auto& s : p.buffer->strides)
          if (s.as<ir::Var>()) defined_.insert(s.get());
      }
    }
  }

 protected:
  void visit_Var(const ir::Var* op) override {
    if (!defined_.count(op)) fail("variable '" + op->name + "' is used where it is not defined");
  }
  void visit_For(const ir::For* op) override {
    visit(op->min);
    visit(op->extent);
    scoped(op->var, [&] { visit(op->body); });
  }
  void visit_LetStmt(const ir::LetStmt* op) override {
    visit(op->value);
    scoped(op->var, [&] { visit(op->body); });
  }
  void visit_KernelLaunch(const ir::KernelLaunch* op) override {
    for (const auto& g : op->grid) visit(g);
    for (const auto& v : op->block_vars) defined_.insert(v.get());
    if (op->thread_var) defined_.insert(op->thread_var.get());
    visit(op->body);
    for (const auto& v : op->block_vars) defined_.erase(v.get());
    if (op->thread_var) defined_.erase(op->thread_var.get());
  }
  void visit_Allocate(const ir::Allocate* op) override {
    for (const auto& d : op->buffer->shape) visit(d);
    buffers_.insert(op->buffer.get());
    visit(op->body);
    buffers_.erase(op->buffer.get());
  }
  void visit_BufferLoad(const ir::BufferLoad* op) override {
    check_access(op->buffer, op->indices.size());
    IRVisitor::visit_BufferLoad(op);
  }
  void visit_BufferStore(const ir::BufferStore* op) override {
    check_access(op->buffer, op->indices.size());
    if (op->value->dtype != op->buffer->dtype)
      fail("store of a " + std::string(op->value->dtype.name()) + " value into " +
           op->buffer->dtype.name() + " buffer '" + op->buffer->name + "'");
    IRVisitor::visit_BufferStore(op);
  }
  void visit_region(const ir::BufferRegion& region) override {
    if (!region.buffer) return;  // the absent source of a scalar AtomicAdd
    check_access(region.buffer, region.region.size());
    IRVisitor::visit_region(region);
  }

 private:
  // Symbolic dims are defined by the tensors whose shapes mention them.
  void define_free_vars(const ir::Expr& e) {
    struct Collector : ir::IRVisitor {
      std::set<const ir::ExprNode*>* out;
      void visit_Var(const ir::Var* op) override { out->insert(op); }
    } collector;
    collector.out = &defined_;
    collector.visit(e);
  }
  void scoped(const ir::Expr& var, const std::function<void()>& body) {
    bool was = defined_.count(var.get());
    defined_.insert(var.get());
    body();
    if (!was) defined_.erase(var.get());
  }
  void check_access(const ir::Buffer& b, size_t n) {
    if (!buffers_.count(b.get())) fail("buffer '" + b->name + "' is used outside its allocation");
    if (n != b->shape.size())
      fail("buffer '" + b->name + "' has " + std::to_string(b->shape.size()) + " dims but is accessed with " +
           std::to_string(n) + " indices");
  }
  [[noreturn]] void fail(const std::string& what) { throw std::logic_error(what); }

  std::set<const ir::ExprNode*> defined_;
  std::set<const ir::BufferNode*> buffers_;
};

}  // namespace

ir::Stmt verify(const ir::Stmt& body, const PassContext& ctx) {
  Verifier(*ctx.func).visit(body);
  return body;
}

}  // namespace tilec::passes
