#include "runtime/tile_layouts.h"

#include <set>
#include <stdexcept>

#include "ir/device_calls.h"
#include "ir/visitor.h"

namespace tilec::runtime {
namespace {

int64_t elements_of(const std::vector<int64_t>& shape, const std::string& name) {
  int64_t n = 1;
  for (int64_t d : shape) {
    n *= d;
    if (d < 0 || n > kMaxLayoutElements)
      throw std::invalid_argument("the layout of '" + name + "' has more than " +
                                  std::to_string(kMaxLayoutElements) + " elements to describe");
  }
  return n;
}

TileLayout base(std::string name, const char* scope, DType dtype, std::vector<int64_t> shape, std::string text) {
  TileLayout t;
  t.name = std::move(name);
  t.scope = scope;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.description = std::move(text);
  return t;
}

}  // namespace

TileLayout fragment_layout(std::string name, DType dtype, const ir::Fragment& fragment) {
  TileLayout t = base(std::move(name), "fragment", dtype, fragment.shape(), fragment.to_string());
  const int64_t elements = elements_of(t.shape, t.name);
  t.threads = fragment.threads();
  t.slots = fragment.slots();
  if (t.threads * t.slots > kMaxLayoutElements)
    throw std::invalid_argument("the layout of '" + t.name + "' has more than " +
                                std::to_string(kMaxLayoutElements) + " thread-register pairs to describe");
  t.thread.assign(elements, -1);
  t.slot.assign(elements, -1);
  t.holders.assign(elements, 0);
  std::vector<int64_t> last_holder(elements, -1);
  const size_t rank = t.shape.size();
  std::vector<int64_t> index(rank);
  for (int64_t tid = 0; tid < t.threads; ++tid)
    for (int64_t slot = 0; slot < t.slots; ++slot) {
      std::fill(index.begin(), index.end(), 0);
      for (const ir::FragmentDigit& d : fragment.digits())
        if (d.dim >= 0) index[d.dim] += ((d.on_thread ? tid : slot) / d.stride) % d.radix * d.place;
      int64_t element = 0;
      bool inside = true;
      for (size_t k = 0; k < rank; ++k) {
        inside = inside && index[k] < t.shape[k];
        element = element * t.shape[k] + index[k];
      }
      if (!inside) continue;  // a fragment covering more than its shape
      if (t.thread[element] == -1) {
        t.thread[element] = tid;
        t.slot[element] = slot;
      }
      if (last_holder[element] != tid) {
        last_holder[element] = tid;
        ++t.holders[element];
      }
    }
  return t;
}

TileLayout shared_layout(std::string name, DType dtype, const std::vector<int64_t>& shape,
                         const ir::SharedLayout* layout) {
  ir::SharedLayoutRef row_major;
  if (!layout) layout = (row_major = ir::SharedLayout::row_major(shape)).get();
  TileLayout t = base(std::move(name), "shared", dtype, shape, layout->to_string());
  elements_of(shape, t.name);
  t.offset = layout->all_offsets();
  return t;
}

namespace {

// The buffers of mbarriers (operands of mbarrier calls, which the compiler makes for its
// pipelines): they hold no tile, so they have no layout to show.
std::set<const ir::BufferNode*> mbarrier_buffers(const ir::Stmt& body) {
  struct Collector : ir::IRVisitor {
    std::set<const ir::BufferNode*> found;
    bool in_mbarrier_call = false;

    void visit_Call(const ir::Call* op) override {
      const bool outer = in_mbarrier_call;
      in_mbarrier_call = outer || op->name.rfind(std::string(ir::kDeviceCallPrefix) + "mbarrier", 0) == 0;
      ir::IRVisitor::visit_Call(op);
      in_mbarrier_call = outer;
    }
    void visit_BufferLoad(const ir::BufferLoad* op) override {
      if (in_mbarrier_call) found.insert(op->buffer.get());
      ir::IRVisitor::visit_BufferLoad(op);
    }
  } collector;
  collector.visit(body);
  return collector.found;
}

}  // namespace

std::vector<TileLayout> tile_layouts(const ir::Stmt& body) {
  struct Collector : ir::IRVisitor {
    std::vector<TileLayout> found;
    std::set<const ir::BufferNode*> barriers;

    void visit_Allocate(const ir::Allocate* op) override {
      const ir::BufferNode& b = *op->buffer;
      if (barriers.count(&b)) {
        ir::IRVisitor::visit_Allocate(op);
        return;
      }
      std::vector<int64_t> shape;
      bool constant = true;
      for (const ir::Expr& d : b.shape) {
        int64_t v = 0;
        constant = constant && ir::is_const_int(d, &v);
        shape.push_back(v);
      }
      if (constant && b.scope == ir::MemoryScope::Fragment && b.fragment)
        found.push_back(fragment_layout(b.name, b.dtype, *b.fragment));
      else if (constant && b.scope == ir::MemoryScope::Shared)
        found.push_back(shared_layout(b.name, b.dtype, shape, b.layout.get()));
      ir::IRVisitor::visit_Allocate(op);
    }
  } collector;
  collector.barriers = mbarrier_buffers(body);
  collector.visit(body);
  return collector.found;
}

}  // namespace tilec::runtime

