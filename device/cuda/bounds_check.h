// tilec CUDA device support: the bounds checks of kernels built with TILEC_BOUNDS_CHECK (or the
// pass config "tilec.bounds_check"). Such a kernel's own loads and stores of global and shared
// buffers go through checked(). An index out of range stops the kernel: the first thread that
// finds one writes what it accessed (kernel, tensor, index, shape, kernel source line, block and
// thread) to the device's printf and to the bounds report the runtime reads, then traps. The trap
// fails the launch with a CUDA error and leaves the CUDA context unusable for the rest of the
// process (any later CUDA call in it fails).
//
// The runtime points tilec_bounds_report at host memory mapped into the device when it loads the
// module (src/runtime/cuda/cuda_module.cc), so the description reaches the host although the
// context dies with the kernel.
#pragma once

#include "cuda/types.h"

namespace tilec_cuda {

// Laid out as the runtime's copy (BoundsReport in src/runtime/cuda/cuda_module.cc).
struct bounds_report {
  int state;  // bounds_report_empty, then bounds_report_written once `text` is whole
  char text[508];
};

constexpr int bounds_report_empty = 0;
constexpr int bounds_report_written = 1;

}  // namespace tilec_cuda

// Host memory of the runtime's, or null when something else loaded the module.
__device__ tilec_cuda::bounds_report* tilec_bounds_report = nullptr;
// 0; 1 once a thread has claimed the description; 2 once it is written.
__device__ int tilec_bounds_claim = 0;

namespace tilec_cuda {
namespace detail {

// Appends to a fixed buffer, cutting what does not fit. Out of line: the failure path is cold,
// and each inlined copy would grow every checked kernel.
struct text_writer {
  char* at;
  char* end;  // the last byte, kept for the terminating zero

  __device__ __noinline__ void put(const char* text) {
    while (*text != '\0' && at < end) *at++ = *text++;
  }
  __device__ __noinline__ void put(long long value) {
    char digits[24];
    int count = 0;
    unsigned long long magnitude = value < 0 ? 0ull - static_cast<unsigned long long>(value)
                                             : static_cast<unsigned long long>(value);
    do {
      digits[count++] = static_cast<char>('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude != 0);
    if (value < 0 && at < end) *at++ = '-';
    while (count > 0 && at < end) *at++ = digits[--count];
  }
  // "a, b, c": every other value of `values` from `first`.
  __device__ __noinline__ void put_list(const long long* values, int count, int first) {
    for (int d = 0; d < count; ++d) {
      if (d > 0) put(", ");
      put(values[2 * d + first]);
    }
  }
};

// `dims` holds each dim's index, then its extent. Never returns.
__device__ __noinline__ void bounds_failure(const char* kernel, const char* site,
                                            const long long* dims, int rank) {
  if (atomicCAS(&tilec_bounds_claim, 0, 1) == 0) {
    char text[sizeof(bounds_report::text)];
    text_writer out{text, text + sizeof text - 1};
    out.put("kernel '");
    out.put(kernel);
    out.put("': index [");
    out.put_list(dims, rank, 0);
    out.put("] is out of bounds for shape (");
    out.put_list(dims, rank, 1);
    out.put(") of ");
    out.put(site);
    const long long where[] = {blockIdx.x, 0, blockIdx.y, 0, blockIdx.z, 0};
    out.put(" (block (");
    out.put_list(where, 3, 0);
    out.put("), thread ");
    out.put(static_cast<long long>(threadIdx.x));
    out.put(")");
    *out.at = '\0';
    printf("tilec: %s\n", text);
    if (bounds_report* report = tilec_bounds_report) {
      volatile char* copy = report->text;
      for (const char* c = text;; ++c, ++copy) {
        *copy = *c;
        if (*c == '\0') break;
      }
      __threadfence_system();
      *static_cast<volatile int*>(&report->state) = bounds_report_written;
      __threadfence_system();
    }
    atomicExch(&tilec_bounds_claim, 2);
  } else {
    // Another thread is describing its access: let it finish before this trap ends the kernel
    // (a few milliseconds at most, should it never finish).
    for (int i = 0; i < 10000 && atomicAdd(&tilec_bounds_claim, 0) != 2; ++i) __nanosleep(1000);
  }
  __trap();
  __builtin_unreachable();
}

// The indices and extents of one access, passed by value: the fast path stores nothing.
template <int Values>
struct dim_values {
  long long values[Values];
};

template <int Values>
__device__ __noinline__ void bounds_failure(const char* kernel, const char* site,
                                            dim_values<Values> dims) {
  bounds_failure(kernel, site, dims.values, Values / 2);
}

__device__ __forceinline__ bool in_bounds() { return true; }

template <class Index, class Extent, class... Rest>
__device__ __forceinline__ bool in_bounds(Index index, Extent extent, Rest... rest) {
  const long long i = static_cast<long long>(index);
  return i >= 0 && i < static_cast<long long>(extent) && in_bounds(rest...);
}

}  // namespace detail

// `rank`, a block of the cluster of `blocks` that the caller reaches (T.copy_cluster, an arrival
// at a peer's barrier), once it lies in [0, blocks); else the kernel stops as for an index out
// of bounds. `site` is "the peer block rank at file:line: text".
__device__ __forceinline__ int32_t checked_block_rank(int32_t rank, int32_t blocks, const char* kernel,
                                                     const char* site) {
  if (rank < 0 || rank >= blocks) detail::bounds_failure(kernel, site, detail::dim_values<2>{{rank, blocks}});
  return rank;
}

// *element, once each index lies in [0, extent) (`dims`: index, extent, for each dim); else
// the kernel stops (see above). `kernel` is the kernel's name, `site` "'B' at file:line: text".
template <class T, class... Dims>
__device__ __forceinline__ T& checked(T* element, const char* kernel, const char* site,
                                      Dims... dims) {
  static_assert(sizeof...(Dims) > 0 && sizeof...(Dims) % 2 == 0, "an index and an extent a dim");
  if (!detail::in_bounds(dims...)) {
    detail::bounds_failure(kernel, site,
                           detail::dim_values<sizeof...(Dims)>{{static_cast<long long>(dims)...}});
  }
  return *element;
}

}  // namespace tilec_cuda
