#include "runtime/kernel_args.h"

#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <variant>

#include "ir/printer.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "runtime/launch_args.h"

namespace tilec {

std::optional<ByteRange> TensorView::reach(int64_t element_bytes) const {
  if (empty()) return ByteRange{};
  int64_t lowest = 0, highest = 0;  // the offsets of the elements furthest from data
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t offset;
    if (__builtin_mul_overflow(shape[d] - 1, strides[d], &offset)) return std::nullopt;
    int64_t& furthest = offset < 0 ? lowest : highest;
    if (__builtin_add_overflow(furthest, offset, &furthest)) return std::nullopt;
  }
  ByteRange range;
  if (__builtin_mul_overflow(lowest, element_bytes, &range.begin) ||
      __builtin_mul_overflow(highest, element_bytes, &range.end) ||
      __builtin_add_overflow(range.end, element_bytes, &range.end))
    return std::nullopt;
  return range;
}

namespace runtime {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string range_text(const ByteRange& range) {
  return "[" + std::to_string(range.begin) + ", " + std::to_string(range.end) + ")";
}

const char* arg_kind(const ArgValue& a) {
  if (std::holds_alternative<TensorView>(a)) return "a tensor";
  if (std::holds_alternative<double>(a)) return "a float";
  if (std::holds_alternative<bool>(a)) return "a bool";
  return "an int";
}

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// The values of an integer or bool dtype: [min, max].
struct IntRange {
  int64_t min;
  uint64_t max;
};

IntRange int_range(DType t) {
  if (t.is_bool()) return {0, 1};
  const int bits = t.bits();
  if (t.is_uint()) return {0, bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1};
  return {bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)),
          (uint64_t{1} << (bits - 1)) - 1};
}

bool in_range(const ArgValue& scalar, const IntRange& range) {
  if (const auto* v = std::get_if<int64_t>(&scalar))
    return *v < 0 ? *v >= range.min : static_cast<uint64_t>(*v) <= range.max;
  if (const auto* v = std::get_if<uint64_t>(&scalar)) return *v <= range.max;
  return true;  // a bool
}

std::string int_text(const ArgValue& scalar) {
  if (const auto* v = std::get_if<int64_t>(&scalar)) return std::to_string(*v);
  return std::to_string(std::get<uint64_t>(scalar));
}

// The largest finite value of a float dtype.
double max_finite(DType t) {
  switch (t.code()) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return std::numeric_limits<float>::max();
    case DType::Float8E4M3: return 448.0;
    case DType::Float8E5M2: return 57344.0;
    default: return std::numeric_limits<double>::max();
  }
}

// A scalar param takes a number of its kind within its dtype's range: an integer or bool
// param no float; a float param any number within its finite range, or inf or NaN (as torch
// refuses a finite value its dtype would overflow to infinity).
void check_scalar(const ir::Param& p, const ArgValue& a) {
  const DType t = p.var->dtype;
  if (std::holds_alternative<TensorView>(a))
    throw ArgumentTypeError("argument '" + p.name + "' must be a scalar (" + t.name() + "), not a tensor");
  if (t.is_float()) {
    const double value = float_word(a), max = max_finite(t);
    if (std::isfinite(value) && std::abs(value) > max)
      throw ArgumentError("argument '" + p.name + "' is " + number_text(value) + ", outside " + t.name() +
                          "'s finite range [-" + number_text(max) + ", " + number_text(max) + "]");
    return;
  }
  if (std::holds_alternative<double>(a))
    throw ArgumentTypeError("argument '" + p.name + "' must be " +
                            (t.is_bool() ? std::string("a bool") : "an integer (" + std::string(t.name()) + ")") +
                            ", not a float");
  const IntRange range = int_range(t);
  if (!in_range(a, range))
    throw ArgumentError("argument '" + p.name + "' is " + int_text(a) + ", outside " + t.name() + "'s range [" +
                        std::to_string(range.min) + ", " + std::to_string(range.max) + "]");
}

// Symbolic dims solved from the tensors given; checks every constant and
// already-solved dim, and dims given by expressions once all are known.
class ShapeSolver {
 public:
  explicit ShapeSolver(const Kernel::Impl& k) : k_(k) {}

