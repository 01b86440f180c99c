// What a kernel's threads see one at a time: runtime variables (T.alloc_var), the thread
// and block indices and extents, and explicit barriers. Statements outside T.Parallel loops
// and tile ops run on every thread, so these let a kernel written thread by thread (a GEMV
// whose threads each take a row, a top-k whose threads share a histogram) say so.
#include "frontend/builtin_table.h"
#include "ir/device_calls.h"
#include "ir/equal.h"
#include "ir/printer.h"
#include "ir/simplify.h"
#include "ir/substitute.h"

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

// ---------------------------------------------------------------- TVM's thread allreduce

// with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, dtype)]), "reduce_scope",
// T.reinterpret(T.uint64(0), dtype="handle")): TileLang's gemv examples name the reducer of the
// T.tvm_thread_allreduce in the block so. The third argument, TVM's null handle, is not read.
void Elaborator::exec_reduce_scope(const ast::Stmt& s, const ast::Expr& attr) {
  const std::string form =
      "with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, dtype)]), \"reduce_scope\", "
      "T.reinterpret(T.uint64(0), dtype=\"handle\"))";
  if (attr.items.size() != 3 || !attr.keywords.empty())
    error_at(attr.loc, "T.attr takes a node, a key and a value; tilec supports TVM's reduce scope, " + form);
  const CtValue key = eval(*attr.items[1]);
  if (key.kind != K::String || key.text != "reduce_scope")
    error_at(attr.items[1]->loc, "T.attr's key is \"reduce_scope\" (the scope of a T.tvm_thread_allreduce's reducer), "
                                 "the one tilec supports, not " + describe(key));
  const ast::Expr& reducer = *attr.items[0];
  const CtValue callee = reducer.kind == ast::ExprKind::Call ? eval(*reducer.value) : CtValue();
  if (!(callee.kind == K::Builtin && callee.text == "T.comm_reducer"))
    error_at(reducer.loc, "T.attr(..., \"reduce_scope\", ...) takes a T.comm_reducer(lambda x, y: ..., [identity]) "
                          "as its node: " + form);
  if (reducer.items.size() != 2 || !reducer.keywords.empty())
    error_at(reducer.loc, "T.comm_reducer takes a lambda of two values and a list of the identity: "
                          "T.comm_reducer(lambda x, y: x + y, [T.cast(0, dtype)])");
  const ast::Expr& fn = *reducer.items[0];
  if (fn.kind != ast::ExprKind::Lambda || fn.items.size() != 2)
    error_at(fn.loc, "T.comm_reducer's first argument is a lambda of two values (lambda x, y: x + y)");
  const CtValue identities = eval(*reducer.items[1]);
  if (!identities.is_sequence() || identities.items.size() != 1)
    error_at(reducer.items[1]->loc, "T.comm_reducer's second argument is a list of one identity ([T.cast(0, "
                                    "dtype)]): tilec reduces one value at a time");
  ThreadReducer r;
  r.identity = to_expr(identities.items.vector()[0], reducer.items[1]->loc, "T.comm_reducer's identity");
  r.x = ir::make_var(fn.items[0]->id, r.identity->dtype);
  r.y = ir::make_var(fn.items[1]->id, r.identity->dtype);
  r.combined = to_expr_of(apply_lambda(fn, {CtValue::of_expr(r.x), CtValue::of_expr(r.y)}), r.identity->dtype,
                          fn.value->loc, "T.comm_reducer's combination");
  thread_reducers_.push_back(r);
  exec_block(s.body);
  thread_reducers_.pop_back();
}

