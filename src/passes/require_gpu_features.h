// What some statements need of the target. Warp specialization written by hand
// (frontend/builtins_warp_specialize.cc): mbarriers (T.alloc_barrier and its waits and
// arrivals), T.tma_copy and T.set_max_nreg need sm_90a's TMA; thread groups (T.ws,
// passes/thread_groups.h) need CUDA's named barriers. The CPU runs both (its groups are fibers,
// device/cpu/thread_groups.h). T.sync_grid needs CUDA's cooperative launch; T.call_extern calls
// CUDA source (T.import_source); thread block clusters (T.Kernel's cluster_dims) need CUDA sm_90
// (the CPU runs them too: a cluster's blocks are fibers, device/cpu/clusters.h). On a target
// without them (HIP; CUDA before sm_90a for the first; the CPU for T.sync_grid and
// T.call_extern) the first such statement is a CompileError at its line.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt require_gpu_features(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes
