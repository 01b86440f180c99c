// The device headers (device/**.h) compiled into the library, so generated
// code can be built where only libtilec is installed.
#pragma once

#include <string>
#include <vector>

namespace tilec {

struct EmbeddedHeader {
  const char* path;  // relative to device/, e.g. "cpu/tilec_cpu.h"
  std::string text;
};

const std::vector<EmbeddedHeader>& embedded_headers();

// SHA-256 of every header's path and text: part of the cache keys of what is built with them.
const std::string& embedded_headers_hash();

}  // namespace tilec
