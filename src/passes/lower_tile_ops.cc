#include "passes/lower_tile_ops.h"

#include "op/lowering.h"
#include "op/op.h"

namespace tilec::passes {
namespace {

using ir::Stmt;

class TileOpLowering : public op::Lowering {
 public:
  // With `kept` (threaded): the loops over each op's elements are T.Parallel loops (for a
  // target that spreads them over threads) rather than serial and vectorized ones, and the
  // ops `kept` names are left as they are.
  explicit TileOpLowering(KeepTileOp kept = nullptr) : Lowering(kept != nullptr), kept_(std::move(kept)) {}

  // Each tile op the target doesn't keep, by its unit's lowering.
  Stmt mutate(const Stmt& s) override {
    if (s && op::is_tile_op(s.kind()) && !(kept_ && kept_(*s, threads_))) return op::lower_of(s, *this);
    return Lowering::mutate(s);
  }
  using Lowering::mutate;

 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    threads_ = op->threads;
    return Lowering::mutate_KernelLaunch(op, self);
  }

 private:
  const KeepTileOp kept_;
  int threads_ = 0;
};

}  // namespace

ir::Stmt lower_tile_ops(const ir::Stmt& body, const PassContext&) { return TileOpLowering().mutate(body); }

ir::Stmt lower_tile_ops_threaded(const ir::Stmt& body, const KeepTileOp& kept) {
  return TileOpLowering(kept).mutate(body);
}

}  // namespace tilec::passes
