#include "base/log.h"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace tilec {
namespace {

LogLevel initial_level() {
  const char* env = std::getenv("TILEC_LOG_LEVEL");
  if (env == nullptr || *env == '\0') return LogLevel::Warning;
  if (std::optional<LogLevel> level = parse_log_level(env)) return *level;
  // log() cannot be used here: it needs the level being initialized.
  std::fprintf(stderr,
               "[tilec] WARNING TILEC_LOG_LEVEL=%s is not one of error, warning, info, debug\n",
               env);
  return LogLevel::Warning;
}

std::atomic<LogLevel>& current_level() {
  static std::atomic<LogLevel> level{initial_level()};
  return level;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "ERROR";
    case LogLevel::Warning: return "WARNING";
    case LogLevel::Info: return "INFO";
    case LogLevel::Debug: return "DEBUG";
  }
  return "?";
}

}  // namespace

void set_log_level(LogLevel level) { current_level().store(level, std::memory_order_relaxed); }

LogLevel log_level() { return current_level().load(std::memory_order_relaxed); }

bool log_enabled(LogLevel level) { return level <= log_level(); }

std::optional<LogLevel> parse_log_level(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "error") return LogLevel::Error;
  if (lower == "warning" || lower == "warn") return LogLevel::Warning;
  if (lower == "info") return LogLevel::Info;
  if (lower == "debug") return LogLevel::Debug;
  return std::nullopt;
}

void log(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  // One fwrite: stdio locks the stream for the call, so lines never interleave.
  const std::string line = std::string("[tilec] ") + level_name(level) + " " + message + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void warn_once(const std::string& key, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(key).second) log(LogLevel::Warning, message);
}

StageTimer::StageTimer(std::string stage)
    : stage_(std::move(stage)), start_(std::chrono::steady_clock::now()) {}

StageTimer::~StageTimer() {
  if (!log_enabled(LogLevel::Debug)) return;
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.2f ms", elapsed_ms());
  log(LogLevel::Debug, stage_ + ": " + ms);
}

double StageTimer::elapsed_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
      .count();
}

}  // namespace tilec
