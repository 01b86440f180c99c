// What a kernel's threads see one at a time: runtime variables (T.alloc_var), the thread
// and block indices and extents, and explicit barriers. Statements outside T.Parallel loops
// and tile ops run on every thread, so these let a kernel written thread by thread (a GEMV
// whose threads each take a row, a top-k whose threads share a histogram) say so.
#include "frontend/builtin_table.h"
#include "ir/device_calls.h"

namespace tilec::frontend {

using K = CtValue::Kind;

static void require_kernel(const Elaborator& el, const EvaluatedCall& call) {
  if (!el.in_kernel_) error_at(call.node->loc, call.callee_name + " goes inside a T.Kernel block");
}

// T.alloc_var(dtype, init=None, scope="local.var"), and TileLang's positional forms
// T.alloc_var(dtype, init), T.alloc_var(dtype, "local.var"), T.alloc_var(dtype, init, scope):
// one runtime value of `dtype` (0 unless `init` is given), each thread's own. Assigning to
// its name stores into it, converting to its dtype; reading the name (or name[0]) loads it.
static CtValue alloc_var(Elaborator& el, const EvaluatedCall& call_in) {
  require_kernel(el, call_in);
  EvaluatedCall call = call_in;
  if (call.positional.size() == 2 && call.positional[1].kind == K::String) {
    call.keywords.emplace_back("scope", call.positional[1]);
    call.keyword_locs.push_back(call.positional_locs[1]);
    call.positional.pop_back();
    call.positional_locs.pop_back();
  }
  CallArgs a = el.bind(call, {"dtype", "init=None", "scope=\"local.var\""});
  DType dtype = el.to_dtype(a["dtype"], a.loc("dtype"), "T.alloc_var dtype");
  const CtValue& scope = a["scope"];
  if (!(scope.kind == K::String && (scope.text == "local.var" || scope.text == "local")))
    error_at(a.loc("scope"), "T.alloc_var's scope is \"local.var\" (each thread's own), not " +
                                 (scope.kind == K::String ? "\"" + scope.text + "\"" : describe(scope)));
  const CtValue& init = a["init"];
  if (!(init.kind == K::None || init.is_number() || init.kind == K::Expr || init.kind == K::MutableVar ||
        (init.kind == K::Region && init.region->all_points())))
    error_at(a.loc("init"), "T.alloc_var's init is a number or a runtime value, not " + describe(init));
  std::string name = el.name_hint_.empty() ? "var" : el.name_hint_;
  CtValue var;
  var.kind = K::MutableVar;
  var.bool_value = true;  // its dtype is declared: values assigned convert to it
  var.buffer = el.new_local_scalar(name, dtype, call.node->loc);
  CtValue first = init.kind == K::None ? CtValue::of_int(0) : init;
  ir::Expr value = el.to_expr_of(first, dtype, a.loc("init"), "T.alloc_var init");
  el.emit(ir::with_loc(ir::make_store(var.buffer, {ir::make_int(0)}, value), call.node->loc));
  return var;
}

// The thread index along dim d of T.Kernel's threads=(x, y, z), threadIdx.x / .y / .z as
// CUDA numbers them (x fastest); 0 past the dims given.
static CtValue thread_binding(Elaborator& el, const SourceLoc& loc, int64_t dim) {
  if (dim < 0 || dim > 2) error_at(loc, "the thread dim is 0, 1 or 2, not " + std::to_string(dim));
  const std::vector<int64_t>& extents = el.thread_extents_;
  if (static_cast<size_t>(dim) >= extents.size()) return CtValue::of_int(0);
  ir::KernelLaunch& launch = *el.kernel_;
  if (!launch.thread_index) launch.thread_index = ir::make_var("tx", DType::Int32);
  int64_t stride = 1;
  for (int64_t d = 0; d < dim; ++d) stride *= extents[d];
  ir::Expr index = launch.thread_index;
  if (stride > 1) index = ir::make_FloorDiv(index, ir::make_int(stride));
  if (static_cast<size_t>(dim) + 1 < extents.size()) index = ir::make_FloorMod(index, ir::make_int(extents[dim]));
  return CtValue::of_expr(index);
}

static int64_t dim_argument(Elaborator& el, const EvaluatedCall& call) {
  require_kernel(el, call);
  CallArgs a = el.bind(call, {"dim=0"});
  return el.to_int(a["dim"], a.loc("dim"), call.callee_name + " dim");
}

static void no_arguments(Elaborator& el, const EvaluatedCall& call) {
  require_kernel(el, call);
  el.bind(call, {});
}

void add_simt_builtins(BuiltinTable& t) {
  t["T.alloc_var"] = alloc_var;
  t["T.get_thread_binding"] = [](Elaborator& el, const EvaluatedCall& c) {
    return thread_binding(el, c.node->loc, dim_argument(el, c));
  };
  // TVMScript's T.thread_binding(begin, end, thread="threadIdx.x"), as TileLang programs assign
  // it (kr = T.thread_binding(0, reduce_thread, thread="threadIdx.x")): the thread index along
  // that dim, which must run over the whole of T.Kernel's threads there (0 to the extent).
  t["T.thread_binding"] = [](Elaborator& el, const EvaluatedCall& c) {
    require_kernel(el, c);
    CallArgs a = el.bind(c, {"begin", "end", "thread"});
    const CtValue& thread = a["thread"];
    const std::string axes[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
    int64_t dim = -1;
    for (int64_t d = 0; d < 3; ++d)
      if (thread.kind == K::String && thread.text == axes[d]) dim = d;
    if (dim < 0)
      error_at(a.loc("thread"), "T.thread_binding's thread is \"threadIdx.x\", \"threadIdx.y\" or \"threadIdx.z\", not " +
                                    (thread.kind == K::String ? "\"" + thread.text + "\"" : describe(thread)));
    const int64_t begin = el.to_int(a["begin"], a.loc("begin"), "T.thread_binding begin");
    const int64_t end = el.to_int(a["end"], a.loc("end"), "T.thread_binding end");
    const auto& extents = el.thread_extents_;
    const int64_t extent = static_cast<size_t>(dim) < extents.size() ? extents[dim] : 1;
    if (begin != 0 || end != extent)
      error_at(c.node->loc, "T.thread_binding(" + std::to_string(begin) + ", " + std::to_string(end) + ", " +
                                axes[dim] + ") must span the kernel's " + std::to_string(extent) + " threads along " +
                                axes[dim] + ": T.thread_binding(0, " + std::to_string(extent) + ", ...)");
    return thread_binding(el, c.node->loc, dim);
  };
  t["T.get_thread_bindings"] = [](Elaborator& el, const EvaluatedCall& c) {
    no_arguments(el, c);
    std::vector<CtValue> dims;
    for (int64_t d = 0; d < 3; ++d) dims.push_back(thread_binding(el, c.node->loc, d));
    return CtValue::tuple(std::move(dims));
  };
  t["T.get_thread_extent"] = [](Elaborator& el, const EvaluatedCall& c) {
    int64_t dim = dim_argument(el, c);
    if (dim < 0 || dim > 2) error_at(c.node->loc, "the thread dim is 0, 1 or 2, not " + std::to_string(dim));
    const auto& extents = el.thread_extents_;
    return CtValue::of_int(static_cast<size_t>(dim) < extents.size() ? extents[dim] : 1);
  };
  t["T.get_thread_extents"] = [](Elaborator& el, const EvaluatedCall& c) {
    no_arguments(el, c);
    std::vector<CtValue> dims;
    for (size_t d = 0; d < 3; ++d)
      dims.push_back(CtValue::of_int(d < el.thread_extents_.size() ? el.thread_extents_[d] : 1));
    return CtValue::tuple(std::move(dims));
  };
  t["T.get_block_binding"] = [](Elaborator& el, const EvaluatedCall& c) {
    int64_t dim = dim_argument(el, c);
    const auto& vars = el.kernel_->block_vars;
    if (dim < 0 || dim > 2) error_at(c.node->loc, "the block dim is 0, 1 or 2, not " + std::to_string(dim));
    return static_cast<size_t>(dim) < vars.size() ? CtValue::of_expr(vars[dim]) : CtValue::of_int(0);
  };
  t["T.get_block_extent"] = [](Elaborator& el, const EvaluatedCall& c) {
    int64_t dim = dim_argument(el, c);
    const auto& grid = el.kernel_->grid;
    if (dim < 0 || dim > 2) error_at(c.node->loc, "the block dim is 0, 1 or 2, not " + std::to_string(dim));
    if (static_cast<size_t>(dim) >= grid.size()) return CtValue::of_int(1);
    int64_t n;
    return ir::is_const_int(grid[dim], &n) ? CtValue::of_int(n) : CtValue::of_expr(grid[dim]);
  };
  // T.sync_threads(): every thread of the block waits here for the others; in a T.ws group (or
  // an `if tx < n:` that is one), every thread of the group, by a named barrier of its own.
  // TileLang's T.sync_threads(barrier_id, arrive_count) names the barrier and its threads: the
  // count must be those threads', and tilec picks the id (passes/thread_groups.h). Barriers the
  // data needs are placed without it (passes/gpu/insert_barriers.h); this one is kept as written.
  // T.sync_grid(): every thread of every block waits here for the others (CUDA: the kernel is
  // launched cooperatively, and a grid of more blocks than the GPU holds at once is refused).
  t["T.sync_grid"] = [](Elaborator& el, const EvaluatedCall& c) {
    no_arguments(el, c);
    if (el.thread_group_ || el.parallel_depth_ > 0)
      error_at(c.node->loc, "T.sync_grid waits for every thread of the grid; it goes outside T.Parallel loops and "
                            "thread groups");
    if (el.kernel_->clustered())
      error_at(c.node->loc, "T.sync_grid launches the kernel cooperatively, which takes no thread block clusters; "
                            "drop cluster_dims or the grid's barrier");
    el.kernel_->grid_sync = true;
    el.emit(ir::device_call("sync_grid", {}, c.node->loc));
    return CtValue::none();
  };
  t["T.sync_threads"] = [](Elaborator& el, const EvaluatedCall& c) {
    require_kernel(el, c);
    CallArgs a = el.bind(c, {"barrier_id=None", "arrive_count=None"});
    const int64_t threads = el.thread_group_ ? el.thread_group_->second - el.thread_group_->first : el.kernel_->threads;
    if (a["barrier_id"].kind != K::None) el.to_int(a["barrier_id"], a.loc("barrier_id"), "T.sync_threads barrier_id");
    if (a["arrive_count"].kind != K::None) {
      int64_t count = el.to_int(a["arrive_count"], a.loc("arrive_count"), "T.sync_threads arrive_count");
      if (count != threads)
        error_at(a.loc("arrive_count"),
                 "T.sync_threads(arrive_count=" + std::to_string(count) + "): a barrier here waits for the " +
                     std::to_string(threads) + " threads " +
                     (el.thread_group_ ? "of the thread group [" + std::to_string(el.thread_group_->first) + ", " +
                                             std::to_string(el.thread_group_->second) + ") it is in"
                                       : "of the block") +
                     "; a barrier of other threads goes in an 'if' on their range (if tx < n:)");
    }
    if (el.thread_group_) el.thread_group_needed_ = true;
    el.emit(ir::device_call("sync_threads", {}, c.node->loc));
    return CtValue::none();
  };
}

}  // namespace tilec::frontend
