// SHA-256, for cache keys and for checking cache entries.
#pragma once

#include <string>
#include <string_view>

namespace tilec {

// The SHA-256 digest of `data` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace tilec
