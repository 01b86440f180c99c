#include "passes/wgmma_waits.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/device_calls.h"
#include "ir/layout.h"
#include "ir/equal.h"
#include "ir/mutator.h"
#include "ir/simplify.h"
#include "ir/visitor.h"
#include "op/accesses.h"
#include "op/op.h"
#include "passes/gpu/pipeline_stages.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;

bool asynchronous(const ir::Gemm& g) { return g.wg_wait != 0 && g.instruction.kind == ir::GemmInstructionKind::Wgmma; }

// The fragments the asynchronous gemms of a launch write or read in registers.
std::vector<ir::Buffer> in_flight_fragments(const Stmt& s) {
  struct Collect : ir::IRVisitor {
    std::vector<ir::Buffer> fragments;
    void add(const ir::Buffer& b) {
      for (const ir::Buffer& f : fragments)
        if (f.get() == b.get()) return;
      fragments.push_back(b);
    }
    void visit_Gemm(const ir::Gemm* op) override {
      if (asynchronous(*op)) {
        if (op->instruction.a_in_registers) add(op->a.buffer);
        add(op->c.buffer);
      }
      IRVisitor::visit_Gemm(op);
    }
  } collect;
  collect.visit(s);
  return collect.fragments;
}

// The fragments one asynchronous gemm keeps in flight: its accumulator, and its A operand when
// in registers.
void add_fragments(const ir::Gemm& g, std::unordered_set<const ir::BufferNode*>& out) {
  if (g.instruction.a_in_registers) out.insert(g.a.buffer.get());
  out.insert(g.c.buffer.get());
}

bool is_wait(const Stmt& s, int64_t* n) {
  const auto* eval = s.as<ir::Evaluate>();
  const auto* call = eval ? eval->value.as<ir::Call>() : nullptr;
  return call && call->name == ir::kWaitWgmma && ir::is_const_int(call->args.at(0), n);
}

bool holds_asynchronous_gemm(const Stmt& s) {
  struct Find : ir::IRVisitor {
    bool found = false;
    void visit_Gemm(const ir::Gemm* op) override { found |= asynchronous(*op); }
  } find;
  find.visit(s);
  return find.found;
}

// For each T.wait_wgmma(n), n > 0: the fragments of the n asynchronous gemms issued last before
// it, which are still in flight after it. Found walking back from the wait through the statements
// before it, outward to the launch; the wait is left out where that can't be known (a statement
// before it that may or may not issue an asynchronous gemm, or a loop's back edge, comes first).
class StillInFlight : public ir::IRVisitor {
 public:
  std::unordered_map<const ir::StmtNode*, std::unordered_set<const ir::BufferNode*>> after_wait;

  void visit(const Stmt& s) override {
    if (!s) return;
    frames_.push_back({s, 0});
    IRVisitor::visit(s);
    frames_.pop_back();
  }

 protected:
  void visit_Seq(const ir::Seq* op) override {
    for (size_t i = 0; i < op->stmts.size(); ++i) {
      frames_.back().index = i;
      visit(op->stmts[i]);
    }
  }

  void visit_Evaluate(const ir::Evaluate* op) override {
    int64_t n = 0;
    const Stmt& self = frames_.back().stmt;
    if (is_wait(self, &n) && n > 0)
      if (auto fragments = last_issued(n)) after_wait[self.get()] = std::move(*fragments);
    IRVisitor::visit_Evaluate(op);
  }

 private:
  struct Frame {
    Stmt stmt;
    size_t index;  // in a Seq: the statement being visited
  };

