// Statements: assignment and scoping rules, control flow, kernels.
#include <algorithm>
#include <limits>

#include "frontend/elaborator.h"
#include "frontend/int_ops.h"
#include "frontend/limits.h"
#include "frontend/thread_ranges.h"
#include "ir/device_calls.h"
#include "ir/shared_layout.h"
#include "ir/simplify.h"
#include "ir/substitute.h"

namespace tilec::frontend {

using K = CtValue::Kind;

static void collect_assigned_targets(const ast::Expr& target, std::map<std::string, int>* out) {
  if (target.kind == ast::ExprKind::Name) {
    ++(*out)[target.id];
  } else if (target.kind == ast::ExprKind::Tuple || target.kind == ast::ExprKind::List) {
    for (const auto& item : target.items) collect_assigned_targets(*item, out);
  } else if (target.kind == ast::ExprKind::Starred) {
    collect_assigned_targets(*target.value, out);
  }
}

static void collect_assigned(const ast::StmtList& body, std::map<std::string, int>* out, bool loop_targets) {
  for (const auto& s : body) {
    switch (s->kind) {
      case ast::StmtKind::Assign:
        for (const auto& t : s->targets) collect_assigned_targets(*t, out);
        break;
      case ast::StmtKind::AnnAssign:
        if (s->value) collect_assigned_targets(*s->targets[0], out);
        break;
      case ast::StmtKind::AugAssign:
        // A read-modify-write counts twice: the name is always a variable.
        collect_assigned_targets(*s->targets[0], out);
        collect_assigned_targets(*s->targets[0], out);
        break;
      case ast::StmtKind::For:
        if (loop_targets) collect_assigned_targets(*s->targets[0], out);
        break;
      case ast::StmtKind::With:
        for (const auto& item : s->with_items)
          if (item.target) collect_assigned_targets(*item.target, out);
        break;
      default:
        break;
    }
    if (s->kind != ast::StmtKind::FunctionDef) {
      collect_assigned(s->body, out, loop_targets);
      collect_assigned(s->orelse, out, loop_targets);
    }
  }
}

std::map<std::string, int> assigned_names(const ast::StmtList& body, bool loop_targets) {
  std::map<std::string, int> names;
  collect_assigned(body, &names, loop_targets);
  return names;
}

// ---------------------------------------------------------------- blocks

void Elaborator::emit(ir::Stmt s) {
  if (blocks_.empty())
    error_at(s->loc, "this statement does its work at run time and must be inside a kernel");
  blocks_.back()->stmts.push_back(std::move(s));
}

ir::Stmt Elaborator::collect(const std::function<void()>& body, bool parallel_body) {
  Block block;
  block.parallel_body = parallel_body;
  blocks_.push_back(&block);
  body();
  blocks_.pop_back();
  for (auto it = block.lets.rbegin(); it != block.lets.rend(); ++it) {
    std::vector<ir::Stmt> rest(block.stmts.begin() + it->position, block.stmts.end());
    block.stmts.resize(it->position);
    ir::Stmt let = ir::make_let(it->var, it->value, ir::make_seq(std::move(rest)));
    block.stmts.push_back(ir::with_loc(let, it->loc));
    if (it->frame_index < frames_.size()) {
      Frame& f = frames_[it->frame_index];
      auto bound = f.names.find(it->name);
      if (bound != f.names.end() && bound->second.kind == K::Expr && bound->second.expr.same_as(it->var)) {
        f.names.erase(bound);
        f.out_of_scope[it->name] = {it->loc};
      }
    }
  }
  ir::Stmt result = ir::make_seq(std::move(block.stmts));
  for (auto it = block.element_variables.rbegin(); it != block.element_variables.rend(); ++it) {
    result = ir::make_allocate(it->buffer, result);
    if (it->frame_index < frames_.size()) {
      Frame& f = frames_[it->frame_index];
      auto bound = f.names.find(it->name);
      if (bound != f.names.end() && bound->second.kind == K::MutableVar && bound->second.buffer == it->buffer) {
        f.names.erase(bound);
        f.out_of_scope[it->name] = {it->buffer->loc};
      }
    }
  }
  return result;
}

void Elaborator::exec_block(const ast::StmtList& body, size_t first) {
  for (size_t i = first; i < body.size(); ++i) {
    if (frame().returned) break;
    auto& loops = frame().loops;
    if (!loops.empty() && loops.back().taken) break;
    const int jumps = loops.empty() ? 0 : loops.back().jumps;
    const ast::Stmt& s = *body[i];
    exec(s);
    if (s.kind == ast::StmtKind::Break || s.kind == ast::StmtKind::Continue) break;  // the rest: unreachable
    if (frame().loops.empty() || frame().loops.back().jumps == jumps) continue;
    // A break or continue ran under a runtime condition in this statement.
    const Frame::Loop& loop = frame().loops.back();
    ir::Expr go_on;
    for (const ir::Buffer& flag : {loop.broke, loop.skipped}) {
      if (!flag) continue;
      ir::Expr clear = ir::make_EQ(ir::make_load(flag, {ir::make_int(0)}), ir::make_int(0, flag->dtype));
      go_on = go_on ? ir::make_And(go_on, clear) : clear;
    }
    ir::Stmt rest = collect([&] { exec_block(body, i + 1); });
    emit(ir::with_loc(ir::make_if(go_on, rest), body[i + 1 < body.size() ? i + 1 : i]->loc));
    break;
  }
}

void Elaborator::exec_jump(const ast::Stmt& s) {
  const std::string what = s.kind == ast::StmtKind::Break ? "break" : "continue";
  auto& loops = frame().loops;
  if (loops.empty()) error_at(s.loc, "'" + what + "' outside a loop");
  Frame::Loop& loop = loops.back();
  if (!loop.jumps_allowed)
    error_at(s.loc, "'" + what + "' in a " + loop.kind_name + " loop, whose iterations are not run one after "
                    "another by one thread; use a T.serial loop");
  if (loop.compile_time) {
    if (runtime_control_depth_ > loop.control_depth)
      error_at(s.loc, "'" + what + "' under a runtime condition in a loop unrolled while compiling (over a tuple, "
                      "or a range outside a kernel); make it a runtime loop (T.serial)");
    loop.taken = s.kind;
    return;
  }
  ir::Buffer& flag = s.kind == ast::StmtKind::Break ? loop.broke : loop.skipped;
  if (!flag) flag = new_local_scalar(s.kind == ast::StmtKind::Break ? "broke" : "skipped", DType::Int32, s.loc);
  emit(ir::with_loc(ir::make_store(flag, {ir::make_int(0)}, ir::make_int(1)), s.loc));
  ++loop.jumps;
}

// ---------------------------------------------------------------- assignment

ir::Buffer Elaborator::new_local_scalar(const std::string& name, DType dtype, const SourceLoc& loc) {
  if (!in_kernel_)
    error_at(loc, "'" + name + "' is a runtime variable (assigned more than once or in a "
                  "runtime loop or branch) and must live inside a T.Kernel block");
  ir::Buffer b = ir::make_buffer(unique_buffer_name(name), dtype, {ir::make_int(1)}, {},
                                 ir::MemoryScope::Local, loc);
  kernel_allocs_.push_back(b);
  return b;
}

// Each element of a T.Parallel loop computes its own values: a variable it makes lives in
// its body. (Were it the kernel's, the loop would write a thread's own local, and a GPU runs
// such a loop whole on every thread, which its fragments, spread over the threads, cannot.)
ir::Buffer Elaborator::new_runtime_variable(const std::string& name, DType dtype, const SourceLoc& loc) {
  auto body = std::find_if(blocks_.rbegin(), blocks_.rend(), [](const Block* b) { return b->parallel_body; });
  if (body == blocks_.rend()) return new_local_scalar(name, dtype, loc);
  ir::Buffer b = ir::make_buffer(unique_buffer_name(name), dtype, {ir::make_int(1)}, {}, ir::MemoryScope::Local, loc);
  (*body)->element_variables.push_back({b, name, frames_.size() - 1});
  return b;
}

static ir::Stmt store_scalar(const ir::Buffer& b, ir::Expr value, const SourceLoc& loc) {
  return ir::with_loc(ir::make_store(b, {ir::make_int(0)}, ir::make_cast(b->dtype, value)), loc);
}

void Elaborator::assign_name(const std::string& name, const CtValue& value_in, const SourceLoc& loc) {
  Frame& f = frame();
  if (f.loop_vars.count(name))
    error_at(loc, "cannot assign to loop variable '" + name + "'");
  auto fixed = f.fixed_in_runtime_control.find(name);
  auto bound = f.names.find(name);
  if (fixed != f.fixed_in_runtime_control.end() && runtime_control_depth_ >= fixed->second &&
      bound != f.names.end())
    error_at(loc, "'" + name + "' holds a " + describe(bound->second) + ", a value known only at compile "
                  "time, and cannot be assigned again inside a runtime loop or branch (what it holds "
                  "afterwards would depend on run time; only numbers and runtime scalars can change "
                  "there): give the new value another name");
  CtValue value = value_in;
  if (value.kind == K::Region && value.region->all_points())
    value = CtValue::of_expr(to_expr(value, loc, "value"));
  auto current = f.names.find(name);
  bool to_a_variable = current != f.names.end() && current->second.kind == K::MutableVar;
  // A T.alloc_var bound to a new name is that variable under a second name, as in TileLang;
  // any other runtime variable gives its current value.
  if (value.kind == K::MutableVar && (to_a_variable || !value.bool_value))
    value = CtValue::of_expr(to_expr(value, loc, "value"));

  if (to_a_variable) {
    const ir::Buffer& var = current->second.buffer;
    ir::Expr e = to_expr_of(value, var->dtype, loc, "value assigned to '" + name + "'");
    // A T.alloc_var's dtype is the user's: values convert to it, as they do when stored.
    if (current->second.bool_value) {
      emit(store_scalar(var, e, loc));
      return;
    }
    if (value.kind == K::Expr && value.expr->dtype.is_float() && !var->dtype.is_float())
      error_at(loc, "'" + name + "' holds " + var->dtype.name() + " values (from its first "
                    "assignment) and cannot take a " + value.expr->dtype.name() + " value; give it "
                    "a float type where it is first assigned (e.g. " + name + " = T.float32(0))");
    // Its dtype came from its first value, not from the user: a wider integer would wrap.
    if (value.kind == K::Expr && value.expr->dtype.is_integer() && var->dtype.is_integer() &&
        value.expr->dtype.bits() > var->dtype.bits())
      error_at(loc, "'" + name + "' holds " + var->dtype.name() + " values (from its first assignment) and "
                    "cannot take the " + value.expr->dtype.name() + " value assigned here, which may not fit; give it " +
                    value.expr->dtype.name() + " where it is first assigned (e.g. " + name + " = T." +
                    value.expr->dtype.name() + "(0))");
    emit(store_scalar(var, e, loc));
    return;
  }
  bool scalar = value.is_number() || value.kind == K::Expr;
  bool needs_variable = f.multi_assigned.count(name) && in_kernel_ &&
                        (value.kind == K::Expr || under_runtime_control());
  if (scalar && needs_variable) {
    ir::Expr e = to_expr(value, loc, "value");
    CtValue var;
    var.kind = K::MutableVar;
    var.buffer = new_runtime_variable(name, e->dtype, loc);
    emit(store_scalar(var.buffer, e, loc));
    f.out_of_scope.erase(name);
    f.names[name] = var;
    return;
  }
  if (value.kind == K::Expr && !blocks_.empty() && value.expr.as<ir::Var>() == nullptr &&
      !ir::is_const_int(value.expr)) {
    ir::Expr var = ir::make_var(name, value.expr->dtype);
    Block* block = blocks_.back();
    block->lets.push_back({block->stmts.size(), var, value.expr, name, frames_.size() - 1, loc});
    f.out_of_scope.erase(name);
    f.names[name] = CtValue::of_expr(var);
    return;
  }
  f.out_of_scope.erase(name);
  f.names[name] = value;
}

void Elaborator::bind_compile_time_target(const ast::Expr& target, const CtValue& item, const SourceLoc& loc) {
  if (target.kind == ast::ExprKind::Tuple || target.kind == ast::ExprKind::List) {
    if (item.is_sequence() && item.items.size() == target.items.size()) {
      for (size_t i = 0; i < target.items.size(); ++i) bind_compile_time_target(*target.items[i], item.items[i], loc);
      return;
    }
  } else if (target.kind == ast::ExprKind::Name && item.is_number()) {
    Frame& f = frame();
    auto current = f.names.find(target.id);
    bool variable = current != f.names.end() && current->second.kind == K::MutableVar;
    if (!variable && !f.loop_vars.count(target.id)) {
      f.out_of_scope.erase(target.id);
      f.names[target.id] = item;
      return;
    }
  }
  assign(target, item, loc);
}

void Elaborator::assign(const ast::Expr& target, const CtValue& value, const SourceLoc& loc) {
  switch (target.kind) {
    case ast::ExprKind::Name: {
      std::string saved = name_hint_;
      name_made_buffer(value, target.id);
      assign_name(target.id, value, loc);
      name_hint_ = saved;
      return;
    }
    case ast::ExprKind::Tuple: case ast::ExprKind::List: {
      if (!value.is_sequence())
        error_at(loc, "cannot unpack " + describe(value) + " into " +
                          std::to_string(target.items.size()) + " names");
      if (value.items.size() != target.items.size())
        error_at(loc, "cannot unpack " + std::to_string(value.items.size()) + " values into " +
                          std::to_string(target.items.size()) + " names");
      for (size_t i = 0; i < target.items.size(); ++i) assign(*target.items[i], value.items[i], loc);
      return;
    }
    case ast::ExprKind::Subscript: {
      CtValue place = eval_subscript(target);
      if (place.kind != K::Region)
        error_at(target.loc, "cannot assign to an element of " + describe(place));
      const RegionValue& r = *place.region;
      if (!r.all_points())
        error_at(target.loc, "assignment to a region of '" + r.buffer->name + "': index every "
                             "dim to store one element (use T.copy or T.fill for regions)");
      if (value.kind == K::Buffer || value.kind == K::Region || value.is_sequence())
        if (!(value.kind == K::Region && value.region->all_points()))
          error_at(loc, "cannot store " + describe(value) + " into one element of '" +
                            r.buffer->name + "'");
      std::vector<ir::Expr> idx;
      for (const auto& range : r.ranges) idx.push_back(range.min);
      ir::Expr e = to_expr_of(value, r.buffer->dtype, loc, "stored value");
      emit(ir::with_loc(ir::make_store(r.buffer, idx, e), target.loc));
      return;
    }
    case ast::ExprKind::Attribute:
      error_at(target.loc, "cannot assign to an attribute in a kernel");
    default:
      error_at(target.loc, "cannot assign to this expression");
  }
}

void Elaborator::materialize_assigned(const ast::StmtList& body) {
  if (!in_kernel_) return;
  Frame& f = frame();
  // A loop's target is not carried: a runtime loop's variable shadows the name for the loop,
  // and a loop unrolled while compiling binds it to each item (bind_compile_time_target).
  for (const auto& [name, count] : assigned_names(body, /*loop_targets=*/false)) {
    auto it = f.names.find(name);
    if (it == f.names.end()) continue;  // not bound before the loop or branch
    // A loop variable is never assigned; an inner loop of the same name shadows it (exec_for).
    if (f.loop_vars.count(name)) continue;
    CtValue& v = it->second;
    if (!(v.is_number() || v.kind == K::Expr)) {
      if (v.kind != K::MutableVar) f.fixed_in_runtime_control[name] = runtime_control_depth_ + 1;
      continue;
    }
    f.fixed_in_runtime_control.erase(name);
    ir::Expr e = to_expr(v, body.front()->loc, "value");
    CtValue var;
    var.kind = K::MutableVar;
    var.buffer = new_runtime_variable(name, e->dtype, body.front()->loc);
    emit(store_scalar(var.buffer, e, body.front()->loc));
    v = var;
  }
}

// ---------------------------------------------------------------- statements

void Elaborator::exec(const ast::Stmt& s) {
  using S = ast::StmtKind;
  EvalDepth depth(*this, s.loc);
  switch (s.kind) {
    case S::FunctionDef: {
      auto fv = std::make_shared<FunctionValue>();
      fv->module = frame().module;
      fv->def = &s;
      auto closure = std::make_shared<std::map<std::string, CtValue>>();
      if (frame().closure) *closure = *frame().closure;
      for (const auto& [k, v] : frame().names) (*closure)[k] = v;
      fv->closure = closure;
      CtValue v;
      v.kind = K::Function;
      v.function = fv;
      frame().names[s.name] = v;
      if (fv->is_prim_func()) defined_prim_funcs_.push_back(*fv);
      return;
    }
    case S::Assign: {
      if (s.targets.size() == 1 && s.targets[0]->kind == ast::ExprKind::Name)
        name_hint_ = s.targets[0]->id;
      CtValue value = eval(*s.value);
      name_hint_.clear();
      if (value.kind == K::TensorType) {
        for (const auto& t : s.targets) {
          if (t->kind != ast::ExprKind::Name)
            error_at(t->loc, "a tensor declaration assigns to one name");
          declare_tensor(t->id, *value.tensor_type, t->loc);
        }
        return;
      }
      for (const auto& t : s.targets) assign(*t, value, s.loc);
      return;
    }
    case S::AnnAssign: {
      const ast::Expr& target = *s.targets[0];
      CtValue annotation = eval(*s.annotation);
      if (annotation.kind == K::TensorType) {
        if (target.kind != ast::ExprKind::Name || s.value)
          error_at(s.loc, "a tensor declaration is written 'A: T.Tensor((M, K), dtype)'");
        declare_tensor(target.id, *annotation.tensor_type, target.loc);
        return;
      }
      if (!s.value) return;
      if (target.kind == ast::ExprKind::Name) name_hint_ = target.id;
      CtValue value = eval(*s.value);
      name_hint_.clear();
      if (annotation.kind == K::DType && (value.is_number() || value.kind == K::Expr ||
                                          value.kind == K::Region || value.kind == K::MutableVar))
        value = CtValue::of_expr(to_expr_of(value, annotation.dtype, s.value->loc, "value"));
      assign(target, value, s.loc);
      return;
    }
    case S::AugAssign: {
      const ast::Expr& target = *s.targets[0];
      if (target.kind == ast::ExprKind::Name) {
        CtValue current = lookup(target.id, target.loc);
        assign_name(target.id, eval_binop(s.op, current, eval(*s.value), s.loc), s.loc);
        return;
      }
      if (target.kind == ast::ExprKind::Subscript) {
        CtValue current = eval_subscript(target);
        assign(target, eval_binop(s.op, current, eval(*s.value), s.loc), s.loc);
        return;
      }
      error_at(target.loc, "cannot use '" + s.op + "=' on this expression");
    }
    case S::For: return exec_for(s);
    case S::While: return exec_while(s);
    case S::If: return exec_if(s);
    case S::With: return exec_with(s);
    case S::Return: {
      if (under_runtime_control())
        error_at(s.loc, "'return' inside a runtime loop or branch is not supported");
      frame().return_value = s.value ? eval(*s.value) : CtValue::none();
      frame().returned = true;
      return;
    }
    case S::ExprStmt: {
      eval(*s.value);
      return;
    }
    case S::Pass: case S::Global: return;
    case S::Break: case S::Continue: return exec_jump(s);
    case S::Import: {
      for (const auto& imp : s.imports) {
        std::string module = imp.module;
        if (module.rfind("tilelang", 0) == 0) module = "tilec" + module.substr(8);
        CtValue m;
        m.kind = K::Module;
        if (module == "tilec" || module == "tilec.language" || module == "tilec.layout") {
          m.text = module;
        } else {
          m.kind = K::Opaque;
          m.text = "module " + imp.module;
        }
        frame().names[imp.alias] = m;
      }
      return;
    }
    case S::Assert: {
      CtValue test = eval(*s.value);
      if (!test.is_constant())
        error_at(s.value->loc, "assert needs a compile-time condition");
      if (!truthy(test, s.value->loc)) {
        std::string msg = "assertion failed";
        if (s.msg) {
          CtValue m = eval(*s.msg);
          if (m.kind == K::String) msg += ": " + m.text;
        }
        error_at(s.loc, msg);
      }
      return;
    }
    case S::Unsupported:
      error_at(s.loc, s.name + " is not supported in kernels");
  }
}

// ---------------------------------------------------------------- loops

std::optional<int64_t> trip_count(int64_t start, int64_t stop, int64_t step) {
  __int128 span = step > 0 ? __int128{stop} - start : __int128{start} - stop;
  __int128 magnitude = step > 0 ? __int128{step} : -__int128{step};
  if (span <= 0) return 0;
  __int128 trips = (span + magnitude - 1) / magnitude;  // up to 2**64 - 1
  if (trips > std::numeric_limits<int64_t>::max()) return std::nullopt;
  return static_cast<int64_t>(trips);
}

void Elaborator::spend_compile_time_iterations(std::optional<int64_t> trips, const SourceLoc& loc) {
  if (!trips || *trips > kMaxCompileTimeIterations - compile_time_iterations_)
    error_at(loc, "this compile-time loop would run " +
                      (trips ? std::to_string(*trips) : "more than 2**63 - 1") + " times" +
                      (compile_time_iterations_ > 0
                           ? " after " + std::to_string(compile_time_iterations_) + " iterations of others"
                           : "") +
                      ", past the " + std::to_string(kMaxCompileTimeIterations) +
                      " that compile-time loops may run in one kernel; a loop this long belongs "
                      "inside T.Kernel, where range() and T.serial loop at run time");
  compile_time_iterations_ += *trips;
}

static bool is_loop_builtin(const std::string& name) {
  return name == "T.Parallel" || name == "T.Pipelined" || name == "T.serial" || name == "T.Serial" ||
         name == "T.grid" || name == "T.unroll" || name == "T.vectorized" || name == "T.Persistent" ||
         name == "range";
}

CompileTimeRange Elaborator::compile_time_range(const EvaluatedCall& call) {
  CallArgs a = bind(call, {"start", "stop=None", "step=1"});
  int64_t start = to_int(a["start"], a.loc("start"), "range start");
  int64_t stop = 0, step = to_int(a["step"], a.loc("step"), "range step");
  if (a["stop"].kind == K::None) std::swap(start, stop);
  else stop = to_int(a["stop"], a.loc("stop"), "range stop");
  if (step == 0) error_at(a.loc("step"), "range step must not be zero");
  return {start, step, trip_count(start, stop, step)};
}

// The names a for loop binds, `count` of them (one a dim of `what`): a name or a tuple of names.
std::vector<const ast::Expr*> Elaborator::loop_names(const ast::Expr& target, size_t count, const std::string& what) {
  std::vector<const ast::Expr*> names;
  if (target.kind == ast::ExprKind::Name) {
    names.push_back(&target);
  } else if (target.kind == ast::ExprKind::Tuple || target.kind == ast::ExprKind::List) {
    for (const auto& item : target.items) {
      if (item->kind != ast::ExprKind::Name) error_at(item->loc, "a loop variable must be a name");
      names.push_back(item.get());
    }
  } else {
    error_at(target.loc, "a loop variable must be a name");
  }
  if (names.size() != count)
    error_at(target.loc, what + " gives " + std::to_string(count) + " loop variable" + (count == 1 ? "" : "s") +
                             " but " + std::to_string(names.size()) + (names.size() == 1 ? " is" : " are") + " named");
  return names;
}

// Binds each loop name to its value for the loop's body. An enclosing loop's variable of the same
// name is shadowed for this loop and is its own again after it, as in TileLang's TVMScript
// (Python would leave the inner loop's last value): those are returned for unbind_loop_names.
std::map<std::string, CtValue> Elaborator::bind_loop_names(const std::vector<const ast::Expr*>& names,
                                                           const std::vector<ir::Expr>& values) {
  Frame& f = frame();
  std::map<std::string, CtValue> shadowed;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i]->id;
    if (f.names.count(name) && f.names[name].kind == K::MutableVar)
      error_at(names[i]->loc, "'" + name + "' is a runtime variable and cannot be a loop variable");
    if (f.loop_vars.count(name)) shadowed[name] = f.names[name];
    f.names[name] = CtValue::of_expr(values[i]);
    f.out_of_scope.erase(name);
    f.loop_vars.insert(name);
  }
  return shadowed;
}

