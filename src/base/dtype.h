// Element types of kernel values and tensors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tilec {

// Every scalar type the language knows, with its canonical name (as written in
// kernels, "float16"), its C++ spelling in generated CPU code and its size.
// X(Enumerator, name, bits)
#define TILEC_FOR_EACH_DTYPE(X)  \
  X(Bool, "bool", 8)             \
  X(Int8, "int8", 8)             \
  X(Int16, "int16", 16)          \
  X(Int32, "int32", 32)          \
  X(Int64, "int64", 64)          \
  X(UInt8, "uint8", 8)           \
  X(UInt16, "uint16", 16)        \
  X(UInt32, "uint32", 32)        \
  X(UInt64, "uint64", 64)        \
  X(Float16, "float16", 16)      \
  X(BFloat16, "bfloat16", 16)    \
  X(Float32, "float32", 32)      \
  X(Float64, "float64", 64)      \
  X(Float8E4M3, "float8_e4m3", 8) \
  X(Float8E5M2, "float8_e5m2", 8)

class DType {
 public:
  enum Code : uint8_t {
#define TILEC_DTYPE_ENUM(e, name, bits) e,
    TILEC_FOR_EACH_DTYPE(TILEC_DTYPE_ENUM)
#undef TILEC_DTYPE_ENUM
  };

  constexpr DType() : code_(Int32) {}
  constexpr DType(Code code) : code_(code) {}  // NOLINT: implicit by design

  Code code() const { return code_; }
  const char* name() const;
  int bits() const;
  int bytes() const { return bits() / 8; }

  bool is_bool() const { return code_ == Bool; }
  bool is_int() const { return code_ >= Int8 && code_ <= Int64; }
  bool is_uint() const { return code_ >= UInt8 && code_ <= UInt64; }
  bool is_integer() const { return is_int() || is_uint(); }  // bool excluded
  bool is_float() const { return code_ >= Float16; }
  // Floats that C++ has no native type for: converted in software on the CPU.
  bool is_soft_float() const {
    return code_ == Float16 || code_ == BFloat16 || code_ == Float8E4M3 || code_ == Float8E5M2;
  }

  // Accepts canonical names and the aliases users write: "float"/"fp32",
  // "half"/"fp16", "bf16", "e4m3_float8", "float8_e4m3fn", "int", ...
  static std::optional<DType> from_name(const std::string& name);

  friend bool operator==(DType a, DType b) { return a.code_ == b.code_; }
  friend bool operator!=(DType a, DType b) { return a.code_ != b.code_; }

 private:
  Code code_;
};

// The type of a binary arithmetic result: floats win over integers, wider over
// narrower (Python/TileLang promotion without C's int promotion of small types).
DType promote(DType a, DType b);

}  // namespace tilec
