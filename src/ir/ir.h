// The one IR that carries a kernel from elaboration to code generation.
//
// Expressions and statements are immutable nodes behind shared handles. Every
// node kind is named once in TILEC_FOR_EACH_EXPR / TILEC_FOR_EACH_STMT; the
// kind enums, the visitor, the mutator, the printer and structural equality are
// generated from these lists, so a new node makes the compiler point at every
// place that must handle it.
//
// Tile operations (Copy, Gemm, ...) are ordinary statement nodes that
// `lower_tile_ops` replaces with loops; the same IR then reaches codegen.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/diagnostics.h"
#include "base/dtype.h"
#include "ir/instruction.h"

namespace tilec::ir {

#define TILEC_FOR_EACH_BINARY_EXPR(X) \
  X(Add) X(Sub) X(Mul) X(Div) X(FloorDiv) X(FloorMod) X(BitXor) X(BitAnd) X(BitOr) X(ShiftLeft) \
  X(ShiftRight) X(Min) X(Max) \
  X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or)

#define TILEC_FOR_EACH_EXPR(X)                               \
  X(IntImm) X(FloatImm) X(Var)                               \
  TILEC_FOR_EACH_BINARY_EXPR(X)                              \
  X(Not) X(Select) X(Cast) X(Call) X(BufferLoad)

// The tile ops: each has its unit under src/op/ (op/op.h), which says what it reads and
// writes; the passes that need that ask the unit.
#define TILEC_FOR_EACH_TILE_OP(X) \
  X(Copy) X(Gemm) X(Gemv) X(Fill) X(Reduce) X(CumSum) X(AtomicAdd)

#define TILEC_FOR_EACH_STMT(X)                                          \
  X(BufferStore) X(For) X(While) X(IfThenElse) X(Seq) X(LetStmt)        \
  X(Allocate) X(Evaluate) X(KernelLaunch)                               \
  TILEC_FOR_EACH_TILE_OP(X)

enum class ExprKind {
#define TILEC_ENUM(n) n,
  TILEC_FOR_EACH_EXPR(TILEC_ENUM)
};
enum class StmtKind { TILEC_FOR_EACH_STMT(TILEC_ENUM) };
#undef TILEC_ENUM

const char* kind_name(ExprKind kind);
const char* kind_name(StmtKind kind);

struct ExprNode {
  ExprKind kind;
  DType dtype;
  SourceLoc loc;
  ExprNode(ExprKind k, DType t) : kind(k), dtype(t) {}
  virtual ~ExprNode() = default;
};

struct StmtNode {
  StmtKind kind;
  SourceLoc loc;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};

// A nullable shared handle to an immutable node, with checked downcasts.
template <typename Node, typename Kind>
class Handle {
 public:
  Handle() = default;
  Handle(std::shared_ptr<const Node> p) : ptr_(std::move(p)) {}  // NOLINT
  template <typename T>
  Handle(std::shared_ptr<T> p) : ptr_(std::move(p)) {}  // NOLINT

  const Node* get() const { return ptr_.get(); }
  const Node* operator->() const { return ptr_.get(); }
  const Node& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool defined() const { return ptr_ != nullptr; }
  bool same_as(const Handle& other) const { return ptr_ == other.ptr_; }
  Kind kind() const { return ptr_->kind; }

