#include "base/hash.h"
#include "runtime/embedded_headers.h"

namespace tilec {

const std::string& embedded_headers_hash() {
  static const std::string hash = [] {
    std::string all;
    for (const EmbeddedHeader& header : embedded_headers()) {
      all += header.path;
      all += '\0';
      all += header.text;
      all += '\0';
    }
    return sha256_hex(all);
  }();
  return hash;
}

}  // namespace tilec