// After the loop: Python keeps a loop variable, but its last value is a runtime value nothing
// tracks, so reading it afterwards is an error; a shadowed name is the enclosing loop's again.
void Elaborator::unbind_loop_names(const std::vector<const ast::Expr*>& names,
                                   const std::map<std::string, CtValue>& shadowed) {
  for (const auto* name : names) {
    auto outer = shadowed.find(name->id);
    if (outer != shadowed.end()) {
      frame().names[name->id] = outer->second;
      continue;
    }
    frame().loop_vars.erase(name->id);
    frame().names.erase(name->id);
    frame().out_of_scope[name->id] = {name->loc};
  }
}

void Elaborator::exec_for(const ast::Stmt& s) {
  const ast::Expr& target = *s.targets[0];
  const ast::Expr& iter = *s.value;
  CtValue callee;
  bool runtime_loop = false;
  if (iter.kind == ast::ExprKind::Call) {
    callee = eval(*iter.value);
    runtime_loop = callee.kind == K::Builtin && is_loop_builtin(callee.text);
  }
  if (!runtime_loop) {
    CtValue seq = eval(iter);
    if (!seq.is_sequence())
      error_at(iter.loc, "cannot iterate over " + describe(seq) + " (loops use T.Parallel, "
                         "T.Pipelined, T.serial, T.grid, T.unroll, T.vectorized, range, or a tuple)");
    spend_compile_time_iterations(static_cast<int64_t>(seq.items.size()), iter.loc);
    for (const auto& item : seq.items) {
      bind_compile_time_target(target, item, target.loc);
      if (!compile_time_iteration(s, "a loop over " + describe(seq))) break;
    }
    return;
  }
  EvaluatedCall call;
  call.node = &iter;
  call.callee_name = callee.text;
  for (const auto& arg : iter.items) {
    call.positional.push_back(eval(*arg));
    call.positional_locs.push_back(arg->loc);
  }
  for (const auto& kw : iter.keywords) {
    call.keywords.emplace_back(kw.name, eval(*kw.value));
    call.keyword_locs.push_back(kw.loc);
  }
  const std::string& kind_name = callee.text;

  // range over constants outside a kernel runs at compile time.
  if (kind_name == "range" && !in_kernel_) {
    CompileTimeRange range = compile_time_range(call);
    spend_compile_time_iterations(range.trips, iter.loc);
    for (int64_t k = 0; k < *range.trips; ++k) {
      assign(target, CtValue::of_int(range.start + k * range.step), target.loc);  // within [start, stop)
      if (!compile_time_iteration(s, "range")) break;
    }
    return;
  }
  if (!in_kernel_)
    error_at(iter.loc, kind_name + " loops run inside a T.Kernel block");
  if (kind_name == "T.Persistent") {
    exec_persistent_for(s, call);
    return;
  }

  struct LoopDim {
    ir::Expr min, extent;
    int64_t step = 1;
  };
  std::vector<LoopDim> dims;
  ir::ForKind for_kind = ir::ForKind::Serial;
  int num_stages = 0;
  auto int_expr = [&](const CtValue& v, const SourceLoc& loc, const std::string& what) {
    ir::Expr e = to_expr(v, loc, what);
    if (!e->dtype.is_integer()) error_at(loc, what + " must be an integer, not " + describe(v));
    return e;
  };
  if (kind_name == "T.Parallel" || kind_name == "T.grid") {
    // T.grid (TVMScript's): serial loops nested in order, the last innermost
    if (kind_name == "T.Parallel") for_kind = ir::ForKind::Parallel;
    if (call.positional.empty()) error_at(iter.loc, kind_name + " needs at least one extent");
    for (const auto& kw : call.keywords)
      error_at(iter.loc, kind_name + "() got an unexpected keyword argument '" + kw.first + "'");
    for (size_t i = 0; i < call.positional.size(); ++i)
      dims.push_back({ir::make_int(0), int_expr(call.positional[i], call.positional_locs[i], kind_name + " extent")});
  } else {
    std::vector<std::string> params = {"start", "stop=None"};
    if (kind_name == "T.Pipelined") {
      params.push_back("num_stages=0");
      for_kind = ir::ForKind::Pipelined;
    } else {
      params.push_back("step=1");
      if (kind_name == "T.unroll") for_kind = ir::ForKind::Unrolled;
      if (kind_name == "T.vectorized") for_kind = ir::ForKind::Vectorized;
    }
    CallArgs a = bind(call, params);
    ir::Expr start = int_expr(a["start"], a.loc("start"), kind_name + " start");
    ir::Expr stop;
    if (a["stop"].kind == K::None) {
      stop = start;
      start = ir::make_int(0, stop->dtype);
    } else {
      stop = int_expr(a["stop"], a.loc("stop"), kind_name + " stop");
    }
    DType t = promote(start->dtype, stop->dtype);
    start = ir::make_cast(t, start);
    stop = ir::make_cast(t, stop);
    int64_t step = 1;
    if (a.has("step")) {
      step = to_int(a["step"], a.loc("step"), kind_name + " step");
      to_expr_of(CtValue::of_int(step), t, a.loc("step"), kind_name + " step");  // fits the loop's type
    }
    if (step == 0) error_at(a.loc("step"), kind_name + " step must not be zero");
    if (a.has("num_stages")) {
      int64_t stages = to_int(a["num_stages"], a.loc("num_stages"), "num_stages");
      if (stages < 0) error_at(a.loc("num_stages"), "num_stages must not be negative");
      if (stages > kMaxPipelineStages)
        error_at(a.loc("num_stages"), "num_stages is " + std::to_string(stages) + "; the most is " +
                                          std::to_string(kMaxPipelineStages) + " (each stage holds its own "
                                          "copy of the loop's shared tiles)");
      num_stages = static_cast<int>(stages);
    }
    ir::Expr extent;
    int64_t start_value, stop_value;
    if (ir::is_const_int(start, &start_value) && ir::is_const_int(stop, &stop_value)) {
      // Counted now, exactly: folding stop - start in the loop's type could wrap.
      std::optional<int64_t> trips = trip_count(start_value, stop_value, step);
      if (!trips) error_at(iter.loc, "this " + kind_name + " loop runs more than 2**63 - 1 times");
      extent = to_expr_of(CtValue::of_int(*trips), t, iter.loc, "the trip count of this " + kind_name + " loop");
    } else if (step == 1) {
      extent = ir::simplify(ir::make_Sub(stop, start));
    } else {
      // ceil((stop - start) / step) iterations, for either sign of step.
      ir::Expr span = step > 0 ? ir::make_Sub(stop, start) : ir::make_Sub(start, stop);
      int64_t s_abs = step > 0 ? step : negate_int(step, a.loc("step"));
      extent = ir::simplify(
          ir::make_FloorDiv(ir::make_Add(span, ir::make_int(s_abs - 1, t)), ir::make_int(s_abs, t)));
    }
    dims.push_back({start, extent, step});
  }

  std::vector<const ast::Expr*> names = loop_names(target, dims.size(), kind_name);
  materialize_assigned(s.body);
  std::vector<ir::Expr> vars, values;
  for (size_t i = 0; i < dims.size(); ++i) {
    ir::Expr var = ir::make_var(names[i]->id, dims[i].min->dtype);
    vars.push_back(var);
    values.push_back(dims[i].step == 1 ? var
                                       : ir::make_Add(dims[i].min, ir::make_Mul(var, ir::make_int(dims[i].step,
                                                                                                    var->dtype))));
  }
  auto shadowed = bind_loop_names(names, values);
  ++runtime_control_depth_;
  parallel_depth_ += for_kind == ir::ForKind::Parallel;
  Frame::Loop loop;
  loop.kind_name = kind_name;
  loop.jumps_allowed = for_kind == ir::ForKind::Serial || for_kind == ir::ForKind::Unrolled;
  frame().loops.push_back(loop);
  ir::Stmt body = collect([&] { exec_block(s.body); }, for_kind == ir::ForKind::Parallel);
  loop = frame().loops.back();
  frame().loops.pop_back();
  parallel_depth_ -= for_kind == ir::ForKind::Parallel;
  --runtime_control_depth_;
  unbind_loop_names(names, shadowed);
  body = with_jumps(loop, body, s.loc);
  for (size_t i = dims.size(); i-- > 0;) {
    ir::Expr min = dims[i].step == 1 ? dims[i].min : ir::make_int(0, vars[i]->dtype);
    body = ir::make_for(vars[i], min, dims[i].extent, for_kind, body, num_stages);
    body = ir::with_loc(body, s.loc);
  }
  emit(body);
}