  // The node as T when its kind is T's kind, else null.
  template <typename T>
  const T* as() const {
    return ptr_ && ptr_->kind == T::static_kind ? static_cast<const T*>(ptr_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const Node> ptr_;
};

using Expr = Handle<ExprNode, ExprKind>;
using Stmt = Handle<StmtNode, StmtKind>;

// ---------------------------------------------------------------- buffers

class Fragment;      // ir/layout.h
class SharedLayout;  // ir/shared_layout.h

enum class MemoryScope { Global, Shared, Fragment, Local };
const char* scope_name(MemoryScope scope);

struct BufferNode {
  std::string name;
  DType dtype;
  std::vector<Expr> shape;
  // Strides in elements, one per dim. Global (tensor) buffers have stride Vars
  // filled from the caller's tensor; on-chip buffers are compact row-major and
  // leave this empty.
  std::vector<Expr> strides;
  MemoryScope scope;
  SourceLoc loc;  // where it was declared or allocated
  // Fragments: how the elements are spread over threads (set by the GPU pass infer_layout).
  std::shared_ptr<const Fragment> fragment;
  // Shared tiles: where each element lives (ir/shared_layout.h); null is compact row-major.
  // infer_layout sets the mma.sync swizzle or panels; T.annotate_layout a user's layout.
  std::shared_ptr<const SharedLayout> layout;
  // Shared buffers: the byte offset in the block's shared memory, set by the GPU pass
  // plan_shared_memory (buffers whose lifetimes don't overlap may share bytes); -1 until then.
  int64_t shared_offset = -1;
  // A view (T.reshape, T.Tensor(shape, dtype, x.data)): the elements of `view_of`, a buffer of
  // the same scope and dtype, read in row-major order as an array of `shape`, allocated by an
  // Allocate that makes no storage of its own. A tensor must be compact and row-major (a call
  // whose tensor isn't is refused, runtime/kernel.cc); a shared view has its buffer's place and
  // bytes; a fragment view its buffer's registers, in the Fragment that reads them in its shape
  // (Fragment::reshaped). Passes that ask what a statement touches see the viewed buffer
  // (op::Accesses).
  std::shared_ptr<const BufferNode> view_of;
};
using Buffer = std::shared_ptr<const BufferNode>;

Buffer make_buffer(std::string name, DType dtype, std::vector<Expr> shape,
                   std::vector<Expr> strides, MemoryScope scope, SourceLoc loc = {});

struct Range {
  Expr min, extent;
};

// A rectangular part of a buffer: one Range per dimension.
struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
};

// ---------------------------------------------------------------- expressions

struct IntImm : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::IntImm;
  int64_t value;
  IntImm(DType t, int64_t v) : ExprNode(static_kind, t), value(v) {}
};

struct FloatImm : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::FloatImm;
  double value;  // may be +-inf
  FloatImm(DType t, double v) : ExprNode(static_kind, t), value(v) {}
};

// A variable: loop and block indices, symbolic dims, strides, scalar params,
// let-bound values. Two Vars are the same variable only if they are the same
// node; names need not be unique (the printer and codegen make them so).
struct Var : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Var;
  std::string name;
  Var(DType t, std::string n) : ExprNode(static_kind, t), name(std::move(n)) {}
};

// All binary operators share one shape. Div is true division for floats and
// truncating division for integers (only compiler-made, after proving signs);
// FloorDiv/FloorMod are Python's // and %; BitXor, BitAnd, BitOr, ShiftLeft and ShiftRight are
// integer ^ & | << >> (shared-memory swizzles, ir/shared_layout.h; bit manipulation in kernels),
// shifts by a count in [0, bits) and >> arithmetic on signed types. Comparisons and And/Or give
// bool.
template <ExprKind K>
struct BinaryNode : ExprNode {
  static constexpr ExprKind static_kind = K;
  Expr a, b;
  BinaryNode(DType t, Expr a_, Expr b_) : ExprNode(K, t), a(std::move(a_)), b(std::move(b_)) {}
};
#define TILEC_BINARY_ALIAS(n) using n = BinaryNode<ExprKind::n>;
TILEC_FOR_EACH_BINARY_EXPR(TILEC_BINARY_ALIAS)
#undef TILEC_BINARY_ALIAS

// A binary node's operands (a, b); both null for any other node.
inline std::pair<const Expr*, const Expr*> binary_operands(const ExprNode* e) {
  switch (e->kind) {
#define TILEC_OPERANDS(n) \
  case ExprKind::n: return {&static_cast<const n*>(e)->a, &static_cast<const n*>(e)->b};
    TILEC_FOR_EACH_BINARY_EXPR(TILEC_OPERANDS)
#undef TILEC_OPERANDS
    default: return {nullptr, nullptr};
  }
}

struct Not : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Not;
  Expr a;
  explicit Not(Expr a_) : ExprNode(static_kind, DType::Bool), a(std::move(a_)) {}
};

// Evaluates only the chosen value (lowering guards out-of-bounds loads with
// it), so code generators must emit a lazy conditional.
struct Select : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Select;
  Expr condition, true_value, false_value;
  Select(DType t, Expr c, Expr tv, Expr fv)
      : ExprNode(static_kind, t), condition(std::move(c)), true_value(std::move(tv)),
        false_value(std::move(fv)) {}
};

struct Cast : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Cast;
  Expr value;
  Cast(DType t, Expr v) : ExprNode(static_kind, t), value(std::move(v)) {}
};

// A pure math intrinsic ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs",
// "fabs", "pow", ...): the list with arities is in ir/intrinsics.h.
struct Call : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Call;
  std::string name;
  std::vector<Expr> args;
  Call(DType t, std::string n, std::vector<Expr> a)
      : ExprNode(static_kind, t), name(std::move(n)), args(std::move(a)) {}
};

