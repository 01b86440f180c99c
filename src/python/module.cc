// tilec._core: the nanobind bindings of include/tilec/tilec.h (no logic here).
//
// Compile-time values arrive from Python (tilec/capture.py) already tagged as
// (tag, payload) tuples:
//   ("none", None) ("bool", b) ("int", i) ("float", x) ("str", s)
//   ("dtype", name) ("symbolic", (name, dtype_name)) ("module", name)
//   ("symbolic_arith", (operator, tagged, tagged))
//   ("tuple", [tagged...]) ("list", [tagged...]) ("opaque", type_name)
//   ("function", (source, filename, first_line, name, {name: tagged}))
//   ("tensor_spec", ([dims...], dtype_name)) ("host", object)
// A "host" object (a module, class or builtin function) stays in Python: the compiler reads
// its attributes and calls it through PythonObject below, which takes the GIL for each.
// Launch arguments are tensors (anything DLPack-capable), (tensor, dtype_name)
// pairs for element types the producer can't export (numpy's ml_dtypes arrays
// arrive as same-width unsigned views), ints, floats and bools.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "python/dlpack_exchange.h"
#include "tilec/tilec.h"

namespace nb = nanobind;

namespace {

using tilec::DType;
using tilec::python::dtype_of;
using tilec::Value;
using Tensor = nb::ndarray<nb::ro>;

DType dtype_named(const std::string& name) {
  if (auto dtype = DType::from_name(name)) return *dtype;
  throw nb::value_error(("tilec has no element type named '" + name + "'").c_str());
}

// How deep tagged values may nest (tuples, lists, functions' bindings): capture.py stops at
// Python's recursion limit (1000 by default), and this bounds any caller before a deeper value
// could exhaust the C++ stack here or in the compiler.
constexpr int kMaxValueDepth = 1000;

Value to_value(nb::handle tagged, int depth);

// What a host object's attribute or call gave, as the compiler's value (tilec.capture tags it).
Value from_python(nb::handle value) {
  return to_value(nb::module_::import_("tilec.capture").attr("host_result")(value), 0);
}

nb::object to_python(const Value& value);

class PythonObject final : public tilec::HostObject {
 public:
  explicit PythonObject(nb::handle object) : object_(nb::borrow(object)) {}
  // The last reference may go while the compiler runs without the GIL.
  ~PythonObject() override {
    nb::gil_scoped_acquire gil;
    object_.reset();
  }

  std::string description() const override {
    nb::gil_scoped_acquire gil;
    std::string type = nb::cast<std::string>(nb::handle(Py_TYPE(object_.ptr())).attr("__name__"));
    if (nb::hasattr(object_, "__name__") && nb::isinstance<nb::str>(object_.attr("__name__")))
      return type + " " + nb::cast<std::string>(object_.attr("__name__"));
    return "value of type '" + type + "'";
  }

  Value attribute(const std::string& name) const override {
    nb::gil_scoped_acquire gil;
    try {
      return from_python(object_.attr(name.c_str()));
    } catch (const nb::python_error& e) {
      throw tilec::HostError(message(e));
    }
  }

  Value call(const std::vector<Value>& positional,
             const std::vector<std::pair<std::string, Value>>& keywords) const override {
    nb::gil_scoped_acquire gil;
    try {
      nb::list args;
      for (const Value& v : positional) args.append(to_python(v));
      nb::dict kwargs;
      for (const auto& [name, v] : keywords) kwargs[name.c_str()] = to_python(v);
      return from_python(object_(*nb::tuple(args), **kwargs));
    } catch (const nb::python_error& e) {
      throw tilec::HostError(message(e));
    }
  }

  nb::handle object() const { return object_; }

 private:
  // "ValueError: math domain error"
  static std::string message(const nb::python_error& e) {
    std::string type = nb::cast<std::string>(e.type().attr("__name__"));
    std::string text = nb::cast<std::string>(nb::str(e.value()));
    return text.empty() ? type : type + ": " + text;
  }

