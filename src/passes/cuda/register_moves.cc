#include "passes/cuda/register_moves.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/diagnostics.h"
#include "ir/device_calls.h"
#include "ir/visitor.h"

namespace tilec::passes {

int registers_at_launch(int threads, int min_blocks) {
  constexpr int kRegistersPerSm = 64 * 1024;
  return std::min(255, kRegistersPerSm / std::max(threads * std::max(min_blocks, 1), 1)) / 8 * 8;
}

namespace {

struct RegisterMove {
  int64_t lo, hi;  // the threads that run it
  int count;       // what each keeps after it
  bool grows;
  SourceLoc loc;
};

class RegisterMoves : public ir::LocatedVisitor {
 public:
  // compiled: the registers ptxas gave the kernel, what each warp starts with: the moves' directions
  // are checked against it. Without it, the counts against the block's pool.
  explicit RegisterMoves(std::optional<int> compiled = std::nullopt) : compiled_(compiled) {}

 protected:
  void visit_KernelLaunch(const ir::KernelLaunch* op) override {
    const int threads = op->threads + op->producer_threads;
    const auto enclosing = group_;
    std::vector<RegisterMove> moves;
    moves.swap(moves_);
    group_ = {0, threads};
    thread_index_ = op->thread_var ? op->thread_var.get() : op->thread_index.get();
    IRVisitor::visit_KernelLaunch(op);
    group_ = enclosing;
    moves.swap(moves_);
    // Each warp starts with what ptxas gave the kernel (setmaxnreg moves from there), but the
    // block's pool is what its bounds allow: on an H100 a kernel ptxas gave 58 registers grew
    // two warpgroups of its 384 threads to 240, 64512 in all.
    if (compiled_) {
      check_directions(threads, *compiled_, moves);
      return;
    }
    check(threads, registers_at_launch(threads, op->min_blocks_per_sm), op->min_blocks_per_sm, moves);
  }
  void visit_IfThenElse(const ir::IfThenElse* op) override {
    const std::optional<std::pair<int64_t, int64_t>> span = thread_span(op->condition);
    if (!span) return IRVisitor::visit_IfThenElse(op);
    const auto enclosing = group_;
    group_ = *span;
    visit(op->then_case);
    // the else: the enclosing threads but the span's, where they are one run
    if (span->first == enclosing.first) group_ = {span->second, enclosing.second};
    else if (span->second == enclosing.second) group_ = {enclosing.first, span->first};
    else group_ = enclosing;
    visit(op->else_case);
    group_ = enclosing;
  }
  void visit_Call(const ir::Call* op) override {
    for (const bool grows : {true, false}) {
      const std::string name = std::string(ir::kDeviceCallPrefix) + (grows ? "setmaxnreg_inc<" : "setmaxnreg_dec<");
      if (op->name.rfind(name, 0) == 0)
        moves_.push_back({group_.first, group_.second, std::stoi(op->name.substr(name.size())), grows, loc_});
    }
    IRVisitor::visit_Call(op);
  }

 private:
  // The threads [lo, hi) a branch runs on: a T.ws group's, and once lowered, its test of the
  // thread index (tx >= lo and tx < hi).
  std::optional<std::pair<int64_t, int64_t>> thread_span(const ir::Expr& condition) const {
    int64_t lo = 0, hi = 0;
    if (const auto* call = condition.as<ir::Call>()) {
      if ((call->name == ir::kThreadGroup || call->name == ir::kThreadIn) && call->args.size() == 2 &&
          ir::is_const_int(call->args[0], &lo) && ir::is_const_int(call->args[1], &hi))
        return std::pair(lo, hi);
      return std::nullopt;
    }
    const auto* both = condition.as<ir::And>();
    const auto* from = both ? both->a.as<ir::GE>() : nullptr;
    const auto* below = both ? both->b.as<ir::LT>() : nullptr;
    if (from && below && thread_index_ && from->a.get() == thread_index_ && below->a.get() == thread_index_ &&
        ir::is_const_int(from->b, &lo) && ir::is_const_int(below->b, &hi))
      return std::pair(lo, hi);
    return std::nullopt;
  }

