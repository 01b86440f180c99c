#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/visitor.h"

namespace tilec::ir {

// A statement holding every node kind, with `x` (an int32 Var) in every
// expression child position; shared with ir_mutator_test.cc.
Stmt every_node_stmt(const Expr& x) {
  Expr one = make_int(1);
  Expr s = make_var("shape_dim");
  Buffer buf = make_buffer("buf", DType::Int32, {s, make_int(64)}, {}, MemoryScope::Shared);
  Buffer f32 = make_buffer("f32", DType::Float32, {make_int(64)}, {}, MemoryScope::Fragment);
  Expr cond = make_And(make_LT(x, one), make_Or(make_not(make_EQ(x, one)), make_NE(x, one)));
  cond = make_Or(cond, make_And(make_LE(x, one), make_And(make_GT(x, one), make_GE(x, one))));
  Expr arith = make_Add(make_Sub(x, one), make_Mul(make_Div(x, one), make_FloorDiv(x, one)));
  arith = make_Min(make_Max(arith, make_BitXor(make_FloorMod(x, one), x)), make_load(buf, {x, x}));
  arith = make_BitOr(make_BitAnd(arith, x), make_ShiftRight(make_ShiftLeft(x, one), x));
  Expr fx = make_cast(DType::Float32, x);
  Expr call = make_call(DType::Float32, "exp", {make_Add(fx, make_float(0.5))});
  Expr value = make_select(cond, arith, make_cast(DType::Int32, call));

  BufferRegion rx{buf, {{x, x}, {x, x}}};
  BufferRegion fx_region{f32, {{x, x}}};
  auto copy = std::make_shared<Copy>();
  copy->src = rx;
  copy->dst = rx;
  auto gemm = std::make_shared<Gemm>();
  gemm->a = gemm->b = gemm->c = rx;
  auto gemv = std::make_shared<Gemv>();
  gemv->a = rx;
  gemv->x = gemv->y = fx_region;
  auto fill = std::make_shared<Fill>();
  fill->dst = rx;
  fill->value = x;
  auto reduce = std::make_shared<Reduce>();
  reduce->src = rx;
  reduce->dst = fx_region;
  auto cumsum = std::make_shared<CumSum>();
  cumsum->src = cumsum->dst = rx;
  auto atomic = std::make_shared<AtomicAdd>();
  atomic->dst = rx;
  atomic->src = rx;
  auto atomic_scalar = std::make_shared<AtomicAdd>();
  atomic_scalar->dst = BufferRegion{buf, {{x, one}, {x, one}}};
  atomic_scalar->value = x;

  Expr i = make_var("i"), l = make_var("l"), bx = make_var("bx");
  Stmt body = make_seq({
      make_store(buf, {x, x}, value),
      make_for(i, x, x, ForKind::Serial, make_store(buf, {i, x}, x)),
      make_while(make_LT(x, one), make_evaluate(x)),
      make_if(make_EQ(x, one), make_evaluate(x), make_evaluate(x)),
      make_let(l, x, make_evaluate(make_Add(l, x))),
      Stmt(copy),
      Stmt(gemm),
      Stmt(gemv),
      Stmt(fill),
      Stmt(reduce),
      Stmt(cumsum),
      Stmt(atomic),
      Stmt(atomic_scalar),
  });
  auto launch = std::make_shared<KernelLaunch>();
  launch->grid = {make_Add(x, one)};
  launch->block_vars = {bx};
  launch->body = make_allocate(buf, make_allocate(f32, body));
  return Stmt(launch);
}

namespace {

class KindRecorder : public IRVisitor {
 public:
  std::set<std::string> kinds;
  std::vector<std::string> vars;

  void visit(const Expr& e) override {
    if (e) kinds.insert(kind_name(e.kind()));
    IRVisitor::visit(e);
  }
  void visit(const Stmt& s) override {
    if (s) kinds.insert(kind_name(s.kind()));
    IRVisitor::visit(s);
  }

 protected:
  void visit_Var(const Var* op) override { vars.push_back(op->name); }
};

TEST(IRVisitor, ReachesEveryNodeKind) {
  KindRecorder r;
  r.visit(every_node_stmt(make_var("x")));
#define TILEC_EXPECT_KIND(n) EXPECT_TRUE(r.kinds.count(#n)) << #n;
  TILEC_FOR_EACH_EXPR(TILEC_EXPECT_KIND)
  TILEC_FOR_EACH_STMT(TILEC_EXPECT_KIND)
#undef TILEC_EXPECT_KIND
}

TEST(IRVisitor, DoesNotTraverseBufferShapes) {
  KindRecorder r;
  r.visit(every_node_stmt(make_var("x")));
  for (const std::string& v : r.vars) EXPECT_NE(v, "shape_dim");
}

TEST(IRVisitor, VisitsDefinitionsAndRegionsInOrder) {
  Expr i = make_var("i"), lo = make_var("lo"), n = make_var("n"), v = make_var("v");
  Expr a = make_var("a"), b = make_var("b"), c = make_var("c"), d = make_var("d");
  Buffer buf = make_buffer("buf", DType::Int32, {make_var("s")}, {}, MemoryScope::Local);
  auto copy = std::make_shared<Copy>();
  copy->src = {buf, {{a, b}}};
  copy->dst = {buf, {{c, d}}};
  Stmt s = make_for(i, lo, n, ForKind::Parallel, make_let(v, i, Stmt(copy)));
  KindRecorder r;
  r.visit(s);
  EXPECT_EQ(r.vars, (std::vector<std::string>{"i", "lo", "n", "v", "i", "a", "b", "c", "d"}));

  auto launch = std::make_shared<KernelLaunch>();
  launch->grid = {n, lo};
  launch->block_vars = {a, b};
  launch->body = make_store(buf, {make_Add(a, b)}, i);
  KindRecorder r2;
  r2.visit(Stmt(launch));
  EXPECT_EQ(r2.vars, (std::vector<std::string>{"n", "lo", "a", "b", "a", "b", "i"}));
}

TEST(IRVisitor, NullIsIgnored) {
  KindRecorder r;
  r.visit(Expr());
  r.visit(Stmt());
  r.visit(make_if(make_bool(true), make_evaluate(make_int(0))));  // null else
  EXPECT_EQ(r.kinds, (std::set<std::string>{"IfThenElse", "IntImm", "Evaluate"}));
}

}  // namespace
}  // namespace tilec::ir
