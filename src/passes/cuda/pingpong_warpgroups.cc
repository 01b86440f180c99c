#include "passes/cuda/pingpong_warpgroups.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "ir/device_calls.h"
#include "ir/mutator.h"
#include "ir/visitor.h"
#include "op/accesses.h"
#include "passes/gpu/pipeline_stages.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;

constexpr int64_t kWarpgroup = 128;
constexpr int64_t kTurnBarrier = 2;  // and kTurnBarrier + 1

size_t count_gemms(const Stmt& s) {
  struct Count : ir::IRVisitor {
    size_t n = 0;
    void visit_Gemm(const ir::Gemm* op) override {
      ++n;
      IRVisitor::visit_Gemm(op);
    }
  } count;
  count.visit(s);
  return count.n;
}

// The local scalars of the consumers' code that hold the same value on every thread: each is
// stored outside T.Parallel loops (whose iterations are spread over the threads) from globals
// and such scalars alone. Elsewhere tile code is the same on every thread: a warp-specialized
// kernel doesn't read the thread index.
class UniformLocals : public ir::IRVisitor {
 public:
  explicit UniformLocals(const Stmt& s) {
    visit(s);
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& [buffer, reads] : reads_)
        if (!varying_.count(buffer) &&
            std::any_of(reads.begin(), reads.end(), [&](const ir::BufferNode* b) { return !uniform(b); })) {
          varying_.insert(buffer);
          changed = true;
        }
    }
  }

  // Whether `e` has the same value on every thread.
  bool uniform(const Expr& e) const {
    op::Accesses accesses;
    accesses.visit(e);
    return std::all_of(accesses.reads.begin(), accesses.reads.end(), [&](const ir::BufferNode* b) { return uniform(b); });
  }

 private:
  bool uniform(const ir::BufferNode* b) const {
    return b->scope == ir::MemoryScope::Global || (b->scope == ir::MemoryScope::Local && !varying_.count(b));
  }

  void visit_For(const ir::For* op) override {
    parallel_ += op->for_kind == ir::ForKind::Parallel;
    IRVisitor::visit_For(op);
    parallel_ -= op->for_kind == ir::ForKind::Parallel;
  }
  void visit_BufferStore(const ir::BufferStore* op) override {
    const ir::BufferNode* b = op->buffer.get();
    if (b->scope == ir::MemoryScope::Local) {
      if (parallel_) varying_.insert(b);
      op::Accesses accesses;
      accesses.visit(op->value);
      for (const Expr& i : op->indices) accesses.visit(i);
      reads_[b].insert(accesses.reads.begin(), accesses.reads.end());
    }
    IRVisitor::visit_BufferStore(op);
  }

  int parallel_ = 0;
  std::unordered_map<const ir::BufferNode*, op::BufferSet> reads_;
  op::BufferSet varying_;
};

bool uniform_trip_count(const ir::For& loop, const UniformLocals& locals) {
  return locals.uniform(loop.min) && locals.uniform(loop.extent);
}

// Whether a warpgroup takes its turn before a gemm and passes it on after: gemms with only
// waits for their stages (mbarriers) between them issue in one turn.
struct Turn {
  bool take = true, pass = true;
};
using Turns = std::unordered_map<const ir::Gemm*, Turn>;

// The turns of the gemms of a loop that qualifies, else nothing.
Turns loop_turns(const ir::For& loop, const UniformLocals& locals) {
  if (!uniform_trip_count(loop, locals)) return {};
  Turns turns;
  const ir::Gemm* last_gemm = nullptr;  // of the current run
  for (const Stmt& s : loop_body_statements(loop.body)) {
    if (const auto* gemm = s.as<ir::Gemm>()) {
      const ir::GemmInstruction& in = gemm->instruction;
      if (in.kind != ir::GemmInstructionKind::Wgmma || in.grid_m * in.grid_n != 2) return {};
      if (last_gemm) {
        turns[last_gemm].pass = false;
        turns[gemm].take = false;
      }
      turns[gemm];
      last_gemm = gemm;
    } else if (!ir::is_device_call(s, "mbarrier_wait_parity")) {
      last_gemm = nullptr;
    }
  }
  const bool shared_turn = std::any_of(turns.begin(), turns.end(), [](const auto& t) { return !t.second.pass; });
  if (!shared_turn || turns.size() != count_gemms(loop.body)) return {};
  return turns;
}

