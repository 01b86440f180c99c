#include "runtime/hip/hipcc.h"

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "base/log.h"
#include "runtime/cache.h"
#include "runtime/embedded_headers_dir.h"
#include "runtime/process.h"

namespace tilec::runtime {
namespace {

struct Found {
  std::unique_ptr<Hipcc> hipcc;
  std::string reason;
};

}  // namespace

class HipccFinder {
 public:
  static Found find() {
    std::vector<std::string> candidates;
    if (const char* chosen = std::getenv("TILEC_HIPCC"); chosen && *chosen) candidates = {chosen};
    else candidates = {"hipcc", "/opt/rocm/bin/hipcc"};
    std::string tried;
    for (const std::string& program : candidates) {
      const ProcessResult version = run_process({program, "--version"});
      if (version.ok()) {
        Found found{std::make_unique<Hipcc>(), ""};
        found.hipcc->program_ = program;
        found.hipcc->version_ = first_lines(version.output, 1);
        while (!found.hipcc->version_.empty() && found.hipcc->version_.back() == '\n') found.hipcc->version_.pop_back();
        return found;
      }
      tried += (tried.empty() ? "" : ", ") + program + " (" + version.describe() + ")";
    }
    return {nullptr, "no hipcc runs (tried " + tried + "); install ROCm's hipcc (Debian: apt-get install hipcc) "
                     "or set $TILEC_HIPCC"};
  }
};

namespace {

const Found& found() {
  static const Found f = HipccFinder::find();
  return f;
}

}  // namespace

const Hipcc* Hipcc::get() { return found().hipcc.get(); }
std::string Hipcc::unavailable_reason() { return found().reason; }

std::vector<std::string> Hipcc::options(const std::string& arch) const {
  return {"-std=c++17", "-O3", "--offload-arch=" + arch, "--cuda-device-only", "-Wno-unused-command-line-argument"};
}

std::string Hipcc::assembly(const std::string& source, const std::string& arch) const {
  return build(source, arch, true);
}

std::string Hipcc::code_object(const std::string& source, const std::string& arch) const {
  return build(source, arch, false);
}

std::string Hipcc::build(const std::string& source, const std::string& arch, bool assembly) const {
  const std::string headers = write_embedded_headers();
  const std::string base = unique_temp_path(cache_subdir("hip") + "/build");
  const std::string input = base + ".hip", output = base + (assembly ? ".s" : ".co");
  struct Cleanup {
    std::vector<std::string> paths;
    ~Cleanup() {
      std::error_code ignored;
      for (const auto& p : paths) std::filesystem::remove(p, ignored);
    }
  } cleanup{{input, output}};
  write_atomically(input, source);
  std::vector<std::string> argv = {program_};
  for (std::string& option : options(arch)) argv.push_back(std::move(option));
  argv.insert(argv.end(), {assembly ? "-S" : "--genco", "-I" + headers, "-o", output, input});
  log(LogLevel::Debug, "compiling: " + join(argv));
  const ProcessResult result = run_process(argv);
  if (!result.ok())
    throw std::runtime_error("hipcc failed (" + result.describe() + "): " + join(argv) + "\n" +
                             first_lines(result.output, 40));
  std::optional<std::string> built = read_file(output);
  if (!built) throw std::runtime_error("hipcc wrote no " + output + ": " + join(argv));
  return *built;
}

}  // namespace tilec::runtime