  std::optional<std::unordered_set<const ir::BufferNode*>> last_issued(int64_t n) const {
    std::unordered_set<const ir::BufferNode*> fragments;
    int64_t issued = 0;
    for (size_t f = frames_.size() - 1; f-- > 0;) {
      const Stmt& enclosing = frames_[f].stmt;
      if (enclosing.as<ir::KernelLaunch>()) return fragments;
      if (enclosing.as<ir::For>() || enclosing.as<ir::While>()) return std::nullopt;
      const auto* seq = enclosing.as<ir::Seq>();
      if (!seq) continue;
      for (size_t k = frames_[f].index; k-- > 0;) {
        const Stmt& s = seq->stmts[k];
        int64_t m = 0;
        if (const auto* gemm = s.as<ir::Gemm>(); gemm && gemm->instruction.kind == ir::GemmInstructionKind::Wgmma) {
          if (gemm->wg_wait == 0) return fragments;  // it waited for every group before it
          add_fragments(*gemm, fragments);
          if (++issued == n) return fragments;
        } else if (is_wait(s, &m) && m == 0) {
          return fragments;
        } else if (holds_asynchronous_gemm(s)) {
          return std::nullopt;
        }
      }
    }
    return fragments;
  }

  std::vector<Frame> frames_;
};

// Whether [a_min, a_min + a_extent) and [b_min, b_min + b_extent) provably meet: their starts
// differ by a constant (ir::linear_sum) less than the extent ahead of it.
bool spans_meet(const Expr& a_min, int64_t a_extent, const Expr& b_min, int64_t b_extent) {
  Expr a = a_min, b = b_min;
  if (a->dtype != b->dtype) {
    a = ir::make_cast(DType::Int64, a);
    b = ir::make_cast(DType::Int64, b);
  }
  std::optional<ir::LinearSum> difference = ir::linear_sum(ir::make_Sub(a, b));
  return difference && difference->terms.empty() && difference->constant < b_extent &&
         -difference->constant < a_extent;
}

// Whether statement `s` surely writes part of `region`, a shared tile an asynchronous wgmma reads:
// a tile op's written region, or a store whose indices (over the loops inside `s`: an index the
// loop variable plus what is fixed, or fixed) provably meet the region in every dim. A write
// that can't be shown to meet it (a stage picked by another expression, an index of a loop
// outside `s`) is let be, so that no correct program is refused.
bool surely_writes(const Stmt& s, const ir::BufferRegion& region) {
  const ir::BufferNode* buffer = region.buffer.get();
  std::vector<int64_t> extents;
  for (const ir::Range& r : region.region) {
    int64_t extent = 0;
    if (!ir::is_const_int(ir::simplify(r.extent), &extent)) return false;
    extents.push_back(extent);
  }
  auto meets = [&](const std::vector<std::pair<Expr, int64_t>>& spans) {
    if (spans.size() != extents.size()) return false;
    for (size_t d = 0; d < spans.size(); ++d)
      if (!spans[d].first || !spans_meet(spans[d].first, spans[d].second, region.region[d].min, extents[d]))
        return false;
    return true;
  };
  if (op::is_tile_op(s.kind())) {
    for (const ir::BufferRegion& written : op::regions_of(*s).writes) {
      if (written.buffer.get() != buffer) continue;
      std::vector<std::pair<Expr, int64_t>> spans;
      for (const ir::Range& r : written.region) {
        int64_t extent = 0;
        spans.push_back(ir::is_const_int(ir::simplify(r.extent), &extent) ? std::make_pair(r.min, extent)
                                                            : std::make_pair(Expr(), int64_t{0}));
      }
      if (meets(spans)) return true;
    }
    return false;
  }
  // Stores, each index as the span its loop variable (one, with coefficient 1, of a loop of
  // constant bounds inside `s`) runs over.
  struct Writes : ir::IRVisitor {
    const ir::BufferNode* buffer;
    std::function<bool(const std::vector<std::pair<Expr, int64_t>>&)> meets;
    std::vector<const ir::For*> loops;
    bool found = false;
    void visit_For(const ir::For* op) override {
      loops.push_back(op);
      IRVisitor::visit_For(op);
      loops.pop_back();
    }
    std::pair<Expr, int64_t> span(const Expr& index) const {
      std::optional<ir::LinearSum> sum = ir::linear_sum(index);
      if (!sum) return {};
      std::pair<Expr, int64_t> out{index, 1};
      for (const auto& [term, coefficient] : sum->terms)
        for (const ir::For* loop : loops) {
          if (!term.same_as(loop->var)) continue;
          int64_t extent = 0;
          if (coefficient != 1 || out.second != 1 || !ir::is_const_int(loop->extent, &extent) || extent < 1)
            return {};
          // the span starts where the variable is loop->min
          Expr v = term, lo = loop->min;
          if (lo->dtype != v->dtype) lo = ir::make_cast(v->dtype, lo);
          out = {ir::make_Add(ir::make_Sub(out.first, v), lo), extent};
        }
      return out;
    }
    void visit_BufferStore(const ir::BufferStore* op) override {
      if (op->buffer.get() == buffer && !found) {
        std::vector<std::pair<Expr, int64_t>> spans;
        for (const Expr& index : op->indices) spans.push_back(span(index));
        found = meets(spans);
      }
      IRVisitor::visit_BufferStore(op);
    }
  } writes;
  writes.buffer = buffer;
  writes.meets = meets;
  writes.visit(s);
  return writes.found;
}

