#include "passes/require_gpu_features.h"

#include "base/diagnostics.h"
#include "ir/device_calls.h"
#include "ir/visitor.h"

namespace tilec::passes {
namespace {

class GpuFeatures : public ir::LocatedVisitor {
 public:
  explicit GpuFeatures(const Target& target) : target_(target) {}

 protected:
  void visit_KernelLaunch(const ir::KernelLaunch* op) override {
    if (op->clustered() && !target_.is_cpu())
      error_at(op->loc, "thread block clusters (cluster_dims) need CUDA sm_90 or later, or the CPU; target " + target_.name +
                            (target_.arch.empty() ? "" : " " + target_.arch) + " has none");
    IRVisitor::visit_KernelLaunch(op);
  }
  void visit_IfThenElse(const ir::IfThenElse* op) override {
    const auto* call = op->condition.as<ir::Call>();
    if (call && call->name == ir::kThreadGroup && !target_.is_cuda() && !target_.is_cpu())
      error_at(loc_, "a thread group (T.ws, or an 'if' on the thread index with tile ops or barriers of its "
                     "threads) needs CUDA's named barriers; target " + target_.name + " has none");
    IRVisitor::visit_IfThenElse(op);
  }
  void visit_Copy(const ir::Copy* op) override {
    if (op->barrier && !has_mbarriers()) refuse("T.tma_copy");
    IRVisitor::visit_Copy(op);
  }
  void visit_Call(const ir::Call* op) override {
    if (op->name.rfind(ir::kExternCallPrefix, 0) == 0 && !target_.is_cuda())
      error_at(loc_, "T.call_extern calls a function of the program's CUDA source (T.import_source); target " +
                         target_.name + " doesn't compile CUDA");
    if (op->name == std::string(ir::kDeviceCallPrefix) + "sync_grid" && !target_.is_cuda())
      error_at(loc_, "T.sync_grid needs CUDA's cooperative launch (every block resident at once); target " +
                         target_.name + " has none");
    if (has_mbarriers()) return IRVisitor::visit_Call(op);
    const std::string prefix = ir::kDeviceCallPrefix;
    if (op->name.rfind(prefix + "mbarrier", 0) == 0 || op->name == prefix + "fence_mbarrier_init")
      refuse("an mbarrier (T.alloc_barrier and the waits and arrivals on it)");
    if (op->name.rfind(prefix + "setmaxnreg", 0) == 0) refuse("T.set_max_nreg");
    IRVisitor::visit_Call(op);
  }

 private:
  // The CPU runs thread groups as fibers that wait on its mbarriers (device/cpu/thread_groups.h).
  bool has_mbarriers() const { return target_.has(TargetFeature::Tma) || target_.is_cpu(); }

  [[noreturn]] void refuse(const std::string& what) {
    error_at(loc_, what + " needs CUDA sm_90a (the Tensor Memory Accelerator and its mbarriers); target " +
                       target_.name + " has none");
  }

  const Target& target_;
};

}  // namespace

ir::Stmt require_gpu_features(const ir::Stmt& body, const PassContext& ctx) {
  if (!ctx.target.is_cuda() || !ctx.target.has(TargetFeature::Tma)) GpuFeatures(ctx.target).visit(body);
  return body;
}

}  // namespace tilec::passes
