// int_ops: Python's integer operators on int64, exact or a located error.
#include "frontend/int_ops.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>

namespace tilec::frontend {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

SourceLoc here() {
  auto file = std::make_shared<SourceFile>();
  file->name = "k.py";
  file->text = "x = EXPR\n";
  return SourceLoc{file, 1, 5};
}

int64_t fold(const std::string& op, int64_t x, int64_t y) { return fold_int(op, x, y, here()); }

// The message of the CompileError `body` throws, after "k.py:1:5: error: ".
template <typename Body>
std::string error_of(Body body) {
  try {
    body();
  } catch (const CompileError& e) {
    std::string text = e.what();
    const std::string head = "k.py:1:5: error: ";
    EXPECT_EQ(text.rfind(head, 0), 0u) << text;
    return text.substr(head.size(), text.find('\n') - head.size());
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(IntOps, FloorDivisionAndModuloTakePythonsSigns) {
  EXPECT_EQ(fold("//", 7, 2), 3);
  EXPECT_EQ(fold("//", -7, 2), -4);
  EXPECT_EQ(fold("//", 7, -2), -4);
  EXPECT_EQ(fold("//", -7, -2), 3);
  EXPECT_EQ(fold("%", -7, 2), 1);
  EXPECT_EQ(fold("%", 7, -2), -1);
  EXPECT_EQ(fold("%", -7, -2), -1);
  EXPECT_EQ(fold("%", kMin, -1), 0);
  EXPECT_EQ(fold("//", kMin, 1), kMin);
  EXPECT_EQ(error_of([] { fold("//", 1, 0); }), "integer division or modulo by zero");
  EXPECT_EQ(error_of([] { fold("%", 1, 0); }), "integer division or modulo by zero");
}

TEST(IntOps, TheOneOverflowingQuotientIsAnError) {
  // Was SIGFPE: INT64_MIN / -1 traps on x86.
  EXPECT_EQ(error_of([] { fold("//", kMin, -1); }),
            "compile-time integer overflow: -9223372036854775808 // (-1) does not fit in 64 bits "
            "(tilec folds Python ints as int64)");
}

TEST(IntOps, SumsDifferencesAndProductsAreChecked) {
  EXPECT_EQ(fold("+", kMax - 1, 1), kMax);
  EXPECT_EQ(fold("-", kMin + 1, 1), kMin);
  EXPECT_EQ(fold("*", int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_NE(error_of([] { fold("+", kMax, 1); }).find("9223372036854775807 + 1 does not fit in 64 bits"),
            std::string::npos);
  EXPECT_NE(error_of([] { fold("-", kMin, 1); }).find("-9223372036854775808 - 1 does not fit"),
            std::string::npos);
  EXPECT_NE(error_of([] { fold("*", int64_t{1} << 32, int64_t{1} << 32); }).find("does not fit"),
            std::string::npos);
}

TEST(IntOps, PowersAreExactOrAnErrorAndFastForAnyExponent) {
  EXPECT_EQ(fold("**", 2, 62), int64_t{1} << 62);
  EXPECT_EQ(fold("**", -2, 63), kMin);
  EXPECT_EQ(fold("**", 3, 0), 1);
  EXPECT_EQ(fold("**", 0, 0), 1);
  // Exponents far past any loop's patience: 0, 1 and -1 stay exact.
  EXPECT_EQ(fold("**", 1, kMax), 1);
  EXPECT_EQ(fold("**", 0, kMax), 0);
  EXPECT_EQ(fold("**", -1, kMax), -1);
  EXPECT_EQ(fold("**", -1, kMax - 1), 1);
  EXPECT_EQ(error_of([] { fold("**", 2, 64); }),
            "compile-time integer overflow: 2 ** 64 does not fit in 64 bits (tilec folds Python ints as int64)");
  EXPECT_NE(error_of([] { fold("**", 2, 1000000000000); }).find("2 ** 1000000000000 does not fit"),
            std::string::npos);
  EXPECT_NE(error_of([] { fold("**", -2, 64); }).find("(-2) ** 64 does not fit"), std::string::npos);
  EXPECT_NE(error_of([] { fold("**", 3, 40); }).find("3 ** 40"), std::string::npos);
}

TEST(IntOps, ShiftsFollowPython) {
  EXPECT_EQ(fold("<<", 1, 62), int64_t{1} << 62);
  EXPECT_EQ(fold("<<", -1, 63), kMin);
  EXPECT_EQ(fold("<<", 0, 1000), 0);
  EXPECT_EQ(fold(">>", -7, 1), -4);
  EXPECT_EQ(fold(">>", 5, 64), 0);
  EXPECT_EQ(fold(">>", -5, 1000), -1);
  // Were 1 (the shift count taken mod 64) with no diagnostic.
  EXPECT_EQ(error_of([] { fold("<<", 1, 64); }),
            "compile-time integer overflow: 1 << 64 does not fit in 64 bits (tilec folds Python ints as int64)");
  EXPECT_NE(error_of([] { fold("<<", 3, 62); }).find("3 << 62 does not fit"), std::string::npos);
  EXPECT_EQ(error_of([] { fold("<<", 1, -1); }), "negative shift count (1 << (-1))");
  EXPECT_EQ(error_of([] { fold(">>", 1, -1); }), "negative shift count (1 >> (-1))");
}

TEST(IntOps, BitwiseOperators) {
  EXPECT_EQ(fold("&", 12, 10), 8);
  EXPECT_EQ(fold("|", 12, 10), 14);
  EXPECT_EQ(fold("^", 12, 10), 6);
  EXPECT_EQ(fold("&", -1, kMin), kMin);
}

TEST(IntOps, NegationAndAbsOfTheMostNegativeIntAreErrors) {
  EXPECT_EQ(negate_int(kMax, here()), -kMax);
  EXPECT_EQ(abs_int(-kMax, here()), kMax);
  EXPECT_EQ(error_of([] { negate_int(kMin, here()); }),
            "compile-time integer overflow: -(-9223372036854775808) does not fit in 64 bits "
            "(tilec folds Python ints as int64)");
  EXPECT_NE(error_of([] { abs_int(kMin, here()); }).find("abs(-9223372036854775808) does not fit"),
            std::string::npos);
}

TEST(IntOps, FloatToIntTruncatesOrFails) {
  EXPECT_EQ(float_to_int(-9.9, here()), -9);
  EXPECT_EQ(float_to_int(9.9, here()), 9);
  EXPECT_EQ(float_to_int(-9223372036854775808.0, here()), kMin);
  // Was INT64_MIN with no diagnostic.
  EXPECT_EQ(error_of([] { float_to_int(1e300, here()); }),
            "compile-time integer overflow: int(1e+300) does not fit in 64 bits (tilec folds Python ints as int64)");
  EXPECT_NE(error_of([] { float_to_int(9223372036854775808.0, here()); }).find("does not fit"),
            std::string::npos);
  EXPECT_EQ(error_of([] { float_to_int(std::numeric_limits<double>::quiet_NaN(), here()); }),
            "cannot convert float NaN to integer");
  EXPECT_EQ(error_of([] { float_to_int(-std::numeric_limits<double>::infinity(), here()); }),
            "cannot convert float infinity to integer");
}

TEST(IntOps, ParseIntReadsWhatPythonsIntReads) {
  EXPECT_EQ(parse_int("42", here()), 42);
  EXPECT_EQ(parse_int(" -1_000\n", here()), -1000);
  EXPECT_EQ(parse_int("+007", here()), 7);
  EXPECT_EQ(parse_int("-9223372036854775808", here()), kMin);
  for (const char* bad : {"", " ", "1.5", "1__0", "_1", "1_", "0x10", "--1", "1 2"})
    EXPECT_EQ(error_of([&] { parse_int(bad, here()); }),
              std::string("invalid literal for int() with base 10: '") + bad + "'")
        << bad;
  EXPECT_NE(error_of([] { parse_int("9223372036854775808", here()); }).find("does not fit"), std::string::npos);
}

}  // namespace
}  // namespace tilec::frontend
