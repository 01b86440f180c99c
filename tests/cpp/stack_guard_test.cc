// stack_guard: the deepest programs the front end's limits allow compile on a
// thread with 4 MiB of stack (half of Linux's default for threads), and on a
// thread with less than they need compiling ends in an error, not a crash.
#include "base/stack_guard.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "kernel_text.h"

namespace tilec {
namespace {

using test_support::Compiled;
using test_support::compile_text;
using test_support::kernel_text;
using test_support::kStackScale;
using test_support::on_thread_with_stack;

std::string repeated(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Each at (or just inside) one of the limits of frontend/limits.h.
std::vector<std::pair<std::string, std::string>> deepest_programs() {
  return {
      // 495 brackets around a subscript: the parser's limit is 500 levels.
      {"brackets", kernel_text("        A[0] = " + repeated("(", 495) + "A[1]" + repeated(")", 495) + "\n")},
      // An expression 1990 levels deep in IR (the limit is 2000), grown through a tuple.
      {"ir depth", kernel_text("        t = (A[1],)\n"
                               "        for _ in (0,) * 1990:\n"
                               "            t = (t[0] * A[2],)\n"
                               "        A[0] = t[0]\n")},
      // Calls 60 deep, each nesting 30 levels: some 1900 levels of evaluation (the limit is 2000).
      {"evaluation depth", kernel_text("        A[0] = f(A[1], 60)\n", "int64",
                                       "    def f(x, n):\n"
                                       "        if n == 0:\n"
                                       "            return x\n"
                                       "        return " + repeated("-(", 30) + "f(x, n - 1)" + repeated(")", 30) +
                                       "\n")},
      // Runtime branches nested 600 deep through calls.
      {"statement depth", kernel_text("        g(60)\n", "int64",
                                      "    def g(n):\n"
                                      "        if n > 0:\n" +
                                      [] {
                                        std::string body;
                                        for (int i = 0; i < 10; ++i)
                                          body += std::string(12 + 4 * i, ' ') + "if A[" + std::to_string(i % 8) + "] > 0:\n";
                                        return body + std::string(52, ' ') + "g(n - 1)\n";
                                      }() + "        else:\n            A[0] = 1\n")},
  };
}

// First, and in increasing sizes: glibc may give a new thread the cached,
// larger stack of one that has ended.
TEST(StackGuard, TooSmallAStackIsAnErrorNotACrash) {
  for (size_t kib : {192, 320, 512, 1024})
    for (const auto& [name, text] : deepest_programs())
      on_thread_with_stack(kib << 10, [&, name = name, text = text] {
        Compiled c = compile_text(text, EmitStage::Source, "cpu");
        if (c.error.empty()) {
          // Each needs more than this.
          EXPECT_GT(kib, 320u) << name << " compiled with " << kib << " KiB of stack";
          return;
        }
        EXPECT_NE(c.error.find("error: this kernel nests too deeply for the stack of the thread compiling it ("),
                  std::string::npos)
            << name << " with " << kib << " KiB:\n" << c.error.substr(0, 400);
        EXPECT_EQ(c.error.rfind("k.py:", 0), 0u) << name << ": not located:\n" << c.error.substr(0, 400);
      });
}

TEST(StackGuard, TheDeepestProgramsCompileOnA4MiBStack) {
  for (const auto& [name, text] : deepest_programs())
    for (const char* target : {"cpu", "cuda"})
      on_thread_with_stack((size_t{4} << 20) * kStackScale, [&, name = name, text = text] {
        Compiled c = compile_text(text, EmitStage::Source, target);
        EXPECT_TRUE(c.error.empty()) << name << " on " << target << ":\n" << c.error.substr(0, 400);
      });
}

TEST(StackGuard, StackLeftIsKnownOnThisPlatform) {
  size_t main_left = stack_left();
  EXPECT_GT(main_left, size_t{0});
  on_thread_with_stack(size_t{1} << 20, [] { EXPECT_GT(stack_left(), size_t{900} << 10); });
}

}  // namespace
}  // namespace tilec
