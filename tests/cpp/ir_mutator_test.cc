#include <gtest/gtest.h>

#include "ir/ir.h"
#include "ir/mutator.h"
#include "ir/visitor.h"

namespace tilec::ir {

Stmt every_node_stmt(const Expr& x);  // ir_visitor_test.cc

namespace {

class Replace : public IRMutator {
 public:
  Replace(Expr from, Expr to) : from_(std::move(from)), to_(std::move(to)) {}

 protected:
  Expr mutate_Var(const Var* op, const Expr& self) override {
    return op == from_.get() ? to_ : self;
  }

 private:
  Expr from_, to_;
};

class CountUses : public IRVisitor {
 public:
  explicit CountUses(const Expr& var) : var_(var) {}
  int count = 0;

 protected:
  void visit_Var(const Var* op) override { count += op == var_.get(); }

 private:
  Expr var_;
};

int uses(const Stmt& s, const Expr& var) {
  CountUses c(var);
  c.visit(s);
  return c.count;
}

TEST(IRMutator, UnchangedTreeKeepsIdentity) {
  Stmt s = every_node_stmt(make_var("x"));
  IRMutator m;
  EXPECT_TRUE(m.mutate(s).same_as(s));
  Replace other(make_var("x"), make_var("y"));  // a different x
  EXPECT_TRUE(other.mutate(s).same_as(s));
  EXPECT_FALSE(m.mutate(Expr()).defined());
  EXPECT_FALSE(m.mutate(Stmt()).defined());
}

TEST(IRMutator, RewritesEveryChildPosition) {
  Expr x = make_var("x"), y = make_var("y");
  Stmt s = every_node_stmt(x);
  int before = uses(s, x);
  EXPECT_GT(before, 50);
  Stmt t = Replace(x, y).mutate(s);
  EXPECT_FALSE(t.same_as(s));
  EXPECT_EQ(uses(t, x), 0);
  EXPECT_EQ(uses(t, y), before);
  EXPECT_EQ(uses(s, x), before);  // the original is untouched
}

TEST(IRMutator, RebuildsOnlyChangedPaths) {
  Expr x = make_var("x"), y = make_var("y"), z = make_var("z");
  Buffer buf = make_buffer("b", DType::Int32, {make_int(8)}, {}, MemoryScope::Local);
  Stmt untouched = make_store(buf, {z}, z);
  Stmt touched = make_store(buf, {x}, z);
  Stmt seq = make_seq({untouched, touched});
  Stmt out = Replace(x, y).mutate(seq);
  auto* s = out.as<Seq>();
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->stmts[0].same_as(untouched));
  EXPECT_FALSE(s->stmts[1].same_as(touched));
  auto* store = s->stmts[1].as<BufferStore>();
  EXPECT_TRUE(store->indices[0].same_as(y));
  EXPECT_TRUE(store->value.same_as(z));
}

TEST(IRMutator, RebuiltNodesKeepDtypeAndLocation) {
  Expr x = make_var("x"), y = make_var("y", DType::Int64);
  SourceLoc loc{nullptr, 3, 7};
  Expr sum = with_loc(make_Add(x, make_int(1)), loc);
  Expr cmp = make_LT(x, make_int(2));
  Replace r(x, make_cast(DType::Int32, y));
  Expr sum2 = r.mutate(sum);
  EXPECT_EQ(sum2->dtype, DType::Int32);
  EXPECT_EQ(sum2->loc.line, 3);
  EXPECT_EQ(sum2->loc.col, 7);
  EXPECT_EQ(r.mutate(cmp)->dtype, DType::Bool);

  // Binary nodes take their dtype from the rebuilt operands.
  Replace widen(x, y);
  Expr wide = widen.mutate(make_Mul(x, x));
  EXPECT_EQ(wide->dtype, DType::Int64);

  Buffer f = make_buffer("f", DType::Float16, {make_int(4)}, {}, MemoryScope::Local);
  Expr load = widen.mutate(make_load(f, {make_Add(make_cast(DType::Int64, x), y)}));
  EXPECT_EQ(load->dtype, DType::Float16);
}

// A mutator that doubles every integer constant and leaves everything else.
class DoubleConstants : public IRMutator {
 protected:
  Expr mutate_IntImm(const IntImm* op, const Expr&) override {
    return make_int(op->value * 2, op->dtype);
  }
};

TEST(IRMutator, MutatesRegionsAndLoopBounds) {
  Buffer buf = make_buffer("b", DType::Int32, {make_int(8)}, {}, MemoryScope::Local);
  auto fill = std::make_shared<Fill>();
  fill->dst = {buf, {{make_int(1), make_int(2)}}};
  fill->value = make_int(3);
  Stmt loop = make_for(make_var("i"), make_int(4), make_int(5), ForKind::Vectorized, Stmt(fill));
  Stmt out = DoubleConstants().mutate(loop);
  auto* f = out.as<For>();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->for_kind, ForKind::Vectorized);
  EXPECT_EQ(f->min.as<IntImm>()->value, 8);
  EXPECT_EQ(f->extent.as<IntImm>()->value, 10);
  auto* g = f->body.as<Fill>();
  EXPECT_EQ(g->dst.region[0].min.as<IntImm>()->value, 2);
  EXPECT_EQ(g->dst.region[0].extent.as<IntImm>()->value, 4);
  EXPECT_EQ(g->value.as<IntImm>()->value, 6);
  EXPECT_EQ(g->dst.buffer, buf);
  EXPECT_EQ(buf->shape[0].as<IntImm>()->value, 8);  // shapes are not mutated
}

}  // namespace
}  // namespace tilec::ir