struct BufferLoad : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::BufferLoad;
  Buffer buffer;
  std::vector<Expr> indices;
  BufferLoad(Buffer b, std::vector<Expr> i)
      : ExprNode(static_kind, b->dtype), buffer(std::move(b)), indices(std::move(i)) {}
};

// ---------------------------------------------------------------- statements

struct BufferStore : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::BufferStore;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;  // of the buffer's dtype
  BufferStore() : StmtNode(static_kind) {}
};

enum class ForKind { Serial, Parallel, Unrolled, Vectorized, Pipelined };
const char* for_kind_name(ForKind kind);

struct For : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::For;
  Expr var;               // a Var
  Expr min, extent;       // iterates var = min, min+1, ..., min+extent-1
  ForKind for_kind = ForKind::Serial;
  int num_stages = 0;     // Pipelined only
  // Parallel only: a nest that fills shared memory from a tensor, staged by pipeline_loops,
  // which waits for its cp.async copies itself (lowering issues them without waiting).
  bool async_fill = false;
  Stmt body;
  For() : StmtNode(static_kind) {}
};

struct While : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::While;
  Expr condition;
  Stmt body;
  While() : StmtNode(static_kind) {}
};

struct IfThenElse : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::IfThenElse;
  Expr condition;
  Stmt then_case;
  Stmt else_case;  // may be null
  IfThenElse() : StmtNode(static_kind) {}
};

struct Seq : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Seq;
  std::vector<Stmt> stmts;
  Seq() : StmtNode(static_kind) {}
};

// `var` is `value` within `body` (immutable).
struct LetStmt : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::LetStmt;
  Expr var;  // a Var
  Expr value;
  Stmt body;
  LetStmt() : StmtNode(static_kind) {}
};

// An on-chip buffer (shared, fragment, local) that lives for `body`.
struct Allocate : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Allocate;
  Buffer buffer;
  Stmt body;
  Allocate() : StmtNode(static_kind) {}
};

struct Evaluate : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Evaluate;
  Expr value;
  Evaluate() : StmtNode(static_kind) {}
};

// A TMA tensor map the kernel receives (built on the host for each call from the tensor):
// the box one copy moves, innermost dim first, and the swizzle of the panel tile it fills
// (128, 64 or 32 bytes, the panels' width; 0 for 16-byte panels, which have none).
struct TensorMapSpec {
  Buffer tensor;  // a global (param) buffer
  std::vector<int64_t> box;
  int64_t swizzle_bytes = 0;
  bool operator==(const TensorMapSpec& o) const {
    return tensor == o.tensor && box == o.box && swizzle_bytes == o.swizzle_bytes;
  }
};

// `with T.Kernel(grid..., threads=n) as (bx, by, bz)`: body runs once per block;
// block_vars[i] ranges over [0, grid[i]).
struct KernelLaunch : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::KernelLaunch;
  std::vector<Expr> grid;        // 1 to 3 extents
  std::vector<Expr> block_vars;  // Vars, one per grid dim
  int threads = 128;
  // T.use_swizzle (2-D and 3-D grids): blocks take their (x, y) in panels of this many grid rows
  // (columns with swizzle_columns), for L2 reuse; 0 keeps the launch order.
  int64_t swizzle_panel = 0;
  bool swizzle_columns = false;
  // Warp specialization (passes/cuda/warp_specialize.h): this many threads run past
  // `threads` (a producer warpgroup); layouts still span the first `threads`.
  int producer_threads = 0;
  // T.no_set_max_nreg: warp specialization leaves every thread the registers it launched with
  // (no setmaxnreg).
  bool keep_registers = false;
  // T.annotate_min_blocks_per_sm: ptxas fits this many blocks on an SM by their registers
  // (__launch_bounds__'s second argument); 0 leaves it free.
  int min_blocks_per_sm = 0;
  // Persistent (passes/cuda/warp_specialize.h): the launch is one wave of blocks on a 1-D grid
  // and the body loops over the tiles of `grid` itself, binding the block vars for each; they
  // are not bound to the launch's block index.
  bool persistent = false;
  // T.import_source: CUDA source of the program's own (device functions T.call_extern calls),
  // printed after the includes, each text once.
  std::vector<std::string> extern_sources;
  // T.sync_grid: a barrier of the whole grid, so the launch is cooperative (every block resident
  // at once; a grid larger than the GPU holds is refused at launch, not left to hang).
  bool grid_sync = false;
  // T.Kernel(..., cluster_dims=...): the blocks run in thread block clusters of these extents
  // (x, y, z; CUDA sm_90 on), each cluster's blocks at once on one GPC; all 1 for none.
  std::array<int64_t, 3> cluster_dims{1, 1, 1};
  bool clustered() const { return cluster_dims[0] * cluster_dims[1] * cluster_dims[2] > 1; }
  // TMA copies' tensor maps, in the order the kernel's argument holds them (set by
  // lower_to_threads).
  std::vector<TensorMapSpec> tensor_maps;
  // threadIdx.x in [0, threads), once lowering to threads has made the body
  // per-thread code; null before (the body is per-block tile code).
  Expr thread_var;
  // The thread index tile code reads (T.get_thread_binding), a Var in [0, threads); null when
  // no statement reads it. Lowering to threads makes it the thread_var; the CPU runs the
  // statements that read it once for each thread (passes/thread_loops.h).
  Expr thread_index;
  Stmt body;
  KernelLaunch() : StmtNode(static_kind) {}
};

