// The elaborator's internals, shared by elaborate*.cc and builtins.cc.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/elaborate.h"
#include "frontend/expr_size.h"
#include "frontend/value.h"

namespace tilec::frontend {

// Positional and keyword arguments of a call, matched against a builtin's
// parameter list ("src", "dst", "clear=True": a default makes it optional).
struct CallArgs {
  std::map<std::string, CtValue> values;
  std::map<std::string, SourceLoc> locs;
  const CtValue& operator[](const std::string& name) const { return values.at(name); }
  bool has(const std::string& name) const { return values.count(name) > 0; }
  SourceLoc loc(const std::string& name) const;
};

// A call's arguments after evaluation, before they are matched to names.
struct EvaluatedCall {
  const ast::Expr* node = nullptr;
  std::string callee_name;  // for messages: "T.copy"
  std::vector<CtValue> positional;
  std::vector<SourceLoc> positional_locs;
  std::vector<std::pair<std::string, CtValue>> keywords;
  std::vector<SourceLoc> keyword_locs;
};

// An operand of a tile op: a buffer with one range per dim. `point_only` when
// it was written as a point index (A[i, j]) whose extents come from the other
// operand.
struct TileOperand {
  ir::Buffer buffer;
  std::vector<ir::Range> ranges;
  bool point_only = false;
  SourceLoc loc;
};

// range(start, stop, step) of compile-time ints: its first value, step and length (nullopt
// past int64).
struct CompileTimeRange {
  int64_t start = 0, step = 1;
  std::optional<int64_t> trips;
};

class Elaborator {
 public:
  Elaborator() = default;

  ir::PrimFunc prim_func(const FunctionValue& f, const std::string& name);
  ir::PrimFunc eager(const FunctionValue& f, const std::map<std::string, CtValue>& args);
  // Runs a factory's body at compile time; returns the prim_func it returns
  // or, when it returns None, the one it defines.
  FunctionValue run_factory(const FunctionValue& f, const std::map<std::string, CtValue>& args);

  // ---- expressions (elaborate_expr.cc)
  CtValue eval(const ast::Expr& e);
  CtValue eval_binop(const std::string& op, const CtValue& a, const CtValue& b, const SourceLoc& loc);
  CtValue eval_unary(const std::string& op, const CtValue& a, const SourceLoc& loc);
  CtValue eval_compare(const ast::Expr& e);
  CtValue eval_subscript(const ast::Expr& e);
  CtValue eval_attribute(const ast::Expr& e);
  CtValue eval_call(const ast::Expr& e);
  CtValue eval_astype(const ast::Expr& e);  // value.astype(dtype), TVM's PrimExpr method
  CtValue eval_comprehension(const ast::Expr& e);
  // `callee` is the Function value called; its body sees it under its own name (kept out of
  // its closure, which would then hold the function and never be freed).
  CtValue call_function(const CtValue& callee, const EvaluatedCall& call);
  // The body of `lambda` (a Lambda node of this frame's source) with its parameters bound to
  // `args` (as many), evaluated where it is written: T.Layout's index function.
  CtValue apply_lambda(const ast::Expr& lambda, const std::vector<CtValue>& args);
  // ---- Python objects at compile time (host_calls.cc)
  CtValue host_attribute(const CtValue& base, const std::string& attr, const SourceLoc& loc);
  CtValue call_host(const CtValue& callee, const EvaluatedCall& call);
  // A runtime value (or a number) as an IR expression; `what` names it in errors.
  ir::Expr to_expr(const CtValue& v, const SourceLoc& loc, const std::string& what);
  ir::Expr to_expr_of(const CtValue& v, DType dtype, const SourceLoc& loc, const std::string& what);
  ir::Expr to_bool_expr(const CtValue& v, const SourceLoc& loc);
  // `hi - lo`, the extent of a slice: a constant where the let-bound names in scope make it
  // one (H1 = H0 + 64 gives H0:H1 the extent 64), as the ops' shape checks need.
  ir::Expr slice_extent(const ir::Expr& lo, const ir::Expr& hi);
  // Two operands of one arithmetic operation as IR of one dtype: a Python
  // number next to a runtime value takes that value's type (x * 2 stays
  // float16 for a float16 x), two runtime values promote.
  std::pair<ir::Expr, ir::Expr> unify_operands(const CtValue& a, const CtValue& b,
                                               const SourceLoc& loc, const std::string& what);
  bool truthy(const CtValue& v, const SourceLoc& loc);  // compile-time truth, else error
  int64_t to_int(const CtValue& v, const SourceLoc& loc, const std::string& what);
  DType to_dtype(const CtValue& v, const SourceLoc& loc, const std::string& what);
  // A shape: an int, or a tuple/list of ints and runtime int expressions.
  std::vector<ir::Expr> to_shape(const CtValue& v, const SourceLoc& loc, const std::string& what);
  CtValue lookup(const std::string& name, const SourceLoc& loc);
  // T.use_swizzle in the T.Kernel block being elaborated (2-D grids).
  void use_block_swizzle(int64_t panel, bool columns, const SourceLoc& loc);

