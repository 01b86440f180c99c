#include "runtime/cuda/nvrtc_compiler.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "base/hash.h"
#include "base/log.h"
#include "base/nvidia_libraries.h"
#include "runtime/embedded_headers.h"

namespace tilec::runtime {
namespace {

namespace fs = std::filesystem;

constexpr int kSuccess = 0;
constexpr const char* kLibraryNames[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// The path of the shared object that holds `symbol`.
std::string library_of(void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

std::string find_include_dir(const std::string& nvrtc_path) {
  std::vector<std::string> candidates;
  if (!nvrtc_path.empty()) {
    const fs::path root = fs::path(nvrtc_path).parent_path().parent_path();
    candidates.push_back((root / "include").string());
    candidates.push_back((root.parent_path() / "cuda_runtime" / "include").string());
  }
  if (const std::string cuda_home = env("CUDA_HOME"); !cuda_home.empty()) {
    candidates.push_back(cuda_home + "/include");
  }
  candidates.push_back("/usr/local/cuda/include");
  for (const char* wheel : {"nvidia/cu13/include", "nvidia/cuda_runtime/include"}) {
    for (std::string& dir : wheel_dirs(wheel)) candidates.push_back(std::move(dir));
  }
  std::error_code error;
  for (const std::string& dir : candidates) {
    if (fs::exists(fs::path(dir) / "cuda_fp16.h", error)) return dir;
  }
  return "";
}

// The virtual architecture of a real one: compute_90a for sm_90a.
std::string virtual_arch(const std::string& arch) { return "compute_" + arch.substr(3); }

void check_arch(const std::string& arch) {
  size_t digits = 0;
  while (3 + digits < arch.size() && std::isdigit(static_cast<unsigned char>(arch[3 + digits]))) {
    ++digits;
  }
  const std::string suffix = arch.size() > 3 + digits ? arch.substr(3 + digits) : "";
  if (arch.rfind("sm_", 0) != 0 || digits < 2 ||
      !(suffix.empty() || suffix == "a" || suffix == "f")) {
    throw std::invalid_argument(
        "invalid GPU architecture '" + arch +
        "': expected sm_ and the compute capability, as in sm_80 or sm_90a");
  }
}

// A `// file:LINE: text` comment that generated code puts before each statement: its text after
// "// ", or "" for any other line. The file part ends at the first ":<digits>:".
std::string source_comment(const std::string& line) {
  const size_t begin = line.find_first_not_of(" \t");
  if (begin == std::string::npos || line.compare(begin, 3, "// ") != 0) return "";
  const std::string text = line.substr(begin + 3);
  for (size_t colon = text.find(':', 1); colon != std::string::npos;
       colon = text.find(':', colon + 1)) {
    size_t end = colon + 1;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end > colon + 1 && end < text.size() && text[end] == ':') return text;
  }
  return "";
}

// The 1-based line number of a log line "<name>(<line>): error: ..." (or "catastrophic
// error"), else 0.
size_t error_line(const std::string& log_line, const std::string& name) {
  if (log_line.rfind(name + "(", 0) != 0) return 0;
  size_t pos = name.size() + 1;
  size_t line = 0;
  const size_t digits_begin = pos;
  while (pos < log_line.size() && std::isdigit(static_cast<unsigned char>(log_line[pos]))) {
    line = line * 10 + static_cast<size_t>(log_line[pos++] - '0');
  }
  if (pos == digits_begin || log_line.compare(pos, 3, "): ") != 0) return 0;
  const std::string rest = log_line.substr(pos + 3);
  return rest.rfind("error", 0) == 0 || rest.rfind("catastrophic error", 0) == 0 ? line : 0;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

// NVRTC's log with, after each error in `source`, the generated line and the kernel
// statement it came from.
std::string annotate_log(const std::string& log, const std::string& source,
                         const std::string& name) {
  const std::vector<std::string> source_lines = split_lines(source);
  std::string out;
  for (const std::string& log_line : split_lines(log)) {
    out += log_line + "\n";
    const size_t line = error_line(log_line, name);
    if (line == 0 || line > source_lines.size()) continue;
    out +=
        "    generated line " + std::to_string(line) + ": " + trim(source_lines[line - 1]) + "\n";
    for (size_t i = line; i-- > 0;) {
      if (std::string comment = source_comment(source_lines[i]); !comment.empty()) {
        out += "    from kernel source " + comment + "\n";
        break;
      }
    }
  }
  return out;
}

// Set once, while NvrtcCompiler::get() initializes its static.
std::string& load_failure() {
  static std::string reason;
  return reason;
}

}  // namespace

const NvrtcCompiler* NvrtcCompiler::get() {
  static const NvrtcCompiler* const compiler = load(&load_failure());
  return compiler;
}

std::string NvrtcCompiler::unavailable_reason() {
  get();
  return load_failure();
}

const NvrtcCompiler* NvrtcCompiler::load(std::string* reason) {
  std::string load_errors;
  void* handle = open_nvidia_library({kLibraryNames, std::end(kLibraryNames)},
                                     {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"}, &load_errors);
  if (handle == nullptr) {
    *reason =
        "cannot load NVRTC (libnvrtc.so, .so.13 or .so.12) from $TILEC_NVIDIA_LIB_DIRS, the "
        "library search path, $CUDA_HOME/lib64, /usr/local/cuda/lib64 or the NVIDIA pip "
        "wheels: install the CUDA toolkit or the NVRTC wheel, or name its directory in "
        "TILEC_NVIDIA_LIB_DIRS" +
        load_errors;
    return nullptr;
  }

  std::unique_ptr<NvrtcCompiler> compiler(new NvrtcCompiler());
  std::string missing;
  const auto bind = [&](auto& function, const char* symbol) {
    void* address = dlsym(handle, symbol);
    if (address == nullptr && missing.empty()) missing = symbol;
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(address);
  };
  bind(compiler->nvrtcGetErrorString_, "nvrtcGetErrorString");
  bind(compiler->nvrtcVersion_, "nvrtcVersion");
  bind(compiler->nvrtcCreateProgram_, "nvrtcCreateProgram");
  bind(compiler->nvrtcDestroyProgram_, "nvrtcDestroyProgram");
  bind(compiler->nvrtcCompileProgram_, "nvrtcCompileProgram");
  bind(compiler->nvrtcGetProgramLogSize_, "nvrtcGetProgramLogSize");
  bind(compiler->nvrtcGetProgramLog_, "nvrtcGetProgramLog");
  bind(compiler->nvrtcGetCUBINSize_, "nvrtcGetCUBINSize");
  bind(compiler->nvrtcGetCUBIN_, "nvrtcGetCUBIN");
  bind(compiler->nvrtcGetPTXSize_, "nvrtcGetPTXSize");
  bind(compiler->nvrtcGetPTX_, "nvrtcGetPTX");
  compiler->library_path_ = library_of(reinterpret_cast<void*>(compiler->nvrtcVersion_));
  if (!missing.empty()) {
    *reason = "NVRTC " + compiler->library_path_ + " has no " + missing + ": it is too old";
    dlclose(handle);
    return nullptr;
  }
  if (compiler->nvrtcVersion_(&compiler->major_, &compiler->minor_) != kSuccess) {
    *reason = "nvrtcVersion failed in " + compiler->library_path_;
    dlclose(handle);
    return nullptr;
  }
  compiler->include_dir_ = find_include_dir(compiler->library_path_);
  log(LogLevel::Debug, "NVRTC " + compiler->version() + " from " + compiler->library_path_ +
                           ", CUDA headers from " +
                           (compiler->include_dir_.empty() ? "nowhere" : compiler->include_dir_));
  return compiler.release();
}

std::string NvrtcCompiler::version() const {
  return std::to_string(major_) + "." + std::to_string(minor_);
}

std::vector<std::string> NvrtcCompiler::options_for(const std::string& include_dir, const std::string& arch,
                                                   const std::vector<std::string>& extra_options) {
  std::vector<std::string> options = {"-std=c++17", "--gpu-architecture=" + arch, "-default-device",
                                      "-lineinfo"};
  if (!include_dir.empty()) options.push_back("-I" + include_dir);
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  return options;
}

std::vector<std::string> NvrtcCompiler::options(
    const std::string& arch, const std::vector<std::string>& extra_options) const {
  return options_for(include_dir_, arch, extra_options);
}

std::string NvrtcCompiler::identity_of(const std::string& version, const std::string& library_path,
                                       const std::string& include_dir, const std::string& arch,
                                       const std::vector<std::string>& extra_options) {
  std::string identity = "nvrtc " + version + " " + library_path;
  for (const std::string& option : options_for(include_dir, arch, extra_options)) identity += "\n" + option;
  return identity;
}

std::string NvrtcCompiler::identity(const std::string& arch,
                                    const std::vector<std::string>& extra_options) const {
  return identity_of(version(), library_path_, include_dir_, arch, extra_options);
}

CompileResult NvrtcCompiler::compile(const std::string& source, const std::string& name,
                                     const std::string& arch,
                                     const std::vector<std::string>& extra_options,
                                     const std::vector<NvrtcHeader>& extra_headers) const {
  return run(source, name, arch, extra_options, extra_headers, false);
}

CompileResult NvrtcCompiler::ptx(const std::string& source, const std::string& name,
                                 const std::string& arch,
                                 const std::vector<std::string>& extra_options,
                                 const std::vector<NvrtcHeader>& extra_headers) const {
  return run(source, name, arch, extra_options, extra_headers, true);
}

void NvrtcCompiler::check(Result result, const char* what) const {
  if (result != kSuccess) {
    throw std::runtime_error(std::string("NVRTC error ") + nvrtcGetErrorString_(result) + " in " +
                             what);
  }
}

CompileResult NvrtcCompiler::run(const std::string& source, const std::string& name,
                                 const std::string& arch,
                                 const std::vector<std::string>& extra_options,
                                 const std::vector<NvrtcHeader>& extra_headers, bool to_ptx) const {
  check_arch(arch);
  const std::string target = to_ptx ? virtual_arch(arch) : arch;
  StageTimer timer("nvrtc " + name + " for " + target);
  std::vector<const char*> header_texts;
  std::vector<const char*> header_names;
  for (const EmbeddedHeader& header : embedded_headers()) {
    header_texts.push_back(header.text.c_str());
    header_names.push_back(header.path);
  }
  for (const NvrtcHeader& header : extra_headers) {
    header_texts.push_back(header.text.c_str());
    header_names.push_back(header.name.c_str());
  }

  struct Owner {
    const NvrtcCompiler* compiler;
    Program program = nullptr;
    ~Owner() {
      if (program != nullptr) compiler->nvrtcDestroyProgram_(&program);
    }
  } owner{this};
  check(nvrtcCreateProgram_(&owner.program, source.c_str(), name.c_str(),
                            static_cast<int>(header_texts.size()), header_texts.data(),
                            header_names.data()),
        "nvrtcCreateProgram");
  const std::vector<std::string> option_list = options(target, extra_options);
  std::vector<const char*> option_args;
  std::string option_text;
  for (const std::string& option : option_list) {
    option_args.push_back(option.c_str());
    option_text += " " + option;
  }
  log(LogLevel::Debug, "nvrtc " + name + " options:" + option_text);
  const Result compiled =
      nvrtcCompileProgram_(owner.program, static_cast<int>(option_args.size()), option_args.data());

  size_t log_size = 0;
  check(nvrtcGetProgramLogSize_(owner.program, &log_size), "nvrtcGetProgramLogSize");
  std::string program_log(log_size, '\0');
  check(nvrtcGetProgramLog_(owner.program, program_log.data()), "nvrtcGetProgramLog");
  while (!program_log.empty() && (program_log.back() == '\0' || program_log.back() == '\n')) {
    program_log.pop_back();
  }
  if (compiled != kSuccess) {
    throw std::runtime_error("NVRTC cannot compile " + name + " for " + target + " (" +
                             nvrtcGetErrorString_(compiled) + "):\n" +
                             annotate_log(program_log, source, name));
  }

  CompileResult result;
  result.log = std::move(program_log);
  size_t size = 0;
  if (to_ptx) {
    check(nvrtcGetPTXSize_(owner.program, &size), "nvrtcGetPTXSize");
    result.binary.resize(size);
    check(nvrtcGetPTX_(owner.program, result.binary.data()), "nvrtcGetPTX");
    while (!result.binary.empty() && result.binary.back() == '\0') result.binary.pop_back();
  } else {
    check(nvrtcGetCUBINSize_(owner.program, &size), "nvrtcGetCUBINSize");
    result.binary.resize(size);
    check(nvrtcGetCUBIN_(owner.program, result.binary.data()), "nvrtcGetCUBIN");
  }
  return result;
}

}  // namespace tilec::runtime
