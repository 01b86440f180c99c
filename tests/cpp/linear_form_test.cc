#include "ir/linear_form.h"

#include <gtest/gtest.h>

namespace tilec::ir {
namespace {

TEST(LinearForm, SplitsSumsAndConstantProductsIntoTermsOfAtoms) {
  Expr x = make_var("x"), y = make_var("y");
  LinearForm form;
  // 3 * (x + 2) - y * 5 + (x // 4) * 8
  Expr quarter = make_FloorDiv(x, make_int(4));
  ASSERT_TRUE(form.add(make_Add(make_Sub(make_Mul(make_int(3), make_Add(x, make_int(2))), make_Mul(y, make_int(5))),
                                make_Mul(quarter, make_int(8))),
                       1));
  EXPECT_EQ(form.constant, 6);
  ASSERT_EQ(form.terms.size(), 3u);
  EXPECT_EQ(form.terms[0].coefficient, 3);
  EXPECT_EQ(form.terms[1].coefficient, -5);
  EXPECT_EQ(form.terms[2].coefficient, 8);
}

TEST(LinearForm, MultiplesOfAConstantWhateverTheAtoms) {
  Expr x = make_var("x"), m = make_var("m");
  // the DSA indexer's first scale of a step: (start // 4) * 4 + m * 128 elements
  Expr first = make_Add(make_Mul(make_FloorDiv(x, make_int(4)), make_int(4)), make_Mul(m, make_int(128)));
  EXPECT_TRUE(provably_multiple_of(first, 4));
  EXPECT_FALSE(provably_multiple_of(make_Add(first, make_int(1)), 4));
  EXPECT_FALSE(provably_multiple_of(make_Add(x, make_Mul(m, make_int(128))), 4));  // x may be anything
  EXPECT_TRUE(provably_multiple_of(make_int(0), 16));
  EXPECT_FALSE(provably_multiple_of(x, 0));
}

}  // namespace
}  // namespace tilec::ir