// One iteration of a compile-time loop's body; false when a break ended the loop.
bool Elaborator::compile_time_iteration(const ast::Stmt& s, const std::string& kind_name) {
  Frame::Loop loop;
  loop.compile_time = true;
  loop.kind_name = kind_name;
  loop.control_depth = runtime_control_depth_;
  frame().loops.push_back(loop);
  exec_block(s.body);
  std::optional<ast::StmtKind> taken = frame().loops.back().taken;
  frame().loops.pop_back();
  return !frame().returned && taken != ast::StmtKind::Break;
}

// A runtime loop's body as its break and continue need it: after a continue the rest of an
// iteration is skipped (its flag cleared as each begins), after a break every later iteration
// (its flag cleared before the loop, emitted here).
ir::Stmt Elaborator::with_jumps(const Frame::Loop& loop, ir::Stmt body, const SourceLoc& loc) {
  if (loop.skipped)
    body = ir::make_seq({ir::with_loc(ir::make_store(loop.skipped, {ir::make_int(0)}, ir::make_int(0)), loc), body});
  if (loop.broke) {
    emit(ir::with_loc(ir::make_store(loop.broke, {ir::make_int(0)}, ir::make_int(0)), loc));
    body = ir::make_if(ir::make_EQ(ir::make_load(loop.broke, {ir::make_int(0)}), ir::make_int(0)), body);
  }
  return body;
}

