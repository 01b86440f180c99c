#include "ir/layout.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace tilec::ir {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t floor_pow2(int64_t x) {
  int64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

// Slot digits renumbered 1, r0, r0*r1, ... in their current stride order.
void compact_slots(std::vector<FragmentDigit>& digits) {
  std::vector<FragmentDigit*> slots;
  for (auto& d : digits)
    if (!d.on_thread) slots.push_back(&d);
  std::stable_sort(slots.begin(), slots.end(),
                   [](const FragmentDigit* a, const FragmentDigit* b) { return a->stride < b->stride; });
  int64_t stride = 1;
  for (FragmentDigit* d : slots) {
    d->stride = stride;
    stride *= d->radix;
  }
}

}  // namespace

Fragment::Fragment(std::vector<int64_t> shape, std::vector<FragmentDigit> digits) : shape_(std::move(shape)) {
  for (const auto& d : digits)
    if (d.radix > 1) digits_.push_back(d);
  std::sort(digits_.begin(), digits_.end(), [](const FragmentDigit& a, const FragmentDigit& b) {
    return std::tie(a.on_thread, a.stride) < std::tie(b.on_thread, b.stride);
  });
}

int64_t Fragment::threads() const {
  int64_t n = 1;
  for (const auto& d : digits_)
    if (d.on_thread) n = std::max(n, d.stride * d.radix);
  return n;
}

int64_t Fragment::slots() const {
  int64_t n = 1;
  for (const auto& d : digits_)
    if (!d.on_thread) n = std::max(n, d.stride * d.radix);
  return n;
}

bool Fragment::covers_more() const {
  std::vector<int64_t> covered(shape_.size(), 1);
  for (const auto& d : digits_)
    if (d.dim >= 0) covered[d.dim] = std::max(covered[d.dim], d.place * d.radix);
  for (size_t i = 0; i < shape_.size(); ++i)
    if (covered[i] > shape_[i]) return true;
  return false;
}

bool Fragment::replicated() const {
  for (const auto& d : digits_)
    if (d.on_thread && d.dim >= 0) return false;
  return true;
}

Expr Fragment::digit_value(const FragmentDigit& digit, const Expr& tid, const Expr& slot) const {
  Expr x = digit.on_thread ? tid : slot;
  if (digit.stride != 1) x = make_FloorDiv(x, make_int(digit.stride));
  bool top = !digit.on_thread && digit.stride * digit.radix == slots();
  if (!top) x = make_FloorMod(x, make_int(digit.radix));
  return x;
}

std::vector<Expr> Fragment::indices(const Expr& tid, const Expr& slot) const {
  std::vector<Expr> idx(shape_.size());
  for (const auto& d : digits_) {
    if (d.dim < 0) continue;
    Expr term = digit_value(d, tid, slot);
    if (d.place != 1) term = make_Mul(term, make_int(d.place));
    idx[d.dim] = idx[d.dim] ? make_Add(idx[d.dim], term) : term;
  }
  for (auto& e : idx)
    if (!e) e = make_int(0);
  return idx;
}

Expr Fragment::slot_of(const std::vector<Expr>& indices) const {
  Expr slot;
  for (const auto& d : digits_) {
    if (d.on_thread) continue;
    Expr x = make_cast(DType::Int32, indices.at(d.dim));
    if (d.place != 1) x = make_FloorDiv(x, make_int(d.place));
    x = make_FloorMod(x, make_int(d.radix));
    if (d.stride != 1) x = make_Mul(x, make_int(d.stride));
    slot = slot ? make_Add(slot, x) : x;
  }
  return slot ? slot : make_int(0);
}

Fragment Fragment::project(const std::vector<int>& keep) const {
  std::vector<int64_t> shape;
  for (int d : keep) shape.push_back(shape_.at(d));
  std::vector<FragmentDigit> digits;
  for (FragmentDigit d : digits_) {
    auto it = std::find(keep.begin(), keep.end(), d.dim);
    if (it == keep.end()) {
      if (!d.on_thread) continue;
      d.dim = -1;
      d.place = 1;
    } else {
      d.dim = static_cast<int>(it - keep.begin());
    }
    digits.push_back(d);
  }
  compact_slots(digits);
  return Fragment(std::move(shape), std::move(digits));
}