  // ---- builtins (builtins.cc): the T namespace and Python builtins
  bool is_builtin(const std::string& qualified) const;
  // Builtins whose arguments are not all values (T.Layout's lambda, T.annotate_layout's dict):
  // they evaluate the call's argument expressions themselves (EvaluatedCall::node).
  static bool evaluates_own_arguments(const std::string& qualified);
  CtValue call_builtin(const std::string& name, const EvaluatedCall& call);
  CallArgs bind(const EvaluatedCall& call, const std::vector<std::string>& params);
  TileOperand operand(const CtValue& v, const SourceLoc& loc, const std::string& what);
  ir::BufferRegion region_of(const TileOperand& op) const;

  // ---- statements (elaborate_stmt.cc)
  // Runs body[first:]; after a break or continue, the statements it skips run only where none ran.
  void exec_block(const ast::StmtList& body, size_t first = 0);
  void exec_jump(const ast::Stmt& s);  // break, continue
  void exec(const ast::Stmt& s);
  void assign(const ast::Expr& target, const CtValue& value, const SourceLoc& loc);
  void assign_name(const std::string& name, const CtValue& value, const SourceLoc& loc);
  // A loop unrolled while compiling binds its target to each item as it is: a number stays a
  // number, even inside a runtime loop or branch (TileLang traces such a loop once, with
  // Python ints), so that what the body computes from it is constant.
  void bind_compile_time_target(const ast::Expr& target, const CtValue& item, const SourceLoc& loc);
  void exec_for(const ast::Stmt& s);
  CompileTimeRange compile_time_range(const EvaluatedCall& range_call);
  void exec_with(const ast::Stmt& s);
  // T.Kernel's cluster_dims= (an int or 1 to 3 of them) as x, y, z extents, the rest 1.
  std::array<int64_t, 3> cluster_extents(const CtValue& value, const SourceLoc& loc);
  // with T.ws(i, ...): the statements of warp groups i, ... (elaborate_stmt.cc).
  void exec_thread_group(const ast::Stmt& s, const ast::Expr& ws_call);
  // with T.attr(T.comm_reducer(lambda x, y: ..., [identity]), "reduce_scope", ...): TVM's scope
  // of the reducer T.tvm_thread_allreduce combines by (builtins_simt.cc).
  void exec_reduce_scope(const ast::Stmt& s, const ast::Expr& attr_call);
  // Unbinds the names of the frame that hold the finished T.Kernel block's
  // buffers (kernel_allocs_) and block indices.
  void end_kernel_names(const ir::KernelLaunch& launch, const SourceLoc& loc);
  // Gives each tensor parameter that T.annotate_layout laid out its layout (and compact
  // row-major strides: such a tensor is contiguous) in the params and the body.
  void apply_tensor_layouts(ir::PrimFunc& func);
  // Gives each tensor parameter that a view reads (T.Tensor(shape, dtype, x.data)) compact
  // row-major strides, which a call must match, and its views the new parameter.
  void apply_tensor_views(ir::PrimFunc& func);
  void exec_if(const ast::Stmt& s);
  void exec_while(const ast::Stmt& s);
  void exec_persistent_for(const ast::Stmt& s, const EvaluatedCall& call);
  std::vector<const ast::Expr*> loop_names(const ast::Expr& target, size_t count, const std::string& what);
  std::map<std::string, CtValue> bind_loop_names(const std::vector<const ast::Expr*>& names,
                                                 const std::vector<ir::Expr>& values);
  void unbind_loop_names(const std::vector<const ast::Expr*>& names, const std::map<std::string, CtValue>& shadowed);
  // Counts `trips` iterations of a compile-time loop (nullopt: more than int64
  // counts) against kMaxCompileTimeIterations.
  void spend_compile_time_iterations(std::optional<int64_t> trips, const SourceLoc& loc);
  // Counts `items` handled by an operation on tuples, lists or strings against
  // kMaxSequenceWork.
  void spend_sequence_work(int64_t items, const SourceLoc& loc);
  void emit(ir::Stmt s);
  // Names that a runtime loop/branch assigns and that are bound now become
  // runtime variables first, so every iteration sees the updated value; those
  // whose values cannot (tuples, buffers, ...) may not be assigned there.
  void materialize_assigned(const ast::StmtList& body);
  ir::Buffer new_local_scalar(const std::string& name, DType dtype, const SourceLoc& loc);
  // The runtime variable a name becomes (assigned more than once, or in a runtime loop or
  // branch): the kernel's, or, made inside a T.Parallel body, that body's own (each element's;
  // the name goes out of scope with the body).
  ir::Buffer new_runtime_variable(const std::string& name, DType dtype, const SourceLoc& loc);
  // Runs body, returns what it emitted; a T.Parallel loop's body is a parallel_body.
  ir::Stmt collect(const std::function<void()>& body, bool parallel_body = false);

