// The CUDA target: lowered IR (after the "cuda" pass list) as one CUDA C++
// translation unit for NVRTC.
//
// The unit includes "cuda/tilec_cuda.h" from device/ and defines
//   extern "C" __global__ void <kernel_name>(tilec_args args)
// where `tilec_args` is a struct of 8-byte words in kernel ABI order:
//   void* tensors[max(1, T)]; int64_t ints[max(1, I)]; double floats[max(1, F)];
// (T, I, F: the sizes of the KernelAbi's tensor_params, int_slots, float_params),
// then, when the kernel has TMA copies, tilec_cuda::tensor_map tensor_maps[M] (128 bytes
// each, 64-byte aligned; the parameter is then __grid_constant__).
// The runtime packs the same words and passes a pointer to them as the one
// kernel parameter.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_abi.h"
#include "ir/ir.h"
#include "target/target.h"

namespace tilec::codegen {

// How the host launches the kernel.
struct CudaLaunch {
  // Grid extents (x, y, z order; 1 to 3 of them) as integer expressions over
  // the Vars of the ABI's int slots (symbolic dims and integer scalars).
  std::vector<ir::Expr> grid;
  int threads = 128;  // block size (x), producer warpgroups included
  int64_t dynamic_shared_bytes = 0;
  // The grid's blocks are tiles that at most one wave of blocks on a 1-D grid loops over
  // (ir::KernelLaunch::persistent).
  bool persistent = false;
  // T.sync_grid: launched cooperatively (ir::KernelLaunch::grid_sync).
  bool cooperative = false;
  // Thread block clusters (ir::KernelLaunch::cluster_dims): the grid must be a multiple.
  std::array<int64_t, 3> cluster_dims{1, 1, 1};
  int min_blocks_per_sm = 0;  // T.annotate_min_blocks_per_sm, 0 where not given
  SourceLoc loc;              // the T.Kernel block's, for what building the source finds
};

struct CudaSource {
  std::string source;
  std::string kernel_name;  // the __global__ function's name (cuda_kernel_name)
  CudaLaunch launch;
};

// The CUDA source of `func` (one KernelLaunch) for `target` (a cuda one, named in the
// source's header), reading its arguments as `abi` lays them out.
// A CompileError when its shared memory exceeds target.max_shared_bytes
// or an on-chip buffer has no constant size; std::logic_error when a tile
// operation is left.
//
// With `bounds_check`, every load and store of a global or shared buffer that the kernel's
// statements make checks its indices against the buffer's shape (device/cuda/bounds_check.h):
// the first access out of bounds prints the kernel, the tensor, the index, the shape and the
// kernel source line, reports them to the runtime, and traps. The addresses that lowered tile
// operations hand to device calls (cp.async, ldmatrix, TMA, wgmma, vector copies) are not
// checked: those operations predicate their own accesses, and a predicated-off address may lie
// outside its tensor. Fragments and locals, each thread's registers, are not checked.
CudaSource generate_cuda_source(const ir::PrimFunc& func, const KernelAbi& abi, const Target& target,
                                bool bounds_check = false);

// The __global__ symbol of the kernel `func_name`: "tilec_" and the name, each byte C
// can't spell in an identifier made '_', so profilers, compute-sanitizer and CUDA's
// errors say which kernel it is.
std::string cuda_kernel_name(const std::string& func_name);

// What differs between the GPU dialects this printer writes. For what tilec prints, HIP C++ is
// CUDA C++ (threadIdx, __shared__, __launch_bounds__, __align__, __int_as_float): the
// device support's namespace and header differ, and each calls its own functions by the same
// names (codegen/hip/codegen_hip.h).
struct GpuDialect {
  std::string language;          // "CUDA (NVRTC)", in the first line's comment
  std::string device_namespace;  // of the device support: "tilec_cuda"
  std::string header;            // that the unit includes: "cuda/tilec_cuda.h"
  // Whether the device support has the layouts' offset helpers (swizzled_offset, panel_offset);
  // without them every layout is printed as its expression.
  bool offset_helpers = false;
  // Whether the device support's cp.async takes its shared destination as a 32-bit shared-window
  // address (device/cuda/memory.h) rather than a pointer (HIP's emulation).
  bool shared_window_addresses = false;
};

// generate_cuda_source for `dialect`.
CudaSource generate_gpu_source(const ir::PrimFunc& func, const KernelAbi& abi, const Target& target,
                               bool bounds_check, const GpuDialect& dialect);

}  // namespace tilec::codegen
