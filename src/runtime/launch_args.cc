#include "runtime/launch_args.h"

#include <algorithm>
#include <cstring>
#include <variant>

namespace tilec::runtime {

int64_t int_word(const ArgValue& scalar) {
  if (const auto* v = std::get_if<int64_t>(&scalar)) return *v;
  if (const auto* v = std::get_if<uint64_t>(&scalar)) return static_cast<int64_t>(*v);
  return std::get<bool>(scalar) ? 1 : 0;
}

double float_word(const ArgValue& scalar) {
  if (const auto* v = std::get_if<double>(&scalar)) return *v;
  if (const auto* v = std::get_if<int64_t>(&scalar)) return static_cast<double>(*v);
  if (const auto* v = std::get_if<uint64_t>(&scalar)) return static_cast<double>(*v);
  return std::get<bool>(scalar) ? 1.0 : 0.0;
}

LaunchArgs pack_launch_args(const codegen::KernelAbi& abi, const std::vector<ArgValue>& args,
                            const std::string& kernel_name) {
  LaunchArgs packed;
  for (int p : abi.tensor_params) packed.tensors.push_back(std::get<TensorView>(args[p]).data);
  for (const codegen::IntSlot& slot : abi.int_slots) {
    switch (slot.source) {
      case codegen::IntSlot::Source::SymbolicDim: {
        if (slot.param < 0)
          throw ArgumentError("kernel '" + kernel_name + "': symbolic dim '" + slot.var.as<ir::Var>()->name +
                              "' is not the whole size of any tensor dim, so it can't be read from the arguments");
        packed.ints.push_back(std::get<TensorView>(args[slot.param]).shape[slot.dim]);
        break;
      }
      case codegen::IntSlot::Source::Stride:
        packed.ints.push_back(std::get<TensorView>(args[slot.param]).strides[slot.dim]);
        break;
      case codegen::IntSlot::Source::Scalar:
        packed.ints.push_back(int_word(args[slot.param]));
        break;
    }
  }
  for (int p : abi.float_params) packed.floats.push_back(float_word(args[p]));
  return packed;
}

std::vector<uint64_t> cuda_param_words(const LaunchArgs& args) {
  const size_t tensors = std::max<size_t>(1, args.tensors.size());
  const size_t ints = std::max<size_t>(1, args.ints.size());
  const size_t floats = std::max<size_t>(1, args.floats.size());
  std::vector<uint64_t> words(tensors + ints + floats, 0);
  for (size_t i = 0; i < args.tensors.size(); ++i)
    words[i] = reinterpret_cast<uintptr_t>(args.tensors[i]);
  for (size_t i = 0; i < args.ints.size(); ++i)
    words[tensors + i] = static_cast<uint64_t>(args.ints[i]);
  static_assert(sizeof(double) == sizeof(uint64_t));
  if (!args.floats.empty())
    std::memcpy(&words[tensors + ints], args.floats.data(), args.floats.size() * sizeof(double));
  return words;
}

}  // namespace tilec::runtime
