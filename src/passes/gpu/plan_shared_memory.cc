#include "passes/gpu/plan_shared_memory.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ir/device_calls.h"
#include "ir/mutator.h"
#include "ir/shared_layout.h"
#include "ir/substitute.h"
#include "ir/visitor.h"
#include "op/accesses.h"
#include "passes/thread_groups.h"

namespace tilec::passes {
namespace {

using ir::Stmt;

// First and last statement (in program order) that touch each shared buffer. Two kinds of
// statement run out of program order, so what they touch is alive for all of them:
// - a loop (its next iteration may touch a buffer again);
// - the Ifs on thread_group (T.ws, `if tx < 128:` with tile code), from the kernel's first to
//   its last: each group's threads run on past the other groups' Ifs, ordered only by the
//   kernel's own mbarriers, so the Ifs run at once, and so do an If's two branches. A
//   producer's first copy into one buffer may come before a consumer's last use of another.
// An mbarrier (a buffer mbarrier_init takes) is alive for the whole kernel: PTX lets its bytes
// be used for anything else only after mbarrier.inval.
class Lifetimes {
 public:
  struct Span {
    int first, last;
  };
  std::unordered_map<const ir::BufferNode*, Span> spans;

  // The spans of a kernel's body.
  void walk_kernel(const Stmt& body) {
    walk(body);
    if (groups_first_ <= groups_last_) extend_over(groups_first_, groups_last_);
  }

 private:
  void walk(const Stmt& s) {
    if (!s) return;
    if (const auto* seq = s.as<ir::Seq>()) {
      for (const Stmt& inner : seq->stmts) walk(inner);
    } else if (const auto* let = s.as<ir::LetStmt>()) {
      touch_expr(let->value);
      walk(let->body);
    } else if (const auto* alloc = s.as<ir::Allocate>()) {
      walk(alloc->body);
    } else if (const auto* branch = s.as<ir::IfThenElse>()) {
      auto both = [&] {
        touch_expr(branch->condition);
        walk(branch->then_case);
        walk(branch->else_case);
      };
      if (thread_group_of(*branch)) {
        const int start = clock_;
        looped(both);
        groups_first_ = std::min(groups_first_, start);
        groups_last_ = std::max(groups_last_, clock_ - 1);
      } else {
        both();
      }
    } else if (const auto* loop = s.as<ir::For>(); loop && loop->for_kind != ir::ForKind::Parallel) {
      looped([&] { walk(loop->body); });
    } else if (const auto* w = s.as<ir::While>()) {
      looped([&] {
        touch_expr(w->condition);
        walk(w->body);
      });
    } else {
      op::Accesses acc(ir::MemoryScope::Shared);
      acc.visit(s);
      touch(acc);
    }
  }

  template <typename Body>
  void looped(Body body) {
    const int start = clock_;
    body();
    extend_over(start, clock_ - 1);  // the body's ticks
  }

  // Every buffer touched in ticks [first, last] is alive over all of them.
  void extend_over(int first, int last) {
    for (auto& [buffer, span] : spans)
      if (span.last >= first && span.first <= last) {
        span.first = std::min(span.first, first);
        span.last = std::max(span.last, last);
      }
  }

  void touch_expr(const ir::Expr& e) {
    op::Accesses acc(ir::MemoryScope::Shared);
    acc.visit(e);
    touch(acc);
  }

  void touch(const op::Accesses& acc) {
    for (const op::BufferSet* set : {&acc.reads, &acc.writes})
      for (const ir::BufferNode* b : *set) {
        auto [it, fresh] = spans.try_emplace(b, Span{clock_, clock_});
        if (!fresh) it->second.last = clock_;
      }
    ++clock_;
  }

  int clock_ = 0;
  int groups_first_ = std::numeric_limits<int>::max(), groups_last_ = -1;  // the thread-group Ifs' ticks
};

// The buffers a kernel makes mbarriers of.
class Mbarriers : public ir::IRVisitor {
 public:
  std::unordered_set<const ir::BufferNode*> buffers;

 protected:
  void visit_Call(const ir::Call* op) override {
    if (op->name == std::string(ir::kDeviceCallPrefix) + "mbarrier_init" && !op->args.empty())
      if (const auto* address = op->args[0].as<ir::Call>(); address && address->name == ir::kAddressOf)
        if (const auto* load = address->args[0].as<ir::BufferLoad>()) buffers.insert(load->buffer.get());
    IRVisitor::visit_Call(op);
  }
};

class SharedBuffers : public ir::IRVisitor {
 public:
  std::vector<ir::Buffer> buffers;

