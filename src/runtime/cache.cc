#include "runtime/cache.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <random>
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

// "uid 1000 (alice)".
std::string user_name(uid_t uid) {
  std::string text = "uid " + std::to_string(uid);
  passwd entry{};
  passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr) {
    text += " (" + std::string(found->pw_name) + ")";
  }
  return text;
}

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string writers(mode_t mode) {
  if ((mode & S_IWGRP) != 0 && (mode & S_IWOTH) != 0) return "its group and others";
  return (mode & S_IWGRP) != 0 ? "its group" : "others";
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISREG(mode)) return "a file";
  return "neither a file nor a folder";
}

// The cache folder itself must be this user's; a folder above it may be root's too, and may
// be writable by others when it is sticky (only an entry's owner may rename or remove it).
enum class FolderRole { Cache, Above };

// Why another user could change what the folder holds, or "" when no one can.
std::string unsafe_folder(const std::string& path, const struct stat& st, FolderRole role) {
  if (!S_ISDIR(st.st_mode)) return path + " is " + kind_of(st.st_mode) + ", not a folder";
  const uid_t me = geteuid();
  if (st.st_uid != me && (role == FolderRole::Cache || st.st_uid != 0)) {
    return path + " belongs to " + user_name(st.st_uid) + ", not to " + user_name(me) +
           ", the user of this process" + (role == FolderRole::Above ? ", nor to root" : "");
  }
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (others_write && (role == FolderRole::Cache || (st.st_mode & S_ISVTX) == 0)) {
    return path + " is writable by " + writers(st.st_mode) + " (mode " + mode_text(st.st_mode) +
           (role == FolderRole::Above ? ", not sticky" : "") + ")";
  }
  return "";
}

// Why the opened file is not one of this user's that no one else can write, or "".
std::string unsafe_file(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return "is " + kind_of(st.st_mode) + ", not a file";
  const uid_t me = geteuid();
  if (st.st_uid != me) {
    return "belongs to " + user_name(st.st_uid) + ", not to " + user_name(me) +
           ", the user of this process";
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "is writable by " + writers(st.st_mode) + " (mode " + mode_text(st.st_mode) + ")";
  }
  return "";
}

std::deque<std::string> components(const std::string& path) {
  std::deque<std::string> parts;
  for (size_t at = 0; at <= path.size();) {
    size_t end = path.find('/', at);
    if (end == std::string::npos) end = path.size();
    if (end > at) parts.push_back(path.substr(at, end - at));
    at = end + 1;
  }
  return parts;
}

// mkdir(path, 0700), then the mode set again: the umask may have taken bits of 0700. Returns
// false with errno set when `path` could not be made (EEXIST included).
bool make_folder(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0) return false;
  ::chmod(path.c_str(), 0700);
  return true;
}

// `path` made absolute, its symlinks resolved and its missing folders made, when neither it nor
// any folder above it is unsafe (unsafe_folder); else nullopt with `why` set. The walk goes one
// component at a time from the root and trusts a symlink only when this user or root owns it,
// so every folder it checks is one the final path passes through.
std::optional<std::string> resolve_folder(const std::string& path, std::string* why) {
  std::deque<std::string> pending = components(
      path.empty() || path[0] != '/' ? std::filesystem::current_path().string() + "/" + path
                                     : path);
  struct stat st {};
  if (::lstat("/", &st) != 0) {
    *why = "cannot inspect /: " + std::string(std::strerror(errno));
    return std::nullopt;
  }
  if (*why = unsafe_folder("/", st, FolderRole::Above); !why->empty()) return std::nullopt;
  std::string resolved;  // "" is the root
  int symlinks = 0;
  while (!pending.empty()) {
    const std::string name = pending.front();
    pending.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      if (!resolved.empty()) resolved.erase(resolved.rfind('/'));
      continue;
    }
    const std::string next = resolved + "/" + name;
    if (::lstat(next.c_str(), &st) != 0) {
      const bool missing = errno == ENOENT;
      if (!missing || (!make_folder(next) && errno != EEXIST) || ::lstat(next.c_str(), &st) != 0) {
        *why = std::string(missing ? "cannot create " : "cannot inspect ") + next + ": " +
               std::strerror(errno);
        return std::nullopt;
      }
    }
    if (S_ISLNK(st.st_mode)) {
      if (st.st_uid != geteuid() && st.st_uid != 0) {
        *why = next + " is a symlink of " + user_name(st.st_uid) +
               ", neither the user of this process nor root";
        return std::nullopt;
      }
      std::error_code error;
      const std::string target = std::filesystem::read_symlink(next, error).string();
      if (error || ++symlinks > 40) {
        *why = "cannot follow the symlink " + next +
               (error ? ": " + error.message() : ": too many levels");
        return std::nullopt;
      }
      const std::deque<std::string> parts = components(target);
      pending.insert(pending.begin(), parts.begin(), parts.end());
      if (target[0] == '/') resolved.clear();
      continue;
    }
    // The last folder gets the stricter check of the cache folder below.
    if (!pending.empty()) {
      if (*why = unsafe_folder(next, st, FolderRole::Above); !why->empty()) return std::nullopt;
    }
    resolved = next;
  }
  if (resolved.empty()) resolved = "/";
  if (::lstat(resolved.c_str(), &st) != 0) {
    *why = "cannot inspect " + resolved + ": " + std::strerror(errno);
    return std::nullopt;
  }
  if (*why = unsafe_folder(resolved, st, FolderRole::Cache); !why->empty()) return std::nullopt;
  return resolved;
}

// $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec, as written there.
std::string configured_cache_dir() {
  if (std::string dir = env("TILEC_CACHE_DIR"); !dir.empty()) return dir;
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/tilec";
  std::string home = env("HOME");
  if (home.empty()) {
    if (const passwd* pw = getpwuid(getuid()); pw != nullptr) home = pw->pw_dir;
  }
  if (home.empty()) throw std::runtime_error("tilec cache: no home directory; set TILEC_CACHE_DIR");
  return home + "/.cache/tilec";
}

// The folder this process keeps its cache in when the configured one is refused: made at first
// need under $TMPDIR (else /tmp) by mkdtemp, which makes a new 0700 folder or fails, and
// removed at exit by the process that made it (not by forked children). A process that has
// changed its user since (a forked worker dropping root) makes one of its own.
std::mutex private_folder_mutex;
std::string private_folder_path;
pid_t private_folder_process = 0;
uid_t private_folder_user = 0;

void remove_private_folder() {
  if (getpid() != private_folder_process) return;
  std::error_code ignored;
  std::filesystem::remove_all(private_folder_path, ignored);
}

std::string private_folder() {
  std::lock_guard<std::mutex> lock(private_folder_mutex);
  if (!private_folder_path.empty() && private_folder_user == geteuid()) return private_folder_path;
  std::string failures;
  for (const std::string& base : {env("TMPDIR"), std::string("/tmp")}) {
    if (base.empty()) continue;
    std::string made = base + "/tilec-cache-XXXXXX";
    std::string why;
    if (mkdtemp(made.data()) == nullptr) {
      why = "cannot create " + made + ": " + std::strerror(errno);
    } else if (std::optional<std::string> folder = resolve_folder(made, &why)) {
      private_folder_path = *folder;
      private_folder_process = getpid();
      private_folder_user = geteuid();
      static std::once_flag removed_at_exit;
      std::call_once(removed_at_exit, [] { std::atexit(remove_private_folder); });
      return private_folder_path;
    } else {
      ::rmdir(made.c_str());
    }
    failures += "; " + why;
  }
  throw std::runtime_error("tilec cache: no private folder for this process's cache" + failures);
}

