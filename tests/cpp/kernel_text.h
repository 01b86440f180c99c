// Kernel source in tests of the front end: a one-kernel prim_func around some
// lines, and what compiling a text gives (its IR, or the error it fails with).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tilec/tilec.h"

namespace tilec::test_support {

// A prim_func `main(A: T.Tensor((8,), dtype))` whose T.Kernel(1) block (line 5,
// `bx` its index) holds `lines` (each indented by the caller to 8 spaces);
// `before` goes before the block, indented 4.
inline std::string kernel_text(const std::string& lines, const std::string& dtype = "int64",
                               const std::string& before = "") {
  return "import tilec.language as T\n"
         "\n"
         "@T.prim_func\n"
         "def main(A: T.Tensor((8,), \"" + dtype + "\")):\n" +
         before +
         "    with T.Kernel(1) as bx:\n" + lines;
}

struct Compiled {
  std::string text;   // the stage's text, when it compiled
  std::string error;  // the CompileError's text, when it did not
};

inline Compiled compile_text(const std::string& text, EmitStage stage = EmitStage::IR,
                             const std::string& target = "cpu") {
  CompileOptions options;
  options.target = target;
  if (target == "cuda") options.arch = "sm_90a";
  try {
    return {emit(load_function(text, "k.py", "main"), options, stage), ""};
  } catch (const CompileError& e) {
    return {"", e.what()};
  }
}

// The error compiling `text` gives: "k.py:LINE:COL: error: MESSAGE" must start
// `expected`, and the source line and a caret must follow.
inline void expect_error(const std::string& text, const std::string& expected) {
  Compiled c = compile_text(text);
  ASSERT_FALSE(c.error.empty()) << "compiled, but should fail with: " << expected << "\n" << c.text;
  EXPECT_EQ(c.error.rfind("k.py:" + expected, 0), 0u) << "expected: k.py:" << expected << "\ngot:\n" << c.error;
  EXPECT_NE(c.error.find("\n    "), std::string::npos) << c.error;
  EXPECT_NE(c.error.find('^'), std::string::npos) << c.error;
}

}  // namespace tilec::test_support
