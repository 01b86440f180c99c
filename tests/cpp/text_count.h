// How many times a piece of text occurs in IR or generated source, for the tests that compare
// them.
#pragma once

#include <cstddef>
#include <string>

namespace tilec::test_support {

// Occurrences of `what` in `text`, overlapping ones included.
inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace tilec::test_support
