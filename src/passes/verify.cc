#include "passes/verify.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>
#include <stdexcept>

#include "ir/visitor.h"
#include "passes/wgmma_waits.h"

namespace tilec::passes {
namespace {

class Verifier : public ir::IRVisitor {
 public:
  // With `located`, a failure is a CompileError at the innermost located node
  // around it; otherwise a logic_error.
  Verifier(const ir::PrimFunc& func, bool located) : located_(located) {
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

  void visit(const ir::Expr& e) override {
    Located here(*this, e ? e->loc : SourceLoc{});
    IRVisitor::visit(e);
  }
  void visit(const ir::Stmt& s) override {
    Located here(*this, s ? s->loc : SourceLoc{});
    IRVisitor::visit(s);
  }

 protected:
  void visit_Var(const ir::Var* op) override {
    if (defined_.count(op)) return;
    auto ended = ended_.find(op);
    if (ended != ended_.end())
      fail("'" + op->name + "' is used outside the loop or block that defines it", ended->second,
           "'" + op->name + "' is defined here");
    fail("'" + op->name + "' has no value here: it is not defined by any loop or block around "
         "this use, and no tensor parameter's shape uses it (a symbolic dim gets its value from "
         "the shape of a tensor argument)");
  }
  void visit_For(const ir::For* op) override {
    visit(op->min);
    visit(op->extent);
    scoped(op->var, op->loc, [&] { visit(op->body); });
  }
  void visit_LetStmt(const ir::LetStmt* op) override {
    visit(op->value);
    scoped(op->var, op->loc, [&] { visit(op->body); });
  }
  void visit_KernelLaunch(const ir::KernelLaunch* op) override {
    for (const auto& g : op->grid) visit(g);
    for (const auto& v : op->block_vars) defined_.insert(v.get());
    if (op->thread_var) defined_.insert(op->thread_var.get());
    if (op->thread_index) defined_.insert(op->thread_index.get());
    visit(op->body);
    for (const auto& v : op->block_vars) end_scope(v.get(), op->loc);
    if (op->thread_var) end_scope(op->thread_var.get(), op->loc);
    if (op->thread_index && op->thread_index.get() != op->thread_var.get()) end_scope(op->thread_index.get(), op->loc);
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
  // The innermost located node being visited, for as long as it is.
  class Located {
   public:
    Located(Verifier& v, const SourceLoc& loc) : v_(v), saved_(v.loc_) {
      if (loc.valid()) v.loc_ = loc;
    }
    ~Located() { v_.loc_ = saved_; }

   private:
    Verifier& v_;
    SourceLoc saved_;
  };

  // Symbolic dims are defined by the tensors whose shapes mention them.
  void define_free_vars(const ir::Expr& e) {
    struct Collector : ir::IRVisitor {
      std::set<const ir::ExprNode*>* out;
      void visit_Var(const ir::Var* op) override { out->insert(op); }
    } collector;
    collector.out = &defined_;
    collector.visit(e);
  }
  void scoped(const ir::Expr& var, const SourceLoc& loc, const std::function<void()>& body) {
    bool was = defined_.count(var.get());
    defined_.insert(var.get());
    body();
    if (!was) end_scope(var.get(), loc);
  }
  void end_scope(const ir::ExprNode* var, const SourceLoc& loc) {
    defined_.erase(var);
    ended_[var] = loc;
  }
  void check_access(const ir::Buffer& b, size_t n) {
    if (!buffers_.count(b.get()))
      fail("buffer '" + b->name + "' is used outside the block that allocates it", b->loc,
           "'" + b->name + "' is allocated here");
    if (n != b->shape.size())
      fail("buffer '" + b->name + "' has " + std::to_string(b->shape.size()) + " dims but is accessed with " +
           std::to_string(n) + " indices");
  }
  [[noreturn]] void fail(const std::string& what, const SourceLoc& note_loc = {},
                         const std::string& note = "") {
    if (!located_) throw std::logic_error(what);
    if (note_loc.valid()) error_at(loc_, what, note_loc, note);
    error_at(loc_, what);
  }

  bool located_;
  SourceLoc loc_;
  std::set<const ir::ExprNode*> defined_;
  std::map<const ir::ExprNode*, SourceLoc> ended_;  // vars whose scope is over: where it was
  std::set<const ir::BufferNode*> buffers_;
};

}  // namespace

ir::Stmt verify(const ir::Stmt& body, const PassContext& ctx) {
  Verifier(*ctx.func, false).visit(body);
  return body;
}

void verify_source(const ir::PrimFunc& func) {
  Verifier(func, true).visit(func.body);
  check_wgmma_flight(func.body);
}

}  // namespace tilec::passes