// for c0, .., ck in T.Persistent(domain, wave_size, index, group_size=8): the tiles of `domain`
// (extents d0, .., dk) in waves of wave_size, this block taking tile `index` of each wave, as
// TileLang's persistent loop: the last dim is split into groups of group_size (at most dk) and
// the tiles are numbered over (dk / group, d0, .., dk-1, group), the last fastest, so blocks of
// one wave share rows of the other dims. A serial loop over the waves; a wave's tile past the
// domain is skipped.
void Elaborator::exec_persistent_for(const ast::Stmt& s, const EvaluatedCall& call) {
  const ast::Expr& target = *s.targets[0];
  CallArgs a = bind(call, {"domain", "wave_size", "index", "group_size=8"});
  const CtValue& domain_value = a["domain"];
  std::vector<CtValue> domain_items =
      domain_value.is_sequence() ? domain_value.items.vector() : std::vector<CtValue>{domain_value};
  if (domain_items.empty()) error_at(a.loc("domain"), "T.Persistent's domain needs at least one extent");
  auto int_of = [&](const CtValue& v, const char* what) {
    ir::Expr e = to_expr_of(v, DType::Int32, a.loc(what), std::string("T.Persistent ") + what);
    return e;
  };
  std::vector<ir::Expr> domain;
  for (const CtValue& d : domain_items) domain.push_back(int_of(d, "domain"));
  ir::Expr wave = int_of(a["wave_size"], "wave_size"), index = int_of(a["index"], "index");
  ir::Expr group = a["group_size"].kind == K::None ? ir::make_int(1) : int_of(a["group_size"], "group_size");

  std::vector<const ast::Expr*> names = loop_names(target, domain.size(), "T.Persistent");

  auto ceil_div = [](const ir::Expr& x, const ir::Expr& y) {
    return ir::make_FloorDiv(ir::make_Add(x, ir::make_Sub(y, ir::make_int(1))), y);
  };
  const ir::Expr last = domain.back();
  group = ir::simplify(ir::make_Max(ir::make_int(1), ir::make_Min(group, last)));
  std::vector<ir::Expr> grouped = {ir::simplify(ceil_div(last, group))};
  grouped.insert(grouped.end(), domain.begin(), domain.end() - 1);
  grouped.push_back(group);
  ir::Expr tiles = grouped[0];
  for (size_t i = 1; i < grouped.size(); ++i) tiles = ir::make_Mul(tiles, grouped[i]);
  tiles = ir::simplify(tiles);
  ir::Expr waves = ir::simplify(ceil_div(tiles, wave));

  ir::Expr w = ir::make_var("w");
  ir::Expr tile = ir::make_Add(ir::make_Mul(w, wave), index);
  std::vector<ir::Expr> digits(grouped.size());
  ir::Expr rest = tile;
  for (size_t i = grouped.size(); i-- > 1;) {
    digits[i] = ir::make_FloorMod(rest, grouped[i]);
    rest = ir::make_FloorDiv(rest, grouped[i]);
  }
  digits[0] = rest;
  std::vector<ir::Expr> coords(digits.begin() + 1, digits.end() - 1);
  coords.push_back(ir::make_Add(ir::make_Mul(digits[0], group), digits.back()));

  materialize_assigned(s.body);
  auto shadowed = bind_loop_names(names, coords);
  ++runtime_control_depth_;
  ir::Stmt body = collect([&] { exec_block(s.body); });
  --runtime_control_depth_;
  unbind_loop_names(names, shadowed);
  ir::Expr inside = ir::make_And(ir::make_LT(tile, tiles), ir::make_LT(coords.back(), last));
  body = ir::with_loc(ir::make_if(inside, body), s.loc);
  emit(ir::with_loc(ir::make_for(w, ir::make_int(0), waves, ir::ForKind::Serial, body), s.loc));
}

