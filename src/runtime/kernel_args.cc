#include "runtime/kernel_args.h"

#include <limits>
#include <map>
#include <variant>

#include "ir/printer.h"
#include "ir/simplify.h"
#include "ir/substitute.h"

namespace tilec::runtime {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

const char* arg_kind(const ArgValue& a) {
  switch (a.index()) {
    case 0: return "a tensor";
    case 1: return "an int";
    case 2: return "a float";
    default: return "a bool";
  }
}

// Symbolic dims solved from the tensors given; checks every constant and
// already-solved dim, and dims given by expressions once all are known.
class ShapeSolver {
 public:
  explicit ShapeSolver(const Kernel::Impl& k) : k_(k) {}

  void add(int param, const TensorView& view) {
    const ir::Param& p = k_.tile.params[param];
    const auto& shape = p.buffer->shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t actual = view.shape[d];
      int64_t expected;
      if (ir::is_const_int(shape[d], &expected)) {
        if (actual != expected) mismatch(param, view, d, std::to_string(expected));
      } else if (auto* var = shape[d].as<ir::Var>()) {
        auto it = values_.find(var);
        if (it == values_.end()) {
          check_fits(param, d, actual, var->dtype, var->name);
          values_[var] = actual;
          first_[var] = {param, static_cast<int>(d)};
        } else if (it->second != actual) {
          auto [p0, d0] = first_[var];
          throw ArgumentError("argument '" + p.name + "' has shape " + shape_text(view.shape) +
                              " but its dim " + std::to_string(d) + " is '" + var->name + "' = " +
                              std::to_string(it->second) + " (from dim " + std::to_string(d0) +
                              " of argument '" + k_.tile.params[p0].name + "')");
        }
      } else {
        deferred_.push_back({param, static_cast<int>(d), actual, view.shape});
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
      if (*value != d.actual) {
        TensorView v;
        v.shape = d.shape;
        mismatch(d.param, v, d.dim, ir::to_string(p.buffer->shape[d.dim]) + " = " + std::to_string(*value));
      }
    }
  }

  std::optional<int64_t> evaluate(const ir::Expr& e) const {
    ir::VarMap map;
    for (const auto& [var, value] : values_) map[var] = ir::make_int(value, var->dtype);
    int64_t v;
    if (ir::is_const_int(ir::simplify(ir::substitute(e, map)), &v)) return v;
    return std::nullopt;
  }

 private:
  struct Deferred {
    int param, dim;
    int64_t actual;
    std::vector<int64_t> shape;
  };

  [[noreturn]] void mismatch(int param, const TensorView& view, size_t d, const std::string& expected) const {
    throw ArgumentError("argument '" + k_.tile.params[param].name + "' has shape " +
                        shape_text(view.shape) + " but dim " + std::to_string(d) + " must be " +
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

void check_tensor(const Kernel::Impl& k, int index, const TensorView& view) {
  const ir::Param& p = k.tile.params[index];
  const ir::Buffer& b = p.buffer;
  if (view.dtype != b->dtype)
    throw ArgumentError("argument '" + p.name + "' has dtype " + view.dtype.name() + " but kernel '" +
                        k.name + "' expects " + b->dtype.name());
  if (view.shape.size() != b->shape.size())
    throw ArgumentError("argument '" + p.name + "' has " + std::to_string(view.shape.size()) +
                        " dims " + shape_text(view.shape) + " but kernel '" + k.name + "' expects " +
                        std::to_string(b->shape.size()));
  if (k.target == "cpu" && view.device != DeviceType::CPU)
    throw ArgumentError("argument '" + p.name + "' is on a GPU but kernel '" + k.name +
                        "' was compiled for the CPU");
  if (k.target == "cuda" && view.device != DeviceType::CUDA)
    throw ArgumentError("argument '" + p.name + "' is in CPU memory but kernel '" + k.name +
                        "' was compiled for CUDA: pass a tensor on the GPU");
  if (view.strides.size() != view.shape.size())
    throw ArgumentError("argument '" + p.name + "' has no strides for each dim");
  for (size_t d = 0; d < view.shape.size(); ++d)
    if (view.shape[d] < 0)
      throw ArgumentError("argument '" + p.name + "' has shape " + shape_text(view.shape) + ": dim " +
                          std::to_string(d) + " is negative");
  // Nothing of a zero-size tensor is read or written: any data and strides will do (NumPy
  // gives zero-row arrays strides of 0).
  if (view.empty()) return;
  if (view.data == nullptr) throw ArgumentError("argument '" + p.name + "' has no data (null pointer)");
  for (size_t d = 0; d < b->strides.size(); ++d) {
    int64_t expected;
    if (ir::is_const_int(b->strides[d], &expected) && view.shape[d] > 1 && view.strides[d] != expected)
      throw ArgumentError("argument '" + p.name + "' must have stride " + std::to_string(expected) +
                          " in dim " + std::to_string(d) + " (got " + std::to_string(view.strides[d]) +
                          "); pass a contiguous copy");
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
      if (!view) throw ArgumentError("argument '" + p.name + "' must be a tensor, not " + arg_kind(args[i]));
      check_tensor(k, static_cast<int>(i), *view);
      solver.add(static_cast<int>(i), *view);
    } else if (std::holds_alternative<TensorView>(args[i])) {
      throw ArgumentError("argument '" + p.name + "' must be a " + p.var->dtype.name() + " scalar, not a tensor");
    } else if (!p.var->dtype.is_float() && std::holds_alternative<double>(args[i])) {
      throw ArgumentError("argument '" + p.name + "' must be an integer (" + p.var->dtype.name() + "), not a float");
    }
  }
  solver.finish();
}

std::vector<std::vector<int64_t>> solve_output_shapes(const Kernel::Impl& k,
                                                      const std::vector<std::optional<ArgValue>>& args) {
  check_count(k, args.size());
  ShapeSolver solver(k);
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i] || !k.tile.params[i].is_tensor()) continue;
    const auto* view = std::get_if<TensorView>(&*args[i]);
    if (!view) throw ArgumentError("argument '" + k.params[i].name + "' must be a tensor, not " + arg_kind(*args[i]));
    check_tensor(k, static_cast<int>(i), *view);
    solver.add(static_cast<int>(i), *view);
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
      shape.push_back(*v);
    }
    shapes.push_back(shape);
  }
  return shapes;
}

}  // namespace tilec::runtime
