// libFuzzer target over the compile entry point: each input (fuzz_input.h) is
// kernel source with its bindings, target and arch, compiled to generated
// source (emit: no host compiler, no NVRTC, nothing loaded). Every input must
// compile or fail with a located tilec error; anything else (a crash, a
// sanitizer report, an uncaught exception, a hang past -timeout) is a finding.
//
// TILEC_FUZZ_KNOWN_FAILURES names a file of failure signatures, one a line
// (fuzz_input.h's failure_signature): failures of those kinds are bugs already
// known (their inputs wait in tests/fuzz/regressions/compile/pending/), which
// the run passes over so that it can find others. scripts/fuzz.sh writes it.
//
//   scripts/fuzz.sh compile        (builds build-fuzz, runs from the seed corpus)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "fuzz_input.h"

namespace {

std::set<std::string>& known_failures() {
  static std::set<std::string> known;
  return known;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Nothing the fuzz loop does may depend on the caller's environment.
  unsetenv("TILEC_BOUNDS_CHECK");
  unsetenv("TILEC_DUMP_IR");
  unsetenv("TILEC_TIME_PASSES");
  if (const char* path = std::getenv("TILEC_FUZZ_KNOWN_FAILURES")) {
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "tilec compile fuzzer: can't read TILEC_FUZZ_KNOWN_FAILURES=%s\n", path);
      std::exit(2);
    }
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) known_failures().insert(line);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto input = tilec::fuzz::parse_fuzz_input(text, "fuzz_input.py");
  if (!input) return -1;  // not an input worth keeping in the corpus
  std::string failure = tilec::fuzz::compile_failure(*input);
  if (failure.empty()) return 0;
  std::string signature = tilec::fuzz::failure_signature(failure);
  if (known_failures().count(signature)) return -1;
  std::string report = "tilec compile fuzzer: " + failure + "\ntilec compile fuzzer signature: " + signature + "\n";
  std::fwrite(report.data(), 1, report.size(), stderr);  // whole, NULs included
  std::abort();
}
