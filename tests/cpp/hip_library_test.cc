// hipRTC through runtime/hip/hip_library.h: the generated HIP source of a kernel, with the
// device headers embedded in libtilec, compiles to a code object for each hip arch, with no
// AMD GPU. Skipped, with the reason, where hipRTC is not installed.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "runtime/hip/hip_library.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

constexpr const char* kRowSum =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(A: T.Tensor((8, 256), \"float16\"), S: T.Tensor((8,), \"float32\"),\n"
    "         B: T.Tensor((64, 32), \"bfloat16\"), C: T.Tensor((64, 64), \"float32\")):\n"
    "    with T.Kernel(4, threads=128) as bx:\n"
    "        A_f = T.alloc_fragment((2, 256), \"float32\")\n"
    "        S_f = T.alloc_fragment((2,), \"float32\")\n"
    "        T.copy(A[bx * 2, 0], A_f)\n"
    "        T.reduce_sum(A_f, S_f, dim=1)\n"
    "        T.copy(S_f, S[bx * 2])\n"
    "        B_s = T.alloc_shared((64, 32), \"bfloat16\")\n"
    "        C_f = T.alloc_fragment((64, 64), \"float32\")\n"
    "        T.copy(B, B_s)\n"
    "        T.gemm(B_s, B_s, C_f, transpose_B=True, clear_accum=True)\n"
    "        T.atomic_add(C, C_f)\n";

TEST(Hiprtc, IsGivenEveryHeaderTheHipHeadersInclude) {
  // Needs no hipRTC: what compile() hands it. device/gpu/ is shared with device/cuda/.
  std::set<std::string> names;
  for (const EmbeddedHeader* h : runtime::Hiprtc::headers()) names.insert(h->path);
  EXPECT_TRUE(names.count("hip/tilec_hip.h")) << "no hip/tilec_hip.h";
  EXPECT_TRUE(names.count("gpu/math.h")) << "no gpu/math.h";
  for (const EmbeddedHeader* h : runtime::Hiprtc::headers()) {
    EXPECT_NE(std::string(h->path).rfind("cuda/", 0), 0u) << h->path;
    std::istringstream lines(h->text);
    for (std::string line; std::getline(lines, line);) {
      const std::string directive = "#include \"";
      if (line.rfind(directive, 0) != 0) continue;
      const std::string included = line.substr(directive.size(), line.find('"', directive.size()) - directive.size());
      EXPECT_TRUE(names.count(included)) << h->path << " includes " << included << ", which hipRTC is not given";
    }
  }
}

TEST(Hiprtc, CompilesGeneratedSourceForEveryHipArch) {
  const runtime::Hiprtc* rtc = runtime::Hiprtc::get();
  if (!rtc) GTEST_SKIP() << runtime::Hiprtc::unavailable_reason();
  for (const char* arch : {"gfx90a", "gfx906"}) {
    std::string source = emit(load_function(kRowSum, "k.py", "main"), {.target = "hip", .arch = arch},
                              EmitStage::Source);
    std::string code = rtc->compile(source, "k.hip", arch);
    EXPECT_EQ(code.rfind("\x7f" "ELF", 0), 0u) << arch;
  }
}

TEST(Hiprtc, Rocm5RefusesGfx940) {
  // ROCm 5.2's hipRTC (comgr) crashes the process compiling for gfx940; hipcc builds it.
  const runtime::Hiprtc* rtc = runtime::Hiprtc::get();
  if (!rtc) GTEST_SKIP() << runtime::Hiprtc::unavailable_reason();
  if (rtc->version().rfind("5.", 0) != 0) GTEST_SKIP() << "hipRTC " << rtc->version() << " is not ROCm 5's";
  try {
    rtc->compile("#include \"hip/tilec_hip.h\"\n", "k.hip", "gfx940");
    FAIL() << "compiled";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("hipRTC 5."), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("use hipcc"), std::string::npos) << e.what();
  }
}

TEST(Hiprtc, AnErrorCarriesItsLog) {
  const runtime::Hiprtc* rtc = runtime::Hiprtc::get();
  if (!rtc) GTEST_SKIP() << runtime::Hiprtc::unavailable_reason();
  try {
    rtc->compile("#include \"hip/tilec_hip.h\"\nint x = tilec_hip::no_such_function();\n", "bad.hip", "gfx90a");
    FAIL() << "compiled";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("hipRTC could not compile bad.hip for gfx90a"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no_such_function"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilec
