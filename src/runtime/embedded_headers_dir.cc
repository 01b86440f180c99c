#include "runtime/embedded_headers_dir.h"

#include "runtime/cache.h"
#include "runtime/embedded_headers.h"

namespace tilec::runtime {

std::string write_embedded_headers() {
  const std::string dir = cache_subdir("include") + "/" + embedded_headers_hash();
  for (const EmbeddedHeader& header : embedded_headers()) {
    const std::string path = dir + "/" + header.path;
    if (read_file(path) != header.text) write_atomically(path, header.text);
  }
  return dir;
}

}  // namespace tilec::runtime
