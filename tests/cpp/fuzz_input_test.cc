// The compile fuzzer's input format (tests/fuzz/fuzz_input.h): the header
// lines, each kind of binding, and what counts as a finding.
#include "fuzz_input.h"

#include <gtest/gtest.h>

#include <string>

namespace tilec::fuzz {
namespace {

const char* const kKernel =
    "import tilec.language as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Tensor((N,), \"float32\")):\n"
    "    with T.Kernel(1) as bx:\n"
    "        A[0] = 1.0\n";

FuzzInput parsed(const std::string& text) {
  auto input = parse_fuzz_input(text, "in.py");
  EXPECT_TRUE(input.has_value()) << text;
  return input ? *input : FuzzInput{};
}

bool rejected(const std::string& text) { return !parse_fuzz_input(text, "in.py").has_value(); }

Value binding(const std::string& value_text) {
  FuzzInput input = parsed("#!bind X = " + value_text + "\n" + kKernel);
  auto it = input.func.bindings.find("X");
  EXPECT_NE(it, input.func.bindings.end()) << value_text;
  return it == input.func.bindings.end() ? Value{} : it->second;
}

TEST(FuzzInput, WithoutHeaderIsTheFileOnTheCpu) {
  FuzzInput input = parsed(kKernel);
  EXPECT_EQ(input.options.target, "cpu");
  EXPECT_EQ(input.options.arch, "");
  EXPECT_EQ(input.stage, EmitStage::Source);
  EXPECT_EQ(input.func.name, "main");
  EXPECT_EQ(input.func.source, kKernel);
  EXPECT_EQ(input.func.filename, "in.py");
  EXPECT_EQ(input.func.bindings.at("T").kind, Value::Kind::Module);  // from the import
}

TEST(FuzzInput, HeaderSetsTargetArchStageFunctionAndConfigs) {
  FuzzInput input = parsed(std::string("#!target cuda sm_90a\n#!emit ir\n#!func main\n"
                                       "#!config tilec.wgmma = false\n#!config tilec.tma=1\n") +
                           kKernel);
  EXPECT_EQ(input.options.target, "cuda");
  EXPECT_EQ(input.options.arch, "sm_90a");
  EXPECT_EQ(input.stage, EmitStage::IR);
  EXPECT_EQ(input.func.name, "main");
  EXPECT_EQ(input.options.pass_configs.at("tilec.wgmma"), "false");
  EXPECT_EQ(input.options.pass_configs.at("tilec.tma"), "1");
  EXPECT_EQ(parsed(std::string("#!emit tile-ir\n") + kKernel).stage, EmitStage::TileIR);
}

TEST(FuzzInput, ScalarBindings) {
  EXPECT_EQ(binding("None").kind, Value::Kind::None);
  EXPECT_TRUE(binding("True").bool_value);
  EXPECT_EQ(binding("False").kind, Value::Kind::Bool);
  EXPECT_EQ(binding("-42").int_value, -42);
  EXPECT_EQ(binding("9223372036854775807").int_value, INT64_MAX);
  EXPECT_DOUBLE_EQ(binding("1.5e-3").float_value, 1.5e-3);
  EXPECT_EQ(binding(R"("a \"b\"\n")").text, "a \"b\"\n");
  EXPECT_EQ(binding("bfloat16").dtype, DType::BFloat16);
  Value n = binding("sym(n)");
  EXPECT_EQ(n.kind, Value::Kind::Symbolic);
  EXPECT_EQ(n.text, "n");
  Value width = binding("arith(mul, arith(add, sym(n), 1), 64)");
  ASSERT_EQ(width.kind, Value::Kind::Arithmetic);
  EXPECT_EQ(width.text, "*");
  ASSERT_EQ(width.items.size(), 2u);
  EXPECT_EQ(width.items[0].text, "+");
  EXPECT_EQ(width.items[0].items[0].kind, Value::Kind::Symbolic);
  EXPECT_EQ(width.items[1].int_value, 64);
  EXPECT_EQ(binding("module(tilec)").text, "tilec");
  Value opaque = binding("opaque(Generator)");
  EXPECT_EQ(opaque.kind, Value::Kind::Opaque);
  EXPECT_EQ(opaque.text, "Generator");
}

TEST(FuzzInput, SequenceAndTensorBindings) {
  Value t = binding("(1, [2.5, float16], ())");
  ASSERT_EQ(t.kind, Value::Kind::Tuple);
  ASSERT_EQ(t.items.size(), 3u);
  EXPECT_EQ(t.items[0].int_value, 1);
  ASSERT_EQ(t.items[1].kind, Value::Kind::List);
  EXPECT_EQ(t.items[1].items[1].dtype, DType::Float16);
  EXPECT_TRUE(t.items[2].items.empty());
  EXPECT_EQ(binding("(7)").items.size(), 1u);  // always a tuple
  EXPECT_EQ(binding("[1, 2,]").items.size(), 2u);
  Value spec = binding("tensor(float16, 64, 32)");
  EXPECT_EQ(spec.kind, Value::Kind::TensorSpec);
  EXPECT_EQ(spec.dtype, DType::Float16);
  ASSERT_EQ(spec.items.size(), 2u);
  EXPECT_EQ(spec.items[1].int_value, 32);
}

TEST(FuzzInput, FuncBindingIsAFunctionOfTheFileWithTheSameBindings) {
  std::string text = std::string("#!bind helper = func(helper)\n#!bind N = 8\n") + kKernel +
                     "\n@T.macro\ndef helper(x):\n    return x\n";
  FuzzInput input = parsed(text);
  const Value& helper = input.func.bindings.at("helper");
  ASSERT_EQ(helper.kind, Value::Kind::Function);
  EXPECT_EQ(helper.function->name, "helper");
  EXPECT_EQ(helper.function->source, text);
  EXPECT_EQ(helper.function->bindings.at("N").int_value, 8);
  // Its own name inside it is recursion, which the language doesn't have.
  EXPECT_EQ(helper.function->bindings.at("helper").kind, Value::Kind::Opaque);
}

TEST(FuzzInput, MalformedHeadersAreRejected) {
  for (const char* header : {"#!target\n", "#!target gpu\n", "#!target cpu sm_80\n", "#!emit ptx\n",
                             "#!config tilec.wgmma\n", "#!config tilec.nothing=1\n",
                             "#!config tilec.tma=maybe\n", "#!bind X\n", "#!bind = 1\n",
                             "#!bind X = \n", "#!bind X = (1, 2\n", "#!bind X = \"open\n",
                             "#!bind X = \"\\q\"\n", "#!bind X = float99\n", "#!bind X = sym()\n",
                             "#!bind X = tensor(float16, n)\n", "#!bind X = 99999999999999999999\n",
                             "#!bind X = 1 2\n", "#!bind X = func(missing)\n", "#!bind X = arith(pow, 2, 3)\n",
                             "#!bind X = arith(add, 1)\n", "#!unknown\n",
                             "#!func nowhere\n"})
    EXPECT_TRUE(rejected(header + std::string(kKernel))) << header;
  std::string deep = "#!bind X = " + std::string(40, '(') + std::string(40, ')') + "\n";
  EXPECT_TRUE(rejected(deep + kKernel));
}

TEST(FuzzInput, ManyMutuallyBoundFunctionsAreRejectedNotExplored) {
  std::string text;
  for (char c = 'a'; c <= 'h'; ++c) text += std::string("#!bind ") + c + " = func(" + c + ")\n";
  text += kKernel;
  for (char c = 'a'; c <= 'h'; ++c) text += std::string("\ndef ") + c + "():\n    pass\n";
  EXPECT_TRUE(rejected(text));
}

TEST(FuzzInput, UnparsableFileIsKeptForCompileToReport) {
  FuzzInput input = parsed("#!func main\ndef main(:\n");
  EXPECT_EQ(compile_failure(input), "");  // a located syntax error
}

TEST(FuzzInput, CompiledAndLocatedErrorsAreNotFindings) {
  EXPECT_EQ(compile_failure(parsed(std::string("#!bind N = 16\n") + kKernel)), "");
  EXPECT_EQ(compile_failure(parsed(std::string("#!target cuda sm_80\n#!bind N = 16\n") + kKernel)), "");
  // N unbound: undefined name, located.
  EXPECT_EQ(compile_failure(parsed(kKernel)), "");
}

TEST(FuzzInput, LocatedErrorHasPositionSourceLineAndCaret) {
  EXPECT_TRUE(has_location("k.py:3:5: error: bad\n    x = y\n        ^"));
  EXPECT_TRUE(has_location("k.py:3:5: error: bad"));
  EXPECT_FALSE(has_location("error: bad"));               // format_diagnostic without a loc
  EXPECT_FALSE(has_location("k.py:3: error: bad\n    x"));  // no column
  EXPECT_FALSE(has_location(":3:5: error: bad"));         // no file
  EXPECT_FALSE(has_location("k.py:3:5: bad\nk.py:3:5: error: x"));
  EXPECT_TRUE(has_source_line_and_caret("k.py:3:5: error: bad\n    x = y\n        ^"));
  EXPECT_TRUE(has_source_line_and_caret("k.py:3:5: error: bad\n    \tx\n    \t^\nk.py:1:1: note: here"));
  EXPECT_TRUE(has_source_line_and_caret("k.py:3:5: error: token '\"\"\"a\nb\"\"\"'\n    x\n    ^"));
  EXPECT_FALSE(has_source_line_and_caret("k.py:3:5: error: bad\n    x = y\n"));
  EXPECT_FALSE(has_source_line_and_caret("k.py:3:5: error: bad"));
  EXPECT_FALSE(has_source_line_and_caret("k.py:3:5: error: bad\n    ^"));  // no line above
  // A source line that is itself a lone caret (found by the fuzzer: "^" after a CR).
  EXPECT_TRUE(has_source_line_and_caret("k.py:2:1: error: unexpected token '^'\n    ^\n    ^"));
}

TEST(FuzzInput, FailureSignatureLeavesOutNumbersAndNames) {
  EXPECT_EQ(failure_signature("uncaught std::logic_error: internal compiler error in pass verify on 'main': "
                              "buffer 'B_f' is used outside its allocation\nIR:\n..."),
            "uncaught std::logic_error: internal compiler error in pass verify on '_': "
            "buffer '_' is used outside its allocation");
  EXPECT_EQ(failure_signature("a CompileError without file:line:col: error: U+001A at 12"),
            "a CompileError without file:line:col: error: U+N at N");
  EXPECT_EQ(failure_signature("a CompileError without its source line and caret:\nk.py:1:2: error: x"),
            "a CompileError without its source line and caret:");
}

}  // namespace
}  // namespace tilec::fuzz
