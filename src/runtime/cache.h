// The on-disk cache of built artifacts. Every write is atomic (a temporary file renamed into
// place), so readers in any process see a whole file or none; an artifact's hash sits in a
// sidecar file, so damage (a truncated or altered file, a missing sidecar) reads as a miss
// and the caller rebuilds. Writers of one key write the same bytes, so racing is harmless.
//
// The cache is private to its user, since what it holds is loaded and run:
// - Folders are made 0700 and files 0600, whatever the umask.
// - The cache folder must belong to this process's (effective) user and be writable by no one
//   else; each folder above it must belong to this user or root and be writable by no one
//   else unless it is sticky (as /tmp is). Then no other user can add, replace or rename
//   anything in the cache or on the way to it. A cache folder that fails is refused with a
//   warning, and the process keeps its cache in a fresh private folder under $TMPDIR (else
//   /tmp), removed when the process exits.
// - Files are opened without following symlinks and checked on the opened descriptor, not
//   the path: only a regular file of this user that no one else can write is read.
// - Anything in the wrong place inside the cache (a folder or a symlink where a file should
//   be, a file or a symlink where a folder should be, a folder others can write) reads as a
//   miss and is replaced when the entry is written again.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <string_view>

#include "base/unique_fd.h"

namespace tilec::runtime {

// $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec, with symlinks resolved;
// read at every call and created if missing. When that folder is refused, this process's
// private folder instead (the warning says why, once per folder).
std::string cache_dir();

// <cache_dir>/<name>, created if missing; anything else in its place is replaced. Throws
// std::runtime_error naming the path when it cannot be made.
std::string cache_subdir(std::string_view name);

// A path beside `path` that no other thread or process picks: path.tmp.<pid>.<random>.
std::string unique_temp_path(const std::string& path);

// `path` opened for reading if it is a regular file of this user that no one else can write,
// else an invalid descriptor. Symlinks are not followed, and the checks are made on the open
// file, so the file checked is the file read. `stat_out`, when given, gets the file's status.
UniqueFd open_private_file(const std::string& path, struct stat* stat_out = nullptr);

// The whole private file (open_private_file), or nullopt if it is missing, unreadable or not
// private.
std::optional<std::string> read_file(const std::string& path);

// The rest of the file open as `fd`, or nullopt on a read error.
std::optional<std::string> read_all(int fd);

// Replaces `path` with `bytes` in one rename, creating its folders. Inside the cache, a folder
// or anything else in the file's or a folder's place is removed first. Throws
// std::runtime_error naming the path on failure.
void write_atomically(const std::string& path, std::string_view bytes);

// Writes the artifact, then its sidecar `<path>.sha256`.
void store_verified(const std::string& path, std::string_view bytes);

// An artifact read through `file`, still open: what a caller loads by descriptor is what was
// checked.
struct VerifiedFile {
  UniqueFd file;
  struct stat status;
  std::string bytes;
};

// The private artifact (open_private_file) if its private sidecar holds its bytes' hash;
// otherwise nullopt.
std::optional<VerifiedFile> open_verified(const std::string& path);

// The artifact's bytes, as open_verified checks them.
std::optional<std::string> read_verified(const std::string& path);

}  // namespace tilec::runtime
