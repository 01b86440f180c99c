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

// A 128 x 128 x 32 float16 gemm whose A is copied from shared memory into a fragment first:
// on sm_80 the copy runs on ldmatrix and the gemm on mma.sync with A in registers; on sm_90a
// the gemm runs on wgmma (wgmma_gemm_rs).
constexpr const char* kGemmWithAInRegisters =
"import tilec.language as T\n\n@T.prim_func\n"
    "def main(A: T.Tensor((128, 32), \"float16\"), B: T.Tensor((32, 128), \"float16\"),\n"
    "         C: T.Tensor((128, 128), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        A_s = T.alloc_shared((128, 32), \"float16\")\n"
    "        A_f = T.alloc_fragment((128, 32), \"float16\")\n"
    "        B_s = T.alloc_shared((32, 128), \"float16\")\n"
    "        C_f = T.alloc_fragment((128, 128), \"float32\")\n"
    "        T.clear(C_f)\n"
    "        T.copy(A, A_s)\n"
    "        T.copy(B, B_s)\n"
    "        T.copy(A_s, A_f)\n"
    "        T.gemm(A_f, B_s, C_f)\n"
    "        T.copy(C_f, C)\n";

}  // namespace tilec::test_support