  // Each thread keeps the most any of its groups' moves leaves it (what it holds once the
  // growing groups have grown), or what it launched with.
  static void check(int threads, int at_launch, int min_blocks, const std::vector<RegisterMove>& moves) {
    const auto grow = std::find_if(moves.begin(), moves.end(), [](const RegisterMove& m) { return m.grows; });
    if (grow == moves.end()) return;  // only drops: nothing waits
    std::vector<int> kept(threads, 0);
    std::vector<bool> moved(threads, false);
    std::map<std::pair<int64_t, int64_t>, int> asked;  // a group's threads -> the most they keep
    for (const RegisterMove& m : moves) {
      for (int64_t t = std::max<int64_t>(m.lo, 0); t < std::min<int64_t>(m.hi, threads); ++t) {
        kept[t] = std::max(kept[t], m.count);
        moved[t] = true;
      }
      int& most = asked[{m.lo, m.hi}];
      most = std::max(most, m.count);
    }
    int64_t total = 0, unmoved = 0;
    for (int t = 0; t < threads; ++t) {
      total += moved[t] ? kept[t] : at_launch;
      unmoved += moved[t] ? 0 : 1;
    }
    const int64_t pool = int64_t{at_launch} * threads;
    if (total <= pool) return;
    std::string groups;
    for (const auto& [range, count] : asked)
      groups += (groups.empty() ? "" : ", ") + std::to_string(count) + " on threads [" + std::to_string(range.first) +
                ", " + std::to_string(range.second) + ")";
    if (unmoved) groups += ", " + std::to_string(at_launch) + " on the " + std::to_string(unmoved) + " others";
    error_at(grow->loc, "T.set_max_nreg: the threads ask for " + groups + ": " + std::to_string(total) +
                            " registers, but a block of " + std::to_string(threads) + " threads" +
                            (min_blocks > 1 ? ", " + std::to_string(min_blocks) + " blocks an SM (T.annotate_min_blocks_per_sm)," : "") +
                            " launches with " + std::to_string(at_launch) + " a thread (" + std::to_string(pool) +
                            "), and a growing warpgroup would wait forever for the other " +
                            std::to_string(total - pool) +
                            " (the kernel would hang); grow less or drop the other warpgroups further");
  }

  // setmaxnreg.inc asks for at least what the threads hold, .dec for at most: the other way the
  // GPU stops the kernel with an illegal instruction (an H100, 2026-12-06: a warpgroup of a
  // 384-thread block ptxas gave 168 registers growing to 160). What they hold: what they launched
  // with (ptxas's count, known once the kernel is compiled), then each move in the order the walk
  // met them.
  static void check_directions(int threads, int at_launch, const std::vector<RegisterMove>& moves) {
    std::vector<int> held(threads, at_launch);
    for (const RegisterMove& m : moves) {
      for (int64_t t = std::max<int64_t>(m.lo, 0); t < std::min<int64_t>(m.hi, threads); ++t) {
        if (m.grows ? m.count >= held[t] : m.count <= held[t]) continue;
        const std::string count = std::to_string(m.count), now = std::to_string(held[t]);
        error_at(m.loc, "T.set_max_nreg(" + count + ", " + (m.grows ? "1" : "0") + ") " +
                            (m.grows ? "grows" : "drops") + " thread " + std::to_string(t) + "'s registers to " + count +
                            ", but it holds " + now +
                            (held[t] == at_launch ? " (what it launched with: ptxas gave the kernel " + now + ")" : "") +
                            ": setmaxnreg." + (m.grows ? "inc asks for more" : "dec for fewer") +
                            " than a thread holds, the other way is an illegal instruction on the GPU; use T.set_max_nreg(" +
                            count + ", " + (m.grows ? "0" : "1") + ")");
      }
      for (int64_t t = std::max<int64_t>(m.lo, 0); t < std::min<int64_t>(m.hi, threads); ++t) held[t] = m.count;
    }
  }

  std::optional<int> compiled_;
  const ir::ExprNode* thread_index_ = nullptr;
  std::pair<int64_t, int64_t> group_{0, 0};
  std::vector<RegisterMove> moves_;
};

}  // namespace

ir::Stmt check_register_moves(const ir::Stmt& body, const PassContext&) {
  RegisterMoves().visit(body);
  return body;
}

void check_compiled_register_moves(const ir::Stmt& body, int registers) { RegisterMoves(registers).visit(body); }

}  // namespace tilec::passes
