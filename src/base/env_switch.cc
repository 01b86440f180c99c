#include "base/env_switch.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace tilec {

bool env_switch(const char* name) {
  const char* env = std::getenv(name);
  if (env == nullptr) return false;
  std::string value = env;
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* yes : {"1", "true", "yes", "on"})
    if (value == yes) return true;
  for (const char* no : {"", "0", "false", "no", "off"})
    if (value == no) return false;
  throw std::invalid_argument(std::string(name) + "='" + env +
                              "' is not a switch: set it to 1, true, yes or on, or to 0, false, no, "
                              "off or nothing");
}

}  // namespace tilec
