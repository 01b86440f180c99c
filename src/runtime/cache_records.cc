// The public face of the disk cache for a caller's own records (tilec.h, read_cache_record):
// the names are checked here, and everything else is runtime/cache.h's.
#include <stdexcept>

#include "runtime/cache.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

const std::string& plain_name(const std::string& name, const char* what) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos) {
    throw std::invalid_argument(std::string("cache record ") + what + " '" + name +
                                "' is not a plain name (no '/', not '.' or '..')");
  }
  return name;
}

std::string record_path(const std::string& folder, const std::string& name) {
  return runtime::cache_subdir(plain_name(folder, "folder")) + "/" + plain_name(name, "name");
}

}  // namespace

std::optional<std::string> read_cache_record(const std::string& folder, const std::string& name) {
  return runtime::read_verified(record_path(folder, name));
}

void write_cache_record(const std::string& folder, const std::string& name, const std::string& bytes) {
  runtime::store_verified(record_path(folder, name), bytes);
}

std::string cache_record_folder(const std::string& folder) {
  return runtime::cache_subdir(plain_name(folder, "folder"));
}

}  // namespace tilec
