// The host C++ compiler that builds generated CPU kernels into shared objects.
#pragma once

#include <string>
#include <vector>

namespace tilec::runtime {

class HostCompiler {
 public:
  // Looks for the compiler now: $CXX (which may hold a launcher, "ccache g++"), else the
  // first of c++, g++, clang++ on PATH that runs. Flags are -O3 -march=native
  // -fno-strict-aliasing -fopenmp -fPIC -shared -std=c++17 -w, then the words of $TILEC_CXXFLAGS; -fopenmp is dropped
  // when it does not build with this compiler (generated code is still correct without it).
  // Throws std::runtime_error when no compiler runs.
  static HostCompiler find();
  // The compiler found at first use, kept for the rest of the process.
  static const HostCompiler& get();

  // The program and any leading words of $CXX.
  const std::vector<std::string>& command() const { return command_; }
  const std::vector<std::string>& flags() const { return flags_; }
  bool has_openmp() const { return openmp_; }
  // What shapes the compiler's output, for cache keys: the first line of `--version`, the
  // flags, and with -march=native the host CPU's feature list.
  const std::string& identity() const { return identity_; }

  // Builds `source_path` into the shared object `output_path`. Throws std::runtime_error
  // with the command, its exit status and the first 40 lines of its output on failure.
  void compile(const std::string& source_path, const std::string& output_path,
               const std::vector<std::string>& include_dirs) const;

  // Builds `header_path` into a precompiled header at `output_path` with the flags kernels
  // are built with (GCC uses HEADER.gch beside HEADER when they match). Returns false, having
  // built nothing, for compilers without GCC-style precompiled headers or on failure.
  bool precompile_header(const std::string& header_path, const std::string& output_path) const;

 private:
  std::vector<std::string> command_;
  std::vector<std::string> flags_;
  bool openmp_ = false;
  std::string identity_;
};

}  // namespace tilec::runtime
