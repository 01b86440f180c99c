#include "base/dtype.h"

#include <unordered_map>

namespace tilec {

const char* DType::name() const {
  switch (code_) {
#define TILEC_DTYPE_NAME(e, name, bits) \
  case e:                               \
    return name;
    TILEC_FOR_EACH_DTYPE(TILEC_DTYPE_NAME)
#undef TILEC_DTYPE_NAME
  }
  return "?";
}

int DType::bits() const {
  switch (code_) {
#define TILEC_DTYPE_BITS(e, name, bits) \
  case e:                               \
    return bits;
    TILEC_FOR_EACH_DTYPE(TILEC_DTYPE_BITS)
#undef TILEC_DTYPE_BITS
  }
  return 0;
}

std::optional<DType> DType::from_name(const std::string& name) {
  static const std::unordered_map<std::string, DType> names = [] {
    std::unordered_map<std::string, DType> m;
#define TILEC_DTYPE_ENTRY(e, name, bits) m.emplace(name, DType::e);
    TILEC_FOR_EACH_DTYPE(TILEC_DTYPE_ENTRY)
#undef TILEC_DTYPE_ENTRY
    m.emplace("float", DType::Float32);
    m.emplace("fp32", DType::Float32);
    m.emplace("double", DType::Float64);
    m.emplace("fp64", DType::Float64);
    m.emplace("half", DType::Float16);
    m.emplace("fp16", DType::Float16);
    m.emplace("bf16", DType::BFloat16);
    m.emplace("int", DType::Int32);
    m.emplace("short", DType::Int16);
    m.emplace("long", DType::Int64);
    m.emplace("uint", DType::UInt32);
    m.emplace("float8_e4m3fn", DType::Float8E4M3);
    m.emplace("e4m3_float8", DType::Float8E4M3);
    m.emplace("fp8_e4m3", DType::Float8E4M3);
    m.emplace("e5m2_float8", DType::Float8E5M2);
    m.emplace("fp8_e5m2", DType::Float8E5M2);
    m.emplace("boolean", DType::Bool);
    return m;
  }();
  auto it = names.find(name);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a.is_float() != b.is_float()) return a.is_float() ? a : b;
  if (a.is_float()) {
    if (a.bits() != b.bits()) return a.bits() > b.bits() ? a : b;
    // Two different floats of one width (fp16 vs bf16, e4m3 vs e5m2): float32.
    return DType::Float32;
  }
  if (a.is_bool()) return b;
  if (b.is_bool()) return a;
  if (a.bits() != b.bits()) return a.bits() > b.bits() ? a : b;
  return a.is_int() ? a : b;  // same width: signed wins, as for Python ints
}

}  // namespace tilec
