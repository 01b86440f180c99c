#include "runtime/cuda/cubin_registers.h"

#include <cstdint>
#include <cstring>

namespace tilec::runtime {
namespace {

// Little-endian reads that fail past the end instead of reading it.
class Bytes {
 public:
  explicit Bytes(std::string_view data) : data_(data) {}

  template <typename T>
  bool read(uint64_t at, T& out) const {
    if (at > data_.size() || data_.size() - at < sizeof(T)) return false;
    std::memcpy(&out, data_.data() + at, sizeof(T));
    return true;
  }

  // The NUL-terminated string at `at`, or nothing past the end.
  std::optional<std::string_view> string(uint64_t at) const {
    if (at >= data_.size()) return std::nullopt;
    const size_t end = data_.find('\0', at);
    if (end == std::string_view::npos) return std::nullopt;
    return data_.substr(at, end - at);
  }

 private:
  std::string_view data_;
};

struct Section {
  uint32_t name = 0, type = 0, link = 0;
  uint64_t offset = 0, size = 0;
};

constexpr uint8_t kFormatValue = 0x04;  // EIFMT_SVAL: a 2-byte size, then the value
constexpr uint8_t kRegisterCount = 0x2f;  // EIATTR_REGCOUNT: (symbol index, registers)
constexpr uint32_t kSymbolTable = 2;    // SHT_SYMTAB
constexpr uint64_t kSymbolSize = 24;    // Elf64_Sym

}  // namespace

std::optional<int> cubin_registers(std::string_view cubin, std::string_view kernel) {
  const Bytes bytes(cubin);
  if (cubin.size() < 64 || cubin.substr(0, 4) != "\x7f" "ELF" || cubin[4] != 2) return std::nullopt;  // ELFCLASS64
  uint64_t section_headers = 0;
  uint16_t header_size = 0, count = 0, names = 0;
  if (!bytes.read(0x28, section_headers) || !bytes.read(0x3a, header_size) || !bytes.read(0x3c, count) ||
      !bytes.read(0x3e, names) || header_size < 64 || names >= count)
    return std::nullopt;
  auto section = [&](uint32_t i) -> std::optional<Section> {
    const uint64_t at = section_headers + uint64_t{i} * header_size;
    Section s;
    if (!bytes.read(at, s.name) || !bytes.read(at + 4, s.type) || !bytes.read(at + 24, s.offset) ||
        !bytes.read(at + 32, s.size) || !bytes.read(at + 40, s.link))
      return std::nullopt;
    return s;
  };
  const std::optional<Section> name_table = section(names);
  if (!name_table) return std::nullopt;
  // The kernel's index in the symbol table, then its REGCOUNT.
  std::optional<uint32_t> symbol;
  std::optional<Section> info;
  for (uint32_t i = 0; i < count; ++i) {
    const std::optional<Section> s = section(i);
    if (!s) return std::nullopt;
    const std::optional<std::string_view> name = bytes.string(name_table->offset + s->name);
    if (name && *name == ".nv.info") info = s;
    if (s->type != kSymbolTable) continue;
    const std::optional<Section> strings = section(s->link);
    if (!strings) return std::nullopt;
    for (uint64_t k = 0; k * kSymbolSize + kSymbolSize <= s->size; ++k) {
      uint32_t symbol_name = 0;
      if (!bytes.read(s->offset + k * kSymbolSize, symbol_name)) return std::nullopt;
      if (bytes.string(strings->offset + symbol_name) == kernel) symbol = static_cast<uint32_t>(k);
    }
  }
  if (!symbol || !info) return std::nullopt;
  for (uint64_t at = info->offset; at + 4 <= info->offset + info->size;) {
    uint8_t format = 0, attribute = 0;
    uint16_t size = 0;
    if (!bytes.read(at, format) || !bytes.read(at + 1, attribute) || !bytes.read(at + 2, size)) return std::nullopt;
    if (format != kFormatValue) {
      at += 4;  // a value held in the size field itself
      continue;
    }
    uint32_t index = 0, registers = 0;
    if (attribute == kRegisterCount && size == 8 && bytes.read(at + 4, index) && bytes.read(at + 8, registers) &&
        index == *symbol)
      return static_cast<int>(registers);
    at += 4 + uint64_t{size};
  }
  return std::nullopt;
}

}  // namespace tilec::runtime