  // Counts one level of the elaborator's recursion (an expression or statement
  // evaluated inside another, across calls) for as long as it lives.
  class EvalDepth {
   public:
    EvalDepth(Elaborator& el, const SourceLoc& loc);
    ~EvalDepth() { --el_.eval_depth_; }
    EvalDepth(const EvalDepth&) = delete;
    EvalDepth& operator=(const EvalDepth&) = delete;

   private:
    Elaborator& el_;
  };

  // ---- state
  struct Frame {
    std::map<std::string, CtValue> names;
    std::shared_ptr<std::map<std::string, CtValue>> closure;
    std::set<std::string> multi_assigned;  // names with more than one assignment site
    // Names bound, before a runtime loop or branch that assigns them, to values
    // that cannot become runtime variables (tuples, strings, buffers, ...): the
    // runtime control depth inside that loop or branch.
    std::map<std::string, int> fixed_in_runtime_control;
    std::set<std::string> loop_vars;
    // Names whose block is over: let-bound or loop variables (where they were
    // bound), and a T.Kernel block's buffers and block indices (where it is).
    struct OutOfScope {
      SourceLoc loc;
      bool kernel_local = false;
    };
    std::map<std::string, OutOfScope> out_of_scope;
    std::optional<CtValue> return_value;
    bool returned = false;
    bool is_macro = false;
    int control_depth_at_entry = 0;
    std::shared_ptr<const ast::Module> module;  // owns the AST of nested defs
    // The loops around the statement being elaborated, innermost last, for break and continue.
    struct Loop {
      bool compile_time = false;  // unrolled while compiling (a tuple, a range outside kernels)
      bool jumps_allowed = true;  // not T.Parallel, T.Pipelined, T.vectorized
      std::string kind_name;
      int control_depth = 0;  // runtime_control_depth_ in its body
      // A compile-time loop's break or continue, taken: the rest of the iteration is skipped.
      std::optional<ast::StmtKind> taken;
      // A runtime loop's: set where a break (continue) ran; the break and continue statements in it.
      ir::Buffer broke, skipped;
      int jumps = 0;
    };
    std::vector<Loop> loops;
  };
  struct Block {
    std::vector<ir::Stmt> stmts;
    // let-bound names whose LetStmt wraps stmts[position:] when the block ends
    struct PendingLet {
      size_t position;
      ir::Expr var, value;
      std::string name;
      size_t frame_index;
      SourceLoc loc;
    };
    std::vector<PendingLet> lets;
    bool parallel_body = false;
    // runtime variables of a T.Parallel body, allocated around its stmts when the block ends
    struct ElementVariable {
      ir::Buffer buffer;
      std::string name;
      size_t frame_index;
    };
    std::vector<ElementVariable> element_variables;
  };