// Makes `dir`, a folder inside the cache, a folder of this user that no one else can write:
// made when missing; anything else in its place is removed first. Throws std::runtime_error.
void make_private_folder(const std::string& dir) {
  for (int attempt = 0;; ++attempt) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0) {
      const std::string why = unsafe_folder(dir, st, FolderRole::Cache);
      if (why.empty()) return;
      if (attempt == 3) {
        throw std::runtime_error("tilec cache: cannot make " + dir + " a private folder: " + why);
      }
      log(LogLevel::Info, "tilec cache: " + why + "; replacing it");
      std::error_code error;
      std::filesystem::remove_all(dir, error);
      if (error) {
        throw std::runtime_error("tilec cache: cannot remove " + dir + " (" + why +
                                 "): " + error.message());
      }
    } else if (errno != ENOENT) {
      throw io_error("inspect", dir);
    }
    if (!make_folder(dir) && errno != EEXIST) throw io_error("create the folder", dir);
  }
}

// The cache folder `path` lies in: the configured one when it is accepted, else this
// process's private one; "" for a path outside both.
std::string cache_root_of(const std::string& path) {
  const auto inside = [&](const std::string& root) {
    return !root.empty() && path.size() > root.size() + 1 &&
           path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
  };
  std::string why;
  if (std::optional<std::string> root = resolve_folder(configured_cache_dir(), &why);
      root && inside(*root)) {
    return *root;
  }
  std::lock_guard<std::mutex> lock(private_folder_mutex);
  return inside(private_folder_path) ? private_folder_path : "";
}

// Makes the folders `path` lies in. Inside the cache each is made private (make_private_folder);
// outside it, missing ones are made 0700 and anything else in a folder's place is an error.
void make_folders_for(const std::string& path, const std::string& root) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  if (!root.empty()) {
    std::string at = root;
    for (const std::string& name : components(parent.substr(root.size()))) {
      at += "/" + name;
      make_private_folder(at);
    }
    return;
  }
  std::string at = parent.empty() || parent[0] != '/' ? "." : "";
  for (const std::string& name : components(parent)) {
    at += "/" + name;
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0 &&
        (errno != ENOENT || (!make_folder(at) && errno != EEXIST))) {
      throw io_error("create the folder", at);
    }
    if (::stat(at.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      throw std::runtime_error("tilec cache: cannot create the folder " + at + ": it is " +
                               kind_of(st.st_mode));
    }
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

// A new file beside `path` holding `bytes`, mode 0600; nullopt when its folder is gone (a
// concurrent repair may remove a folder between its making and the write).
std::optional<std::string> write_temporary(const std::string& path, std::string_view bytes) {
  std::string temp;
  UniqueFd fd;
  while (!fd) {
    temp = unique_temp_path(path);
    fd = UniqueFd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd && errno == ENOENT) return std::nullopt;
    if (!fd && errno != EEXIST) throw io_error("create", temp);
  }
  try {
    if (::fchmod(fd.get(), 0600) != 0) throw std::runtime_error(std::strerror(errno));
    write_all(fd.get(), bytes);
  } catch (const std::runtime_error& error) {
    ::unlink(temp.c_str());
    throw std::runtime_error("tilec cache: cannot write " + temp + ": " + error.what());
  }
  // No fsync: after a crash a torn file fails its hash check and is rebuilt. A failing close
  // may be the report of a failed write.
  if (::close(fd.release()) != 0) {
    const std::runtime_error error = io_error("write", temp);
    ::unlink(temp.c_str());
    throw error;
  }
  return temp;
}

}  // namespace

std::string cache_dir() {
  const std::string configured = configured_cache_dir();
  std::string why;
  if (std::optional<std::string> dir = resolve_folder(configured, &why)) return *dir;
  const std::string fallback = private_folder();
  warn_once(configured, "tilec cache: not using " + configured + ": " + why +
                            ". This process keeps its cache in " + fallback +
                            ", removed when it exits; make the folder this user's and writable "
                            "by no one else, or set TILEC_CACHE_DIR, to keep kernels across runs");
  return fallback;
}