void Elaborator::exec_while(const ast::Stmt& s) {
  materialize_assigned(s.body);
  CtValue test = eval(*s.value);
  if (test.is_constant()) {
    if (!truthy(test, s.value->loc)) return;
    error_at(s.value->loc, "this while loop's condition is always true");
  }
  if (!in_kernel_) error_at(s.loc, "runtime while loops run inside a T.Kernel block");
  ir::Expr cond = to_bool_expr(test, s.value->loc);
  ++runtime_control_depth_;
  Frame::Loop loop;
  loop.kind_name = "while";
  frame().loops.push_back(loop);
  ir::Stmt body = collect([&] { exec_block(s.body); });
  loop = frame().loops.back();
  frame().loops.pop_back();
  --runtime_control_depth_;
  body = with_jumps(loop, body, s.loc);
  if (loop.broke) cond = ir::make_And(cond, ir::make_EQ(ir::make_load(loop.broke, {ir::make_int(0)}), ir::make_int(0)));
  emit(ir::with_loc(ir::make_while(cond, body), s.loc));
}

void Elaborator::exec_if(const ast::Stmt& s) {
  CtValue test = eval(*s.value);
  if (test.is_constant()) {
    exec_block(truthy(test, s.value->loc) ? s.body : s.orelse);
    return;
  }
  if (!in_kernel_) error_at(s.value->loc, "a runtime condition must be inside a T.Kernel block");
  materialize_assigned(s.body);
  if (!s.orelse.empty()) materialize_assigned(s.orelse);
  ir::Expr cond = to_bool_expr(test, s.value->loc);
  // `if tx < 128:` (whole warps of the block's threads): a T.ws group when its body has tile
  // code, or a T.tma_copy or barrier that the group's threads share (thread_group_needed_).
  std::optional<std::pair<int64_t, int64_t>> range;
  if (!thread_group_ && parallel_depth_ == 0 && thread_extents_.size() == 1)
    range = thread_range_of(cond, kernel_->thread_index, kernel_->threads);
  if (range && (range->first >= range->second || range->first % kWarpThreads || range->second % kWarpThreads))
    range.reset();
  ++runtime_control_depth_;
  const auto enclosing_group = thread_group_;
  const bool needed_before = thread_group_needed_;
  if (range) {
    thread_group_ = range;
    thread_group_needed_ = false;
  }
  ir::Stmt then_case = collect([&] { exec_block(s.body); });
  const bool group = range && (thread_group_needed_ || has_tile_code(then_case));
  if (range) thread_group_needed_ = needed_before;
  // Its else (not an elif, which says its own range): the other threads, when they are one range.
  std::optional<std::pair<int64_t, int64_t>> others;
  const bool elif = s.orelse.size() == 1 && s.orelse[0]->kind == ast::StmtKind::If;
  if (group && !s.orelse.empty() && !elif) {
    if (range->first == 0 && range->second < kernel_->threads) others = std::make_pair(range->second, int64_t{kernel_->threads});
    if (range->first > 0 && range->second == kernel_->threads) others = std::make_pair(int64_t{0}, range->first);
  }
  thread_group_ = others ? others : enclosing_group;
  ir::Stmt else_case;
  if (!s.orelse.empty()) else_case = collect([&] { exec_block(s.orelse); });
  thread_group_ = enclosing_group;
  --runtime_control_depth_;
  if (others) else_case = ir::with_loc(ir::make_if(ir::thread_group(others->first, others->second), else_case),
                                       s.orelse.front()->loc);
  if (group && !others && has_tile_code_outside_groups(else_case))
    error_at(s.orelse.front()->loc,
             "this branch runs tile ops on threads outside [" + std::to_string(range->first) + ", " +
                 std::to_string(range->second) + ") that are not one range of whole warps tilec can tell; give "
                 "the threads it is for as a range (elif tx >= " + std::to_string(range->second) + ":)");
  if (group) cond = ir::thread_group(range->first, range->second);
  emit(ir::with_loc(ir::make_if(cond, then_case, else_case), s.loc));
}