namespace tilec {

TileLayout standard_layout(const std::string& kind, const std::vector<int64_t>& shape, DType dtype,
                           const std::vector<int64_t>& args) {
  auto need = [&](size_t shape_dims, size_t arg_count, const char* args_text) {
    if ((shape_dims && shape.size() != shape_dims) || args.size() != arg_count)
      throw std::invalid_argument("layout '" + kind + "' takes " +
                                  (shape_dims ? std::to_string(shape_dims) + " dims of shape and " : "") +
                                  args_text);
    for (int64_t d : shape)
      if (d < 1) throw std::invalid_argument("layout '" + kind + "': every dim of its shape must be at least 1");
    for (int64_t a : args)
      if (a < 1) throw std::invalid_argument("layout '" + kind + "': its arguments must be at least 1");
  };
  using Accumulator = ir::Fragment (*)(int64_t, int64_t, int64_t, int64_t);
  Accumulator accumulator = kind == "mma_accumulator"     ? ir::mma_accumulator
                            : kind == "wgmma_accumulator" ? ir::wgmma_accumulator
                            : kind == "mfma_accumulator"  ? ir::mfma_accumulator
                                                          : nullptr;
  if (accumulator) {
    need(2, 2, "2 arguments (the warps along m and along n)");
    return runtime::fragment_layout(kind, dtype, accumulator(shape[0], shape[1], args[0], args[1]));
  }
  if (kind == "default_fragment") {
    need(0, 2, "2 arguments (threads, vector elements a thread)");
    if (shape.empty() || shape.back() % args[1])
      throw std::invalid_argument("layout 'default_fragment': the vector must divide the last dim");
    return runtime::fragment_layout(kind, dtype, ir::default_fragment(shape, args[0], args[1]));
  }
  if (kind == "row_major") {
    need(0, 0, "no arguments");
    return runtime::shared_layout(kind, dtype, shape, nullptr);
  }
  if (kind == "mma_swizzle") {
    need(0, 0, "no arguments");
    return runtime::shared_layout(kind, dtype, shape, ir::SharedLayout::mma_swizzle(shape, dtype.bytes()).get());
  }
  if (kind == "panels") {
    need(0, 1, "1 argument (the panel's bytes)");
    return runtime::shared_layout(kind, dtype, shape,
                                  ir::SharedLayout::panels(shape, dtype.bytes(), args[0]).get());
  }
  throw std::invalid_argument("unknown layout '" + kind + "': expected mma_accumulator, wgmma_accumulator, "
                              "mfma_accumulator, default_fragment, row_major, mma_swizzle or panels");
}

}  // namespace tilec
