// Leveled logging to stderr ("[tilec] DEBUG message") and stage timing.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/nvtx.h"

namespace tilec {

enum class LogLevel { Error, Warning, Info, Debug };

// The level starts from $TILEC_LOG_LEVEL (else Warning); messages above it are dropped.
void set_log_level(LogLevel level);
LogLevel log_level();
bool log_enabled(LogLevel level);

// "error", "warning"/"warn", "info", "debug", in any case.
std::optional<LogLevel> parse_log_level(std::string_view name);

// Writes one whole line, never interleaved with another thread's.
void log(LogLevel level, const std::string& message);

// Logs `message` as a warning the first time this process sees `key`.
void warn_once(const std::string& key, const std::string& message);

// Logs "<stage>: 12.34 ms" at Debug when it goes out of scope; an NVTX range (base/nvtx.h)
// spans it when those are on.
class StageTimer {
 public:
  explicit StageTimer(std::string stage);
  ~StageTimer();
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

  double elapsed_ms() const;

 private:
  std::string stage_;
  NvtxRange range_{stage_};
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tilec
