// Each kernel in tests/golden/kernels/ is compiled to its tile IR, its lowered
// IR and its CPU source, and to its CUDA IR and source for sm_90a (no GPU
// needed), and each is compared with the file stored next to it
// (NAME.tile-ir.txt, NAME.ir.txt, NAME.cpu.cc, NAME.cuda-ir.txt, NAME.cu). The kernel's first lines name
// the function ("# func: NAME") and its constants ("# defines: M=64 N=64");
// "# source: examples/x.py" takes the kernel from that file of the repository
// instead of the lines that follow.
// TILEC_UPDATE_GOLDEN=1 rewrites the stored files; review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tilec/tilec.h"

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string header_value(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line) && line.rfind("#", 0) == 0)
    if (line.rfind("# " + key + ": ", 0) == 0) return line.substr(key.size() + 4);
  return "";
}

std::vector<fs::path> golden_kernels() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(TILEC_SOURCE_DIR "/tests/golden/kernels"))
    if (entry.path().extension() == ".py") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

void compare_or_update(const fs::path& expected_path, const std::string& actual) {
  const char* update = std::getenv("TILEC_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(expected_path) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(expected_path)) << expected_path << " is missing; run with TILEC_UPDATE_GOLDEN=1";
  EXPECT_EQ(read_file(expected_path), actual) << "differs from " << expected_path;
}

class GoldenKernel : public testing::TestWithParam<fs::path> {};

TEST_P(GoldenKernel, MatchesStoredText) {
  const fs::path& path = GetParam();
  std::string text = read_file(path);
  std::string source_file = header_value(text, "source");
  std::string source_text = source_file.empty() ? text : read_file(fs::path(TILEC_SOURCE_DIR) / source_file);
  std::string source_name = source_file.empty() ? path.filename().string() : fs::path(source_file).filename().string();
  std::map<std::string, tilec::Value> defines;
  std::istringstream defs(header_value(text, "defines"));
  std::string def;
  while (defs >> def) {
    auto eq = def.find('=');
    defines[def.substr(0, eq)] = tilec::parse_define_value(def.substr(eq + 1));
  }
  tilec::FunctionSource f = tilec::load_function(source_text, source_name, header_value(text, "func"), defines);
  fs::path base = path;
  base.replace_extension();
  compare_or_update(base.string() + ".tile-ir.txt", tilec::emit(f, {}, tilec::EmitStage::TileIR));
  compare_or_update(base.string() + ".ir.txt", tilec::emit(f, {}, tilec::EmitStage::IR));
  compare_or_update(base.string() + ".cpu.cc", tilec::emit(f, {}, tilec::EmitStage::Source));
  tilec::CompileOptions cuda;
  cuda.target = "cuda";
  cuda.arch = "sm_90a";
  compare_or_update(base.string() + ".cuda-ir.txt", tilec::emit(f, cuda, tilec::EmitStage::IR));
  compare_or_update(base.string() + ".cu", tilec::emit(f, cuda, tilec::EmitStage::Source));
}

INSTANTIATE_TEST_SUITE_P(Kernels, GoldenKernel, testing::ValuesIn(golden_kernels()),
                         [](const testing::TestParamInfo<fs::path>& info) {
                           return info.param.stem().string();
                         });

}  // namespace
