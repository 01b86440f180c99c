// Expressions at compile time: Python's results when they fold, located
// errors where Python's result has no int64 (or no value at all), and the
// limits on what compile time may build (frontend/limits.h).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "kernel_text.h"

namespace tilec {
namespace {

using test_support::compile_text;
using test_support::expect_error;
using test_support::kernel_text;

// The IR of `A[0] = expr` in an int64 kernel (line 6; expr starts at column 16).
std::string store_of(const std::string& expr, const std::string& dtype = "int64") {
  test_support::Compiled c = compile_text(kernel_text("        A[0] = " + expr + "\n", dtype));
  EXPECT_TRUE(c.error.empty()) << expr << ":\n" << c.error;
  size_t at = c.text.find("A[0] = ");
  return at == std::string::npos ? c.text : c.text.substr(at + 7, c.text.find('\n', at) - at - 7);
}

void expect_store_error(const std::string& expr, const std::string& expected,
                        const std::string& dtype = "int64") {
  expect_error(kernel_text("        A[0] = " + expr + "\n", dtype), expected);
}

TEST(ElaborateExpr, IntegersFoldAsPythonComputesThem) {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"7 // -2", "-4"},
      {"-7 % 3", "2"},
      {"(-9223372036854775807 - 1) % -1", "0"},
      {"2 ** 62", "4611686018427387904"},
      {"(-2) ** 63", "-9223372036854775808"},
      {"1 ** 10**12", "1"},
      {"(-1) ** (10**12 + 1)", "-1"},
      {"3 >> 100", "0"},
      {"(-3) >> 100", "-1"},
      {"3 * 2 ** 61 // 2 ** 60", "6"},
      {"int(-9.9)", "-9"},
      {"int(2**62 + 1)", "4611686018427387905"},  // exact: not through a double
      {"int(True) + int(' -1_000 ')", "-999"},
      {"abs(-9223372036854775807)", "9223372036854775807"},
      {"bool('False') + bool(0.0)", "1"},
      {"len(3 * (1, 2)) + len((1,) * -4)", "6"},
  };
  for (const auto& [expr, value] : cases) EXPECT_EQ(store_of(expr), "T.int64(" + value + ")") << expr;
}

TEST(ElaborateExpr, IteratingBuiltinsFoldOverCompileTimeValues) {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"sum((1, 2, 3))", "6"},
      {"sum(range(1, 10, 3), 100)", "112"},
      {"sum(())", "0"},
      {"len(range(10, 0, -3))", "4"},
      {"enumerate((5, 6), 3)[1][0] * 10 + len(enumerate(()))", "40"},
      {"zip((1, 2, 3), (10, 20))[1][1] + len(zip((1, 2, 3), (10, 20)))", "22"},
      {"max(zip((1, 2), (3, 4))[1]) + min(range(7, 9))", "11"},
      {"max(3, 9, 4) * 10 + min((5, -2.0, 7)) + max(True, 0)", "89"},
      {"any((0, 0, 3)) * 100 + all((1, 0)) * 10 + all(())", "101"},
  };
  for (const auto& [expr, value] : cases) EXPECT_EQ(store_of(expr), "T.int64(" + value + ")") << expr;
}

TEST(ElaborateExpr, IteratingBuiltinsMisusedAreLocatedErrors) {
  expect_store_error("sum(5)", "6:20: error: sum() iterates a tuple, a list or a range of "
                               "compile-time values, not int");
  expect_store_error("zip((1, 2), (3,), strict=True)[0][0]",
                     "6:28: error: zip() argument 2 is shorter than argument 1");
  expect_store_error("zip((1,), x=1)",
                     "6:26: error: zip() got an unexpected keyword argument 'x' (it takes strict=)");
  expect_store_error("sum((1,), 'a')", "6:26: error: sum() can't sum strings");
  expect_store_error("any((bx,))", "6:20: error: the truth of a ");
  expect_store_error("len(range(bx))", "6:26: error: range start must be a compile-time integer");
}

TEST(ElaborateExpr, StrOfCompileTimeValuesIsPythons) {
  // TileLang's quantize helpers build dtype names in the kernel: "uint" + str(8).
  std::vector<std::pair<std::string, std::string>> cases = {
      {"1.0", "1.0"},         {"1e-12", "1e-12"},   {"1e16", "1e+16"},
      {"1e15", "1000000000000000.0"}, {"123.456", "123.456"}, {"0.0001", "0.0001"},
      {"0.00001", "1e-05"},   {"-2.5", "-2.5"},     {"1.0 / 3", "0.3333333333333333"},
      {"7", "7"},             {"True", "True"},     {"None", "None"},
      {"'ab'", "ab"},         {"(1, 'a')", "(1, 'a')"}, {"[2.5, None]", "[2.5, None]"},
      {"(3,)", "(3,)"},       {"T.float16", "float16"},
  };
  for (const auto& [value, text] : cases)
    EXPECT_EQ(store_of("int(str(" + value + ") == \"" + text + "\")"), "T.int64(1)") << value;
  EXPECT_EQ(store_of("len(str()) + int('uint' + str(8) == 'uint8')"), "T.int64(1)");
  expect_store_error("len(str(bx))", "6:24: error: str() of runtime int32 value: kernels convert only "
                                     "compile-time values");
}

