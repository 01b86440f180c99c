#include "python/dlpack_exchange.h"

#include <unordered_map>

namespace nb = nanobind;

namespace tilec::python {

// The C structures of the DLPack 1.x exchange, as its spec lays them out.
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

struct ManagedTensor {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
  uint64_t flags;
  nb::dlpack::dltensor dl_tensor;
};

struct ExchangeApi {
  struct Header {
    DLPackVersion version;
    Header* prev_api;
  } header;
  int (*managed_tensor_allocator)(nb::dlpack::dltensor* prototype, ManagedTensor** out, void* error_ctx,
                                  void (*set_error)(void* error_ctx, const char* kind, const char* message));
  int (*managed_tensor_from_py_object_no_sync)(void* py_object, ManagedTensor** out);
  int (*managed_tensor_to_py_object_no_sync)(ManagedTensor* tensor, void** out_py_object);
  int (*dltensor_from_py_object_no_sync)(void* py_object, nb::dlpack::dltensor* out);
  int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_stream);
};

namespace {

constexpr uint32_t kMajorVersion = 1;
constexpr uint64_t kReadOnlyFlag = 1;  // DLPACK_FLAG_BITMASK_READ_ONLY
constexpr int32_t kDLCuda = 2;

using Code = nb::dlpack::dtype_code;

void set_python_error(void*, const char* kind, const char* message) {
  PyErr_Format(PyExc_RuntimeError, "%s: %s", kind, message);
}

nb::dlpack::dtype dlpack_dtype(DType t) {
  auto of = [](Code code, int bits) { return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1}; };
  switch (t.code()) {
    case DType::Bool: return of(Code::Bool, 8);
    case DType::BFloat16: return of(Code::Bfloat, 16);
    case DType::Float8E4M3: return of(Code::Float8_E4M3FN, 8);
    case DType::Float8E5M2: return of(Code::Float8_E5M2, 8);
    default: break;
  }
  return of(t.is_int() ? Code::Int : t.is_uint() ? Code::UInt : Code::Float, t.bits());
}

}  // namespace

const ExchangeApi* exchange_api_of(PyTypeObject* type) {
  static std::unordered_map<PyTypeObject*, const ExchangeApi*> known;  // guarded by the GIL
  if (auto it = known.find(type); it != known.end()) return it->second;
  const ExchangeApi* api = nullptr;
  PyObject* capsule = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__dlpack_c_exchange_api__");
  if (capsule != nullptr && PyCapsule_CheckExact(capsule)) {
    auto* table = static_cast<const ExchangeApi*>(PyCapsule_GetPointer(capsule, "dlpack_exchange_api"));
    if (table != nullptr && table->header.version.major == kMajorVersion && table->managed_tensor_allocator &&
        table->managed_tensor_from_py_object_no_sync && table->managed_tensor_to_py_object_no_sync &&
        table->current_work_stream)
      api = table;
  }
  Py_XDECREF(capsule);  // the table itself lives as long as its library (the spec's promise)
  PyErr_Clear();
  Py_INCREF(type);  // kept, so that the pointer keyed on names this type for good
  known.emplace(type, api);
  return api;
}

ExportedTensor::~ExportedTensor() {
  if (managed_ != nullptr && managed_->deleter != nullptr) managed_->deleter(managed_);
}

ExportedTensor ExportedTensor::of(const ExchangeApi* api, PyObject* obj) {
  ExportedTensor exported;
  if (api->managed_tensor_from_py_object_no_sync(obj, &exported.managed_) != 0) throw nb::python_error();
  return exported;
}

const nb::dlpack::dltensor& ExportedTensor::tensor() const { return managed_->dl_tensor; }

bool ExportedTensor::read_only() const { return (managed_->flags & kReadOnlyFlag) != 0; }

void* current_cuda_stream(const ExchangeApi* api, int device_id) {
  void* stream = nullptr;
  if (api->current_work_stream(kDLCuda, device_id, &stream) != 0) throw nb::python_error();
  return stream;
}

AllocatedTensor allocate(const ExchangeApi* api, const std::vector<int64_t>& shape, DType dtype,
                         const nb::dlpack::device& like) {
  std::vector<int64_t> dims = shape;
  nb::dlpack::dltensor prototype;
  prototype.device = like;
  prototype.ndim = static_cast<int32_t>(dims.size());
  prototype.dtype = dlpack_dtype(dtype);
  prototype.shape = dims.data();
  ManagedTensor* made = nullptr;
  if (api->managed_tensor_allocator(&prototype, &made, nullptr, set_python_error) != 0) throw nb::python_error();
  void* data = static_cast<char*>(made->dl_tensor.data) + made->dl_tensor.byte_offset;
  void* object = nullptr;  // takes `made` over, and with it the memory
  if (api->managed_tensor_to_py_object_no_sync(made, &object) != 0) throw nb::python_error();
  return {nb::steal(static_cast<PyObject*>(object)), data};
}

std::optional<DType> dtype_of(nb::dlpack::dtype t) {
  if (t.lanes != 1) return std::nullopt;
  switch (static_cast<Code>(t.code)) {
    case Code::Int:
      switch (t.bits) {
        case 8: return DType::Int8;
        case 16: return DType::Int16;
        case 32: return DType::Int32;
        case 64: return DType::Int64;
      }
      break;
    case Code::UInt:
      switch (t.bits) {
        case 8: return DType::UInt8;
        case 16: return DType::UInt16;
        case 32: return DType::UInt32;
        case 64: return DType::UInt64;
      }
      break;
    case Code::Float:
      switch (t.bits) {
        case 16: return DType::Float16;
        case 32: return DType::Float32;
        case 64: return DType::Float64;
      }
      break;
    case Code::Bfloat:
      if (t.bits == 16) return DType::BFloat16;
      break;
    case Code::Bool:
      if (t.bits == 8) return DType::Bool;
      break;
    case Code::Float8_E4M3FN:
      if (t.bits == 8) return DType::Float8E4M3;
      break;
    case Code::Float8_E5M2:
      if (t.bits == 8) return DType::Float8E5M2;
      break;
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace tilec::python
