// The registers a thread ptxas gave a kernel, read from its cubin (an ELF file): the REGCOUNT
// attribute of the .nv.info section names the kernel's symbol and the count. What a block of
// the kernel launches with, known without a GPU; check_compiled_register_moves takes it.
#pragma once

#include <optional>
#include <string_view>

namespace tilec::runtime {

// Nothing where the bytes are no 64-bit ELF, or no REGCOUNT names `kernel`; every read is
// checked against the bytes' size.
std::optional<int> cubin_registers(std::string_view cubin, std::string_view kernel);

}  // namespace tilec::runtime