// Statements of a loop's body as its iterations after the first run them: a branch on the loop
// variable being its first value (what T.gemm's clear_accum=(k == 0) becomes: `if k == 0:` a fill
// of the accumulator) takes its else case.
std::vector<Stmt> after_first_iteration(const std::vector<Stmt>& body, const ir::For& loop) {
  struct Later : ir::IRMutator {
    const ir::For& loop;
    explicit Later(const ir::For& l) : loop(l) {}
    bool is_first(const Expr& e) const {
      const auto* eq = e.as<ir::EQ>();
      if (!eq) return false;
      const auto first = [&](const Expr& var, const Expr& value) {
        return var.same_as(loop.var) && ir::structural_equal(ir::simplify(value), ir::simplify(loop.min));
      };
      return first(eq->a, eq->b) || first(eq->b, eq->a);
    }
    Stmt mutate_IfThenElse(const ir::IfThenElse* op, const Stmt& self) override {
      if (!is_first(op->condition)) return IRMutator::mutate_IfThenElse(op, self);
      return op->else_case ? mutate(op->else_case) : ir::make_seq({});
    }
  } later(loop);
  std::vector<Stmt> out;
  for (const Stmt& s : body) out.push_back(later.mutate(s));
  return out;
}

class InFlightCheck : public ir::IRVisitor {
 public:
  void visit_KernelLaunch(const ir::KernelLaunch* op) override {
    struct Find : ir::IRVisitor {
      const ir::Gemm* async = nullptr;
      bool waits = false;
      void visit_Gemm(const ir::Gemm* g) override {
        if (g->wg_wait != 0 && !async) async = g;
      }
      void visit_Call(const ir::Call* c) override {
        waits |= c->name == ir::kWaitWgmma;
        IRVisitor::visit_Call(c);
      }
    } find;
    find.visit(op->body);
    if (find.async && !find.waits)
      error_at(find.async->loc, "this gemm (wg_wait=" + std::to_string(find.async->wg_wait) +
                                    ") leaves its wgmma in flight, and no T.wait_wgmma of the kernel waits for it");
    IRVisitor::visit_KernelLaunch(op);
  }

  void visit_Seq(const ir::Seq* op) override {
    auto pipelined = pipelined_bodies_.find(op);
    scan(op->stmts, {}, pipelined == pipelined_bodies_.end() ? nullptr : &pipelined->second);
    IRVisitor::visit_Seq(op);
  }