TEST(ElaborateExpr, ADtypeEqualsTheStringsThatNameIt) {
  // TileLang's quantize helpers check `assert val.dtype == storage_dtype`, a string.
  EXPECT_EQ(store_of("int(A[1].dtype == 'int64') + 2 * int('int' + str(64) == A.dtype)"), "T.int64(3)");
  EXPECT_EQ(store_of("int(T.float8_e4m3 == 'float8_e4m3fn') + 2 * int(T.float16 != 'bfloat16')"), "T.int64(3)");
  EXPECT_EQ(store_of("int(A.dtype == 'int32') + int(A.dtype == 'no type') + int(A.dtype in ('int64',))"),
            "T.int64(1)");
}

TEST(ElaborateExpr, ComprehensionsFoldOverCompileTimeValues) {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"sum(i * i for i in range(4))", "14"},
      {"len([x for x in (1, 2, 3, 4) if x % 2 if x > 1])", "1"},
      {"[y for x in ((1, 2), (3,)) for y in x][2]", "3"},
      {"sum((a * b for a, b in zip((1, 2), (3, 4))), 100)", "111"},
      {"max([len(t) for t in ((1,), (1, 2, 3), ())])", "3"},
  };
  for (const auto& [expr, value] : cases) EXPECT_EQ(store_of(expr), "T.int64(" + value + ")") << expr;
  // The targets are the comprehension's own: the x around it is unchanged.
  test_support::Compiled c = compile_text(
      kernel_text("        A[0] = sum([x for x in (1, 2)]) * 10 + x\n", "int64", "    x = 5\n"));
  EXPECT_NE(c.text.find("A[0] = T.int64(35)"), std::string::npos) << c.error << c.text;
  // Runtime elements make a runtime value.
  EXPECT_EQ(store_of("sum(A[i] for i in range(3))"), "A[0] + A[1] + A[2]");
}

TEST(ElaborateExpr, ComprehensionsMisusedAreLocatedErrors) {
  expect_store_error("sum(x for x in 5)", "6:31: error: a comprehension iterates a tuple, a list "
                                          "or a range of compile-time values, not int");
  expect_store_error("[x for x, y in ((1, 2, 3),)][0]",
                     "6:23: error: cannot unpack 3 values into 2 names");
  expect_store_error("[x for x in (1, 2) if bx][0]", "6:38: error: the truth of a ");
}

TEST(ElaborateExpr, FloatsFoldAsPythonComputesThem) {
  EXPECT_EQ(store_of("(-7.0) // 2.0 + 0.25", "float32"), "-3.75");
  EXPECT_EQ(store_of("(-7.0) % 2.0", "float32"), "1.0");
  EXPECT_EQ(store_of("7.0 % -2.0", "float32"), "-1.0");
  EXPECT_EQ(store_of("2 ** -2", "float32"), "0.25");
}

TEST(ElaborateExpr, IntegerOverflowIsALocatedError) {
  // Each was a crash (SIGFPE), a hang or a wrapped value.
  std::vector<std::pair<std::string, std::string>> cases = {
      {"(-9223372036854775807 - 1) // -1", "-9223372036854775808 // (-1) does not fit in 64 bits"},
      {"2 ** 64", "2 ** 64 does not fit in 64 bits"},
      {"2 ** 10**12", "2 ** 1000000000000 does not fit in 64 bits"},
      {"1 << 64", "1 << 64 does not fit in 64 bits"},
      {"9223372036854775807 + 1", "9223372036854775807 + 1 does not fit in 64 bits"},
      {"-(-9223372036854775807 - 1)", "-(-9223372036854775808) does not fit in 64 bits"},
  };
  for (const auto& [expr, message] : cases)
    expect_store_error(expr, "6:16: error: compile-time integer overflow: " + message +
                                 " (tilec folds Python ints as int64)");
  expect_store_error("abs(-9223372036854775807 - 1)", "6:16: error: compile-time integer overflow: abs(");
  expect_store_error("int(1e300)", "6:20: error: compile-time integer overflow: int(1e+300) does not fit in 64 bits");
}

