#include "runtime/compile_flags.h"

#include <algorithm>
#include <stdexcept>

#include "base/log.h"

namespace tilec::runtime {
namespace {

enum class Kind {
  Prefixed,       // -DX, -D X, --define-macro=X: NVRTC's short form, value attached
  Valued,         // --maxrregcount=N or --maxrregcount N: NVRTC's long form with '='
  Switch,         // passed as NVRTC's spelling
  Ptxas,          // nvcc's comma-separated ptxas list: one --ptxas-options each
  FastMath,       // the "tilec.fast_math" switch
  AlreadyOn,      // in every tilec build
  NoEffect,       // nvcc's own
  NoEffectValued, // nvcc's own, with a value
  Refused,
};

struct Rule {
  std::vector<std::string> names;  // the spellings, without '=' and value
  Kind kind;
  std::string nvrtc;  // NVRTC's spelling (Prefixed: "-D"); Refused: why
  std::string why;    // NoEffect*, AlreadyOn: why it has none
};

const std::vector<Rule>& rules() {
  static const std::string kHost = "NVRTC compiles device code only; there is no host compiler to pass it to";
  static const std::vector<Rule> table = {
      {{"-D", "--define-macro"}, Kind::Prefixed, "-D", ""},
      {{"-U", "--undefine-macro"}, Kind::Prefixed, "-U", ""},
      {{"-I", "--include-path"}, Kind::Prefixed, "-I", ""},
      {{"--maxrregcount", "-maxrregcount"}, Kind::Valued, "--maxrregcount", ""},
      {{"--ftz", "-ftz"}, Kind::Valued, "--ftz", ""},
      {{"--prec-div", "-prec-div"}, Kind::Valued, "--prec-div", ""},
      {{"--prec-sqrt", "-prec-sqrt"}, Kind::Valued, "--prec-sqrt", ""},
      {{"--fmad", "-fmad"}, Kind::Valued, "--fmad", ""},
      {{"--std", "-std"}, Kind::Valued, "--std", ""},
      {{"--diag-suppress", "-diag-suppress"}, Kind::Valued, "--diag-suppress", ""},
      {{"--diag-error", "-diag-error"}, Kind::Valued, "--diag-error", ""},
      {{"--diag-warn", "-diag-warn"}, Kind::Valued, "--diag-warn", ""},
      {{"-G", "--device-debug"}, Kind::Switch, "--device-debug", ""},
      {{"-w", "--disable-warnings"}, Kind::Switch, "--disable-warnings", ""},
      {{"--restrict", "-restrict"}, Kind::Switch, "--restrict", ""},
      {{"--extra-device-vectorization", "-extra-device-vectorization"}, Kind::Switch,
       "--extra-device-vectorization", ""},
      {{"--ptxas-options", "-Xptxas"}, Kind::Ptxas, "--ptxas-options", ""},
      {{"--use_fast_math", "-use_fast_math"}, Kind::FastMath, "", ""},
      {{"-lineinfo", "--generate-line-info"}, Kind::AlreadyOn, "", "tilec builds every CUDA kernel with -lineinfo"},
      {{"--expt-relaxed-constexpr", "-expt-relaxed-constexpr", "--expt-extended-lambda", "-expt-extended-lambda",
        "--extended-lambda", "-extended-lambda"},
       Kind::NoEffect,
       "",
       "an nvcc language extension NVRTC lacks; tilec's generated code does not use it"},
      {{"-Xcompiler", "--compiler-options"}, Kind::NoEffectValued, "", kHost},
      {{"-v", "--verbose", "-keep", "--keep", "-res-usage", "--resource-usage"},
       Kind::NoEffect,
       "",
       "an option of the nvcc driver, which NVRTC does not run"},
      {{"-arch", "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code"},
       Kind::Refused,
       "tilec builds for the compile's arch (jit's arch=, else the current device's): pass it there",
       ""},
  };
  return table;
}

const Rule* rule_named(const std::string& name) {
  for (const Rule& rule : rules())
    if (std::find(rule.names.begin(), rule.names.end(), name) != rule.names.end()) return &rule;
  return nullptr;
}

// nvcc's -O0..-O3 (and -O), -Wanything: families, not names.
const char* no_effect_family(const std::string& flag) {
  if (flag == "-O" || (flag.size() == 3 && flag.rfind("-O", 0) == 0 && flag[2] >= '0' && flag[2] <= '3'))
    return "nvcc's host optimization level; NVRTC optimizes device code fully (as ptxas's default -O3) and "
           "takes no -O";
  if (flag.size() > 2 && flag.rfind("-W", 0) == 0) return "a host compiler warning flag; NVRTC compiles no host code";
  return nullptr;
}

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

}  // namespace

NvrtcFlags nvrtc_flags(const std::vector<std::string>& flags) {
  NvrtcFlags result;
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& flag = flags[i];
    if (const char* why = no_effect_family(flag)) {
      log(LogLevel::Debug, "compile flag '" + flag + "' has no effect under NVRTC: " + why);
      continue;
    }
    // The name and the value written with it: "--name=value", or for -D/-U/-I "-Dvalue".
    std::string name = flag;
    std::string value;
    bool has_value = false;
    const size_t eq = flag.find('=');
    const Rule* rule = nullptr;
    if (flag.size() > 2 && flag[0] == '-' && flag[1] != '-' && (rule = rule_named(flag.substr(0, 2))) &&
        rule->kind == Kind::Prefixed) {
      name = flag.substr(0, 2);
      value = flag.substr(2);
      has_value = true;
    } else {
      if (eq != std::string::npos) {
        name = flag.substr(0, eq);
        value = flag.substr(eq + 1);
        has_value = true;
      }
      rule = rule_named(name);
    }
    if (!rule)
      throw std::invalid_argument("compile flag '" + flag +
                                  "' is not one tilec knows (docs/language.md lists the nvcc flags it passes to "
                                  "NVRTC and those it accepts with no effect)");
    const bool takes_value = rule->kind == Kind::Prefixed || rule->kind == Kind::Valued ||
                             rule->kind == Kind::Ptxas || rule->kind == Kind::NoEffectValued;
    if (takes_value && !has_value) {
      if (i + 1 == flags.size())
        throw std::invalid_argument("compile flag '" + flag + "' needs a value (" + flag + "=VALUE, or the next flag)");
      value = flags[++i];
      has_value = true;
    }
    if (!takes_value && has_value && rule->kind != Kind::Refused)
      throw std::invalid_argument("compile flag '" + flag + "' takes no value");
    switch (rule->kind) {
      case Kind::Prefixed:
        result.nvrtc_options.push_back(rule->nvrtc + value);
        break;
      case Kind::Valued:
        result.nvrtc_options.push_back(rule->nvrtc + "=" + value);
        break;
      case Kind::Switch:
        result.nvrtc_options.push_back(rule->nvrtc);
        break;
      case Kind::Ptxas:
        for (const std::string& item : split_commas(value)) result.nvrtc_options.push_back(rule->nvrtc + "=" + item);
        break;
      case Kind::FastMath:
        result.fast_math = true;
        break;
      case Kind::AlreadyOn:
        log(LogLevel::Debug, "compile flag '" + flag + "' is on already: " + rule->why);
        break;
      case Kind::NoEffect:
      case Kind::NoEffectValued:
        log(LogLevel::Debug, "compile flag '" + flag + (rule->kind == Kind::NoEffectValued ? " " + value : "") +
                                 "' has no effect under NVRTC: " + rule->why);
        break;
      case Kind::Refused:
        throw std::invalid_argument("compile flag '" + flag + "' is not accepted: " + rule->nvrtc);
    }
  }
  return result;
}

}  // namespace tilec::runtime
