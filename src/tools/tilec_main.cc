// The `tilec` command line: compiles a kernel of a Python file and prints a stage.
//
//   tilec compile FILE.py [--func NAME] [-D NAME=VALUE ...] [--target cpu|cuda|hip]
//                         [--arch sm_80|sm_90a|gfx90a|...] [--emit tile-ir|ir|source|ptx|asm]
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "target/target.h"
#include "tilec/tilec.h"

namespace {

constexpr const char* kUsage =
    "usage: tilec compile FILE.py [--func NAME] [-D NAME=VALUE ...] [--target cpu|cuda|hip]\n"
    "                             [--arch sm_80|sm_90a|gfx90a|...] [--emit tile-ir|ir|source|ptx|asm]\n"
    "       tilec --version\n"
    "       tilec --help\n";

constexpr const char* kHelp =
    "\n"
    "compile  prints one stage of compiling a kernel of FILE.py (default: the\n"
    "         generated source): the function NAME, or the one top-level\n"
    "         @jit / @T.prim_func function. -D sets a module-level constant\n"
    "         (an int, float, True/False, None, a dtype name or a string).\n"
    "         --target is cpu (default), cuda or hip; --arch is the GPU\n"
    "         architecture: of cuda (default: this machine's GPU, else sm_90a),\n"
    "         of hip gfx90a, gfx940 or gfx906 (needed). No GPU is needed: ptx\n"
    "         (cuda only) is compiled with NVRTC; asm is PTX for cuda and AMDGCN\n"
    "         assembly for hip, built with hipcc.\n";

// The architecture of --target cuda without --arch.
constexpr const char* kDefaultArchWithoutGpu = "sm_90a";

struct UsageError {
  std::string message;
};

struct CompileCommand {
  std::string file;
  std::string func;
  std::map<std::string, tilec::Value> defines;
  tilec::CompileOptions options;
  tilec::EmitStage stage = tilec::EmitStage::Source;
};

tilec::EmitStage stage_named(const std::string& name) {
  if (name == "tile-ir") return tilec::EmitStage::TileIR;
  if (name == "ir") return tilec::EmitStage::IR;
  if (name == "source") return tilec::EmitStage::Source;
  if (name == "ptx") return tilec::EmitStage::PTX;
  if (name == "asm") return tilec::EmitStage::Asm;
  throw UsageError{"--emit takes tile-ir, ir, source, ptx or asm, not '" + name + "'"};
}

void add_define(CompileCommand& command, const std::string& definition) {
  auto eq = definition.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError{"-D takes NAME=VALUE, not '" + definition + "'"};
  command.defines[definition.substr(0, eq)] =
      tilec::parse_define_value(definition.substr(eq + 1));
}

CompileCommand parse_compile(const std::vector<std::string>& args) {
  CompileCommand command;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError{arg + " needs a value"};
      return args[++i];
    };
    if (arg == "--func") {
      command.func = value();
    } else if (arg == "--target") {
      command.options.target = value();
    } else if (arg == "--arch") {
      command.options.arch = value();
    } else if (arg == "--emit") {
      command.stage = stage_named(value());
    } else if (arg == "-D") {
      add_define(command, value());
    } else if (arg.rfind("-D", 0) == 0) {
      add_define(command, arg.substr(2));
    } else if (!arg.empty() && arg[0] == '-') {
      throw UsageError{"unknown option " + arg};
    } else if (command.file.empty()) {
      command.file = arg;
    } else {
      throw UsageError{"one FILE at a time ('" + command.file + "' and '" + arg + "')"};
    }
  }
  if (command.file.empty()) throw UsageError{"compile needs a FILE"};
  tilec::Target target;
  try {
    tilec::check_options(command.options);
    target = tilec::parse_target(command.options.target, command.options.arch);
  } catch (const std::invalid_argument& e) {
    throw UsageError{e.what()};
  }
  if (command.stage == tilec::EmitStage::PTX && !target.is_cuda()) throw UsageError{"--emit ptx is for --target cuda"};
  if (command.stage == tilec::EmitStage::Asm && target.is_cpu()) throw UsageError{"--emit asm is for --target cuda or hip"};
  if (target.is_cuda() && target.arch.empty() && !tilec::cuda_available()) command.options.arch = kDefaultArchWithoutGpu;
  return command;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int run_compile(const CompileCommand& command) {
  auto text = read_file(command.file);
  if (!text) {
    std::cerr << "tilec: cannot read " << command.file << "\n";
    return 1;
  }
  tilec::FunctionSource func =
      tilec::load_function(*text, command.file, command.func, command.defines);
  std::string output = tilec::emit(func, command.options, command.stage);
  std::cout << output;
  if (!output.empty() && output.back() != '\n') std::cout << '\n';
  return 0;
}

int run(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError{"no command"};
  if (args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage << kHelp;
    return 0;
  }
  if (args[0] == "--version") {
    std::cout << "tilec " << tilec::version() << "\n";
    return 0;
  }
  if (args[0] == "compile") return run_compile(parse_compile({args.begin() + 1, args.end()}));
  throw UsageError{"unknown command '" + args[0] + "'"};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run({argv + 1, argv + argc});
  } catch (const UsageError& e) {
    std::cerr << "tilec: " << e.message << "\n" << kUsage;
    return 2;
  } catch (const tilec::CompileError& e) {
    std::cerr << e.what();
    if (!std::string_view(e.what()).ends_with('\n')) std::cerr << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tilec: " << e.what() << "\n";
    return 1;
  }
}