// ---------------------------------------------------------------- kernels

std::array<int64_t, 3> Elaborator::cluster_extents(const CtValue& value, const SourceLoc& loc) {
  // CUDA's portable cluster size: a larger one needs the non-portable opt-in, and not every GPU
  // schedules it.
  constexpr int64_t kMaxClusterBlocks = 8;
  std::vector<CtValue> parts = value.is_sequence() ? value.items.vector() : std::vector<CtValue>{value};
  if (parts.empty() || parts.size() > 3)
    error_at(loc, "cluster_dims takes 1 to 3 extents, not " + std::to_string(parts.size()));
  std::array<int64_t, 3> dims{1, 1, 1};
  int64_t blocks = 1;
  for (size_t i = 0; i < parts.size(); ++i) {
    dims[i] = to_int(parts[i], loc, "cluster_dims");
    if (dims[i] < 1) error_at(loc, "cluster_dims extents are at least 1, not " + std::to_string(dims[i]));
    if (dims[i] > kMaxClusterBlocks)  // before the product, which could overflow
      error_at(loc, "cluster_dims has an extent of " + std::to_string(dims[i]) + "; CUDA's portable limit is " +
                        std::to_string(kMaxClusterBlocks) + " blocks a cluster");
    blocks *= dims[i];
  }
  if (blocks > kMaxClusterBlocks)
    error_at(loc, "cluster_dims makes clusters of " + std::to_string(blocks) + " blocks; CUDA's portable limit is " +
                      std::to_string(kMaxClusterBlocks));
  return dims;
}

