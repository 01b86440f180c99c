// Calls of a GPU target's device support in lowered IR: device/cuda/ (namespace tilec_cuda),
// device/hip/ (tilec_hip), device/gpu/ (both).
//
// A Call named "device.<name>" is printed by the GPU printer as <namespace>::<name>(args...),
// the namespace its dialect's (tilec_cuda::, tilec_hip::); <name> may carry template arguments
// ("cp_async_wait<2>"). A Call named "address_of" with one BufferLoad argument is the address
// of that element. The GPU passes make them; codegen/cuda/ prints them (for hip with
// codegen/hip/'s dialect).
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tilec::ir {

inline constexpr const char* kDeviceCallPrefix = "device.";
inline constexpr const char* kAddressOf = "address_of";
// tensor_map(i): the kernel argument's i-th TMA tensor map (KernelLaunch::tensor_maps).
inline constexpr const char* kTensorMap = "tensor_map";
// thread_in(lo, hi): whether threadIdx.x is in [lo, hi) (before lower_to_threads, where the
// block's threads have no name yet).
inline constexpr const char* kThreadIn = "thread_in";
// thread_group(lo, hi): like thread_in, and the then-branch of an If on it is tile code of
// those hi - lo threads (T.ws): its tile ops are spread over them, numbered from lo, and the
// barriers between its statements are a named barrier of theirs (passes/thread_groups.h).
inline constexpr const char* kThreadGroup = "thread_group";

// thread_in(lo, hi) / thread_group(lo, hi) as a condition.
inline Expr thread_in(int64_t lo, int64_t hi) {
  return make_call(DType::Bool, kThreadIn, {make_int(lo), make_int(hi)});
}
inline Expr thread_group(int64_t lo, int64_t hi) {
  return make_call(DType::Bool, kThreadGroup, {make_int(lo), make_int(hi)});
}

// wait_wgmma(n): T.wait_wgmma in tile code, until wgmma_waits (passes/wgmma_waits.h) makes it
// the target's wait, or nothing where no gemm is left in flight.
inline constexpr const char* kWaitWgmma = "wait_wgmma";

// extern.<name>(args...): T.call_extern's call of a function of the kernel's own CUDA source
// (T.import_source, KernelLaunch::extern_sources), printed as name(args...).
inline constexpr const char* kExternCallPrefix = "extern.";

// Evaluate(<device namespace>::name(args...)) at `loc`.
inline Stmt device_call(const std::string& name, std::vector<Expr> args, const SourceLoc& loc) {
  return with_loc(make_evaluate(make_call(DType::Int32, kDeviceCallPrefix + name, std::move(args))), loc);
}

// <device namespace>::name(args...) as a value of type t.
inline Expr device_value(DType t, const std::string& name, std::vector<Expr> args) {
  return make_call(t, kDeviceCallPrefix + name, std::move(args));
}

// &buffer[indices...]
inline Expr address_of(const Buffer& buffer, std::vector<Expr> indices) {
  return make_call(DType::UInt64, kAddressOf, {make_load(buffer, std::move(indices))});
}

// The barrier name of the `threads` threads that run a warp-specialized launch's tile code
// (KernelLaunch::producer_threads): named barrier 1 over them, since the producer warpgroup
// never reaches a barrier of the whole block.
inline std::string consumer_barrier(int64_t threads) {
  return "sync_threads_partial<1, " + std::to_string(threads) + ">";
}

// Whether `s` is Evaluate(<device namespace>::name(...)).
inline bool is_device_call(const Stmt& s, const std::string& name) {
  const auto* eval = s.as<Evaluate>();
  const auto* call = eval ? eval->value.as<Call>() : nullptr;
  return call && call->name == kDeviceCallPrefix + name;
}

}  // namespace tilec::ir
