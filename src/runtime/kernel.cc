// Kernel's methods: the variant a call runs and its launch, once runtime/kernel_args.h has
// checked the arguments.
#include <algorithm>
#include <limits>
#include <optional>
#include <variant>

#include "base/nvtx.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/device_scope.h"
#include "runtime/cuda/launch_grid.h"
#include "runtime/cuda/tensor_maps.h"
#include "runtime/hip/hip_library.h"
#include "runtime/kernel_args.h"
#include "runtime/kernel_impl.h"
#include "runtime/launch_args.h"
#include "runtime/tile_layouts.h"

namespace tilec {
namespace {

// The CUDA device of the tensor arguments (all on one), or -1 when there are none.
int cuda_device(const Kernel::Impl& k, const std::vector<ArgValue>& args) {
  int device = -1, first = -1;
  for (int p = 0; p < static_cast<int>(args.size()); ++p) {
    if (!k.tile.params[p].is_tensor()) continue;
    const TensorView& view = std::get<TensorView>(args[p]);
    if (first < 0) {
      device = view.device_id;
      first = p;
    } else if (view.device_id != device) {
      throw ArgumentError("argument '" + k.params[p].name + "' is on CUDA device " +
                          std::to_string(view.device_id) + " but argument '" + k.params[first].name +
                          "' is on device " + std::to_string(device) + ": the tensors of kernel '" +
                          k.name + "' must all be on one device");
    }
  }
  return device;
}

// Whether the contiguous variant runs these arguments: every tensor argument contiguous
// (strides of dims longer than 1 are the products of the later dims) with 16-byte aligned
// data. A zero-size tensor is never accessed, so its strides and data don't matter, but no
// TMA tensor map describes it: then the general variant (which has none) runs.
bool contiguous_args(const Kernel::Impl& k, const std::vector<ArgValue>& args) {
  for (size_t p = 0; p < args.size(); ++p) {
    if (!k.tile.params[p].is_tensor()) continue;
    const TensorView& view = std::get<TensorView>(args[p]);
    if (view.empty()) {
      for (const BuiltLaunch& launch : k.first.launches) {
        const auto& maps = launch.abi.tensor_maps;
        if (std::any_of(maps.begin(), maps.end(), [&](const auto& map) { return map.param == static_cast<int>(p); }))
          return false;
      }
      continue;
    }
    if (reinterpret_cast<uintptr_t>(view.data) % 16 != 0) return false;
    int64_t expected = 1;
    for (size_t d = view.shape.size(); d-- > 0;) {
      if (view.shape[d] > 1 && view.strides[d] != expected) return false;
      expected *= view.shape[d];
    }
  }
  return true;
}

void launch_cpu(const Kernel::Impl& k, const BuiltLaunch& v, const runtime::LaunchArgs& args) {
  v.cpu_module->call(args.tensors.data(), args.ints.data(), args.floats.data());
  int argument = 0;
  if (v.kernel_error)
    if (const char* error = v.kernel_error(&argument)) {
      if (argument) throw ArgumentError("kernel '" + k.name + "': " + error);
      throw std::runtime_error("kernel '" + k.name + "': " + error);
    }
}

// On `device` (-1: the current context's), in the order of `stream`'s work.
void launch_cuda(const Kernel::Impl& k, const BuiltLaunch& v, const std::vector<ArgValue>& call_args,
                 const runtime::LaunchArgs& args, int device, void* stream) {
  std::optional<runtime::LaunchDims> grid = runtime::launch_grid(v.cuda_launch.grid, v.abi, args.ints, k.name);
  if (!grid) return;
  const std::array<int64_t, 3>& cluster = v.cuda_launch.cluster_dims;
  if (grid->x % cluster[0] != 0 || grid->y % cluster[1] != 0 || grid->z % cluster[2] != 0)
    throw ArgumentError("kernel '" + k.name + "': its grid is " + std::to_string(grid->x) + " x " +
                        std::to_string(grid->y) + " x " + std::to_string(grid->z) +
                        " blocks for these arguments, not a multiple of its thread block clusters (cluster_dims " +
                        std::to_string(cluster[0]) + " x " + std::to_string(cluster[1]) + " x " +
                        std::to_string(cluster[2]) + ")");
  // A persistent kernel counts its grid's tiles in 32-bit integers.
  const int64_t tiles = int64_t{grid->x} * grid->y * grid->z;
  if (v.cuda_launch.persistent && tiles > std::numeric_limits<int32_t>::max())
    throw ArgumentError("kernel '" + k.name + "': its grid is " + std::to_string(tiles) +
                        " tiles for these arguments, over the 2^31 - 1 a persistent kernel counts");
  const runtime::CudaDriver* driver = runtime::CudaDriver::get();
  if (driver == nullptr)
    throw std::runtime_error("cannot launch CUDA kernel '" + k.name + "': " +
                             runtime::CudaDriver::unavailable_reason());
  std::vector<uint64_t> words = runtime::cuda_param_words(args);
  runtime::append_tensor_maps(*driver, v.abi, call_args, k.params, k.name, &words);
  void* params[] = {words.data()};
  std::optional<runtime::DeviceScope> scope;
  if (device >= 0) scope.emplace(*driver, device);
  if (v.cuda_launch.persistent) {  // one wave of blocks loops over the tiles
    const int64_t wave = v.cuda_module->wave_blocks(v.cuda_launch.threads,
                                                    static_cast<size_t>(v.cuda_launch.dynamic_shared_bytes));
    grid = runtime::LaunchDims{static_cast<unsigned>(std::min(tiles, wave)), 1, 1};
  }
  v.cuda_module->launch(*grid, {static_cast<unsigned>(v.cuda_launch.threads), 1, 1},
                        static_cast<size_t>(v.cuda_launch.dynamic_shared_bytes), stream, params,
                        v.cuda_launch.cooperative);
}

}  // namespace

const std::string& Kernel::name() const { return impl_->name; }
const std::string& Kernel::target() const { return impl_->target.name; }
const std::string& Kernel::arch() const { return impl_->target.arch; }
const std::vector<ParamInfo>& Kernel::params() const { return impl_->params; }
const std::vector<int>& Kernel::out_idx() const { return impl_->out_idx; }
const std::vector<ConstDimInfo>& Kernel::const_dims() const { return impl_->const_dims; }
const std::string& Kernel::source() const { return impl_->first.source; }
const std::string& Kernel::tile_ir() const { return impl_->tile_ir; }
const std::string& Kernel::ir() const { return impl_->first.ir; }
double Kernel::compile_seconds() const { return impl_->compile_seconds; }

std::vector<std::vector<int64_t>> Kernel::output_shapes(
    const std::vector<std::optional<ArgValue>>& args) const {
  return runtime::solve_output_shapes(*impl_, args);
}

const std::vector<TileLayout>& Kernel::layouts() const {
  Impl& k = *impl_;
  std::call_once(k.layouts_once, [&k] {  // a throw leaves the flag unset and k.layouts empty
    std::vector<TileLayout> all;
    for (const ir::Stmt& body : k.laid_out)
      for (TileLayout& layout : runtime::tile_layouts(body)) all.push_back(std::move(layout));
    k.layouts = std::move(all);
  });
  return k.layouts;
}

std::vector<std::vector<int64_t>> Kernel::output_shapes(
    const std::vector<std::optional<std::vector<int64_t>>>& shapes) const {
  return runtime::solve_output_shapes(*impl_, shapes);
}

void Kernel::launch(const std::vector<ArgValue>& args, void* stream) const {
  Impl& k = *impl_;
  if (k.target.is_hip()) {
    const std::string what = "kernel '" + k.name + "' was compiled for hip " + k.target.arch;
    if (!runtime::HipRuntime::get())
      throw std::runtime_error(what + " and can't run here: " + runtime::HipRuntime::unavailable_reason() +
                               "; run it with target 'cpu' for results");
    throw std::runtime_error(what + ": launching on an AMD GPU is not implemented yet (the HIP runtime loads, but "
                             "tilec reads no ROCm tensors); run it with target 'cpu' for results");
  }
  const NvtxRange range(k.name);
  runtime::check_launch_args(k, args);
  const int device = k.target.is_cuda() ? cuda_device(k, args) : -1;
  const KernelVariant& v = !k.first_is_contiguous || contiguous_args(k, args) ? k.first : general_variant(k);
  for (const BuiltLaunch& launch : v.launches) {  // in order, on one stream
    runtime::LaunchArgs packed = runtime::pack_launch_args(launch.abi, args, k.name);
    if (k.target.is_cuda()) launch_cuda(k, launch, args, packed, device, stream);
    else launch_cpu(k, launch, packed);
  }
}

}  // namespace tilec