  // A T.Pipelined loop is checked where the list that holds it is scanned; its body's list
  // where it is scanned again is one whose producers run ahead.
  void visit_For(const ir::For* op) override {
    if (op->for_kind == ir::ForKind::Pipelined) {
      Stmt body = op->body;
      while (const auto* let = body.as<ir::LetStmt>()) body = let->body;
      if (const auto* seq = body.as<ir::Seq>()) pipelined_bodies_[seq] = loop_invariant_locals(op->body);
    }
    IRVisitor::visit_For(op);
  }

 private:
  // What a gemm keeps in flight: a fragment it writes or reads in registers, or a shared tile it
  // reads (one of its operand regions, which no statement may write before a wait).
  using InFlight = std::vector<std::pair<const ir::BufferNode*, const ir::Gemm*>>;

  static bool is_shared(const ir::BufferNode* buffer) { return buffer->scope == ir::MemoryScope::Shared; }

  // The statements of one list in order, `in_flight` what is in flight before the first; what
  // is in flight after the last. A serial loop or a branch entered with a gemm in flight is
  // looked into: its body (each branch) scanned with what is in flight on entering it, a loop's
  // twice (the second time with what its first iteration leaves too), so that a loop may issue
  // the next step's gemm and then wait for the last one's before reading it. In a T.Pipelined
  // loop's body (`pipelined`: the locals the loop does not write) the producers fill a later
  // iteration's stage, not the one read.
  static InFlight scan(const std::vector<Stmt>& stmts, InFlight in_flight = {},
                       const op::BufferSet* pipelined = nullptr) {
    for (const Stmt& s : stmts) {
      int64_t n = 0;
      if (is_wait(s, &n)) {
        in_flight.clear();
        continue;
      }
      if (!in_flight.empty())
        if (std::optional<InFlight> out = scan_inside(s, in_flight)) {
          in_flight = std::move(*out);
          continue;
        }
      const auto* gemm = s.as<ir::Gemm>();
      op::Accesses accesses;
      accesses.visit(gemm ? Stmt() : s);
      if (gemm) {
        accesses.reads.insert(gemm->a.buffer.get());
        accesses.reads.insert(gemm->b.buffer.get());
      }
      for (const auto& [buffer, by] : in_flight) {
        if (is_shared(buffer)) {
          if (!(pipelined && is_producer(s, *pipelined)) &&
              ((by->a.buffer.get() == buffer && surely_writes(s, by->a)) ||
               (by->b.buffer.get() == buffer && surely_writes(s, by->b))))
            error_at(s->loc,
                     "this writes " + buffer->name + " where an asynchronous wgmma may still read it: a "
                     "T.wait_wgmma before this statement waits for it",
                     by->loc, "the gemm (wg_wait=" + std::to_string(by->wg_wait) + ") whose wgmma reads " +
                                  buffer->name);
          continue;
        }
        // Another asynchronous gemm adding into the accumulator in flight is the hardware's to
        // order; one that clears it would drop the first's result, and on wgmma take registers
        // the first still writes (device/cuda/wgmma.h, forget_registers).
        const bool accumulates =
            gemm && gemm->wg_wait != 0 && !gemm->clear_accum && gemm->c.buffer.get() == buffer;
        if (!accumulates && (accesses.reads.count(buffer) || accesses.writes.count(buffer) ||
                             (gemm && gemm->c.buffer.get() == buffer)))
          error_at(s->loc,
                   buffer->name + " is still in use by an asynchronous wgmma here: a T.wait_wgmma before this "
                                  "statement waits for it",
                   by->loc, "the gemm (wg_wait=" + std::to_string(by->wg_wait) + ") whose wgmma uses " + buffer->name);
      }
      if (gemm && gemm->wg_wait != 0) {
        if (gemm->wg_wait > 0) in_flight.clear();  // its wait leaves it in flight, and fewer of the others
        in_flight.push_back({gemm->c.buffer.get(), gemm});
        if (gemm->a.buffer->scope == ir::MemoryScope::Fragment) in_flight.push_back({gemm->a.buffer.get(), gemm});
        for (const ir::BufferRegion* operand : {&gemm->a, &gemm->b})
          if (is_shared(operand->buffer.get())) in_flight.push_back({operand->buffer.get(), gemm});
      }
      const auto* loop = s.as<ir::For>();
      if (loop && loop->for_kind == ir::ForKind::Pipelined) {
        InFlight left = left_in_flight(loop);
        in_flight.insert(in_flight.end(), left.begin(), left.end());
      }
    }
    return in_flight;
  }

