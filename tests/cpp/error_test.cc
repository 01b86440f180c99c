// Every program in tests/error/ must fail to compile with the error its first
// line names: "# error: LINE:COL: message" (the message is a prefix of the
// reported one). Diagnostics are tested like features.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tilec/tilec.h"

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::filesystem::path> error_programs() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(TILEC_SOURCE_DIR "/tests/error"))
    if (entry.path().extension() == ".py") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

class ErrorProgram : public testing::TestWithParam<std::filesystem::path> {};

TEST_P(ErrorProgram, FailsWithItsMessage) {
  const auto& path = GetParam();
  std::string text = read_file(path);
  std::string first = text.substr(0, text.find('\n'));
  const std::string marker = "# error: ";
  ASSERT_EQ(first.rfind(marker, 0), 0u) << path << " must start with '" << marker << "'";
  std::string expected = first.substr(marker.size());
  std::string location = expected.substr(0, expected.find(": "));
  std::string message = expected.substr(location.size() + 2);
  std::string name = path.filename().string();
  try {
    tilec::FunctionSource f = tilec::load_function(text, name, "main");
    tilec::emit(f, {}, tilec::EmitStage::IR);
    FAIL() << name << " compiled, but should fail with: " << expected;
  } catch (const tilec::CompileError& e) {
    std::string what = e.what();
    std::string head = name + ":" + location + ": error: ";
    EXPECT_EQ(what.rfind(head + message, 0), 0u) << "expected: " << head << message << "\ngot:\n" << what;
    // The source line and a caret follow the message.
    EXPECT_NE(what.find("\n    "), std::string::npos) << what;
    EXPECT_NE(what.find('^'), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, ErrorProgram, testing::ValuesIn(error_programs()),
                         [](const testing::TestParamInfo<std::filesystem::path>& info) {
                           return info.param.stem().string();
                         });

}  // namespace