  nb::object object_;
};

nb::object to_python(const Value& value) {
  using VK = Value::Kind;
  switch (value.kind) {
    case VK::None: return nb::none();
    case VK::Bool: return nb::bool_(value.bool_value);
    case VK::Int: return nb::int_(value.int_value);
    case VK::Float: return nb::float_(value.float_value);
    case VK::String: return nb::str(value.text.c_str());
    case VK::DType: return nb::module_::import_("tilec.language").attr("dtype")(value.dtype.name());
    case VK::Tuple: case VK::List: {
      nb::list items;
      for (const Value& item : value.items) items.append(to_python(item));
      return value.kind == VK::Tuple ? nb::object(nb::tuple(items)) : nb::object(items);
    }
    case VK::Host:
      if (auto* python = dynamic_cast<const PythonObject*>(value.host.get()))
        return nb::borrow(python->object());
      break;
    default:
      break;
  }
  throw tilec::HostError("this value cannot be passed to Python");
}

std::vector<Value> to_values(nb::handle items, int depth) {
  std::vector<Value> values;
  for (nb::handle item : items) values.push_back(to_value(item, depth + 1));
  return values;
}

std::map<std::string, Value> to_bindings(const nb::dict& bindings, int depth) {
  std::map<std::string, Value> result;
  for (auto [name, value] : bindings) result[nb::cast<std::string>(name)] = to_value(value, depth + 1);
  return result;
}

tilec::FunctionSource make_function(std::string source, std::string filename, int first_line,
                                    std::string name, const nb::dict& bindings, int depth = 0) {
  return tilec::FunctionSource{std::move(source), std::move(filename), first_line,
                               std::move(name), to_bindings(bindings, depth)};
}

Value to_value(nb::handle tagged, int depth) {
  if (depth > kMaxValueDepth)
    throw nb::value_error(("a compile-time value nests more than " + std::to_string(kMaxValueDepth) +
                           " tuples, lists or functions deep").c_str());
  auto pair = nb::cast<nb::tuple>(tagged);
  if (pair.size() != 2) throw nb::value_error("a tagged value is a (tag, payload) pair");
  auto tag = nb::cast<std::string>(pair[0]);
  nb::handle payload = pair[1];
  if (tag == "none") return Value::none();
  if (tag == "bool") return Value::of_bool(nb::cast<bool>(payload));
  if (tag == "int") return Value::of_int(nb::cast<int64_t>(payload));
  if (tag == "float") return Value::of_float(nb::cast<double>(payload));
  if (tag == "str") return Value::of_string(nb::cast<std::string>(payload));
  if (tag == "module") {  // tilec's own names (modules, DataType): the compiler knows what they hold
    auto name = nb::cast<std::string>(payload);
    Value module = Value::module(name);
    nb::object imported = nb::module_::import_("sys").attr("modules").attr("get")(name.c_str());
    if (!imported.is_none()) module.host = std::make_shared<PythonObject>(imported);
    return module;
  }
  if (tag == "opaque") return Value::opaque(nb::cast<std::string>(payload));
  if (tag == "host") return Value::of_host(std::make_shared<PythonObject>(payload));
  if (tag == "tuple") return Value::tuple(to_values(payload, depth));
  if (tag == "list") return Value::list(to_values(payload, depth));
  if (tag == "dtype") {
    // A dtype the core doesn't know (numpy's complex64, say) is only an error
    // if the kernel uses it.
    auto name = nb::cast<std::string>(payload);
    if (auto dtype = DType::from_name(name)) return Value::of_dtype(*dtype);
    return Value::opaque("dtype " + name);
  }
  if (tag == "symbolic") {
    auto [name, dtype] = nb::cast<std::pair<std::string, std::string>>(payload);
    Value value = Value::symbolic(name);
    value.dtype = dtype_named(dtype);
    return value;
  }
  if (tag == "symbolic_arith") {
    auto [op, left, right] = nb::cast<std::tuple<std::string, nb::handle, nb::handle>>(payload);
    if (op != "+" && op != "-" && op != "*" && op != "//" && op != "%")
      throw nb::value_error(("symbolic dims' arithmetic has no operator '" + op + "'").c_str());
    Value value;
    value.kind = Value::Kind::Arithmetic;
    value.text = op;
    value.items = {to_value(left, depth + 1), to_value(right, depth + 1)};
    return value;
  }
  if (tag == "tensor_spec") {
    auto [shape, dtype] = nb::cast<std::pair<std::vector<int64_t>, std::string>>(payload);
    return Value::tensor_spec(std::move(shape), dtype_named(dtype));
  }
  if (tag == "function") {
    auto [source, filename, first_line, name, bindings] =
        nb::cast<std::tuple<std::string, std::string, int, std::string, nb::dict>>(payload);
    return Value::of_function(std::make_shared<const tilec::FunctionSource>(
        make_function(std::move(source), std::move(filename), first_line, std::move(name),
                      bindings, depth)));
  }
  throw nb::value_error(("unknown value tag '" + tag + "'").c_str());
}

std::string param_label(const tilec::Kernel& kernel, size_t index) {
  const auto& params = kernel.params();
  std::string label = "argument " + std::to_string(index);
  if (index < params.size()) label += " ('" + params[index].name + "')";
  return label + " of " + kernel.name();
}

// Imports `obj` writable where its producer allows (DLPack 1.x's read-only flag, the buffer
// protocol's, and NumPy refusing to export a read-only array as DLPack 0.x all say no),
// else read-only; false when it is no tensor.
bool import_tensor(nb::handle obj, Tensor& array, bool& read_only) {
  if (nb::ndarray<> writable; nb::try_cast(obj, writable)) {
    array = Tensor(writable);
    read_only = false;
    return true;
  }
  read_only = true;
  return nb::try_cast(obj, array);
}

// `keep` holds the imported arrays until the launch is over.
tilec::TensorView to_tensor_view(const tilec::Kernel& kernel, size_t index, nb::handle obj,
                                 const std::optional<DType>& dtype_override,
                                 std::vector<Tensor>& keep) {
  Tensor array;
  tilec::TensorView view;
  if (!import_tensor(obj, array, view.read_only)) {
    auto type_name = nb::cast<std::string>(nb::type_name(obj.type()));
    throw nb::type_error((param_label(kernel, index) + " is a " + type_name +
                         ": expected a tensor (DLPack), an int, a float or a bool").c_str());
  }
  if (dtype_override) {
    view.dtype = *dtype_override;
  } else if (auto dtype = dtype_of(array.dtype())) {
    view.dtype = *dtype;
  } else {
    throw nb::value_error((param_label(kernel, index) + " has an element type tilec doesn't "
                          "support (DLPack code " + std::to_string(array.dtype().code) +
                          ", " + std::to_string(array.dtype().bits) + " bits)").c_str());
  }
  switch (array.device_type()) {
    case nb::device::cpu::value:
    case nb::device::cuda_host::value:
      view.device = tilec::DeviceType::CPU;
      break;
    case nb::device::cuda::value:
    case nb::device::cuda_managed::value:
      view.device = tilec::DeviceType::CUDA;
      break;
    default:
      throw nb::value_error((param_label(kernel, index) + " lives on a device tilec doesn't "
                            "support (DLPack device type " +
                            std::to_string(array.device_type()) + ")").c_str());
  }
  view.device_id = array.device_id();
  view.data = const_cast<void*>(static_cast<const void*>(array.data()));
  for (size_t d = 0; d < array.ndim(); ++d) {
    view.shape.push_back(static_cast<int64_t>(array.shape(d)));
    view.strides.push_back(array.stride(d));
  }
  // The core checks that the retyped view stays within the array's own elements.
  if (dtype_override) view.memory = view.reach(static_cast<int64_t>(array.itemsize()));
  keep.push_back(std::move(array));
  return view;
}

// A Python int as the core takes it: an int64_t, else a uint64_t, else (for a float param) a
// double. The core checks it against the param's dtype; an int past all three is refused here.
tilec::ArgValue int_arg(const tilec::Kernel& kernel, size_t index, nb::handle obj) {
  if (int64_t value; nb::try_cast(obj, value, false)) return value;
  if (uint64_t value; nb::try_cast(obj, value, false)) return value;
  const tilec::ParamInfo* param = index < kernel.params().size() ? &kernel.params()[index] : nullptr;
  if (param && !param->is_tensor && param->dtype.is_float()) {
    const double value = PyLong_AsDouble(obj.ptr());
    if (value != -1.0 || !PyErr_Occurred()) return value;
    PyErr_Clear();
  }
  if (param && param->is_tensor)
    throw nb::type_error((param_label(kernel, index) + " must be a tensor, not an int").c_str());
  const std::string range = param ? param->dtype.name() + std::string("'s range") : "the 64-bit integers";
  throw nb::value_error(
      (param_label(kernel, index) + " is " + nb::cast<std::string>(nb::str(obj)) + ", outside " + range).c_str());
}

tilec::ArgValue to_arg(const tilec::Kernel& kernel, size_t index, nb::handle obj,
                       std::vector<Tensor>& keep) {
  // bool before int: Python's bool is an int.
  if (nb::isinstance<nb::bool_>(obj)) return nb::cast<bool>(obj);
  if (nb::isinstance<nb::int_>(obj)) return int_arg(kernel, index, obj);
  if (nb::isinstance<nb::float_>(obj)) return nb::cast<double>(obj);
  if (nb::isinstance<nb::tuple>(obj)) {
    auto pair = nb::cast<nb::tuple>(obj);
    std::string dtype_name;
    if (pair.size() != 2 || !nb::try_cast(pair[1], dtype_name))
      throw nb::type_error((param_label(kernel, index) +
                            " is a tuple: a retyped tensor is a (tensor, dtype_name) pair").c_str());
    std::optional<DType> dtype = DType::from_name(dtype_name);
    if (!dtype)
      throw nb::value_error((param_label(kernel, index) + " is retyped to '" + dtype_name +
                             "', which is no tilec element type").c_str());
    return to_tensor_view(kernel, index, pair[0], dtype, keep);
  }
  return to_tensor_view(kernel, index, obj, std::nullopt, keep);
}

// Where a DLPack device's memory is, for a TensorView; nullopt for devices tilec doesn't take.
std::optional<tilec::DeviceType> memory_of(const nb::dlpack::device& device) {
  switch (device.device_type) {
    case nb::device::cpu::value: case nb::device::cuda_host::value: return tilec::DeviceType::CPU;
    case nb::device::cuda::value: case nb::device::cuda_managed::value: return tilec::DeviceType::CUDA;
    default: return std::nullopt;
  }
}

// Row-major strides of a compact tensor of `shape`, in elements.
std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1, stride = 1; d >= 0; stride *= shape[d], --d)
    strides[d] = stride;
  return strides;
}