  // What is in flight after `s`, a serial loop or a branch (or a let around one), entered with
  // `in_flight`; nullopt for any other statement, or where the let's value, the loop's bounds or
  // the branch's condition read what is in flight (the statement is then checked as a whole).
  static std::optional<InFlight> scan_inside(const Stmt& s, const InFlight& in_flight) {
    auto merged = [](InFlight a, const InFlight& b) {
      for (const auto& entry : b)
        if (std::find(a.begin(), a.end(), entry) == a.end()) a.push_back(entry);
      return a;
    };
    auto reads_in_flight = [&](std::initializer_list<ir::Expr> exprs) {
      op::Accesses accesses;
      for (const ir::Expr& e : exprs)
        if (e) accesses.visit(e);
      for (const auto& entry : in_flight)
        if (!is_shared(entry.first) && accesses.reads.count(entry.first)) return true;
      return false;
    };
    if (const auto* let = s.as<ir::LetStmt>())
      return reads_in_flight({let->value}) ? std::nullopt : scan_inside(let->body, in_flight);
    if (const auto* loop = s.as<ir::For>(); loop && loop->for_kind != ir::ForKind::Pipelined &&
                                            loop->for_kind != ir::ForKind::Parallel) {
      if (reads_in_flight({loop->min, loop->extent})) return std::nullopt;
      const std::vector<Stmt> body = loop_body_statements(loop->body);
      const InFlight after_one = merged(in_flight, scan(body, in_flight));
      return merged(after_one, scan(after_first_iteration(body, *loop), after_one));
    }
    if (const auto* branch = s.as<ir::IfThenElse>()) {
      if (reads_in_flight({branch->condition})) return std::nullopt;
      const InFlight after_then = scan(loop_body_statements(branch->then_case), in_flight);
      return merged(after_then, branch->else_case ? scan(loop_body_statements(branch->else_case), in_flight)
                                                  : in_flight);
    }
    return std::nullopt;
  }

  // What T.Pipelined loop `loop` leaves in flight when an iteration ends. Its stages are refilled
  // then: no wgmma may still read one. A wgmma that reads none may run on into the next
  // iteration (a gemm whose result the next one handles, under its own gemms), which must not
  // touch its fragments before a wait either.
  static InFlight left_in_flight(const ir::For* loop) {
    std::vector<Stmt> body = loop_body_statements(loop->body);
    const op::BufferSet invariant = loop_invariant_locals(loop->body);
    InFlight left = scan(body, {}, &invariant);
    if (left.empty()) return left;
    std::unordered_set<const ir::BufferNode*> stages;
    for (const Stmt& s : body)
      if (is_producer(s)) stages.insert(s.as<ir::Copy>()->dst.buffer.get());
    for (const auto& [buffer, gemm] : left)
      if (stages.count(gemm->a.buffer.get()) || stages.count(gemm->b.buffer.get()))
        error_at(gemm->loc,
                 "this gemm's wgmma (wg_wait=" + std::to_string(gemm->wg_wait) +
                     ") is still in flight when the T.Pipelined loop's iteration ends, where its stages are "
                     "refilled: a T.wait_wgmma before the iteration ends waits for it",
                 loop->loc, "the loop");
    scan(body, left, &invariant);
    return left;
  }

  std::unordered_map<const ir::Seq*, op::BufferSet> pipelined_bodies_;
};

