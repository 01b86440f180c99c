// Kernel source in tests of the front end: a one-kernel prim_func around some
// lines, and what compiling a text gives (its IR, or the error it fails with).
#pragma once

#include <gtest/gtest.h>
#include <pthread.h>

#include <functional>
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

// How much more stack the compiler needs in this build: AddressSanitizer's redzones make its
// frames about four times larger, so the stack sizes the limits are made for scale by it.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kStackScale = 4;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kStackScale = 4;
#else
constexpr size_t kStackScale = 1;
#endif
#else
constexpr size_t kStackScale = 1;
#endif

// Runs `body` on a new thread with a stack of `bytes`.
inline void on_thread_with_stack(size_t bytes, const std::function<void()>& body) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, bytes), 0);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run, const_cast<std::function<void()>*>(&body)), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
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
  if (target == "hip") options.arch = "gfx90a";
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
