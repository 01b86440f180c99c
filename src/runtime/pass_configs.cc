#include "runtime/pass_configs.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "base/log.h"

namespace tilec::runtime {
namespace {

// The pass configs tilec reads, all switches.
constexpr const char* kTilecSwitches[] = {"tilec.bounds_check", "tilec.specialize_contiguous", "tilec.wgmma",
                                          "tilec.tma",          "tilec.warp_specialize",       "tilec.setmaxnreg",
                                          "tilec.tma_store",    "tilec.persistent",            "tilec.fast_math",
                                          "tilec.safe_global_access", "tilec.pingpong"};

// A TileLang switch that means a tilec one: on sets `tilec_switch` to `on_means`.
struct MappedKey {
  const char* tilelang_key;
  const char* tilec_switch;
  bool on_means;
};

constexpr MappedKey kMappedKeys[] = {
    {"tl.disable_tma_lower", "tilec.tma", false},
    {"tl.disable_warp_specialized", "tilec.warp_specialize", false},
    {"tl.disable_wgmma", "tilec.wgmma", false},
    {"tl.enable_fast_math", "tilec.fast_math", true},
    {"tl.disable_fast_math", "tilec.fast_math", false},  // TileLang's earlier spelling
    {"tl.disable_safe_memory_legalize", "tilec.safe_global_access", false},
};

// Namespaces of TileLang's keys (TileLang's own, and TVM's that TileLang passes on).
constexpr const char* kTileLangNamespaces[] = {"tl.", "tir.", "tirx.", "cuda."};

bool is_switch_value(const std::string& value) {
  static const char* const kValues[] = {"0", "1", "true", "false", "True", "False"};
  return std::find(std::begin(kValues), std::end(kValues), value) != std::end(kValues);
}

void check_switch(const std::string& key, const std::string& value) {
  if (!is_switch_value(value))
    throw std::invalid_argument("pass config '" + key + "' is a switch: True or False, not '" + value + "'");
}

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

bool switch_on(const std::string& value) { return value == "1" || value == "true" || value == "True"; }

std::map<std::string, std::string> normalized_pass_configs(const std::map<std::string, std::string>& given) {
  std::map<std::string, std::string> result;
  std::map<std::string, std::string> set_by;  // tilec switch -> the key that set it
  auto set = [&](const std::string& name, bool on, const std::string& key) {
    auto [it, fresh] = result.emplace(name, on ? "true" : "false");
    if (!fresh && switch_on(it->second) != on)
      throw std::invalid_argument("pass configs '" + set_by[name] + "' and '" + key + "' set '" + name +
                                  "' two ways");
    set_by.emplace(name, key);
  };
  for (const auto& entry : given) {
    const std::string& key = entry.first;
    const std::string& value = entry.second;
    if (starts_with(key, "tilec.")) {
      if (std::find_if(std::begin(kTilecSwitches), std::end(kTilecSwitches),
                       [&](const char* known) { return key == known; }) == std::end(kTilecSwitches)) {
        std::string known;
        for (const char* k : kTilecSwitches) known += (known.empty() ? "" : ", ") + std::string(k);
        throw std::invalid_argument("unknown pass config '" + key + "' (tilec reads: " + known + ")");
      }
      check_switch(key, value);
      set(key, switch_on(value), key);
      continue;
    }
    auto mapped = std::find_if(std::begin(kMappedKeys), std::end(kMappedKeys),
                               [&](const MappedKey& m) { return key == m.tilelang_key; });
    if (mapped != std::end(kMappedKeys)) {
      check_switch(key, value);
      const bool on = switch_on(value) == mapped->on_means;
      log(LogLevel::Debug, "pass config '" + key + "' = " + value + ": " + mapped->tilec_switch + " " +
                               (on ? "on" : "off"));
      set(mapped->tilec_switch, on, key);
      continue;
    }
    if (std::none_of(std::begin(kTileLangNamespaces), std::end(kTileLangNamespaces),
                     [&](const char* prefix) { return starts_with(key, prefix); }))
      throw std::invalid_argument("unknown pass config '" + key +
                                  "' (tilec reads its own 'tilec.*' switches and TileLang's 'tl.*' keys)");
    log(LogLevel::Debug, "pass config '" + key + "' (TileLang's) has no effect in tilec");
  }
  return result;
}

}  // namespace tilec::runtime