TEST(ElaborateExpr, OperationsPythonRefusesAreLocatedErrors) {
  expect_store_error("1 << -1", "6:16: error: negative shift count (1 << (-1))");
  expect_store_error("T.cast(bx, \"float32\") ^ 1", "6:16: error: operator '^' needs integers", "float32");
  expect_store_error("5 // 0", "6:16: error: integer division or modulo by zero");
  expect_store_error("0 ** -1", "6:16: error: 0.0 cannot be raised to a negative power");
  expect_store_error("int(float('nan'))", "6:20: error: cannot convert float NaN to integer");
  expect_store_error("int(float('inf'))", "6:20: error: cannot convert float infinity to integer");
  expect_store_error("int('1.5')", "6:20: error: invalid literal for int() with base 10: '1.5'");
  expect_store_error("float('0x10')", "6:22: error: could not convert string to float: '0x10'", "float32");
  expect_store_error("(-8.0) ** 0.5", "6:16: error: a negative number raised to a fractional power is complex "
                                      "((-8.0) ** 0.5)", "float32");
  expect_store_error("10.0 ** 400", "6:16: error: float overflow: 10.0 ** 400.0 is too large for a float", "float32");
}

// An element of a float tensor as an index (a fuzz finding: it reached the C++ compiler).
TEST(ElaborateExpr, AFloatElementAsAnIndexIsALocatedError) {
  expect_store_error("A[A[1]]", "6:18: error: buffer index must be an integer, not float32 A[1]", "float32");
  EXPECT_NE(store_of("A[A[1]]").find("A[A[1]]"), std::string::npos);  // an int64 element is an index
}

TEST(ElaborateExpr, XorOfRuntimeIntegersIsBitXor) {
  EXPECT_EQ(store_of("T.int64(bx) ^ 3"), "T.cast(bx, \"int64\") ^ T.int64(3)");
  EXPECT_EQ(store_of("5 ^ 3"), "T.int64(6)");
}

TEST(ElaborateExpr, BitwiseOperatorsOfRuntimeIntegers) {
  EXPECT_EQ(store_of("T.int64(bx) & 6 | 1"), "T.cast(bx, \"int64\") & T.int64(6) | T.int64(1)");
  EXPECT_EQ(store_of("T.int64(bx) << 2 >> 1"), "T.cast(bx, \"int64\") << T.int64(2) >> T.int64(1)");
  EXPECT_EQ(store_of("~T.int64(bx)"), "T.cast(bx, \"int64\") ^ T.int64(-1)");
  EXPECT_EQ(store_of("~3 & 7"), "T.int64(4)");
}

TEST(ElaborateExpr, ConstantsMustFitTheTypeTheyReachTheIRAs) {
  expect_store_error("300", "6:9: error: the integer 300 does not fit in int8 (stored value)", "int8");
  expect_store_error("A[1] + 300", "6:16: error: the integer 300 does not fit in int8 (operand of '+')", "int8");
  expect_store_error("A[1] * -1", "6:16: error: the integer -1 does not fit in uint32 (operand of '*')", "uint32");
  expect_store_error("1e300", "6:9: error: the float 1e+300 does not fit in int32 (stored value)", "int32");
  expect_store_error("float('nan')", "6:9: error: the float nan does not fit in int32 (stored value)", "int32");
  EXPECT_EQ(store_of("-128", "int8"), "T.int8(-128)");
  EXPECT_EQ(store_of("255", "uint8"), "T.uint8(255)");
  EXPECT_EQ(store_of("127.9", "int8"), "T.int8(127)");
}

TEST(ElaborateExpr, CompileTimeSequencesAreLimited) {
  // Was a hang building a billion items.
  expect_store_error("len((1,) * 10**9)", "6:20: error: tuple * 1000000000 makes more than the 100000 items a "
                                          "compile-time tuple, list or string may have");
  expect_store_error("len((1, 2) * 4611686018427387904)", "6:20: error: tuple * 4611686018427387904 makes more");
  // Unpacking is counted as the items pile up (a thousand *t of 100000 items each took memory past any check).
  std::string stars;
  for (int i = 0; i < 1000; ++i) stars += "*t, ";
  expect_error(kernel_text("        A[0] = len(u)\n", "int64", "    t = (1,) * 100000\n    u = (" + stars + ")\n"),
               "6:14: error: this unpacking makes more than the 100000 items");
  expect_error(kernel_text("        A[0] = max(" + stars + ")\n", "int64", "    t = (1,) * 100000\n"),
               "7:24: error: this call's argument list makes more than the 100000 items");
  expect_error(kernel_text("        A[0] = len(s)\n", "int64",
                           "    s = 'ab'\n"
                           "    for _ in range(17):\n"
                           "        s = s + s\n"),
               "7:13: error: this concatenation makes more than the 100000 items");
}