namespace {

// What a name's let stands for (tk = T.get_thread_binding(1) binds tk to that index).
ir::Expr through_lets(const Elaborator& el, ir::Expr e) {
  for (bool found = true; found;) {
    found = false;
    for (const auto* block : el.blocks_)
      for (const auto& let : block->lets)
        if (let.var.same_as(e)) {
          e = let.value;
          found = true;
        }
  }
  return e;
}

// T.tvm_thread_allreduce(1, value, True, result, *thread_indices): TVM's reduction of each
// thread's value over the threads that differ only in the named thread indices (T.thread_binding
// or T.get_thread_binding values), by the reducer of the T.attr block around it; every thread
// gets its group's result. Each thread leaves its value in a shared buffer of the block's, then
// combines its group's from the identity on, in thread order (insert_barriers puts the barrier
// between the stores and the loads).
CtValue thread_allreduce(Elaborator& el, const EvaluatedCall& c) {
  require_kernel(el, c);
  const SourceLoc& loc = c.node->loc;
  const std::string form = "T.tvm_thread_allreduce(1, value, True, result, *thread_indices)";
  if (el.thread_reducers_.empty())
    error_at(loc, "T.tvm_thread_allreduce goes inside with T.attr(T.comm_reducer(...), \"reduce_scope\", ...), "
                  "which gives its reducer");
  for (size_t k = 0; k < c.keywords.size(); ++k) {
    const auto& [name, value] = c.keywords[k];
    if (name != "dtype" || value.kind != K::String || value.text != "handle")
      error_at(c.keyword_locs[k], "T.tvm_thread_allreduce takes dtype=\"handle\" alone as a keyword, as TVM's does");
  }
  if (c.positional.size() < 5) error_at(loc, form + " takes a value, its condition, the result and thread indices");
  if (el.to_int(c.positional[0], c.positional_locs[0], "T.tvm_thread_allreduce size") != 1)
    error_at(c.positional_locs[0], "T.tvm_thread_allreduce reduces one value at a time: its first argument is 1");
  if (!c.positional[2].is_number() || !el.truthy(c.positional[2], c.positional_locs[2]))
    error_at(c.positional_locs[2], "T.tvm_thread_allreduce's condition is True: every thread's value is reduced");
  if (el.parallel_depth_ > 0 || el.under_runtime_control() || el.thread_group_)
    error_at(loc, "T.tvm_thread_allreduce goes where every thread of the block reaches it: outside T.Parallel loops, "
                  "runtime loops and branches, and T.ws groups");
  const Elaborator::ThreadReducer& reducer = el.thread_reducers_.back();
  const DType dtype = reducer.identity->dtype;
  const ir::Expr value = el.to_expr_of(c.positional[1], dtype, c.positional_locs[1], "T.tvm_thread_allreduce value");
  const TileOperand result = el.operand(c.positional[3], c.positional_locs[3], "T.tvm_thread_allreduce result");
  if (!result.point_only || result.buffer->scope != ir::MemoryScope::Local)
    error_at(c.positional_locs[3], "T.tvm_thread_allreduce's result is an element of a T.alloc_local buffer "
                                   "(each thread's own), not " + describe(c.positional[3]));
  // The thread indices reduced over: each one dim of T.Kernel's threads=.
  thread_binding(el, loc, 0);  // makes the kernel's thread index
  const ir::Expr tx = el.kernel_->thread_index;
  std::vector<std::pair<int64_t, int64_t>> reduced;  // (stride, extent)
  ir::Expr base = tx;
  for (size_t i = 4; i < c.positional.size(); ++i) {
    const ir::Expr index =
        through_lets(el, el.to_expr(c.positional[i], c.positional_locs[i], "T.tvm_thread_allreduce thread index"));
    int64_t dim = -1, stride = 1;
    for (size_t d = 0; d < el.thread_extents_.size() && dim < 0; ++d) {
      if (ir::structural_equal(index, thread_binding(el, loc, static_cast<int64_t>(d)).expr)) dim = d;
      else stride *= el.thread_extents_[d];
    }
    if (dim < 0)
      error_at(c.positional_locs[i], "T.tvm_thread_allreduce reduces over thread indices (T.thread_binding or "
                                     "T.get_thread_binding of a dim of T.Kernel's threads=), not " +
                                         ir::to_string(index));
    for (const auto& other : reduced)
      if (other.first == stride) error_at(c.positional_locs[i], "this thread index is named twice");
    reduced.push_back({stride, el.thread_extents_[dim]});
    base = ir::make_Sub(base, ir::make_Mul(index, ir::make_int(stride)));
  }
  int64_t threads = 1;
  for (int64_t e : el.thread_extents_) threads *= e;
  ir::Buffer values = ir::make_buffer(el.buffer_name_for("allreduce_values"), dtype, {ir::make_int(threads)}, {},
                                      ir::MemoryScope::Shared, loc);
  el.note_made_buffer(values);
  el.kernel_allocs_.push_back(values);
  el.emit(ir::with_loc(ir::make_store(values, {tx}, value), loc));
  const ir::Buffer acc = el.new_local_scalar("reduced", dtype, loc);
  const ir::Expr zero = ir::make_int(0);
  el.emit(ir::with_loc(ir::make_store(acc, {zero}, reducer.identity), loc));
  ir::Expr at = base;
  std::vector<ir::Expr> steps;
  for (const auto& [stride, extent] : reduced) {
    steps.push_back(ir::make_var("j", DType::Int32));
    at = ir::make_Add(at, ir::make_Mul(steps.back(), ir::make_int(stride)));
  }
  ir::Expr combined = ir::substitute(reducer.combined, reducer.x, ir::make_load(acc, {zero}));
  combined = ir::substitute(combined, reducer.y, ir::make_load(values, {ir::simplify(at)}));
  ir::Stmt loop = ir::make_store(acc, {zero}, combined);
  for (size_t i = reduced.size(); i-- > 0;)
    loop = ir::make_for(steps[i], zero, ir::make_int(reduced[i].second), ir::ForKind::Serial, loop);
  el.emit(ir::with_loc(loop, loc));
  std::vector<ir::Expr> at_result;
  for (const ir::Range& r : result.ranges) at_result.push_back(r.min);
  el.emit(ir::with_loc(ir::make_store(result.buffer, at_result,
                                      ir::make_cast(result.buffer->dtype, ir::make_load(acc, {zero}))),
                       loc));
  return CtValue::none();
}

}  // namespace

void add_thread_allreduce_builtins(BuiltinTable& t) {
  t["T.tvm_thread_allreduce"] = thread_allreduce;
  t["T.attr"] = [](Elaborator&, const EvaluatedCall& c) -> CtValue {
    error_at(c.node->loc, "T.attr is a with statement's: with T.attr(T.comm_reducer(lambda x, y: x + y, "
                          "[T.cast(0, dtype)]), \"reduce_scope\", ...), around a T.tvm_thread_allreduce");
  };
  t["T.comm_reducer"] = [](Elaborator&, const EvaluatedCall& c) -> CtValue {
    error_at(c.node->loc, "T.comm_reducer names a reducer as T.attr's node: with T.attr(T.comm_reducer(...), "
                          "\"reduce_scope\", ...)");
  };
  // TVM's T.evaluate(x): the statement x's call already made; a value is evaluated for what its
  // call does.
  t["T.evaluate"] = [](Elaborator& el, const EvaluatedCall& c) {
    require_kernel(el, c);
    CallArgs a = el.bind(c, {"value"});
    if (a["value"].kind == K::Expr) el.emit(ir::with_loc(ir::make_evaluate(a["value"].expr), c.node->loc));
    else if (a["value"].kind != K::None && !a["value"].is_number())
      error_at(a.loc("value"), "T.evaluate takes a call's value, not " + describe(a["value"]));
    return CtValue::none();
  };
}

}  // namespace tilec::frontend