 protected:
  void visit_Allocate(const ir::Allocate* op) override {
    if (op->buffer->scope == ir::MemoryScope::Shared) buffers.push_back(op->buffer);
    IRVisitor::visit_Allocate(op);
  }
};

// Per-thread code (after lower_to_threads): the shared buffers lowering made (the scratch of
// cross-warp reductions) stacked above the planned ones, each scope's space free again after
// it.
class StackUnplaced : public ir::IRMutator {
 public:
  explicit StackUnplaced(int64_t top) : top_(top) {}
  ir::BufferMap placed;

 protected:
  Stmt mutate_Allocate(const ir::Allocate* op, const Stmt& self) override {
    const ir::BufferNode& b = *op->buffer;
    const int64_t bytes = ir::shared_footprint(b), top = top_;
    if (b.scope == ir::MemoryScope::Shared && b.shared_offset < 0 && bytes >= 0) {
      auto n = std::make_shared<ir::BufferNode>(b);
      n->shared_offset = ir::round_up(top_, ir::shared_alignment(b));
      top_ = n->shared_offset + bytes;
      placed[op->buffer.get()] = n;
    }
    Stmt s = IRMutator::mutate_Allocate(op, self);
    top_ = top;
    return s;
  }

 private:
  int64_t top_;
};

class KernelPlans : public ir::IRMutator {
 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    if (op->thread_var) return stack_unplaced(*op, self);
    SharedBuffers shared;
    shared.visit(op->body);
    Lifetimes lifetimes;
    lifetimes.walk_kernel(op->body);
    Mbarriers mbarriers;
    mbarriers.visit(op->body);
    for (const ir::BufferNode* b : mbarriers.buffers) lifetimes.spans[b] = {-1, std::numeric_limits<int>::max()};

    struct Item {
      ir::Buffer buffer;
      int64_t bytes, align;
      Lifetimes::Span span;
      int64_t offset = -1;
    };
    std::vector<Item> items;
    for (const ir::Buffer& b : shared.buffers) {
      if (b->view_of) continue;  // at its buffer's place, alive as long (op::Accesses)
      int64_t bytes = ir::shared_footprint(*b);
      if (bytes < 0) continue;
      auto it = lifetimes.spans.find(b.get());
      // A buffer nothing touches is alive nowhere: any offset will do.
      Lifetimes::Span span = it == lifetimes.spans.end() ? Lifetimes::Span{-1, -2} : it->second;
      items.push_back({b, bytes, ir::shared_alignment(*b), span});
    }
    if (items.empty()) return self;
    std::vector<Item*> order;
    for (Item& item : items) order.push_back(&item);
    std::stable_sort(order.begin(), order.end(), [](const Item* a, const Item* b) { return a->bytes > b->bytes; });
    std::vector<const Item*> placed;
    for (Item* item : order) {
      auto alive_together = [&](const Item* other) {
        return item->span.first <= other->span.last && other->span.first <= item->span.last;
      };
      // The lowest aligned offset clear of the placed buffers alive with this one: 0 or just
      // above one of them.
      std::vector<int64_t> candidates = {0};
      for (const Item* other : placed)
        if (alive_together(other)) candidates.push_back(ir::round_up(other->offset + other->bytes, item->align));
      std::sort(candidates.begin(), candidates.end());
      for (int64_t offset : candidates) {
        bool clear = std::none_of(placed.begin(), placed.end(), [&](const Item* other) {
          return alive_together(other) && offset < other->offset + other->bytes && other->offset < offset + item->bytes;
        });
        if (clear) {
          item->offset = offset;
          break;
        }
      }
      placed.push_back(item);
    }
    ir::BufferMap planned;
    for (const Item& item : items) {
      auto n = std::make_shared<ir::BufferNode>(*item.buffer);
      n->shared_offset = item.offset;
      planned[item.buffer.get()] = n;
    }
    for (const ir::Buffer& b : shared.buffers)
      if (b->view_of && planned.count(b->view_of.get())) {
        auto n = std::make_shared<ir::BufferNode>(*b);
        n->shared_offset = planned.at(b->view_of.get())->shared_offset;
        planned[b.get()] = n;
      }
    auto n = std::make_shared<ir::KernelLaunch>(*op);
    n->body = ir::replace_buffers(op->body, planned);
    return Stmt(n);
  }

 private:
  static Stmt stack_unplaced(const ir::KernelLaunch& op, const Stmt& self) {
    SharedBuffers shared;
    shared.visit(op.body);
    int64_t end = 0;
    for (const ir::Buffer& b : shared.buffers)
      if (b->shared_offset >= 0) end = std::max(end, b->shared_offset + ir::shared_footprint(*b));
    StackUnplaced stack(end);
    stack.mutate(op.body);
    if (stack.placed.empty()) return self;
    auto n = std::make_shared<ir::KernelLaunch>(op);
    n->body = ir::replace_buffers(op.body, stack.placed);
    return Stmt(n);
  }
};

}  // namespace

ir::Stmt plan_shared_memory(const ir::Stmt& body, const PassContext&) { return KernelPlans().mutate(body); }

}  // namespace tilec::passes