// Kernel.__call__'s one C++ entry: `args` are the params but those in `outputs` (the ones to
// allocate, in the order they are returned), each tensor from a library with DLPack's C exchange
// API (dlpack_exchange.h). The outputs and workspaces are allocated in the first tensor's library
// and on its device, the kernel runs on that library's current stream, and the result is None,
// the one output or a tuple of them. NotImplemented where a tensor argument comes without the
// exchange API (or of a type or device it doesn't take): Kernel.__call__ then takes the general path.
nb::object call_kernel(const tilec::Kernel& k, const nb::tuple& args, const std::vector<size_t>& outputs) {
  namespace py = tilec::python;
  const auto& params = k.params();
  std::vector<std::optional<tilec::ArgValue>> values(params.size());
  std::vector<py::ExportedTensor> exported;
  exported.reserve(params.size());
  const py::ExchangeApi* api = nullptr;  // the first tensor's library
  nb::dlpack::device device;             // and device
  void* stream = nullptr;
  bool cuda = false;
  auto view_of = [&](PyObject* obj, const py::ExchangeApi* from) -> std::optional<tilec::TensorView> {
    exported.push_back(py::ExportedTensor::of(from, obj));
    const nb::dlpack::dltensor& t = exported.back().tensor();
    tilec::TensorView view;
    std::optional<DType> dtype = dtype_of(t.dtype);
    std::optional<tilec::DeviceType> memory = memory_of(t.device);
    if (!dtype || !memory) return std::nullopt;
    view.dtype = *dtype;
    view.device = *memory;
    view.device_id = t.device.device_id;
    view.data = static_cast<char*>(t.data) + t.byte_offset;
    view.shape.assign(t.shape, t.shape + t.ndim);
    if (t.strides != nullptr) {
      view.strides.assign(t.strides, t.strides + t.ndim);
    } else {
      view.strides = compact_strides(view.shape);
    }
    view.read_only = exported.back().read_only();
    if (api == nullptr) {
      api = from;
      device = t.device;
    }
    if (!cuda && view.device == tilec::DeviceType::CUDA) {
      cuda = true;
      stream = py::current_cuda_stream(from, view.device_id);
    }
    return view;
  };
  std::vector<bool> missing(params.size(), false);  // allocated here: the outputs and workspaces
  for (size_t i = 0; i < params.size(); ++i) missing[i] = params[i].workspace;
  for (size_t i : outputs) {
    if (i >= params.size() || params[i].workspace || !params[i].is_tensor || missing[i])
      throw nb::value_error(("call: output " + std::to_string(i) + " is no tensor param of " + k.name()).c_str());
    missing[i] = true;
  }
  size_t next = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (missing[i]) continue;
    if (next == args.size()) break;  // too few: counted below
    PyObject* obj = PyTuple_GET_ITEM(args.ptr(), next++);
    if (PyBool_Check(obj) || PyLong_Check(obj) || PyFloat_Check(obj)) {
      std::vector<Tensor> unused;
      values[i] = to_arg(k, i, obj, unused);
      continue;
    }
    const py::ExchangeApi* from = py::exchange_api_of(Py_TYPE(obj));
    if (from == nullptr) return nb::borrow(Py_NotImplemented);
    std::optional<tilec::TensorView> view = view_of(obj, from);
    if (!view) return nb::borrow(Py_NotImplemented);
    values[i] = std::move(*view);
  }
  const size_t wanted = static_cast<size_t>(std::count(missing.begin(), missing.end(), false));
  if (args.size() != wanted)
    throw nb::value_error(("call: " + k.name() + " takes " + std::to_string(wanted) + " arguments besides its " +
                           std::to_string(outputs.size()) + " outputs; got " + std::to_string(args.size())).c_str());
  std::vector<nb::object> made(params.size());
  if (std::find(missing.begin(), missing.end(), true) != missing.end()) {
    if (api == nullptr) return nb::borrow(Py_NotImplemented);  // no tensor to allocate like
    const std::vector<std::vector<int64_t>> shapes = k.output_shapes(values);
    size_t shape = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      if (!missing[i]) continue;
      py::AllocatedTensor allocated = py::allocate(api, shapes[shape], params[i].dtype, device);
      made[i] = std::move(allocated.object);
      tilec::TensorView view;  // as view_of would read it back, without exporting it again
      view.dtype = params[i].dtype;
      view.device = *memory_of(device);
      view.device_id = device.device_id;
      view.data = allocated.data;
      view.shape = shapes[shape++];
      view.strides = compact_strides(view.shape);
      values[i] = std::move(view);
    }
  }
  std::vector<tilec::ArgValue> launch_args;
  launch_args.reserve(values.size());
  for (auto& value : values) launch_args.push_back(std::move(*value));
  {
    nb::gil_scoped_release release;
    k.launch(launch_args, stream);
  }
  if (outputs.empty()) return nb::none();
  if (outputs.size() == 1) return made[outputs[0]];
  nb::list result;
  for (size_t i : outputs) result.append(made[i]);
  return nb::tuple(result);
}