  // `actual`: a tensor's shape, of the param's rank.
  void add(int param, const std::vector<int64_t>& actual_shape) {
    const ir::Param& p = k_.tile.params[param];
    const auto& shape = p.buffer->shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t actual = actual_shape[d];
      int64_t expected;
      if (ir::is_const_int(shape[d], &expected)) {
        if (actual != expected) mismatch(param, actual_shape, d, std::to_string(expected));
      } else if (auto* var = shape[d].as<ir::Var>()) {
        auto it = values_.find(var);
        if (it == values_.end()) {
          check_fits(param, d, actual, var->dtype, var->name);
          values_[var] = actual;
          first_[var] = {param, static_cast<int>(d)};
        } else if (it->second != actual) {
          auto [p0, d0] = first_[var];
          throw ArgumentError("argument '" + p.name + "' has shape " + shape_text(actual_shape) +
                              " but its dim " + std::to_string(d) + " is '" + var->name + "' = " +
                              std::to_string(it->second) + " (from dim " + std::to_string(d0) +
                              " of argument '" + k_.tile.params[p0].name + "')");
        }
      } else {
        deferred_.push_back({param, static_cast<int>(d), actual, actual_shape});
      }
    }
  }

  // Checks dims written as expressions (n * 2) once every symbol is known.
  void finish() {
    for (const auto& d : deferred_) {
      const ir::Param& p = k_.tile.params[d.param];
      auto value = evaluate(p.buffer->shape[d.dim]);
      if (!value)
        throw ArgumentError("cannot check dim " + std::to_string(d.dim) + " of argument '" + p.name +
                            "' (" + ir::to_string(p.buffer->shape[d.dim]) +
                            "): its symbols appear in no tensor's shape by themselves");
      if (*value != d.actual)
        mismatch(d.param, d.shape, d.dim, ir::to_string(p.buffer->shape[d.dim]) + " = " + std::to_string(*value));
    }
  }

  std::optional<int64_t> evaluate(const ir::Expr& e) const {
    int64_t v;
    // A constant or a symbol by itself (most output dims) needs no IR built: this runs each call
    // that allocates an output.
    if (ir::is_const_int(e, &v)) return v;
    if (const auto* var = e.as<ir::Var>()) {
      auto it = values_.find(var);
      if (it != values_.end()) return it->second;
    }
    ir::VarMap map;
    for (const auto& [var, value] : values_) map[var] = ir::make_int(value, var->dtype);
    if (ir::is_const_int(ir::simplify(ir::substitute(e, map)), &v)) return v;
    return std::nullopt;
  }

 private:
  struct Deferred {
    int param, dim;
    int64_t actual;
    std::vector<int64_t> shape;
  };

  [[noreturn]] void mismatch(int param, const std::vector<int64_t>& shape, size_t d,
                             const std::string& expected) const {
    throw ArgumentError("argument '" + k_.tile.params[param].name + "' has shape " +
                        shape_text(shape) + " but dim " + std::to_string(d) + " must be " +
                        expected);
  }

  void check_fits(int param, size_t d, int64_t value, DType t, const std::string& name) const {
    int64_t max = t.bits() >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (t.bits() - 1)) - 1;
    if (value > max)
      throw ArgumentError("argument '" + k_.tile.params[param].name + "': dim " + std::to_string(d) + " ('" +
                          name + "' = " + std::to_string(value) + ") does not fit " + t.name());
  }

  const Kernel::Impl& k_;
  std::map<const ir::ExprNode*, int64_t> values_;
  std::map<const ir::ExprNode*, std::pair<int, int>> first_;
  std::vector<Deferred> deferred_;
};

// A tensor's shape: of the param's rank, no dim negative.
void check_shape(const Kernel::Impl& k, int index, const std::vector<int64_t>& shape) {
  const ir::Param& p = k.tile.params[index];
  if (shape.size() != p.buffer->shape.size())
    throw ArgumentError("argument '" + p.name + "' has " + std::to_string(shape.size()) + " dims " +
                        shape_text(shape) + " but kernel '" + k.name + "' expects " +
                        std::to_string(p.buffer->shape.size()));
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0)
      throw ArgumentError("argument '" + p.name + "' has shape " + shape_text(shape) + ": dim " +
                          std::to_string(d) + " is negative");
}