// dst = src over the regions, elementwise (extents agree after dropping
// extent-1 dims). Elements of src outside its buffer read as 0; elements of
// dst outside its buffer are not written.
//
// `instruction` (ir/instruction.h) is what a GPU target moves it with. A cp.async copy (global
// to shared, made by pipeline_loops) completes at a later cp_async_wait; lowering adds no
// wait. A TMA load (made by warp_specialize) is issued by the one thread that reaches it and
// completes on `barrier`, the address of a shared mbarrier.
// T.copy's eviction_policy: the priority in L2 of the lines a load from global memory reads
// (CUDA's createpolicy, for TMA and cp.async loads), a hint targets without one ignore. The
// values are the Policy template arguments of the CUDA device calls (device/cuda/memory.h).
enum class EvictionPolicy { Normal = 0, First = 1, Last = 2 };

struct Copy : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Copy;
  BufferRegion src, dst;
  CopyInstruction instruction;
  Expr barrier;
  // What the user let the copy run on: T.copy(disable_tma=True) or prefer_instruction="cp_async"
  // rules out TMA, prefer_instruction="sync" cp.async too (the threads' own loads and stores).
  bool allow_tma = true;
  bool allow_async = true;
  // T.tma_copy(cluster_mask=m): one TMA load lands in the tile of each block of the cluster whose
  // rank's bit is set in m, at the same offset, and counts its bytes on each one's copy of
  // `barrier` (0: this block's tile alone).
  int64_t multicast = 0;
  EvictionPolicy eviction = EvictionPolicy::Normal;
  Copy() : StmtNode(static_kind) {}
};

// The block ranks a cluster_mask names, lowest first.
std::vector<int> ranks_in_mask(int64_t mask);

// How a GPU target splits a gemm's M x N tile over the block's warps:
// Square picks the squarest per-warp tiles; FullRow gives each warp whole rows
// (all warps along M), FullCol whole columns (all warps along N).
enum class WarpPolicy { Square, FullRow, FullCol };
const char* warp_policy_name(WarpPolicy policy);

// c (+)= op(a) @ op(b), where op transposes when asked. c is [M, N],
// op(a) [M, K], op(b) [K, N]. clear_accum zeroes c first. `instruction` (ir/instruction.h)
// is what a GPU target runs it on.
struct Gemm : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Gemm;
  BufferRegion a, b, c;
  bool transpose_a = false, transpose_b = false, clear_accum = false;
  WarpPolicy policy = WarpPolicy::Square;
  // TileLang's wg_wait: after issuing, the thread waits until at most this many of its wgmma
  // groups are in flight; -1 not at all (T.wait_wgmma waits later). Only wgmma is asynchronous:
  // wgmma_waits.h makes every other gemm, and every gemm off sm_90a, wait for itself.
  int64_t wg_wait = 0;
  GemmInstruction instruction;
  Gemm() : StmtNode(static_kind) {}
};

// y = a @ x (a [N, K], x [K], y [N]); accumulate adds to y instead.
struct Gemv : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Gemv;
  BufferRegion a, x, y;
  bool accumulate = false;
  Gemv() : StmtNode(static_kind) {}
};

struct Fill : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Fill;
  BufferRegion dst;
  Expr value;  // of dst's dtype
  Fill() : StmtNode(static_kind) {}
};

enum class ReduceKind { Sum, Max, Min, AbsSum, AbsMax };
const char* reduce_kind_name(ReduceKind kind);

