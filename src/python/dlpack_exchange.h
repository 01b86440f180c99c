// DLPack's C exchange API (DLPack 1.3, `__dlpack_c_exchange_api__` on a tensor type; torch 2.10
// and later have it): a tensor read, the current stream asked and an output allocated by C
// calls into its library, without the Python objects `__dlpack__()` makes. What lets a launch
// cost microseconds (Kernel.__call__ → CoreKernel.call).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "tilec/tilec.h"

namespace tilec::python {

struct ExchangeApi;     // DLPackExchangeAPI
struct ManagedTensor;   // DLManagedTensorVersioned

// The exchange table of `type`, looked up once a type; null when the type has none (or one of
// another major version, or without the functions used here). Needs the GIL.
const ExchangeApi* exchange_api_of(PyTypeObject* type);

// A tensor exported by its library, released when this goes.
class ExportedTensor {
 public:
  ExportedTensor() = default;
  ExportedTensor(ExportedTensor&& other) noexcept : managed_(other.managed_) { other.managed_ = nullptr; }
  ExportedTensor(const ExportedTensor&) = delete;
  ExportedTensor& operator=(ExportedTensor&&) = delete;
  ~ExportedTensor();

  // `obj`, of the type `api` came from, exported (owning: its memory stays alive, the GIL may
  // be released). Throws nb::python_error with the library's error.
  static ExportedTensor of(const ExchangeApi* api, PyObject* obj);

  const nanobind::dlpack::dltensor& tensor() const;
  bool read_only() const;

 private:
  ManagedTensor* managed_ = nullptr;
};

// The library's current stream on CUDA device `device_id` (torch.cuda.current_stream), as
// launch() takes it. Throws nb::python_error.
void* current_cuda_stream(const ExchangeApi* api, int device_id);

// A tensor allocate() made: the library's object, which owns the memory, and the address of its
// first element.
struct AllocatedTensor {
  nanobind::object object;
  void* data = nullptr;
};

// A new, uninitialized tensor of the library of `api` (torch.empty), contiguous, on `like`'s
// device. Its address comes with it, so that the caller need not export it again to launch on
// it. Throws nb::python_error.
AllocatedTensor allocate(const ExchangeApi* api, const std::vector<int64_t>& shape, DType dtype,
                         const nanobind::dlpack::device& like);

// The tilec element type of a DLPack type; nullopt for one tilec lacks.
std::optional<DType> dtype_of(nanobind::dlpack::dtype t);

}  // namespace tilec::python