namespace {

// A digit of radix 2^k as its k digits of radix 2, lowest first; null for another radix.
std::optional<std::vector<FragmentDigit>> bits_of(const FragmentDigit& d) {
  if (d.radix & (d.radix - 1)) return std::nullopt;
  std::vector<FragmentDigit> bits;
  for (int64_t r = 1; r < d.radix; r *= 2) {
    FragmentDigit bit = d;
    bit.radix = 2;
    bit.place = d.place * r;
    bit.stride = d.stride * r;
    bits.push_back(bit);
  }
  return bits;
}

}  // namespace

std::optional<std::vector<int64_t>> Fragment::thread_bits(int dim, int64_t warp) const {
  std::vector<int64_t> strides;
  for (const FragmentDigit& d : digits_) {
    if (!d.on_thread || d.dim != dim) continue;
    auto bits = bits_of(d);
    if (!bits || d.stride * d.radix > warp) return std::nullopt;
    for (const FragmentDigit& bit : *bits) strides.push_back(bit.stride);
  }
  std::sort(strides.begin(), strides.end());
  return strides;
}

std::optional<Fragment> Fragment::scattered(const std::vector<int>& keep, int reduced, int64_t warp) const {
  const auto lanes = thread_bits(reduced, warp);
  if (!lanes || lanes->empty()) return std::nullopt;
  const Fragment projected = project(keep);
  std::vector<FragmentDigit> slot_bits, digits;
  for (const FragmentDigit& d : projected.digits_) {
    if (d.on_thread) {
      const bool lane = d.dim < 0 && std::any_of(lanes->begin(), lanes->end(), [&](int64_t stride) {
        return stride >= d.stride && stride < d.stride * d.radix;
      });
      if (!lane) digits.push_back(d);
      continue;
    }
    auto bits = bits_of(d);
    if (!bits) return std::nullopt;
    slot_bits.insert(slot_bits.end(), bits->begin(), bits->end());
  }
  if (slot_bits.size() < lanes->size()) return std::nullopt;
  std::sort(slot_bits.begin(), slot_bits.end(), [](const auto& a, const auto& b) { return a.stride < b.stride; });
  for (size_t k = 0; k < slot_bits.size(); ++k) {
    FragmentDigit d = slot_bits[k];
    if (k < lanes->size()) {
      d.on_thread = true;
      d.stride = (*lanes)[k];
    }
    digits.push_back(d);
  }
  compact_slots(digits);
  return Fragment(projected.shape_, std::move(digits));
}

std::optional<Fragment> Fragment::reshaped(const std::vector<int64_t>& shape) const {
  // Row-major strides of the old dims and of the new.
  auto strides_of = [](const std::vector<int64_t>& dims) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
    return strides;
  };
  int64_t elements = 1, new_elements = 1;
  for (int64_t e : shape_) elements *= e;
  for (int64_t e : shape) new_elements *= e;
  if (elements != new_elements || covers_more()) return std::nullopt;
  // Each index digit as a digit of the flat index; they must tile it, place by place.
  const std::vector<int64_t> old_strides = strides_of(shape_), new_strides = strides_of(shape);
  std::vector<FragmentDigit> flat;
  for (FragmentDigit d : digits_) {
    if (d.dim >= 0) d.place *= old_strides[d.dim];
    flat.push_back(d);
  }
  std::vector<const FragmentDigit*> by_place;
  for (const auto& d : flat)
    if (d.dim >= 0) by_place.push_back(&d);
  std::sort(by_place.begin(), by_place.end(),
            [](const FragmentDigit* a, const FragmentDigit* b) { return a->place < b->place; });
  int64_t next = 1;
  for (const FragmentDigit* d : by_place) {
    if (d->place != next) return std::nullopt;
    next *= d->radix;
  }
  if (next != elements) return std::nullopt;
  // Digits straddling a new dim's boundary (a stride of the new shape) split there, the
  // lowest boundary first: the low part's steps stay, the high part's are `low` of them.
  std::vector<FragmentDigit> split;
  for (FragmentDigit d : flat) {
    for (auto it = new_strides.rbegin(); it != new_strides.rend(); ++it) {
      const int64_t boundary = *it;
      if (d.dim < 0 || boundary <= d.place || boundary >= d.place * d.radix) continue;
      const int64_t low = boundary / d.place;
      if (boundary % d.place != 0 || d.radix % low != 0) return std::nullopt;
      FragmentDigit below = d;
      below.radix = low;
      split.push_back(below);
      d.place = boundary;
      d.radix /= low;
      d.stride *= low;
    }
    split.push_back(d);
  }
  for (FragmentDigit& d : split) {
    if (d.dim < 0) continue;
    for (size_t k = 0; k < shape.size(); ++k)
      if (d.place >= new_strides[k] && d.place < new_strides[k] * shape[k]) {
        d.dim = static_cast<int>(k);
        d.place /= new_strides[k];
        break;
      }
  }
  // Digits that continue one another in both the index and the thread or slot merge (the
  // digits of merged dims), so that a reshape and its inverse give the layout back.
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t i = 0; i < split.size() && !merged; ++i)
      for (size_t j = 0; j < split.size() && !merged; ++j) {
        FragmentDigit &low = split[i], &high = split[j];
        if (i == j || low.dim < 0 || low.dim != high.dim || low.on_thread != high.on_thread ||
            high.place != low.place * low.radix || high.stride != low.stride * low.radix)
          continue;
        low.radix *= high.radix;
        split.erase(split.begin() + static_cast<std::ptrdiff_t>(j));
        merged = true;
      }
  }
  return Fragment(shape, std::move(split));
}

