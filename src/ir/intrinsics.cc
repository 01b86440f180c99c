#include "ir/intrinsics.h"

namespace tilec::ir {

namespace {

constexpr IntrinsicInfo kIntrinsics[] = {
#define TILEC_INTRINSIC_ENTRY(name, arity, returns_bool, float_only) \
  {#name, arity, returns_bool, float_only},
    TILEC_FOR_EACH_INTRINSIC(TILEC_INTRINSIC_ENTRY)
#undef TILEC_INTRINSIC_ENTRY
};

}  // namespace

const IntrinsicInfo* find_intrinsic(std::string_view name) {
  for (const IntrinsicInfo& info : kIntrinsics) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

}  // namespace tilec::ir