  std::vector<Frame> frames_;
  std::vector<Block*> blocks_;
  int runtime_control_depth_ = 0;   // inside a runtime loop or branch
  int64_t compile_time_iterations_ = 0;  // run so far, by all compile-time loops
  int64_t calls_ = 0;                    // of kernel-source functions, so far
  int64_t sequence_work_ = 0;            // items handled by sequence operations, so far
  int eval_depth_ = 0;                   // EvalDepth levels now alive
  ExprSizeCheck expr_sizes_;             // what to_expr hands out
  bool in_kernel_ = false;
  ir::KernelLaunch* kernel_ = nullptr;  // the T.Kernel block being elaborated
  std::vector<int64_t> thread_extents_;  // its threads=, as written: (128,) or (BLOCK_N, BLOCK_K)
  int parallel_depth_ = 0;               // T.Parallel loops around the statement being elaborated
  // The reducers of the T.attr(T.comm_reducer(...), "reduce_scope") blocks around the statement:
  // combined is the lambda's body over the values x and y.
  struct ThreadReducer {
    ir::Expr x, y, combined, identity;
  };
  std::vector<ThreadReducer> thread_reducers_;
  // The threads [first, second) of the T.ws group being elaborated (or of the `if tx < 128:`
  // that becomes one, Elaborator::exec_if).
  std::optional<std::pair<int64_t, int64_t>> thread_group_;
  // Set in such an if by what the group's threads do together (a T.tma_copy its first thread
  // issues, a barrier of theirs).
  bool thread_group_needed_ = false;
  std::set<const ir::BufferNode*> barrier_buffers_;  // T.alloc_barrier's and T.alloc_cluster_barrier's
  std::set<const ir::BufferNode*> reducer_buffers_;  // T.alloc_reducer's
  std::set<const ir::BufferNode*> cluster_barrier_buffers_;  // T.alloc_cluster_barrier's
  // Whether the kernel writes into a peer block's shared memory or arrives at its barriers.
  bool reaches_peer_blocks_ = false;
  // The shared buffers T.copy_cluster moved several elements at a time, which a user's layout
  // (T.annotate_layout) may no longer take, and where.
  std::map<const ir::BufferNode*, SourceLoc> copied_in_vectors_;
  std::set<const ir::BufferNode*> viewed_tensors_;   // tensor params a T.Tensor view reads
  // Where the block's statements (outside T.Parallel) call T.atomic_add(..., return_prev=True):
  // each thread's own call, so the block must read the thread index (checked when it ends).
  std::vector<SourceLoc> block_atomics_with_prev_;
  std::vector<ir::Buffer> kernel_allocs_;  // hoisted to the top of the kernel body
  // Buffers made with no name to take (a helper's `return T.alloc_shared(...), ...`): each takes
  // the first name it is assigned to (name_made_buffer).
  std::set<const ir::BufferNode*> unnamed_buffers_;
  // T.annotate_layout in the T.Kernel block: each buffer's layout, given to it (and every use
  // of it) when the block ends.
  std::map<const ir::BufferNode*, std::shared_ptr<const ir::SharedLayout>> annotated_layouts_;
  // T.annotate_layout on a tensor parameter: the order its elements are stored in, one for the
  // whole function (apply_tensor_layouts gives it when the function ends); every T.Kernel block
  // that uses the tensor must annotate it, since TileLang reads it row-major in one that doesn't.
  struct TensorLayout {
    std::shared_ptr<const ir::SharedLayout> layout;
    SourceLoc loc;  // the T.annotate_layout key that gave it first
  };
  std::map<const ir::BufferNode*, TensorLayout> tensor_layouts_;
  std::set<const ir::BufferNode*> kernel_tensor_layouts_;  // those the T.Kernel block annotates
  struct KernelTensors {
    SourceLoc loc;
    ir::Stmt body;
    std::set<const ir::BufferNode*> annotated;
  };
  std::vector<KernelTensors> kernels_;  // each T.Kernel block of the function, for that check
  std::set<std::string> buffer_names_;
  std::vector<FunctionValue> defined_prim_funcs_;