Expr Fragment::projected_slot(const std::vector<int>& keep, const Expr& slot) const {
  // project() keeps the slot digits of kept dims in stride order, renumbered compactly.
  Expr result;
  int64_t stride = 1;
  for (const auto& d : digits_) {
    if (d.on_thread || std::find(keep.begin(), keep.end(), d.dim) == keep.end()) continue;
    Expr x = make_FloorMod(make_FloorDiv(slot, make_int(d.stride)), make_int(d.radix));
    if (stride != 1) x = make_Mul(x, make_int(stride));
    result = result ? make_Add(result, x) : x;
    stride *= d.radix;
  }
  return result ? result : make_int(0);
}

bool Fragment::same_placement(const Fragment& other) const {
  if (*this == other) return true;
  if (shape_ != other.shape_ || !replicated() || !other.replicated() || slots() != other.slots()) return false;
  auto slot_digits = [](const Fragment& f) {
    std::vector<std::tuple<int64_t, int, int64_t, int64_t>> digits;  // stride, dim, place, radix
    for (const auto& d : f.digits_)
      if (!d.on_thread && d.radix > 1) digits.emplace_back(d.stride, d.dim, d.place, d.radix);
    std::sort(digits.begin(), digits.end());
    return digits;
  };
  return slot_digits(*this) == slot_digits(other);
}

bool Fragment::operator==(const Fragment& other) const {
  if (shape_ != other.shape_ || digits_.size() != other.digits_.size()) return false;
  for (size_t i = 0; i < digits_.size(); ++i) {
    const auto &a = digits_[i], &b = other.digits_[i];
    if (std::tie(a.dim, a.radix, a.place, a.on_thread, a.stride) !=
        std::tie(b.dim, b.radix, b.place, b.on_thread, b.stride))
      return false;
  }
  return true;
}

std::string Fragment::to_string() const {
  // Numbers through std::to_string, as everywhere in the compiler's text output: it needs no
  // locale (the stream's numeric facets are what broke with two libstdc++ copies in one
  // process, see docs/cuda_backend.md).
  std::string text = "[";
  for (size_t i = 0; i < shape_.size(); ++i) text += (i ? ", " : "") + std::to_string(shape_[i]);
  text += "] over " + std::to_string(threads()) + " threads x " + std::to_string(slots()) + " slots:";
  for (const auto& d : digits_) {
    text += std::string(" ") + (d.on_thread ? "t" : "s") + std::to_string(d.stride) + "=";
    text += d.dim < 0 ? std::string("replica") : "i" + std::to_string(d.dim) + "/" + std::to_string(d.place);
    text += "%" + std::to_string(d.radix);
  }
  return text;
}

