// verify: well-formed IR passes unchanged; each kind of breakage is reported.
#include <gtest/gtest.h>

#include "passes/verify.h"

namespace {

using namespace tilec;

struct Fixture {
  ir::Buffer a = ir::make_buffer("A", DType::Float32, {ir::make_int(8)}, {ir::make_int(1, DType::Int64)},
                                 ir::MemoryScope::Global);
  ir::PrimFunc func;
  passes::PassContext ctx;
  Fixture() {
    func.name = "main";
    func.params.push_back({"A", a, ir::Expr(), {}});
    ctx.func = &func;
  }
  ir::Stmt kernel(ir::Expr bx, ir::Stmt body) {
    auto launch = std::make_shared<ir::KernelLaunch>();
    launch->grid = {ir::make_int(1)};
    launch->block_vars = {bx};
    launch->body = body;
    return ir::Stmt(launch);
  }
};

TEST(Verify, AcceptsWellFormedIR) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx"), i = ir::make_var("i");
  ir::Stmt body = f.kernel(bx, ir::make_for(i, ir::make_int(0), ir::make_int(8), ir::ForKind::Serial,
                                            ir::make_store(f.a, {i}, ir::make_float(1))));
  EXPECT_TRUE(passes::verify(body, f.ctx).same_as(body));
}

TEST(Verify, RejectsAVariableUsedOutsideItsLoop) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx"), i = ir::make_var("i");
  ir::Stmt body = f.kernel(bx, ir::make_store(f.a, {i}, ir::make_float(1)));
  try {
    passes::verify(body, f.ctx);
    FAIL();
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "variable 'i' is used where it is not defined");
  }
}

TEST(Verify, RejectsWrongIndexCount) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx");
  ir::Stmt body = f.kernel(bx, ir::make_store(f.a, {bx, bx}, ir::make_float(1)));
  EXPECT_THROW(passes::verify(body, f.ctx), std::logic_error);
}

TEST(Verify, RejectsAnOnChipBufferOutsideItsAllocation) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx");
  ir::Buffer s = ir::make_buffer("s", DType::Float32, {ir::make_int(4)}, {}, ir::MemoryScope::Shared);
  ir::Stmt body = f.kernel(bx, ir::make_store(s, {ir::make_int(0)}, ir::make_float(1)));
  try {
    passes::verify(body, f.ctx);
    FAIL();
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "buffer 's' is used outside its allocation");
  }
  EXPECT_NO_THROW(passes::verify(f.kernel(bx, ir::make_allocate(s, ir::make_store(s, {ir::make_int(0)},
                                                                                     ir::make_float(1)))),
                                 f.ctx));
}

TEST(Verify, RejectsAStoreOfTheWrongType) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx");
  ir::Stmt body = f.kernel(bx, ir::make_store(f.a, {bx}, ir::make_int(1)));
  EXPECT_THROW(passes::verify(body, f.ctx), std::logic_error);
}

}  // namespace