namespace {

// A cluster tiles the grid: along each dim its extent divides the grid's (checked here where the
// grid's is constant, at launch where it is read from the arguments).
void check_cluster_fits_grid(const ir::KernelLaunch& launch, const SourceLoc& loc) {
  static const char* axis[] = {"x", "y", "z"};
  for (size_t d = 0; d < 3; ++d) {
    const int64_t c = launch.cluster_dims[d];
    if (c == 1) continue;
    if (d >= launch.grid.size())
      error_at(loc, "cluster_dims has " + std::to_string(c) + " blocks along " + axis[d] + ", but the grid has " +
                        std::to_string(launch.grid.size()) + " dim" + (launch.grid.size() == 1 ? "" : "s"));
    int64_t extent;
    if (ir::is_const_int(launch.grid[d], &extent) && extent % c != 0)
      error_at(loc, "the grid's extent along " + std::string(axis[d]) + " (" + std::to_string(extent) +
                        ") is not a multiple of the cluster's (" + std::to_string(c) + ")");
  }
}

}  // namespace

void Elaborator::exec_with(const ast::Stmt& s) {
  if (s.with_items.size() != 1)
    error_at(s.loc, "a with statement in a kernel takes one T.Kernel(...)");
  const ast::WithItem& item = s.with_items[0];
  const ast::Expr& ctx = *item.context;
  CtValue callee;
  if (ctx.kind == ast::ExprKind::Call) callee = eval(*ctx.value);
  if (callee.kind == K::Builtin && callee.text == "T.ws") return exec_thread_group(s, ctx);
  if (callee.kind == K::Builtin && callee.text == "T.attr") return exec_reduce_scope(s, ctx);
  const bool cluster_kernel = callee.kind == K::Builtin && callee.text == "T.ClusterKernel";
  if (!(callee.kind == K::Builtin && callee.text == "T.Kernel") && !cluster_kernel)
    error_at(ctx.loc, "only 'with T.Kernel(...)' is supported in kernels");
  if (in_kernel_) error_at(ctx.loc, "T.Kernel blocks cannot be nested");
  if (finding_dims_) return;  // the tensors are declared before the block (declared_dims)

  EvaluatedCall call;
  call.node = &ctx;
  call.callee_name = cluster_kernel ? "T.ClusterKernel" : "T.Kernel";
  for (const auto& arg : ctx.items) {
    call.positional.push_back(eval(*arg));
    call.positional_locs.push_back(arg->loc);
  }
  int threads = 128;
  std::vector<int64_t> thread_extents{threads};
  std::optional<std::array<int64_t, 3>> cluster_dims;
  SourceLoc cluster_loc = ctx.loc;
  for (const auto& kw : ctx.keywords) {
    if (kw.name == "cluster_dims") {
      cluster_dims = cluster_extents(eval(*kw.value), kw.value->loc);
      cluster_loc = kw.value->loc;
      continue;
    }
    if (kw.name != "threads")
      error_at(kw.loc, call.callee_name + "() got an unexpected keyword argument '" + kw.name +
                           "' (it takes grid extents, threads= and cluster_dims=)");
    CtValue t = eval(*kw.value);
    std::vector<CtValue> parts = t.is_sequence() ? t.items.vector() : std::vector<CtValue>{t};
    int64_t product = 1;
    thread_extents.clear();
    for (const auto& p : parts) {
      int64_t n = to_int(p, kw.value->loc, "threads");
      thread_extents.push_back(n);
      if (n < 1 || n > 1024 || (product *= n) > 1024)
        error_at(kw.value->loc, "threads must be between 1 and 1024, not " +
                                    std::to_string(n < 1 || n > 1024 ? n : product));
    }
    threads = static_cast<int>(product);
  }
  if (cluster_kernel && !cluster_dims)
    error_at(ctx.loc, "T.ClusterKernel() missing required keyword argument 'cluster_dims'");
  if (call.positional.empty() || call.positional.size() > 3)
    error_at(ctx.loc, call.callee_name + " takes 1 to 3 grid extents, not " + std::to_string(call.positional.size()));
  std::vector<ir::Expr> grid;
  for (size_t i = 0; i < call.positional.size(); ++i) {
    const CtValue& extent = call.positional[i];
    ir::Expr e = extent.kind == K::Int ? to_expr_of(extent, DType::Int32, call.positional_locs[i], "grid extent")
                                       : to_expr(extent, call.positional_locs[i], "grid extent");
    if (!e->dtype.is_integer())
      error_at(call.positional_locs[i], "grid extent must be an integer, not " + describe(extent));
    grid.push_back(ir::simplify(ir::make_cast(DType::Int32, e)));
  }
  std::vector<std::string> names;
  static const char* default_names[] = {"bx", "by", "bz"};
  for (size_t i = 0; i < grid.size(); ++i) names.push_back(default_names[i]);
  std::vector<const ast::Expr*> targets;
  if (item.target) {
    if (item.target->kind == ast::ExprKind::Name) {
      targets.push_back(item.target.get());
    } else if (item.target->kind == ast::ExprKind::Tuple || item.target->kind == ast::ExprKind::List) {
      for (const auto& t : item.target->items) targets.push_back(t.get());
    }
    for (const auto* t : targets)
      if (t->kind != ast::ExprKind::Name) error_at(t->loc, "block indices must be names");
    if (targets.size() != grid.size())
      error_at(item.target->loc, "T.Kernel has " + std::to_string(grid.size()) + " grid dim" +
                                     (grid.size() == 1 ? "" : "s") + " but " +
                                     std::to_string(targets.size()) + " block ind" +
                                     (targets.size() == 1 ? "ex is" : "ices are") + " named");
    for (size_t i = 0; i < targets.size(); ++i) names[i] = targets[i]->id;
  }
  auto launch = std::make_shared<ir::KernelLaunch>();
  launch->grid = grid;
  launch->threads = threads;
  launch->loc = s.loc;
  if (cluster_dims) {
    launch->cluster_dims = *cluster_dims;
    check_cluster_fits_grid(*launch, cluster_loc);
  }
  for (size_t i = 0; i < grid.size(); ++i) {
    ir::Expr var = ir::make_var(names[i], DType::Int32);
    launch->block_vars.push_back(var);
    if (i < targets.size()) {
      frame().names[names[i]] = CtValue::of_expr(var);
      frame().loop_vars.insert(names[i]);
    }
  }
  in_kernel_ = true;
  kernel_ = launch.get();
  thread_extents_ = thread_extents;
  block_atomics_with_prev_.clear();
  kernel_allocs_.clear();
  barrier_buffers_.clear();
  cluster_barrier_buffers_.clear();
  reaches_peer_blocks_ = false;
  copied_in_vectors_.clear();
  unnamed_buffers_.clear();
  annotated_layouts_.clear();
  kernel_tensor_layouts_.clear();
  int saved_depth = frame().control_depth_at_entry;
  frame().control_depth_at_entry = runtime_control_depth_;
  ir::Stmt body = collect([&] { exec_block(s.body); });
  frame().control_depth_at_entry = saved_depth;
  // A block's shared memory is gone once it exits: a kernel whose blocks write into their peers'
  // (or arrive at their barriers) ends with a cluster barrier, so none leaves while a peer may
  // still reach it.
  if (reaches_peer_blocks_) body = ir::make_seq({body, ir::device_call("cluster_sync", {}, s.loc)});
  if (!launch->thread_index && !block_atomics_with_prev_.empty())
    error_at(block_atomics_with_prev_[0],
             "T.atomic_add(..., return_prev=True) is each thread's own call (every "
             "thread adds, and gets back what it found), but this block's statements are the block's, run "
             "alike on every thread: write it thread by thread (tx = T.get_thread_binding())");
  // T.annotate_layout: the buffer has its layout at every use, before the call too. A row-major
  // layout is what a buffer without one has.
  ir::BufferMap laid_out;
  for (const auto& [buffer, layout] : annotated_layouts_) {
    auto n = std::make_shared<ir::BufferNode>(*buffer);
    if (layout->kind() != ir::SharedLayout::Kind::RowMajor) n->layout = layout;
    laid_out[buffer] = n;
  }
  annotated_layouts_.clear();
  // A shared buffer that views read (T.reshape) keeps its layout, and each view reads it in its
  // own shape: both bind as a user's layout does (ir/shared_layout.h), so that no op lays out
  // either anew.
  auto constant_shape = [](const ir::Buffer& b) {
    std::vector<int64_t> shape(b->shape.size());
    for (size_t d = 0; d < shape.size(); ++d) ir::is_const_int(ir::simplify(b->shape[d]), &shape[d]);
    return shape;  // a view's buffer and the view have constant shapes (builtins.cc, view_of)
  };
  auto empty = [&](const ir::Buffer& b) {
    std::vector<int64_t> shape = constant_shape(b);
    return std::find(shape.begin(), shape.end(), 0) != shape.end();
  };
  for (const ir::Buffer& b : kernel_allocs_) {
    // a view of an empty buffer has no element to place
    if (!b->view_of || b->scope != ir::MemoryScope::Shared || empty(b)) continue;
    const ir::BufferNode* base = b->view_of.get();
    const ir::Buffer& laid = laid_out.count(base) ? laid_out.at(base) : b->view_of;
    if (!laid->layout || laid->layout->origin().empty()) {
      auto n = std::make_shared<ir::BufferNode>(*laid);
      ir::SharedLayoutRef layout = laid->layout ? laid->layout : ir::SharedLayout::row_major(constant_shape(laid));
      n->layout = layout->bound("the layout its views share (T.reshape at " + b->loc.str() + ")");
      laid_out[base] = n;
    }
    auto view = std::make_shared<ir::BufferNode>(*b);
    view->view_of = laid_out.at(base);
    view->layout = view->view_of->layout->viewed(constant_shape(b));
    laid_out[b.get()] = view;
  }
  if (!laid_out.empty()) body = ir::replace_buffers(body, laid_out);
  kernels_.push_back({s.loc, body, std::move(kernel_tensor_layouts_)});
  kernel_tensor_layouts_.clear();
  for (auto it = kernel_allocs_.rbegin(); it != kernel_allocs_.rend(); ++it)
    body = ir::make_allocate(laid_out.count(it->get()) ? laid_out.at(it->get()) : *it, body);
  end_kernel_names(*launch, s.loc);
  kernel_allocs_.clear();
  in_kernel_ = false;
  kernel_ = nullptr;
  for (size_t i = 0; i < targets.size(); ++i) frame().loop_vars.erase(names[i]);
  launch->body = body;
  emit(ir::Stmt(launch));
}