std::string cache_subdir(std::string_view name) {
  const std::string dir = cache_dir() + "/" + std::string(name);
  try {
    make_private_folder(dir);
    return dir;
  } catch (const std::runtime_error& error) {
    const std::string fallback = private_folder() + "/" + std::string(name);
    if (fallback == dir) throw;
    warn_once(dir, std::string(error.what()) + ". This process keeps its cache in " + fallback +
                       ", removed when it exits");
    make_private_folder(fallback);
    return fallback;
  }
}

std::string unique_temp_path(const std::string& path) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%016llx", static_cast<long>(getpid()),
                static_cast<unsigned long long>(rng()));
  return path + suffix;
}

UniqueFd open_private_file(const std::string& path, struct stat* stat_out) {
  // O_NONBLOCK: a FIFO in a file's place must not hang the open.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    if (errno == ELOOP) log(LogLevel::Info, "tilec cache: " + path + " is a symlink; ignoring it");
    return {};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return {};
  if (const std::string why = unsafe_file(st); !why.empty()) {
    // Damage is rebuilt quietly; a file another user could have written says so.
    log(S_ISREG(st.st_mode) ? LogLevel::Warning : LogLevel::Info,
        "tilec cache: " + path + " " + why + "; ignoring it");
    return {};
  }
  if (stat_out != nullptr) *stat_out = st;
  return fd;
}

std::optional<std::string> read_all(int fd) {
  std::string bytes;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      bytes.append(buffer, static_cast<size_t>(n));
    } else if (n == 0) {
      return bytes;
    } else if (errno != EINTR) {
      return std::nullopt;
    }
  }
}

std::optional<std::string> read_file(const std::string& path) {
  const UniqueFd fd = open_private_file(path);
  if (!fd) return std::nullopt;
  return read_all(fd.get());
}

void write_atomically(const std::string& path, std::string_view bytes) {
  const std::string root = cache_root_of(path);
  // A concurrent repair may remove a folder between its making and the write: the write then
  // starts over.
  for (int attempt = 1;; ++attempt) {
    make_folders_for(path, root);
    const std::optional<std::string> temp = write_temporary(path, bytes);
    int error = ENOENT;
    if (temp) {
      if (::rename(temp->c_str(), path.c_str()) == 0) return;
      error = errno;
      // A folder in the file's place inside the cache is damage: it goes. Racing writers may
      // remove each other's renamed file here; a missing entry is a miss.
      if ((error == EISDIR || error == ENOTEMPTY || error == EEXIST) && !root.empty()) {
        log(LogLevel::Info, "tilec cache: replacing the folder " + path + " with a file");
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
        if (::rename(temp->c_str(), path.c_str()) == 0) return;
        error = errno;
      }
      ::unlink(temp->c_str());
    }
    if (error != ENOENT || attempt == 3) {
      errno = error;
      throw io_error("write", path);
    }
  }
}

void store_verified(const std::string& path, std::string_view bytes) {
  write_atomically(path, bytes);
  write_atomically(path + ".sha256", sha256_hex(bytes) + "\n");
}

std::optional<VerifiedFile> open_verified(const std::string& path) {
  VerifiedFile entry{};
  entry.file = open_private_file(path, &entry.status);
  if (!entry.file) return std::nullopt;
  std::optional<std::string> bytes = read_all(entry.file.get());
  if (!bytes) return std::nullopt;
  const std::optional<std::string> sidecar = read_file(path + ".sha256");
  if (!sidecar || *sidecar != sha256_hex(*bytes) + "\n") {
    log(LogLevel::Info, "cache entry " + path +
                            (sidecar ? " does not match its hash" : " has no hash") +
                            "; ignoring it");
    return std::nullopt;
  }
  entry.bytes = std::move(*bytes);
  return entry;
}

std::optional<std::string> read_verified(const std::string& path) {
  std::optional<VerifiedFile> entry = open_verified(path);
  if (!entry) return std::nullopt;
  return std::move(entry->bytes);
}

}  // namespace tilec::runtime
