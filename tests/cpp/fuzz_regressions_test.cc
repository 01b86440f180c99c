// Every input the compile fuzzer ever found (tests/fuzz/regressions/compile/*.py)
// compiles or fails with a located error, in every test run. Inputs of bugs
// not fixed yet wait in regressions/compile/pending/, which this test leaves
// out (tests/fuzz/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz_input.h"

namespace {

std::vector<std::filesystem::path> regressions() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(TILEC_SOURCE_DIR "/tests/fuzz/regressions/compile"))
    if (entry.is_regular_file() && entry.path().extension() == ".py") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

class FuzzRegression : public testing::TestWithParam<std::filesystem::path> {};

TEST_P(FuzzRegression, CompilesOrFailsWithALocatedError) {
  std::ifstream in(GetParam(), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  auto input = tilec::fuzz::parse_fuzz_input(text.str(), GetParam().filename().string());
  ASSERT_TRUE(input) << GetParam() << ": its header is not one the fuzzer reads (fuzz_input.h)";
  EXPECT_EQ(tilec::fuzz::compile_failure(*input), "") << GetParam();
}

// Every finding fixed so far may still be pending: an empty folder is no error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FuzzRegression);
INSTANTIATE_TEST_SUITE_P(Inputs, FuzzRegression, testing::ValuesIn(regressions()),
                         [](const testing::TestParamInfo<std::filesystem::path>& info) {
                           std::string name = info.param.stem().string();
                           std::replace_if(name.begin(), name.end(),
                                           [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                                           '_');
                           return name;
                         });

}  // namespace
