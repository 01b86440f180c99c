// The embedded device headers as files, for compilers that read headers from disk.
#pragma once

#include <string>

namespace tilec::runtime {

// Writes the device headers under <cache>/include/<their hash>/ and returns that directory.
// Each file is checked and, if missing or different, replaced atomically, so compilers in
// other processes only ever see whole headers.
std::string write_embedded_headers();

}  // namespace tilec::runtime