TEST(ElaborateExpr, TuplesAreSharedNotCopiedAtEachUse) {
  // Each use of a name copied its tuple: reading a 100000-item tuple 99999
  // times ran for minutes, and 10000 copies of a 10000-item tuple took 24 GB.
  auto start = std::chrono::steady_clock::now();
  test_support::Compiled c = compile_text(kernel_text("        A[0] = x + len(u) + len(u[9999])\n", "int64",
                                                      "    t = (1,) * 100000\n"
                                                      "    x = 0\n"
                                                      "    for i in range(99999):\n"
                                                      "        x = t[i]\n"
                                                      "    u = (t[:10000],) * 10000\n"));
  EXPECT_NE(c.text.find("A[0] = T.int64(20001)"), std::string::npos) << c.error << c.text;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  // Nesting is bounded: the values' copies and comparisons recurse through it.
  expect_error(kernel_text("        A[0] = len(t)\n", "int64",
                           "    t = ()\n"
                           "    for _ in range(1000):\n"
                           "        t = (t,)\n"),
               "7:13: error: tuples and lists nest more than 100 deep here");
}

TEST(ElaborateExpr, WorkOnTuplesIsBudgeted) {
  // Each comparison is bounded by the length limit, but a loop repeated it:
  // 100000 compares of two 100000-item tuples ran for minutes.
  expect_error(kernel_text("        A[0] = x\n", "int64",
                           "    t = (1,) * 100000\n"
                           "    u = (1,) * 100000\n"
                           "    x = 0\n"
                           "    for i in range(99999):\n"
                           "        x = x + (1 if t == u else 0) + (1 if 2 in t else 0)\n"),
               "9:46: error: compile-time operations on tuples, lists and strings have handled more than "
               "100000000 items in this kernel");
  EXPECT_EQ(store_of("(1, (2, 'a')) == (1, (2, 'a')) and 3 in (1, 2, 3)"), "T.int64(1)");
}

TEST(ElaborateExpr, RuntimeExpressionsAreLimited) {
  // A value grown through a tuple, one level an iteration: was a stack overflow
  // in the passes after 20000 levels.
  expect_error(kernel_text("        t = (A[1],)\n"
                           "        for _ in (0,) * 20000:\n"
                           "            t = (t[0] + 1,)\n"
                           "        A[0] = t[0]\n"),
               "8:18: error: this expression is too large to compile: it nests 2001 levels deep (the limit "
               "is 2000); assign parts of it to names inside the kernel");
  // Doubling: 40 iterations make a tree of 2**40 nodes, which every pass walked as a tree (a hang).
  expect_error(kernel_text("        t = (A[1],)\n"
                           "        for _ in (0,) * 40:\n"
                           "            t = (t[0] + t[0],)\n"
                           "        A[0] = t[0]\n"),
               "8:18: error: this expression is too large to compile: written out, it has more than 100000 "
               "operations and operands");
  // Inside both limits (1992 levels; some 40000 nodes as a tree), every stage compiles it.
  std::string deep = kernel_text("        t = (A[1],)\n"
                                 "        for _ in (0,) * 1990:\n"
                                 "            t = (t[0] * A[2],)\n"
                                 "        u = (A[1],)\n"
                                 "        for _ in (0,) * 13:\n"
                                 "            u = (u[0] + u[0] * A[2],)\n"
                                 "        A[0] = t[0] + u[0]\n");
  for (EmitStage stage : {EmitStage::IR, EmitStage::Source})
    for (const char* target : {"cpu", "cuda"}) {
      test_support::Compiled c = compile_text(deep, stage, target);
      EXPECT_TRUE(c.error.empty()) << target << ": " << c.error;
    }
}

TEST(ElaborateExpr, ALoadIsLocatedAtItsSubscript) {
  // A pass that rejects a load can point at it: this was "error: fragment 'acc' ..." with no location.
  std::string text = "import tilec.language as T\n"
                     "\n"
                     "@T.prim_func\n"
                     "def main(A: T.Tensor((32, 32), \"bfloat16\"), out: T.Tensor((1,), \"float32\")):\n"
                     "    with T.Kernel(1, threads=128) as bx:\n"
                     "        A_s = T.alloc_shared((32, 32), \"bfloat16\")\n"
                     "        acc = T.alloc_fragment((32, 32), \"float32\")\n"
                     "        T.copy(A, A_s)\n"
                     "        T.gemm(A_s, A_s, acc, clear_accum=True)\n"
                     "        out[0] = acc[0, 0] * 2.0\n";
  test_support::Compiled c = compile_text(text, EmitStage::Source, "cuda");
  EXPECT_EQ(c.error.rfind("k.py:10:18: error: fragment 'acc' is used outside a T.Parallel loop", 0), 0u) << c.error;
}

}  // namespace
}  // namespace tilec