class MarkTurns : public ir::IRMutator {
 public:
  explicit MarkTurns(const Turns& turns) : turns_(turns) {}

 protected:
  Stmt mutate_Gemm(const ir::Gemm* op, const Stmt&) override {
    const Turn& turn = turns_.at(op);
    auto n = std::make_shared<ir::Gemm>(*op);
    n->instruction.take_turn = turn.take ? kTurnBarrier : 0;
    n->instruction.pass_turn = turn.pass ? kTurnBarrier : 0;
    return Stmt(n);
  }

 private:
  const Turns& turns_;
};

Stmt in_threads(int64_t lo, int64_t hi, Stmt then_case) {
  return ir::make_if(ir::thread_in(lo, hi), std::move(then_case), Stmt());
}

// `s` with `rewrite` applied to each statement it reaches through lists, lets and allocations.
template <class Rewrite>
Stmt through_lists(const Stmt& s, const Rewrite& rewrite) {
  if (const auto* seq = s.as<ir::Seq>()) {
    std::vector<Stmt> stmts;
    for (const Stmt& x : seq->stmts) stmts.push_back(through_lists(x, rewrite));
    return ir::with_loc(ir::make_seq(std::move(stmts)), s->loc);
  }
  if (const auto* alloc = s.as<ir::Allocate>()) {
    auto n = std::make_shared<ir::Allocate>(*alloc);
    n->body = through_lists(alloc->body, rewrite);
    return Stmt(n);
  }
  if (const auto* let = s.as<ir::LetStmt>()) {
    auto n = std::make_shared<ir::LetStmt>(*let);
    n->body = through_lists(let->body, rewrite);
    return Stmt(n);
  }
  return rewrite(s);
}

// The consumers' code `s`, its qualifying loops taking turns.
Stmt take_turns(const Stmt& s, const UniformLocals& locals) {
  return through_lists(s, [&](const Stmt& x) {
    const auto* loop = x.as<ir::For>();
    if (!loop || !uniform_trip_count(*loop, locals)) return x;
    Turns turns = loop_turns(*loop, locals);
    if (turns.empty()) {
      auto n = std::make_shared<ir::For>(*loop);
      n->body = take_turns(loop->body, locals);
      return Stmt(n);
    }
    const SourceLoc& loc = x->loc;
    Expr barrier = ir::make_int(kTurnBarrier);
    return ir::with_loc(
        ir::make_seq({in_threads(kWarpgroup, 2 * kWarpgroup, ir::device_call("turn_pass", {barrier}, loc)),
                      MarkTurns(turns).mutate(x),
                      in_threads(0, kWarpgroup, ir::device_call("turn_wait", {barrier}, loc))}),
        loc);
  });
}

// The launch body with the consumers' branch of the If that splits off the producer warpgroup
// taking turns.
Stmt rewrite_consumers(const Stmt& s, const ir::KernelLaunch& launch) {
  return through_lists(s, [&](const Stmt& x) {
    const auto* branch = x.as<ir::IfThenElse>();
    const auto* call = branch ? branch->condition.as<ir::Call>() : nullptr;
    int64_t lo = 0, hi = 0;
    if (!call || call->name != ir::kThreadIn || !ir::is_const_int(call->args.at(0), &lo) ||
        !ir::is_const_int(call->args.at(1), &hi) || lo != launch.threads ||
        hi != launch.threads + launch.producer_threads || !branch->else_case)
      return x;
    auto n = std::make_shared<ir::IfThenElse>(*branch);
    n->else_case = take_turns(branch->else_case, UniformLocals(branch->else_case));
    return Stmt(n);
  });
}

class Pingpong : public ir::IRMutator {
 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    if (op->producer_threads == 0 || op->threads != 2 * kWarpgroup) return self;
    Stmt body = rewrite_consumers(op->body, *op);
    auto n = std::make_shared<ir::KernelLaunch>(*op);
    n->body = body;
    return Stmt(n);
  }
};

}  // namespace

ir::Stmt pingpong_warpgroups(const ir::Stmt& body, const PassContext& ctx) {
  if (!hopper_feature(ctx, "tilec.pingpong")) return body;
  return Pingpong().mutate(body);
}

}  // namespace tilec::passes