nb::object dim_value(const tilec::DimInfo& dim) {
  if (dim.value) return nb::int_(*dim.value);
  return nb::str(dim.expr.c_str());
}

tilec::CompileOptions make_options(std::string target, std::string arch,
                                   std::map<std::string, std::string> pass_configs,
                                   std::vector<std::string> compile_flags) {
  return tilec::CompileOptions{std::move(target), std::move(arch), std::move(pass_configs),
                               std::move(compile_flags)};
}

tilec::EmitStage stage_named(const std::string& name) {
  if (name == "tile-ir") return tilec::EmitStage::TileIR;
  if (name == "ir") return tilec::EmitStage::IR;
  if (name == "source") return tilec::EmitStage::Source;
  if (name == "ptx") return tilec::EmitStage::PTX;
  if (name == "asm") return tilec::EmitStage::Asm;
  throw nb::value_error(
      ("unknown stage '" + name + "': expected tile-ir, ir, source, ptx or asm").c_str());
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "libtilec bindings; use the tilec package instead.";

  nb::exception<tilec::CompileError>(m, "CompileError");
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const tilec::ArgumentTypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const tilec::ArgumentError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  nb::class_<tilec::TileLayout>(m, "TileLayout")
      .def_ro("name", &tilec::TileLayout::name)
      .def_ro("scope", &tilec::TileLayout::scope)
      .def_prop_ro("dtype", [](const tilec::TileLayout& t) { return std::string(t.dtype.name()); })
      .def_ro("shape", &tilec::TileLayout::shape)
      .def_ro("description", &tilec::TileLayout::description)
      .def_ro("threads", &tilec::TileLayout::threads)
      .def_ro("slots", &tilec::TileLayout::slots)
      .def_ro("thread", &tilec::TileLayout::thread)
      .def_ro("slot", &tilec::TileLayout::slot)
      .def_ro("holders", &tilec::TileLayout::holders)
      .def_ro("offset", &tilec::TileLayout::offset);
  m.def(
      "standard_layout",
      [](const std::string& kind, const std::vector<int64_t>& shape, const std::string& dtype,
         const std::vector<int64_t>& args) {
        std::optional<tilec::DType> t = tilec::DType::from_name(dtype);
        if (!t) throw nb::value_error(("'" + dtype + "' is no tilec element type").c_str());
        return tilec::standard_layout(kind, shape, *t, args);  // std::invalid_argument: ValueError
      },
      nb::arg("kind"), nb::arg("shape"), nb::arg("dtype"), nb::arg("args"),
      "A layout the compiler gives tiles (tilec::standard_layout).");

  nb::class_<tilec::ParamInfo>(m, "ParamInfo")
      .def_ro("name", &tilec::ParamInfo::name)
      .def_ro("is_tensor", &tilec::ParamInfo::is_tensor)
      .def_ro("workspace", &tilec::ParamInfo::workspace)
      .def_ro("written", &tilec::ParamInfo::written)
      .def_prop_ro("dtype", [](const tilec::ParamInfo& p) { return std::string(p.dtype.name()); })
      .def_prop_ro("shape",
                   [](const tilec::ParamInfo& p) {
                     nb::list shape;
                     for (const auto& dim : p.shape) shape.append(dim_value(dim));
                     return shape;
                   })
      .def("__repr__", [](const tilec::ParamInfo& p) {
        std::string text = p.name + ": " + p.dtype.name();
        if (!p.is_tensor) return text;
        text += "[";
        for (size_t i = 0; i < p.shape.size(); ++i) {
          if (i) text += ", ";
          text += p.shape[i].value ? std::to_string(*p.shape[i].value) : p.shape[i].expr;
        }
        return text + "]";
      });

  nb::class_<tilec::Kernel>(m, "CoreKernel")
      .def_prop_ro("name", &tilec::Kernel::name)
      .def_prop_ro("target", &tilec::Kernel::target)
      .def_prop_ro("arch", &tilec::Kernel::arch)
      .def_prop_ro("params", [](const tilec::Kernel& k) { return k.params(); })
      .def_prop_ro("out_idx", [](const tilec::Kernel& k) { return k.out_idx(); })
      .def_prop_ro("const_dims",
                   [](const tilec::Kernel& k) {
                     nb::list dims;
                     for (const auto& d : k.const_dims())
                       dims.append(nb::make_tuple(d.param, d.dim, d.value));
                     return dims;
                   })
      .def_prop_ro("source", &tilec::Kernel::source)
      .def_prop_ro("layouts", &tilec::Kernel::layouts, nb::rv_policy::reference_internal)
      .def_prop_ro("tile_ir", &tilec::Kernel::tile_ir)
      .def_prop_ro("ir", &tilec::Kernel::ir)
      .def_prop_ro("compile_seconds", &tilec::Kernel::compile_seconds)
      .def(
          "output_shapes",
          [](const tilec::Kernel& k, const nb::list& args, const std::vector<size_t>& outputs) {
            std::vector<Tensor> keep;
            std::vector<std::optional<tilec::ArgValue>> values;
            for (size_t i = 0; i < args.size(); ++i) {
              if (std::find(outputs.begin(), outputs.end(), i) != outputs.end()) {
                values.emplace_back();
              } else {
                values.emplace_back(to_arg(k, i, args[i], keep));
              }
            }
            nb::list shapes;
            for (const auto& shape : k.output_shapes(values)) {
              nb::list dims;
              for (int64_t d : shape) dims.append(d);
              shapes.append(nb::tuple(dims));
            }
            return shapes;
          },
          nb::arg("args"), nb::arg("outputs"),
          "Shapes of the params `outputs` (indices; their args are ignored), solved from the "
          "other arguments.")
      .def(
          "output_shapes_of",
          [](const tilec::Kernel& k, const std::vector<std::optional<std::vector<int64_t>>>& shapes) {
            nb::list result;
            for (const auto& shape : k.output_shapes(shapes)) result.append(nb::tuple(nb::cast(shape)));
            return result;
          },
          nb::arg("shapes"),
          "Shapes of the tensor params whose entry is None, solved from the other tensors' shapes "
          "alone (a scalar param's entry is None too).")
      .def("call", &call_kernel, nb::arg("args"), nb::arg("outputs"),
           "Runs the kernel on `args`, allocating the params `outputs` (Kernel.__call__'s fast path); "
           "NotImplemented where an argument's library has no DLPack C exchange API.")
      .def(
          "launch",
          [](const tilec::Kernel& k, const nb::list& args, uintptr_t stream) {
            std::vector<Tensor> keep;
            std::vector<tilec::ArgValue> values;
            for (size_t i = 0; i < args.size(); ++i) values.push_back(to_arg(k, i, args[i], keep));
            nb::gil_scoped_release release;
            k.launch(values, reinterpret_cast<void*>(stream));
          },
          nb::arg("args"), nb::arg("stream") = 0,
          "Checks the arguments and runs the kernel on `stream` (a CUstream as an int).");

  m.def(
      "compile",
      [](std::string source, std::string filename, int first_line, std::string name,
         const nb::dict& bindings, std::string target, std::string arch,
         std::map<std::string, std::string> pass_configs, std::vector<std::string> compile_flags) {
        auto func = make_function(std::move(source), std::move(filename), first_line,
                                  std::move(name), bindings);
        auto options = make_options(std::move(target), std::move(arch), std::move(pass_configs),
                                    std::move(compile_flags));
        nb::gil_scoped_release release;
        return tilec::compile(func, options);
      },
      nb::arg("source"), nb::arg("filename"), nb::arg("first_line"), nb::arg("name"),
      nb::arg("bindings"), nb::arg("target"), nb::arg("arch"), nb::arg("pass_configs"),
      nb::arg("compile_flags") = std::vector<std::string>(),
      "Compiles for `target` ('cpu' or 'cuda'); `arch` ('sm_90a', ...; '' for the current "
      "device's) is for 'cuda'.");

  m.def(
      "function_style",
      [](std::string source, std::string filename, int first_line, std::string name,
         const nb::dict& bindings) {
        auto func = make_function(std::move(source), std::move(filename), first_line,
                                  std::move(name), bindings);
        return tilec::function_style(func) == tilec::FunctionStyle::Factory ? "factory" : "eager";
      },
      nb::arg("source"), nb::arg("filename"), nb::arg("first_line"), nb::arg("name"),
      nb::arg("bindings") = nb::dict());

  m.def(
      "emit",
      [](std::string source, std::string filename, int first_line, std::string name,
         const nb::dict& bindings, std::string target, std::string arch,
         std::map<std::string, std::string> pass_configs, const std::string& stage,
         std::vector<std::string> compile_flags) {
        auto func = make_function(std::move(source), std::move(filename), first_line,
                                  std::move(name), bindings);
        auto options = make_options(std::move(target), std::move(arch), std::move(pass_configs),
                                    std::move(compile_flags));
        auto emit_stage = stage_named(stage);
        nb::gil_scoped_release release;
        return tilec::emit(func, options, emit_stage);
      },
      nb::arg("source"), nb::arg("filename"), nb::arg("first_line"), nb::arg("name"),
      nb::arg("bindings"), nb::arg("target"), nb::arg("arch"), nb::arg("pass_configs"),
      nb::arg("stage"), nb::arg("compile_flags") = std::vector<std::string>(),
      "One stage of compile() as text: 'tile-ir', 'ir', 'source' or 'ptx' (target 'cuda').");

  m.def(
      "dtype_name",
      [](const std::string& name) -> std::optional<std::string> {
        if (auto dtype = DType::from_name(name)) return std::string(dtype->name());
        return std::nullopt;
      },
      nb::arg("name"), "The canonical name of the element type `name` ('half': 'float16'), or None.");
  m.def(
      "dtype_bits",
      [](const std::string& name) -> std::optional<int> {
        if (auto dtype = DType::from_name(name)) return dtype->bits();
        return std::nullopt;
      },
      nb::arg("name"), "The bits of one element of type `name` (bool: 8, as tilec stores it), or None.");
  m.def("cuda_available", &tilec::cuda_available,
        "True when a CUDA driver loads and sees at least one device.");
  m.def("cuda_unavailable_reason", &tilec::cuda_unavailable_reason,
        "Why cuda_available() is False ('' when it is True).");
  m.def("read_cache_record", &tilec::read_cache_record, nb::arg("folder"), nb::arg("name"),
        "The record `name` of the cache folder `folder`, or None when it is missing, damaged or "
        "not private.");
  m.def("write_cache_record", &tilec::write_cache_record, nb::arg("folder"), nb::arg("name"),
        nb::arg("text"), "Writes the record atomically, private to this user.");
  m.def("cache_record_folder", &tilec::cache_record_folder, nb::arg("folder"),
        "The cache folder that records of `folder` lie in.");
  m.def("set_log_level", &tilec::set_log_level, nb::arg("level"));
  m.def("set_nvtx", &tilec::set_nvtx, nb::arg("on"));
  m.def("nvtx_unavailable_reason", &tilec::nvtx_unavailable_reason);
  m.def("set_leak_warnings", [](bool on) { nb::set_leak_warnings(on); }, nb::arg("on"),
        "Whether nanobind reports tilec objects still alive when the interpreter ends.");
  m.def("version", [] { return std::string(tilec::version()); });
}