Fragment mma_accumulator(int64_t m, int64_t n, int64_t warps_m, int64_t warps_n) {
  int64_t mi = m / warps_m / 16, ni = n / warps_n / 8;
  if (mi * warps_m * 16 != m || ni * warps_n * 8 != n)
    throw std::logic_error("mma_accumulator: tile does not split into 16 x 8 parts over the warps");
  return Fragment({m, n}, {
                              {0, 8, 1, true, 4},
                              {0, 2, 8, false, 2},
                              {0, mi, 16, false, 4 * ni},
                              {0, warps_m, m / warps_m, true, 32},
                              {1, 2, 1, false, 1},
                              {1, 4, 2, true, 1},
                              {1, ni, 8, false, 4},
                              {1, warps_n, n / warps_n, true, 32 * warps_m},
                          });
}

Fragment wgmma_accumulator(int64_t m, int64_t n, int64_t groups_m, int64_t groups_n) {
  int64_t strips = m / groups_m / 64, columns = n / groups_n / 8;
  if (strips * groups_m * 64 != m || columns * groups_n * 8 != n)
    throw std::logic_error("wgmma_accumulator: tile does not split into 64 x 8 parts over the warpgroups");
  return Fragment({m, n}, {
                              {0, 8, 1, true, 4},
                              {0, 2, 8, false, 2},
                              {0, 4, 16, true, 32},
                              {0, strips, 64, false, 4 * columns},
                              {0, groups_m, m / groups_m, true, 128},
                              {1, 2, 1, false, 1},
                              {1, 4, 2, true, 1},
                              {1, columns, 8, false, 4},
                              {1, groups_n, n / groups_n, true, 128 * groups_m},
                          });
}

Fragment mfma_accumulator(int64_t m, int64_t n, int64_t waves_m, int64_t waves_n) {
  int64_t mi = m / waves_m / 16, ni = n / waves_n / 16;
  if (mi * waves_m * 16 != m || ni * waves_n * 16 != n)
    throw std::logic_error("mfma_accumulator: tile does not split into 16 x 16 parts over the waves");
  return Fragment({m, n}, {
                              {0, 16, 1, true, 1},
                              {0, mi, 16, false, 4 * ni},
                              {0, waves_m, m / waves_m, true, 64},
                              {1, 4, 1, false, 1},
                              {1, 4, 4, true, 16},
                              {1, ni, 16, false, 4},
                              {1, waves_n, n / waves_n, true, 64 * waves_m},
                          });
}

Fragment default_fragment(const std::vector<int64_t>& shape, int64_t threads, int64_t vector) {
  std::vector<FragmentDigit> digits;
  int64_t free_threads = threads, thread_stride = 1, slot_stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    int64_t unit = 1;
    if (d + 1 == static_cast<int>(shape.size()) && vector > 1 && shape[d] % vector == 0) {
      digits.push_back({d, vector, 1, false, slot_stride});
      slot_stride *= vector;
      unit = vector;
    }
    int64_t chunks = ceil_div(shape[d], unit);
    int64_t t = floor_pow2(std::min(free_threads, chunks));
    if (t > 1) {
      digits.push_back({d, t, unit, true, thread_stride});
      thread_stride *= t;
      free_threads /= t;
    }
    int64_t rest = ceil_div(chunks, t);
    if (rest > 1) {
      digits.push_back({d, rest, unit * t, false, slot_stride});
      slot_stride *= rest;
    }
  }
  return Fragment(shape, std::move(digits));
}

std::optional<Fragment> reduced_fragment(const Fragment& from, const std::vector<int>& keep,
                                         const std::vector<int64_t>& shape) {
  Fragment projected = from.project(keep);
  if (projected.shape() == shape) return projected;
  return projected.reshaped(shape);
}

Fragment replicated_fragment(const std::vector<int64_t>& shape) {
  std::vector<FragmentDigit> digits;
  int64_t stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    digits.push_back({d, shape[d], 1, false, stride});
    stride *= shape[d];
  }
  return Fragment(shape, std::move(digits));
}

Fragment extend_fragment(const Fragment& base, const std::vector<int>& dims,
                         const std::vector<int64_t>& extents) {
  std::vector<FragmentDigit> digits;
  for (FragmentDigit d : base.digits()) {
    if (d.dim >= 0) d.dim = dims.at(d.dim);
    digits.push_back(d);
  }
  int64_t stride = base.slots();
  for (int d = static_cast<int>(extents.size()) - 1; d >= 0; --d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) continue;
    digits.push_back({d, extents[d], 1, false, stride});
    stride *= extents[d];
  }
  return Fragment(extents, std::move(digits));
}

}  // namespace tilec::ir
