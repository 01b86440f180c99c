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
 protected:
  void visit_KernelLaunch(const ir::KernelLaunch* op) override {
    const int threads = op->threads + op->producer_threads;
    const auto enclosing = group_;
    std::vector<RegisterMove> moves;
    moves.swap(moves_);
    group_ = {0, threads};
    IRVisitor::visit_KernelLaunch(op);
    group_ = enclosing;
    moves.swap(moves_);
    check(threads, op->min_blocks_per_sm, moves);
  }
  void visit_IfThenElse(const ir::IfThenElse* op) override {
    const auto* call = op->condition.as<ir::Call>();
    int64_t lo = 0, hi = 0;
    if (!call || call->name != ir::kThreadGroup || call->args.size() != 2 || !ir::is_const_int(call->args[0], &lo) ||
        !ir::is_const_int(call->args[1], &hi))
      return IRVisitor::visit_IfThenElse(op);
    const auto enclosing = group_;
    group_ = {lo, hi};
    visit(op->then_case);
    group_ = enclosing;
    visit(op->else_case);
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
  // Each thread keeps the most any of its groups' moves leaves it (what it holds once the
  // growing groups have grown), or what it launched with.
  static void check(int threads, int min_blocks, const std::vector<RegisterMove>& moves) {
    const auto grow = std::find_if(moves.begin(), moves.end(), [](const RegisterMove& m) { return m.grows; });
    if (grow == moves.end()) return;  // only drops: nothing waits
    const int at_launch = registers_at_launch(threads, min_blocks);
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
                            " launches with " +
                            std::to_string(at_launch) + " a thread (" + std::to_string(pool) +
                            "), and a growing warpgroup would wait forever for the other " +
                            std::to_string(total - pool) +
                            " (the kernel would hang); grow less or drop the other warpgroups further");
  }

  std::pair<int64_t, int64_t> group_{0, 0};
  std::vector<RegisterMove> moves_;
};

}  // namespace

ir::Stmt check_register_moves(const ir::Stmt& body, const PassContext&) {
  RegisterMoves().visit(body);
  return body;
}

}  // namespace tilec::passes