class Waits : public ir::IRMutator {
 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    std::vector<ir::Buffer> saved = std::move(fragments_);
    fragments_ = in_flight_fragments(op->body);
    StillInFlight still;
    still.visit(self);
    still_in_flight_ = std::move(still.after_wait);
    Stmt out = IRMutator::mutate_KernelLaunch(op, self);
    fragments_ = std::move(saved);
    return out;
  }

  // A thread group's waits fence the fragments of its own gemms: another group's fragments are
  // registers ptxas may give the same physical registers, in flight in this group.
  Stmt mutate_IfThenElse(const ir::IfThenElse* op, const Stmt& self) override {
    const auto* group = op->condition.as<ir::Call>();
    if (!group || group->name != ir::kThreadGroup) return IRMutator::mutate_IfThenElse(op, self);
    std::vector<ir::Buffer> saved = fragments_;
    fragments_ = in_flight_fragments(op->then_case);
    Stmt then_case = mutate(op->then_case);
    fragments_ = op->else_case ? in_flight_fragments(op->else_case) : std::vector<ir::Buffer>();
    Stmt else_case = op->else_case ? mutate(op->else_case) : Stmt();
    fragments_ = std::move(saved);
    if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return self;
    return ir::with_loc(ir::make_if(op->condition, then_case, else_case), op->loc);
  }

  Stmt mutate_Evaluate(const ir::Evaluate* op, const Stmt& self) override {
    int64_t n = 0;
    if (!is_wait(self, &n)) return IRMutator::mutate_Evaluate(op, self);
    if (fragments_.empty()) return ir::make_seq({});
    auto still = still_in_flight_.find(self.get());
    return wait(n, self->loc, still == still_in_flight_.end() ? nullptr : &still->second);
  }

  Stmt mutate_Gemm(const ir::Gemm* op, const Stmt& self) override {
    if (op->wg_wait == 0) return self;
    auto n = std::make_shared<ir::Gemm>(*op);
    if (!asynchronous(*op)) {
      n->wg_wait = 0;
      return Stmt(n);
    }
    if (op->wg_wait < 0) return self;
    n->wg_wait = -1;
    // the gemm itself is what its own wait leaves in flight
    std::unordered_set<const ir::BufferNode*> own;
    add_fragments(*op, own);
    return ir::with_loc(ir::make_seq({Stmt(n), wait(op->wg_wait, op->loc, op->wg_wait == 1 ? &own : nullptr)}),
                        op->loc);
  }

 private:
  // wgmma_wait<n>, then a fence of each fragment an asynchronous gemm of the launch uses, but
  // those `still` in flight: a fence reads and writes its registers as far as ptxas knows, and
  // ptxas then serializes every wgmma of the kernel (C7514) for the one in flight.
  Stmt wait(int64_t n, const SourceLoc& loc, const std::unordered_set<const ir::BufferNode*>* still) const {
    std::vector<Stmt> out{ir::device_call("wgmma_wait<" + std::to_string(n) + ">", {}, loc)};
    for (const ir::Buffer& f : fragments_) {
      if (still && still->count(f.get())) continue;
      if (!f->fragment) throw std::logic_error("wgmma_waits: a gemm's fragment " + f->name + " has no layout");
      std::vector<Expr> origin(f->shape.size(), ir::make_int(0));
      out.push_back(ir::device_call("fence_fragment<" + std::to_string(f->fragment->slots()) + ">",
                                    {ir::address_of(f, origin)}, loc));
    }
    return ir::with_loc(ir::make_seq(std::move(out)), loc);
  }

  std::vector<ir::Buffer> fragments_;
  std::unordered_map<const ir::StmtNode*, std::unordered_set<const ir::BufferNode*>> still_in_flight_;
};

}  // namespace

void check_wgmma_flight(const ir::Stmt& body) { InFlightCheck().visit(body); }

ir::Stmt wgmma_waits(const ir::Stmt& body, const PassContext&) { return Waits().mutate(body); }

}  // namespace tilec::passes
