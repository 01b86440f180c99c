#include "runtime/cpu/host_compiler.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "base/hash.h"
#include "base/log.h"
#include "runtime/cache.h"
#include "runtime/process.h"

namespace tilec::runtime {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// The CPU's feature list, which -march=native turns into instructions: a library built for
// one CPU must not be loaded on another that shares the cache directory.
std::string cpu_features() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0 ||
        line.rfind("isa", 0) == 0) {
      return sha256_hex(line).substr(0, 16);
    }
  }
  return "unknown";
}

// Whether an OpenMP loop builds and links with these flags. The answer is kept in the cache,
// so only the first process with this compiler pays for the trial build.
bool openmp_builds(const std::vector<std::string>& command, const std::vector<std::string>& flags,
                   const std::string& version) {
  const std::string key = sha256_hex(join(command) + "\n" + version + "\n" + join(flags));
  const std::string answer_path = cache_subdir("cpu") + "/openmp-" + key;
  if (std::optional<std::string> answer = read_verified(answer_path)) return *answer == "yes";

  const std::string source = unique_temp_path(answer_path) + ".cc";
  const std::string library = unique_temp_path(answer_path) + ".so";
  write_atomically(source,
                   "#include <omp.h>\n"
                   "extern \"C\" int tilec_openmp_probe(int n) {\n"
                   "  int sum = 0;\n"
                   "#pragma omp parallel for reduction(+ : sum)\n"
                   "  for (int i = 0; i < n; ++i) sum += i;\n"
                   "  return sum + omp_get_max_threads();\n"
                   "}\n");
  std::vector<std::string> argv = command;
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {source, "-o", library});
  const bool builds = run_process(argv).ok();
  std::remove(source.c_str());
  std::remove(library.c_str());
  store_verified(answer_path, builds ? "yes" : "no");
  return builds;
}

}  // namespace

HostCompiler HostCompiler::find() {
  std::vector<std::vector<std::string>> candidates;
  if (std::vector<std::string> cxx = split_words(env("CXX")); !cxx.empty()) {
    candidates.push_back(std::move(cxx));
  }
  for (const char* name : {"c++", "g++", "clang++"}) candidates.push_back({name});

  std::vector<std::string> tried;
  for (size_t i = 0; i < candidates.size(); ++i) {
    std::vector<std::string> argv = candidates[i];
    argv.push_back("--version");
    const ProcessResult version = run_process(argv);
    tried.push_back(join(candidates[i]) + " (" + version.describe() + ")");
    if (!version.ok()) {
      if (i == 0 && !env("CXX").empty()) {
        log(LogLevel::Warning, "$CXX=" + env("CXX") + " does not run (" + version.describe() +
                                   "); trying c++, g++, clang++");
      }
      continue;
    }
    HostCompiler compiler;
    compiler.command_ = candidates[i];
    // -fno-strict-aliasing: a block's shared buffers share the bytes of one array (as on a GPU),
    // one type's after another's
    compiler.flags_ = {"-O3", "-march=native", "-fno-strict-aliasing", "-fopenmp", "-fPIC", "-shared", "-std=c++17",
                       "-w"};
    for (std::string& flag : split_words(env("TILEC_CXXFLAGS"))) {
      compiler.flags_.push_back(std::move(flag));
    }
    const std::string version_line = version.output.substr(0, version.output.find('\n'));
    compiler.openmp_ = openmp_builds(compiler.command_, compiler.flags_, version_line);
    if (!compiler.openmp_) {
      compiler.flags_.erase(std::find(compiler.flags_.begin(), compiler.flags_.end(), "-fopenmp"));
      log(LogLevel::Warning, "OpenMP does not build with " + join(compiler.command_) +
                                 "; CPU kernels will run on one thread");
    }
    compiler.identity_ = version_line + "; flags: " + join(compiler.flags_);
    if (std::find(compiler.flags_.begin(), compiler.flags_.end(), "-march=native") !=
        compiler.flags_.end()) {
      compiler.identity_ += "; cpu: " + cpu_features();
    }
    log(LogLevel::Debug, "host compiler: " + compiler.identity_);
    return compiler;
  }
  std::string message = "no host C++ compiler runs; set CXX. Tried:";
  for (const std::string& attempt : tried) message += "\n  " + attempt;
  throw std::runtime_error(message);
}

const HostCompiler& HostCompiler::get() {
  static const HostCompiler compiler = find();
  return compiler;
}

void HostCompiler::compile(const std::string& source_path, const std::string& output_path,
                           const std::vector<std::string>& include_dirs) const {
  std::vector<std::string> argv = command_;
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  for (const std::string& dir : include_dirs) argv.push_back("-I" + dir);
  argv.insert(argv.end(), {source_path, "-o", output_path});
  log(LogLevel::Debug, "compiling: " + join(argv));
  const ProcessResult result = run_process(argv);
  if (!result.ok()) {
    throw std::runtime_error("host compiler failed (" + result.describe() + "): " + join(argv) +
                             "\n" + first_lines(result.output, 40));
  }
}

bool HostCompiler::precompile_header(const std::string& header_path,
                                     const std::string& output_path) const {
  // clang reads .gch files only through -include-pch, which generated code doesn't use.
  if (identity_.find("clang") != std::string::npos) return false;
  std::vector<std::string> argv = command_;
  for (const std::string& flag : flags_)
    if (flag != "-shared") argv.push_back(flag);
  argv.insert(argv.end(), {"-x", "c++-header", header_path, "-o", output_path});
  log(LogLevel::Debug, "building the precompiled header: " + join(argv));
  const ProcessResult result = run_process(argv);
  if (!result.ok()) log(LogLevel::Debug, "precompiled header not built: " + first_lines(result.output, 5));
  return result.ok();
}

}  // namespace tilec::runtime