void Elaborator::exec_thread_group(const ast::Stmt& s, const ast::Expr& ws_call) {
  if (!in_kernel_) error_at(ws_call.loc, "T.ws goes inside a T.Kernel block");
  if (s.with_items[0].target) error_at(s.with_items[0].target->loc, "T.ws(...) names nothing: write 'with T.ws(0):'");
  if (thread_group_) error_at(ws_call.loc, "T.ws blocks cannot be nested");
  if (parallel_depth_ > 0) error_at(ws_call.loc, "T.ws goes outside T.Parallel loops");
  if (!ws_call.keywords.empty()) error_at(ws_call.keywords[0].loc, "T.ws takes warp group numbers, no keywords");
  if (ws_call.items.empty()) error_at(ws_call.loc, "T.ws takes the warp groups that run the block: T.ws(0), T.ws(0, 1)");
  std::vector<int64_t> groups;
  for (const auto& arg : ws_call.items) {
    int64_t g = to_int(eval(*arg), arg->loc, "T.ws warp group");
    if (g < 0) error_at(arg->loc, "T.ws: a warp group number is 0 or more, not " + std::to_string(g));
    groups.push_back(g);
  }
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  if (groups.back() - groups.front() + 1 != static_cast<int64_t>(groups.size()))
    error_at(ws_call.loc, "T.ws: the warp groups of one block are consecutive (T.ws(0, 1)), since their tile ops "
                          "are spread over one range of threads");
  const int64_t lo = groups.front() * kWarpGroupThreads, hi = (groups.back() + 1) * kWarpGroupThreads;
  if (hi > kernel_->threads)
    error_at(ws_call.loc, "T.ws: warp group " + std::to_string(groups.back()) + " is threads [" +
                              std::to_string(hi - kWarpGroupThreads) + ", " + std::to_string(hi) +
                              "), past the block's " + std::to_string(kernel_->threads) + " threads");
  materialize_assigned(s.body);
  thread_group_ = {lo, hi};
  ++runtime_control_depth_;
  ir::Stmt body = collect([&] { exec_block(s.body); });
  --runtime_control_depth_;
  thread_group_.reset();
  emit(ir::with_loc(ir::make_if(ir::thread_group(lo, hi), body), s.loc));
}

void Elaborator::end_kernel_names(const ir::KernelLaunch& launch, const SourceLoc& loc) {
  auto kernel_local = [&](const CtValue& v) {
    ir::Buffer b = v.kind == K::Buffer || v.kind == K::MutableVar ? v.buffer
                   : v.kind == K::Region                          ? v.region->buffer
                                                                  : nullptr;
    if (b) return std::find(kernel_allocs_.begin(), kernel_allocs_.end(), b) != kernel_allocs_.end();
    return v.kind == K::Expr && std::any_of(launch.block_vars.begin(), launch.block_vars.end(),
                                            [&](const ir::Expr& var) { return var.same_as(v.expr); });
  };
  Frame& f = frame();
  for (auto it = f.names.begin(); it != f.names.end();) {
    if (!kernel_local(it->second)) {
      ++it;
      continue;
    }
    f.out_of_scope[it->first] = {loc, true};
    it = f.names.erase(it);
  }
}

void Elaborator::use_block_swizzle(int64_t panel, bool columns, const SourceLoc& loc) {
  if (!kernel_) error_at(loc, "T.use_swizzle goes inside a T.Kernel block");
  // A 1-D grid is in its own order (one row of blocks); a 3-D grid's x and y are ordered within
  // each z.
  if (kernel_->grid.size() < 2) return;
  if (kernel_->swizzle_panel > 0) error_at(loc, "T.use_swizzle is given twice in this T.Kernel block");
  kernel_->swizzle_panel = panel;
  kernel_->swizzle_columns = columns;
}

}  // namespace tilec::frontend
