// Helpers shared by the runtime tests.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include "base/log.h"

namespace tilec::test_support {

// A fresh directory under /tmp made TILEC_CACHE_DIR for the object's lifetime;
// then the variable is restored and the directory removed.
class TemporaryCacheDir {
 public:
  explicit TemporaryCacheDir(const std::string& prefix) {
    if (const char* saved = std::getenv("TILEC_CACHE_DIR")) saved_ = saved;
    std::string pattern = "/tmp/" + prefix + "XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
    setenv("TILEC_CACHE_DIR", path_.c_str(), 1);
  }
  ~TemporaryCacheDir() {
    std::filesystem::remove_all(path_);
    if (saved_) setenv("TILEC_CACHE_DIR", saved_->c_str(), 1);
    else unsetenv("TILEC_CACHE_DIR");
  }
  TemporaryCacheDir(const TemporaryCacheDir&) = delete;
  TemporaryCacheDir& operator=(const TemporaryCacheDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::optional<std::string> saved_;
};

// What `body` logs at level Debug (to stderr).
inline std::string captured_debug_log(const std::function<void()>& body) {
  const LogLevel saved = log_level();
  set_log_level(LogLevel::Debug);
  ::testing::internal::CaptureStderr();
  body();
  std::string out = ::testing::internal::GetCapturedStderr();
  set_log_level(saved);
  return out;
}

// Damages a file in place: the byte at `offset` changes.
inline void flip_byte(const std::string& path, size_t offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  file.get(c);
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(static_cast<char>(c ^ 0x5a));
}

}  // namespace tilec::test_support
