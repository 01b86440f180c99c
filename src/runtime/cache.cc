#include "runtime/cache.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "base/hash.h"
#include "base/log.h"

namespace tilec::runtime {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::runtime_error io_error(const std::string& what, const std::string& path) {
  return std::runtime_error("tilec cache: cannot " + what + " " + path + ": " +
                            std::strerror(errno));
}

void make_directories(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  // Another process may have made it meanwhile; only a missing directory is a failure.
  if (error && !std::filesystem::is_directory(path)) {
    throw std::runtime_error("tilec cache: cannot create directory " + path + ": " +
                             error.message());
  }
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

std::string cache_dir() {
  std::string dir = env("TILEC_CACHE_DIR");
  if (dir.empty()) {
    if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) {
      dir = xdg + "/tilec";
    } else {
      std::string home = env("HOME");
      if (home.empty()) {
        if (const passwd* pw = getpwuid(getuid()); pw != nullptr) home = pw->pw_dir;
      }
      if (home.empty()) {
        throw std::runtime_error("tilec cache: no home directory; set TILEC_CACHE_DIR");
      }
      dir = home + "/.cache/tilec";
    }
  }
  make_directories(dir);
  return dir;
}

std::string cache_subdir(std::string_view name) {
  std::string dir = cache_dir() + "/" + std::string(name);
  make_directories(dir);
  return dir;
}

std::string unique_temp_path(const std::string& path) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%016llx", static_cast<long>(getpid()),
                static_cast<unsigned long long>(rng()));
  return path + suffix;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(bytes).str();
}

void write_atomically(const std::string& path, std::string_view bytes) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) make_directories(parent.string());
  std::string temp;
  int fd = -1;
  while (fd < 0) {
    temp = unique_temp_path(path);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) throw io_error("create", temp);
  }
  try {
    write_all(fd, bytes);
  } catch (const std::runtime_error& error) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw std::runtime_error("tilec cache: cannot write " + temp + ": " + error.what());
  }
  // No fsync: after a crash a torn file fails its hash check and is rebuilt.
  if (::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    const std::runtime_error error = io_error("write", path);
    ::unlink(temp.c_str());
    throw error;
  }
}

void store_verified(const std::string& path, std::string_view bytes) {
  write_atomically(path, bytes);
  write_atomically(path + ".sha256", sha256_hex(bytes) + "\n");
}

std::optional<std::string> read_verified(const std::string& path) {
  std::optional<std::string> bytes = read_file(path);
  if (!bytes) return std::nullopt;
  const std::optional<std::string> sidecar = read_file(path + ".sha256");
  if (sidecar && *sidecar == sha256_hex(*bytes) + "\n") return bytes;
  log(LogLevel::Info, "cache entry " + path +
                          (sidecar ? " does not match its hash" : " has no hash") +
                          "; ignoring it");
  return std::nullopt;
}

}  // namespace tilec::runtime
