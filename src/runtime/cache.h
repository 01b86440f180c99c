// The on-disk cache of built artifacts. Every write is atomic (a temporary file renamed into
// place), so readers in any process see a whole file or none; an artifact's hash sits in a
// sidecar file, so damage (a truncated or altered file, a missing sidecar) reads as a miss
// and the caller rebuilds. Writers of one key write the same bytes, so racing is harmless.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tilec::runtime {

// $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec; read at every call and
// created if missing.
std::string cache_dir();

// <cache_dir>/<name>, created if missing.
std::string cache_subdir(std::string_view name);

// A path beside `path` that no other thread or process picks: path.tmp.<pid>.<random>.
std::string unique_temp_path(const std::string& path);

// The whole file, or nullopt if it cannot be read.
std::optional<std::string> read_file(const std::string& path);

// Replaces `path` (creating its directory) with `bytes` in one rename. Throws
// std::runtime_error naming the path on failure.
void write_atomically(const std::string& path, std::string_view bytes);

// Writes the artifact, then its sidecar `<path>.sha256`.
void store_verified(const std::string& path, std::string_view bytes);

// The artifact's bytes if its sidecar holds their hash; otherwise nullopt.
std::optional<std::string> read_verified(const std::string& path);

}  // namespace tilec::runtime