  // A T.const dim that a tensor declaration binds: `A: T.Tensor((M, K), dtype)` of the
  // call's argument A binds M to A's dim 0.
  struct DeclaredDim {
    std::string tensor;
    int dim = 0;
    int64_t value = 0;
  };
  // Eager kernels: tensor params and outputs as they are declared.
  struct EagerState {
    const FunctionValue* function = nullptr;   // the jit function being elaborated
    std::vector<std::string> param_names;      // the jit function's params
    std::map<std::string, CtValue> args;       // call arguments (TensorSpec / constants)
    std::vector<ir::Param> tensor_params;      // declared, in kernel param order
    std::vector<std::string> declared_order;   // names of tensor_params
    std::vector<ir::Param> outputs;            // T.empty
    std::vector<ir::ConstDim> const_dims;
    // The T.const dims the function's declarations bind (declared_dims()), once looked for.
    std::optional<std::map<std::string, DeclaredDim>> declared_dims;
  };
  std::unique_ptr<EagerState> eager_;
  // T.alloc_global's scratch tensors in the function being elaborated: params after all others.
  std::vector<ir::Param> workspaces_;
  // The T.const dims of the eager function that its tensor declarations bind, wherever they
  // are used first: found by running the body before its T.Kernel block once with every
  // T.const dim a symbolic placeholder (TileLang's first phase), its errors left to the real
  // elaboration, which reports them where they are.
  const std::map<std::string, DeclaredDim>& declared_dims();
  // Set in that first run: T.const gives placeholders (the Vars, by name) and declarations
  // record what they bind into found_dims_; the T.Kernel block is not entered.
  bool finding_dims_ = false;
  std::map<const ir::Var*, std::string> dim_placeholders_;
  std::map<std::string, DeclaredDim> found_dims_;

  // Name of the variable a call's result is assigned to (`A_s = T.alloc_shared(...)`),
  // so buffers keep their source names.
  std::string name_hint_;
  std::map<std::string, ir::Expr> symbolic_vars_;  // one Var per symbolic dim name

  Frame& frame() { return frames_.back(); }
  bool compile_time_iteration(const ast::Stmt& s, const std::string& kind_name);
  ir::Stmt with_jumps(const Frame::Loop& loop, ir::Stmt body, const SourceLoc& loc);
  bool under_runtime_control() { return runtime_control_depth_ > frame().control_depth_at_entry; }
  ir::Expr symbolic_var(const std::string& name, DType dtype);
  CtValue from_value(const Value& value);
  FunctionValue parse_function(const FunctionSource& source);
  void declare_tensor(const std::string& name, const TensorTypeValue& type, const SourceLoc& loc);
  // T.alloc_global's tensors become the last params of `func`.
  void append_workspaces(ir::PrimFunc& func);
  ir::Buffer make_tensor_buffer(const std::string& name, const TensorTypeValue& type,
                                const SourceLoc& loc);
  std::string unique_buffer_name(const std::string& base);
  // A fresh name for buffer `base` when no assignment names it (name_hint_ is empty), which an
  // assignment may give it later (unnamed_buffers_).
  std::string buffer_name_for(const std::string& fallback);
  void note_made_buffer(const ir::Buffer& b);
  // An unnamed buffer assigned to `name` takes it, for messages and the generated code.
  void name_made_buffer(const CtValue& value, const std::string& name);
};

// How many times range(start, stop, step) iterates (step != 0); nullopt past int64.
std::optional<int64_t> trip_count(int64_t start, int64_t stop, int64_t step);

// Every name assigned in `body` (targets of =, +=, with-as, and of for unless loop_targets
// is false), not descending into nested defs, with the number of assignment sites.
std::map<std::string, int> assigned_names(const ast::StmtList& body, bool loop_targets = true);

}  // namespace tilec::frontend