void check_tensor(const Kernel::Impl& k, int index, const TensorView& view) {
  const ir::Param& p = k.tile.params[index];
  const ir::Buffer& b = p.buffer;
  if (view.dtype != b->dtype)
    throw ArgumentError("argument '" + p.name + "' has dtype " + view.dtype.name() + " but kernel '" +
                        k.name + "' expects " + b->dtype.name());
  check_shape(k, index, view.shape);
  if (k.target.is_cpu() && view.device != DeviceType::CPU)
    throw ArgumentError("argument '" + p.name + "' is on a GPU but kernel '" + k.name +
                        "' was compiled for the CPU");
  if (k.target.is_cuda() && view.device != DeviceType::CUDA)
    throw ArgumentError("argument '" + p.name + "' is in CPU memory but kernel '" + k.name +
                        "' was compiled for CUDA: pass a tensor on the GPU");
  if (view.strides.size() != view.shape.size())
    throw ArgumentError("argument '" + p.name + "' has no strides for each dim");
  // Nothing of a zero-size tensor is read or written: any data and strides will do (NumPy
  // gives zero-row arrays strides of 0).
  if (view.empty()) return;
  if (view.data == nullptr) throw ArgumentError("argument '" + p.name + "' has no data (null pointer)");
  if (reinterpret_cast<uintptr_t>(view.data) % view.dtype.bytes() != 0)
    throw ArgumentError("argument '" + p.name + "' has its data at an address that is not a multiple of its " +
                        view.dtype.name() + " elements' " + std::to_string(view.dtype.bytes()) +
                        " bytes: pass an aligned copy");
  if (view.read_only && k.params[index].written)
    throw ArgumentError("argument '" + p.name + "' is read-only, but kernel '" + k.name +
                        "' writes it: pass a writable array");
  const std::optional<ByteRange> reach = view.reach(view.dtype.bytes());
  auto layout = [&] {
    return "argument '" + p.name + "' (" + view.dtype.name() + " of shape " + shape_text(view.shape) +
           " and strides " + shape_text(view.strides) + ")";
  };
  if (!reach) throw ArgumentError(layout() + " reaches past 2^63 bytes from its data");
  if (view.memory && (reach->begin < view.memory->begin || reach->end > view.memory->end))
    throw ArgumentError(layout() + " covers bytes " + range_text(*reach) + " of its data, past the " +
                        range_text(*view.memory) + " its memory holds");
  for (size_t d = 0; d < b->strides.size(); ++d) {
    int64_t expected;
    if (ir::is_const_int(b->strides[d], &expected) && view.shape[d] > 1 && view.strides[d] != expected)
      throw ArgumentError("argument '" + p.name + "' must have stride " + std::to_string(expected) +
                          " in dim " + std::to_string(d) + " (got " + std::to_string(view.strides[d]) +
                          "); pass a contiguous copy" +
                          (b->layout ? std::string(" (T.annotate_layout gave it a layout: the kernel places each "
                                                   "element itself, over the whole tensor's memory)")
                                     : std::string()));
  }
}

void check_count(const Kernel::Impl& k, size_t given) {
  if (given == k.params.size()) return;
  std::string names;
  for (const auto& p : k.params) names += (names.empty() ? "" : ", ") + p.name;
  throw ArgumentError("kernel '" + k.name + "' takes " + std::to_string(k.params.size()) +
                      " arguments (" + names + ") but " + std::to_string(given) + " were given");
}

}  // namespace

void check_launch_args(const Kernel::Impl& k, const std::vector<ArgValue>& args) {
  check_count(k, args.size());
  ShapeSolver solver(k);
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::Param& p = k.tile.params[i];
    if (p.is_tensor()) {
      const auto* view = std::get_if<TensorView>(&args[i]);
      if (!view) throw ArgumentTypeError("argument '" + p.name + "' must be a tensor, not " + arg_kind(args[i]));
      check_tensor(k, static_cast<int>(i), *view);
      solver.add(static_cast<int>(i), view->shape);
    } else {
      check_scalar(p, args[i]);
    }
  }
  solver.finish();
}

std::vector<std::vector<int64_t>> solve_output_shapes(const Kernel::Impl& k,
                                                      const std::vector<std::optional<ArgValue>>& args) {
  check_count(k, args.size());
  std::vector<std::optional<std::vector<int64_t>>> shapes(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i] || !k.tile.params[i].is_tensor()) continue;
    const auto* view = std::get_if<TensorView>(&*args[i]);
    if (!view)
      throw ArgumentTypeError("argument '" + k.params[i].name + "' must be a tensor, not " + arg_kind(*args[i]));
    check_tensor(k, static_cast<int>(i), *view);
    shapes[i] = view->shape;
  }
  return solve_output_shapes(k, shapes);
}

std::vector<std::vector<int64_t>> solve_output_shapes(const Kernel::Impl& k,
                                                      const std::vector<std::optional<std::vector<int64_t>>>& args) {
  check_count(k, args.size());
  ShapeSolver solver(k);
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i] || !k.tile.params[i].is_tensor()) continue;
    check_shape(k, static_cast<int>(i), *args[i]);
    solver.add(static_cast<int>(i), *args[i]);
  }
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] || !k.tile.params[i].is_tensor()) continue;
    std::vector<int64_t> shape;
    const auto& dims = k.tile.params[i].buffer->shape;
    for (size_t d = 0; d < dims.size(); ++d) {
      auto v = solver.evaluate(dims[d]);
      if (!v)
        throw ArgumentError("cannot size output '" + k.params[i].name + "': its dim " + std::to_string(d) +
                            " (" + ir::to_string(dims[d]) + ") appears in no input tensor's shape");
      if (*v < 0)
        throw ArgumentError("cannot size output '" + k.params[i].name + "': its dim " + std::to_string(d) +
                            " (" + ir::to_string(dims[d]) + ") is " + std::to_string(*v) + " for these arguments");
      shape.push_back(*v);
    }
    shapes.push_back(shape);
  }
  return shapes;
}

}  // namespace runtime
}  // namespace tilec