// dst = reduce(src, dim): dst has src's shape without `dim`. Without `clear`
// the reduction is combined with dst's previous contents.
struct Reduce : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Reduce;
  ReduceKind reduce_kind = ReduceKind::Sum;
  BufferRegion src, dst;
  int dim = 0;
  bool clear = true;
  Reduce() : StmtNode(static_kind) {}
};

// The inclusive prefix sum of src along `dim` (a dim of src's region) into dst, which has
// src's tile: dst[.., i, ..] = src[.., 0, ..] + ... + src[.., i, ..], or with `reverse` the sum
// from i to the end. dst may be src itself (T.cumsum without dst).
struct CumSum : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::CumSum;
  BufferRegion src, dst;
  int dim = 0;
  bool reverse = false;
  CumSum() : StmtNode(static_kind) {}
};

// dst += src elementwise and atomically (src region, or a scalar `value` when
// src.buffer is null, for one element).
struct AtomicAdd : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::AtomicAdd;
  BufferRegion dst;
  BufferRegion src;  // src.buffer null => scalar form
  Expr value;        // scalar form only
  // Scalar form, T.atomic_add(..., return_prev=True): the element (of a 1-element local) that
  // takes the value dst held before the add; null buffer otherwise.
  BufferRegion prev;
  // Tile form on a GPU: select_instructions' choice (a TMA reduce-add, or loops).
  CopyInstruction instruction;
  AtomicAdd() : StmtNode(static_kind) {}
};

// ---------------------------------------------------------------- functions

// One kernel parameter: a tensor (global Buffer) or a scalar (Var).
struct Param {
  std::string name;
  Buffer buffer;  // tensor parameter
  Expr var;       // scalar parameter (a Var); null for tensors
  SourceLoc loc;
  bool is_tensor() const { return buffer != nullptr; }
};

// A shape dimension fixed at compile time from a call's argument (T.const in
// eager kernels): the kernel only fits tensors whose param[dim] == value.
struct ConstDim {
  int param = 0;
  int dim = 0;
  int64_t value = 0;
};

struct PrimFunc {
  std::string name;
  std::vector<Param> params;
  std::vector<int> out_idx;  // params that are outputs (allocated by the caller's face)
  // Params that are T.alloc_global scratch tensors, the last ones: the caller's face allocates
  // them for each call, and nothing reads them afterwards.
  std::vector<int> workspaces;
  std::vector<ConstDim> const_dims;
  Stmt body;
  SourceLoc loc;
};

// ---------------------------------------------------------------- constructors
//
// Binary constructors fold nothing and check nothing beyond dtype agreement;
// ir/simplify.h folds. Arithmetic between different dtypes must be cast first
// (elaboration inserts the casts).

Expr make_int(int64_t value, DType dtype = DType::Int32);
Expr make_float(double value, DType dtype = DType::Float32);
Expr make_bool(bool value);
Expr make_var(const std::string& name, DType dtype = DType::Int32);
#define TILEC_BINARY_MAKE(n) Expr make_##n(Expr a, Expr b);
TILEC_FOR_EACH_BINARY_EXPR(TILEC_BINARY_MAKE)
#undef TILEC_BINARY_MAKE
Expr make_binary(ExprKind kind, Expr a, Expr b);
Expr make_not(Expr a);
Expr make_select(Expr condition, Expr true_value, Expr false_value);
Expr make_cast(DType dtype, Expr value);  // returns value itself when dtypes agree
Expr make_call(DType dtype, const std::string& name, std::vector<Expr> args);
Expr make_load(Buffer buffer, std::vector<Expr> indices);

Stmt make_store(Buffer buffer, std::vector<Expr> indices, Expr value);
Stmt make_for(Expr var, Expr min, Expr extent, ForKind kind, Stmt body, int num_stages = 0);
Stmt make_while(Expr condition, Stmt body);
Stmt make_if(Expr condition, Stmt then_case, Stmt else_case = Stmt());
// Flattens nested Seqs and drops null statements; one statement is returned as is.
Stmt make_seq(std::vector<Stmt> stmts);
Stmt make_let(Expr var, Expr value, Stmt body);
Stmt make_allocate(Buffer buffer, Stmt body);
Stmt make_evaluate(Expr value);

// Sets loc on a node just made and not yet shared with anything (nodes are
// immutable once they are part of a tree).
Expr with_loc(Expr e, const SourceLoc& loc);
Stmt with_loc(Stmt s, const SourceLoc& loc);

// Helpers used everywhere.
bool is_const_int(const Expr& e, int64_t* value = nullptr);
bool is_one(const Expr& e);
bool is_zero(const Expr& e);

}  // namespace tilec::ir
