// The T namespace and the Python builtins kernels may call: their arguments parsed and
// checked, and the tile-op IR each call makes. What a tile op's operands must be (shapes,
// dims, dtypes) its unit checks (src/op/).
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "frontend/builtin_table.h"
#include "frontend/int_ops.h"
#include "frontend/lexer.h"
#include "frontend/limits.h"
#include "ir/equal.h"
#include "ir/intrinsics.h"
#include "ir/simplify.h"
#include "ir/printer.h"
#include "ir/shared_layout.h"
#include "op/atomic_add.h"
#include "op/check.h"
#include "op/copy.h"
#include "op/cumsum.h"
#include "op/gemm.h"
#include "op/gemv.h"
#include "op/reduce.h"

namespace tilec::frontend {

using K = CtValue::Kind;
using Handler = BuiltinHandler;

// ---------------------------------------------------------------- arguments

static CtValue parse_default(const std::string& text) {
  if (text == "None") return CtValue::none();
  if (text == "True") return CtValue::of_bool(true);
  if (text == "False") return CtValue::of_bool(false);
  if (!text.empty() && text[0] == '"') return CtValue::of_string(text.substr(1, text.size() - 2));
  if (text.find('.') != std::string::npos) return CtValue::of_float(std::stod(text));
  return CtValue::of_int(std::stoll(text));
}

CallArgs Elaborator::bind(const EvaluatedCall& call, const std::vector<std::string>& params) {
  CallArgs args;
  std::vector<std::string> names;
  size_t required = 0;
  for (const auto& p : params) {
    auto eq = p.find('=');
    names.push_back(p.substr(0, eq));
    if (eq == std::string::npos) ++required;
  }
  const std::string& fn = call.callee_name;
  if (call.positional.size() > names.size())
    error_at(call.positional_locs[names.size()],
             fn + "() takes " + (required == names.size() ? "" : "at most ") +
                 std::to_string(names.size()) + " argument" + (names.size() == 1 ? "" : "s") +
                 " but " + std::to_string(call.positional.size()) + " were given");
  for (size_t i = 0; i < call.positional.size(); ++i) {
    args.values[names[i]] = call.positional[i];
    args.locs[names[i]] = call.positional_locs[i];
  }
  for (size_t i = 0; i < call.keywords.size(); ++i) {
    const auto& [name, value] = call.keywords[i];
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      error_at(call.keyword_locs[i], fn + "() got an unexpected keyword argument '" + name +
                                         "' (its arguments: " + known + ")");
    }
    if (args.values.count(name))
      error_at(call.keyword_locs[i], fn + "() got multiple values for argument '" + name + "'");
    args.values[name] = value;
    args.locs[name] = call.keyword_locs[i];
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (args.values.count(names[i])) continue;
    auto eq = params[i].find('=');
    if (eq == std::string::npos)
      error_at(call.node->loc, fn + "() missing required argument '" + names[i] + "'");
    args.values[names[i]] = parse_default(params[i].substr(eq + 1));
    args.locs[names[i]] = call.node->loc;
  }
  return args;
}

// ---------------------------------------------------------------- operands

TileOperand Elaborator::operand(const CtValue& v, const SourceLoc& loc, const std::string& what) {
  TileOperand op;
  op.loc = loc;
  if (v.kind == K::Buffer) {
    op.buffer = v.buffer;
    for (const auto& dim : v.buffer->shape)
      op.ranges.push_back({ir::make_int(0, dim->dtype), dim});
    return op;
  }
  if (v.kind == K::Region) {
    op.buffer = v.region->buffer;
    op.ranges = v.region->ranges;
    op.point_only = v.region->all_points();
    if (!op.point_only)
      for (auto& r : op.ranges)
        if (!r.extent) r.extent = ir::make_int(1, r.min->dtype);
    return op;
  }
  error_at(loc, what + " must be a buffer or a region of one (A, A[i, 0:32], A[by * 32, k * 32]), "
                "not " + describe(v));
}

// A bound of a tile operand's region in int32, as regions are indexed. A constant past int32
// is an error at the operand: the cast would wrap it (and leave an extent of 1 unrecognized).
static ir::Expr region_bound(const ir::Expr& e, const TileOperand& op) {
  int64_t v;
  if (!ir::is_const_int(e, &v)) return ir::make_cast(DType::Int32, e);
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    error_at(op.loc, "index " + std::to_string(v) + " into '" + op.buffer->name +
                         "' does not fit in int32, which tile operands are indexed in");
  return ir::make_int(v, DType::Int32);
}

ir::BufferRegion Elaborator::region_of(const TileOperand& op) const {
  ir::BufferRegion r{op.buffer, {}};
  for (const auto& range : op.ranges)
    r.region.push_back({region_bound(range.min, op), range.extent ? region_bound(range.extent, op) : ir::make_int(1)});
  return r;
}

static std::string operand_text(const TileOperand& op) {
  return "'" + op.buffer->name + "'";
}

// A point-indexed operand (A[by * 32, k * 32]) takes the other side's shape,
// right-aligned, with leading dims of extent 1.
static void take_shape_from(TileOperand& point, const TileOperand& other, const std::string& fn) {
  std::vector<ir::Expr> ext;
  for (const auto& r : other.ranges) ext.push_back(r.extent);
  size_t n = point.ranges.size(), m = ext.size();
  for (size_t i = 0; i < n; ++i)
    point.ranges[n - 1 - i].extent = i < m ? ext[m - 1 - i] : ir::make_int(1);
  for (size_t i = 0; i + n < m; ++i)
    if (!ir::is_one(ext[i]))
      error_at(point.loc, fn + ": " + operand_text(point) + " has " + std::to_string(n) +
                              " dims but the other operand's tile has " + std::to_string(m) +
                              " dims that are not 1; index it with a slice for each dim instead");
  point.point_only = false;
}

// ---------------------------------------------------------------- tile ops

std::shared_ptr<ir::Copy> copy_between(Elaborator& el, const CallArgs& a, const std::string& fn,
                                       const SourceLoc& loc) {
  TileOperand src = el.operand(a["src"], a.loc("src"), fn + "() argument 'src'");
  TileOperand dst = el.operand(a["dst"], a.loc("dst"), fn + "() argument 'dst'");
  if (src.point_only && dst.point_only)
    error_at(loc, fn + ": both operands are single elements; give one of them a "
                       "shape (a buffer or a slice) or use an assignment");
  if (src.point_only) take_shape_from(src, dst, fn);
  if (dst.point_only) take_shape_from(dst, src, fn);
  auto node = std::make_shared<ir::Copy>();
  node->src = el.region_of(src);
  node->dst = el.region_of(dst);
  node->loc = loc;
  return node;
}

ir::EvictionPolicy eviction_policy(const CallArgs& a, const std::string& fn) {
  const CtValue& eviction = a["eviction_policy"];
  if (eviction.kind == K::None || (eviction.kind == K::String && eviction.text == "evict_normal"))
    return ir::EvictionPolicy::Normal;
  if (eviction.kind == K::String && eviction.text == "evict_first") return ir::EvictionPolicy::First;
  if (eviction.kind == K::String && eviction.text == "evict_last") return ir::EvictionPolicy::Last;
  error_at(a.loc("eviction_policy"),
           fn + "'s eviction_policy is \"evict_first\", \"evict_normal\" or \"evict_last\", not " + describe(eviction));
}

// T.copy(src, dst, coalesced_width=None, disable_tma=False, eviction_policy=None,
// prefer_instruction=None): coalesced_width is TileLang's hint, accepted (tilec picks access
// widths itself); eviction_policy is the L2 priority of the lines a load from global memory
// reads, for its TMA or cp.async copies (ir::EvictionPolicy).
static CtValue copy_op(Elaborator& el, const EvaluatedCall& call) {
  CallArgs a = el.bind(call, {"src", "dst", "coalesced_width=None", "disable_tma=False", "eviction_policy=None",
                              "prefer_instruction=None"});
  const CtValue& width = a["coalesced_width"];
  if (width.kind != K::None && el.to_int(width, a.loc("coalesced_width"), "coalesced_width") < 1)
    error_at(a.loc("coalesced_width"), "T.copy's coalesced_width is a positive number of elements");
  const ir::EvictionPolicy eviction = eviction_policy(a, "T.copy");
  const CtValue& prefer = a["prefer_instruction"];
  if (!(prefer.kind == K::None ||
        (prefer.kind == K::String && (prefer.text == "tma" || prefer.text == "cp_async" || prefer.text == "sync"))))
    error_at(a.loc("prefer_instruction"), "T.copy's prefer_instruction is \"tma\", \"cp_async\" or \"sync\", not " +
                                              describe(prefer));
  auto node = copy_between(el, a, "T.copy", call.node->loc);
  node->eviction = eviction;
  const bool sync = prefer.kind == K::String && prefer.text == "sync";
  node->allow_tma = !(el.truthy(a["disable_tma"], a.loc("disable_tma")) || sync ||
                      (prefer.kind == K::String && prefer.text == "cp_async"));
  node->allow_async = !sync;
  op::check(*node, a.loc("src"));
  el.emit(ir::Stmt(node));
  return CtValue::none();
}

// T.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad): tile (nhw_step, c_step)
// of the im2col matrix of a 2-D convolution over `img`, an NHWC tensor, into the 2-D tile
// `col` (block_m x block_k): element (i, j) is image pixel m = nhw_step * block_m + i (of the
// N x OH x OW outputs) at filter tap k = c_step * block_k + j (of KH x KW x C), 0 in the padding.
// A T.Parallel loop over the tile: each element one load.
static CtValue im2col_op(Elaborator& el, const EvaluatedCall& call) {
  CallArgs a = el.bind(call, {"img", "col", "nhw_step", "c_step", "kernel", "stride", "dilation", "pad",
                              "eviction_policy=None", "annotations=None"});
  if (!el.in_kernel_) error_at(call.node->loc, "T.im2col goes inside a T.Kernel block");
  TileOperand img = el.operand(a["img"], a.loc("img"), "T.im2col() argument 'img'");
  TileOperand col = el.operand(a["col"], a.loc("col"), "T.im2col() argument 'col'");
  if (img.buffer->shape.size() != 4 || img.buffer->scope != ir::MemoryScope::Global)
    error_at(a.loc("img"), "T.im2col: img is an NHWC tensor (4 dims), not '" + img.buffer->name + "'");
  if (col.point_only || col.ranges.size() < 2)
    error_at(a.loc("col"), "T.im2col: col is a 2-D tile (a buffer or slice), not '" + col.buffer->name + "'");
  if (col.buffer->dtype != img.buffer->dtype)
    error_at(a.loc("col"), "T.im2col: col and img have different dtypes");
  int64_t geometry[4];
  const char* names[] = {"kernel", "stride", "dilation", "pad"};
  for (int g = 0; g < 4; ++g) {
    geometry[g] = el.to_int(a[names[g]], a.loc(names[g]), std::string("T.im2col ") + names[g]);
    if (geometry[g] < (g == 3 ? 0 : 1))
      error_at(a.loc(names[g]), std::string("T.im2col: ") + names[g] + " is " + (g == 3 ? "0 or more" : "1 or more") +
                                    ", not " + std::to_string(geometry[g]));
  }
  const int64_t kernel = geometry[0], stride = geometry[1], dilation = geometry[2], pad = geometry[3];
  ir::BufferRegion tile = el.region_of(col);
  const size_t rank = tile.region.size();
  for (size_t d = 0; d + 2 < rank; ++d)
    if (!ir::is_one(ir::simplify(tile.region[d].extent)))
      error_at(a.loc("col"), "T.im2col: col is a 2-D tile; its leading dims have extent 1");
  auto i64 = [](const ir::Expr& e) { return ir::make_cast(DType::Int64, e); };
  auto c64 = [](int64_t v) { return ir::make_int(v, DType::Int64); };
  const ir::Expr block_m = tile.region[rank - 2].extent, block_k = tile.region[rank - 1].extent;
  ir::Expr i = ir::make_var("i", DType::Int32), j = ir::make_var("j", DType::Int32);
  ir::Expr m = ir::make_Add(ir::make_Mul(i64(el.to_expr(a["nhw_step"], a.loc("nhw_step"), "T.im2col nhw_step")), i64(block_m)), i64(i));
  ir::Expr k = ir::make_Add(ir::make_Mul(i64(el.to_expr(a["c_step"], a.loc("c_step"), "T.im2col c_step")), i64(block_k)), i64(j));
  const ir::Expr h_dim = i64(img.buffer->shape[1]), w_dim = i64(img.buffer->shape[2]), c_dim = i64(img.buffer->shape[3]);
  auto out_extent = [&](const ir::Expr& dim) {
    return ir::make_Add(ir::make_FloorDiv(ir::make_Sub(ir::make_Add(dim, c64(2 * pad)), c64((kernel - 1) * dilation + 1)),
                                          c64(stride)),
                        c64(1));
  };
  const ir::Expr out_w = out_extent(w_dim), out_hw = ir::make_Mul(out_extent(h_dim), out_w);
  ir::Expr h = ir::make_Sub(ir::make_Add(ir::make_Mul(ir::make_FloorDiv(ir::make_FloorMod(m, out_hw), out_w), c64(stride)),
                                         ir::make_Mul(ir::make_FloorDiv(k, ir::make_Mul(c64(kernel), c_dim)), c64(dilation))),
                            c64(pad));
  ir::Expr w = ir::make_Sub(ir::make_Add(ir::make_Mul(ir::make_FloorMod(m, out_w), c64(stride)),
                                         ir::make_Mul(ir::make_FloorMod(ir::make_FloorDiv(k, c_dim), c64(kernel)), c64(dilation))),
                            c64(pad));
  ir::Expr inside = ir::make_And(ir::make_And(ir::make_GE(h, c64(0)), ir::make_GE(w, c64(0))),
                                 ir::make_And(ir::make_LT(h, h_dim), ir::make_LT(w, w_dim)));
  ir::Expr pixel = ir::make_load(img.buffer, {ir::make_FloorDiv(m, out_hw), h, w, ir::make_FloorMod(k, c_dim)});
  DType t = col.buffer->dtype;
  ir::Expr zero = t.is_float() ? ir::make_float(0.0, t) : ir::make_int(0, t);
  std::vector<ir::Expr> at;
  for (size_t d = 0; d + 2 < rank; ++d) at.push_back(tile.region[d].min);
  at.push_back(ir::make_Add(tile.region[rank - 2].min, ir::make_cast(tile.region[rank - 2].min->dtype, i)));
  at.push_back(ir::make_Add(tile.region[rank - 1].min, ir::make_cast(tile.region[rank - 1].min->dtype, j)));
  const SourceLoc& loc = call.node->loc;
  ir::Stmt store = ir::with_loc(ir::make_store(col.buffer, at, ir::make_select(inside, pixel, zero)), loc);
  ir::Stmt inner = ir::with_loc(ir::make_for(j, ir::make_int(0), ir::simplify(ir::make_cast(DType::Int32, block_k)), ir::ForKind::Parallel, store), loc);
  el.emit(ir::with_loc(ir::make_for(i, ir::make_int(0), ir::simplify(ir::make_cast(DType::Int32, block_m)), ir::ForKind::Parallel, inner), loc));
  return CtValue::none();
}

// An operand of gemm/gemv: a tile, not a single element (op/gemm.h, op/gemv.h check its dims).
struct MatrixOperand {
  ir::BufferRegion region;
  SourceLoc loc;
};

static MatrixOperand matrix_operand(Elaborator& el, const CallArgs& a, const std::string& name,
                                    const std::string& fn) {
  TileOperand op = el.operand(a[name], a.loc(name), fn + "() argument '" + name + "'");
  if (op.point_only)
    error_at(op.loc, fn + ": operands are tiles (buffers or slices), not single elements");
  return MatrixOperand{el.region_of(op), op.loc};
}

// T.gemm's policy=: T.GemmWarpPolicy.Square / FullRow / FullCol, or the name as a string.
static ir::WarpPolicy warp_policy(const CtValue& v, const SourceLoc& loc) {
  if (v.kind == K::None) return ir::WarpPolicy::Square;
  for (auto p : {ir::WarpPolicy::Square, ir::WarpPolicy::FullRow, ir::WarpPolicy::FullCol})
    if (v.kind == K::String && v.text == ir::warp_policy_name(p)) return p;
  error_at(loc, "T.gemm: policy is T.GemmWarpPolicy.Square, .FullRow or .FullCol, not " + describe(v));
}

// T.gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum, k_pack, wg_wait, mbar,
// annotations), TileLang's signature. k_pack (how MFMA loads pack K) changes how, not what, it
// computes: tilec makes that choice itself. wg_wait leaves wgmma groups in flight (-1: all of
// them, until a T.wait_wgmma); T.wgmma_gemm, TileLang's explicit Hopper form, is T.gemm with
// wg_wait=-1.
static CtValue gemm_op(Elaborator& el, const EvaluatedCall& call) {
  const bool wgmma = call.callee_name == "T.wgmma_gemm";
  CallArgs a = wgmma ? el.bind(call, {"A", "B", "C", "transpose_A=False", "transpose_B=False", "policy=None",
                                      "clear_accum=False", "annotations=None"})
                     : el.bind(call, {"A", "B", "C", "transpose_A=False", "transpose_B=False", "policy=None",
                                      "clear_accum=False", "k_pack=1", "wg_wait=0", "mbar=None", "annotations=None"});
  if (a["annotations"].kind != K::None)
    error_at(a.loc("annotations"), call.callee_name + "(annotations=...) is not supported");
  int64_t wg_wait = -1;
  if (!wgmma) {
    const int64_t k_pack = el.to_int(a["k_pack"], a.loc("k_pack"), "T.gemm k_pack");
    if (k_pack != 1 && k_pack != 2) error_at(a.loc("k_pack"), "T.gemm: k_pack is 1 or 2, not " + std::to_string(k_pack));
    wg_wait = el.to_int(a["wg_wait"], a.loc("wg_wait"), "T.gemm wg_wait");
    if (wg_wait < -1)
      error_at(a.loc("wg_wait"), "T.gemm: wg_wait is -1 (no wait) or a count of wgmma groups left in flight");
    if (a["mbar"].kind != K::None)
      error_at(a.loc("mbar"), "T.gemm(mbar=...) is Blackwell's tcgen05 form, which tilec does not support");
  }
  auto node = std::make_shared<ir::Gemm>();
  node->loc = call.node->loc;
  MatrixOperand A = matrix_operand(el, a, "A", "T.gemm");
  MatrixOperand B = matrix_operand(el, a, "B", "T.gemm");
  MatrixOperand C = matrix_operand(el, a, "C", "T.gemm");
  node->a = A.region;
  node->b = B.region;
  node->c = C.region;
  node->transpose_a = el.truthy(a["transpose_A"], a.loc("transpose_A"));
  node->transpose_b = el.truthy(a["transpose_B"], a.loc("transpose_B"));
  const CtValue& clear = a["clear_accum"];
  if (clear.kind == K::Expr) {
    // Known at run time only (clear_accum=(k == 0) in a loop): the accumulator is cleared
    // first where it holds.
    auto fill = std::make_shared<ir::Fill>();
    fill->dst = node->c;
    fill->value = ir::make_float(0.0, node->c.buffer->dtype);
    fill->loc = node->loc;
    el.emit(ir::with_loc(ir::make_if(el.to_bool_expr(clear, a.loc("clear_accum")), ir::Stmt(fill)), node->loc));
  } else {
    node->clear_accum = el.truthy(clear, a.loc("clear_accum"));
  }
  node->policy = warp_policy(a["policy"], a.loc("policy"));
  node->wg_wait = wg_wait;
  op::check(*node, A.loc, B.loc, C.loc);
  el.emit(ir::Stmt(node));
  return CtValue::none();
}

static CtValue gemv_op(Elaborator& el, const EvaluatedCall& call) {
  CallArgs a = el.bind(call, {"A", "x", "y", "accumulate=False"});
  auto node = std::make_shared<ir::Gemv>();
  node->loc = call.node->loc;
  MatrixOperand A = matrix_operand(el, a, "A", "T.gemv");
  MatrixOperand x = matrix_operand(el, a, "x", "T.gemv");
  MatrixOperand y = matrix_operand(el, a, "y", "T.gemv");
  node->a = A.region;
  node->x = x.region;
  node->y = y.region;
  node->accumulate = el.truthy(a["accumulate"], a.loc("accumulate"));
  op::check(*node, A.loc, x.loc, y.loc);
  el.emit(ir::Stmt(node));
  return CtValue::none();
}

static CtValue fill_op(Elaborator& el, const EvaluatedCall& call, bool clear) {
  CallArgs a = clear ? el.bind(call, {"buffer"}) : el.bind(call, {"buffer", "value"});
  const SourceLoc& value_loc = clear ? call.node->loc : a.loc("value");
  if (a["buffer"].kind == K::MutableVar) {  // a T.alloc_var: its one value
    const ir::Buffer& var = a["buffer"].buffer;
    ir::Expr value = el.to_expr_of(clear ? CtValue::of_int(0) : a["value"], var->dtype, value_loc, "fill value");
    el.emit(ir::with_loc(ir::make_store(var, {ir::make_int(0)}, value), call.node->loc));
    return CtValue::none();
  }
  TileOperand dst = el.operand(a["buffer"], a.loc("buffer"), call.callee_name + "() argument 'buffer'");
  if (dst.point_only)
    for (auto& r : dst.ranges) r.extent = ir::make_int(1, r.min->dtype);
  auto node = std::make_shared<ir::Fill>();
  node->loc = call.node->loc;
  node->dst = el.region_of(dst);
  CtValue value = clear ? CtValue::of_int(0) : a["value"];
  node->value = el.to_expr_of(value, dst.buffer->dtype, value_loc, "fill value");
  el.emit(ir::Stmt(node));
  return CtValue::none();
}

static CtValue reduce_op(Elaborator& el, const EvaluatedCall& call, ir::ReduceKind kind) {
  CallArgs a = el.bind(call, {"buffer", "out", "dim=-1", "clear=True"});
  const std::string& fn = call.callee_name;
  TileOperand src = el.operand(a["buffer"], a.loc("buffer"), fn + "() argument 'buffer'");
  TileOperand dst = el.operand(a["out"], a.loc("out"), fn + "() argument 'out'");
  if (src.point_only || dst.point_only)
    error_at(call.node->loc, fn + ": operands are tiles (buffers or slices), not single elements");
  auto node = std::make_shared<ir::Reduce>();
  node->loc = call.node->loc;
  node->reduce_kind = kind;
  node->src = el.region_of(src);
  node->dst = el.region_of(dst);
  node->clear = el.truthy(a["clear"], a.loc("clear"));
  node->dim = op::normalized_dim(*node, el.to_int(a["dim"], a.loc("dim"), "dim"), a.loc("dim"));
  op::check(*node, dst.loc);
  el.emit(ir::Stmt(node));
  return CtValue::none();
}

// T.cumsum(src, dst=None, dim=0, reverse=False): without dst, src is scanned in place.
static CtValue cumsum_op(Elaborator& el, const EvaluatedCall& call) {
  CallArgs a = el.bind(call, {"src", "dst=None", "dim=0", "reverse=False"});
  TileOperand src = el.operand(a["src"], a.loc("src"), "T.cumsum() argument 'src'");
  const bool in_place = a["dst"].kind == K::None;
  TileOperand dst = in_place ? src : el.operand(a["dst"], a.loc("dst"), "T.cumsum() argument 'dst'");
  if (src.point_only || dst.point_only)
    error_at(src.point_only ? src.loc : dst.loc, "T.cumsum: operands are tiles (buffers or slices), not single elements");
  auto node = std::make_shared<ir::CumSum>();
  node->loc = call.node->loc;
  node->src = el.region_of(src);
  node->dst = el.region_of(dst);
  node->reverse = el.truthy(a["reverse"], a.loc("reverse"));
  node->dim = op::normalized_dim(node->src, el.to_int(a["dim"], a.loc("dim"), "dim"), a.loc("dim"), "T.cumsum");
  op::check(*node, src.loc, dst.loc);
  el.emit(ir::Stmt(node));
  return CtValue::none();
}

// T.atomic_add(dst, value, memory_order=None, return_prev=False, use_tma=False). Atomics are
// relaxed; use_tma is TileLang's hint for how to move a tile, which tilec picks itself.
static CtValue atomic_add_op(Elaborator& el, const EvaluatedCall& call) {
  CallArgs a = el.bind(call, {"dst", "value", "memory_order=None", "return_prev=False", "use_tma=False"});
  TileOperand dst = el.operand(a["dst"], a.loc("dst"), "T.atomic_add() argument 'dst'");
  const CtValue& order = a["memory_order"];
  if (!(order.kind == K::None || (order.kind == K::String && order.text == "relaxed")))
    error_at(a.loc("memory_order"), "T.atomic_add's atomics are relaxed: memory_order is \"relaxed\" (or left out), not " +
                                        (order.kind == K::String ? "\"" + order.text + "\"" : describe(order)));
  el.truthy(a["use_tma"], a.loc("use_tma"));
  const bool return_prev = el.truthy(a["return_prev"], a.loc("return_prev"));
  auto node = std::make_shared<ir::AtomicAdd>();
  node->loc = call.node->loc;
  const CtValue& value = a["value"];
  bool tile_value = value.kind == K::Buffer || (value.kind == K::Region && !value.region->all_points());
  CtValue result = CtValue::none();
  if (!tile_value) {
    if (!dst.point_only)
      error_at(dst.loc, "T.atomic_add of a single value needs a single element as 'dst' "
                        "(index every dim), or pass a tile as 'value'");
    for (auto& r : dst.ranges) r.extent = ir::make_int(1, r.min->dtype);
    node->dst = el.region_of(dst);
    node->value = el.to_expr_of(value, dst.buffer->dtype, a.loc("value"), "T.atomic_add value");
    if (return_prev) {
      // A GPU spreads a T.Parallel loop over the threads only when its body writes no local,
      // and the value returned lives in one.
      if (el.parallel_depth_ > 0)
        error_at(a.loc("return_prev"), "T.atomic_add(..., return_prev=True) inside a T.Parallel loop is not supported; "
                                       "write the kernel thread by thread (tx = T.get_thread_binding()) and call it "
                                       "outside T.Parallel");
      el.block_atomics_with_prev_.push_back(call.node->loc);
      // 0 where dst is out of its buffer (the add is dropped there).
      ir::Buffer prev = el.new_local_scalar("prev", dst.buffer->dtype, call.node->loc);
      el.emit(ir::with_loc(ir::make_store(prev, {ir::make_int(0)}, el.to_expr_of(CtValue::of_int(0), prev->dtype,
                                                                                   call.node->loc, "")),
                           call.node->loc));
      node->prev = {prev, {{ir::make_int(0), ir::make_int(1)}}};
      result = CtValue::of_expr(ir::make_load(prev, {ir::make_int(0)}));
    }
  } else {
    if (return_prev)
      error_at(a.loc("return_prev"), "T.atomic_add(..., return_prev=True) returns one previous value: its 'dst' is "
                                     "a single element and its 'value' a scalar, not a tile");
    TileOperand src = el.operand(value, a.loc("value"), "T.atomic_add() argument 'value'");
    if (dst.point_only) take_shape_from(dst, src, "T.atomic_add");
    node->dst = el.region_of(dst);
    node->src = el.region_of(src);
  }
  op::check(*node, dst.loc);
  el.emit(ir::Stmt(node));
  return result;
}

// T.atomic_addx2 / T.atomic_addx4(dst, value, return_prev=False): atomic adds of `lanes`
// neighbouring elements (of the last dim) of `value` into those of `dst`, each written as its
// first element (dKV[b, i, h, d * 4]) or as the slice of them (dKV[b, i, h, d * 4:d * 4 + 4]).
// Each element's add is atomic on its own, as T.atomic_add's; TileLang's vector forms are no
// more than that either (red.global.add.v4.f32 is one instruction, not one atomic of 4 values).
static CtValue atomic_add_lanes(Elaborator& el, const EvaluatedCall& call, int lanes) {
  CallArgs a = el.bind(call, {"dst", "value", "return_prev=False"});
  if (el.truthy(a["return_prev"], a.loc("return_prev")))
    error_at(a.loc("return_prev"), call.callee_name + "(..., return_prev=True) is not supported (its previous "
                                   "values are a vector); use T.atomic_add(..., return_prev=True) element by element");
  // The index of each dim of `v`'s first element; its last dim may be a slice of `lanes`.
  auto first_element = [&](const char* name) {
    const CtValue& v = a[name];
    if (v.kind != K::Region)
      error_at(a.loc(name), call.callee_name + " argument '" + name + "' must be an element of a buffer (" +
                                "A[i, j * " + std::to_string(lanes) + "]), not " + describe(v));
    const RegionValue& r = *v.region;
    std::vector<ir::Expr> index;
    for (size_t d = 0; d < r.ranges.size(); ++d) {
      const ir::Range& range = r.ranges[d];
      int64_t extent = 1;
      if (range.extent && !(ir::is_const_int(ir::simplify(range.extent), &extent) &&
                            (extent == 1 || (extent == lanes && d + 1 == r.ranges.size()))))
        error_at(a.loc(name), call.callee_name + " argument '" + name + "' must be one element, or " +
                                  std::to_string(lanes) + " of its last dim, of '" + r.buffer->name + "'");
      index.push_back(range.min);
    }
    return std::make_pair(r.buffer, index);
  };
  auto [dst, dst_index] = first_element("dst");
  auto [src, src_index] = first_element("value");
  for (int k = 0; k < lanes; ++k) {
    auto lane = [k](std::vector<ir::Expr> index) {
      index.back() = ir::make_Add(index.back(), ir::make_int(k, index.back()->dtype));
      return index;
    };
    auto node = std::make_shared<ir::AtomicAdd>();
    node->loc = call.node->loc;
    for (const ir::Expr& i : lane(dst_index)) node->dst.region.push_back({i, ir::make_int(1, i->dtype)});
    node->dst.buffer = dst;
    node->value = el.to_expr_of(CtValue::of_expr(ir::make_load(src, lane(src_index))), dst->dtype, a.loc("value"),
                                call.callee_name + " value");
    op::check(*node, a.loc("dst"));
    el.emit(ir::Stmt(node));
  }
  return CtValue::none();
}

// A tensor param the body makes (T.empty's output, T.alloc_global's scratch tensor) of the
// call's shape and dtype, named after what it is assigned to.
static ir::Param new_tensor_param(Elaborator& el, const EvaluatedCall& c, const CallArgs& a,
                                  const std::string& fallback_name) {
  auto type = std::make_shared<TensorTypeValue>();
  const CtValue& shape = a["shape"];
  type->shape = shape.is_sequence() ? shape.items.vector() : std::vector<CtValue>{shape};
  type->dtype = el.to_dtype(a["dtype"], a.loc("dtype"), c.callee_name + " dtype");
  std::string name = el.name_hint_.empty() ? fallback_name : el.name_hint_;
  ir::Param p;
  p.buffer = el.make_tensor_buffer(el.unique_buffer_name(name), *type, a.loc("shape"));
  p.name = p.buffer->name;
  p.loc = c.node->loc;
  return p;
}

// A view of `data` in `shape` (BufferNode::view_of): T.Tensor(shape, dtype, x.data), T.reshape
// and T.view. The view of a view views its buffer. A tensor x, a parameter of constant shape,
// is then compact row-major itself: a call must pass it so (Elaborator::apply_tensor_views).
static CtValue view_of(Elaborator& el, const CallArgs& a, const EvaluatedCall& call, const std::string& data_arg) {
  const SourceLoc& loc = call.node->loc;
  const std::string& fn = call.callee_name;
  if (!el.in_kernel_) error_at(loc, fn + ", a view of a buffer, goes inside a T.Kernel block");
  const CtValue& data = a[data_arg];
  ir::Buffer base = data.kind == K::Buffer ? data.buffer : nullptr;
  if (base && base->view_of) base = base->view_of;
  const bool tensor = base && base->scope == ir::MemoryScope::Global;
  if (!base || (!tensor && data_arg == "data"))
    error_at(a.loc(data_arg), data_arg == "data" ? fn + "'s data is a tensor parameter's (x.data), not " + describe(data)
                                                 : fn + " takes a buffer (a tensor, or T.alloc_shared, T.alloc_fragment "
                                                        "or T.alloc_local's), not " + describe(data));
  if (a.has("dtype") && a["dtype"].kind != K::None) {
    DType dtype = el.to_dtype(a["dtype"], a.loc("dtype"), "view dtype");
    if (dtype != base->dtype)
      error_at(a.loc("dtype"), fn + ": a view of '" + base->name + "' (" + base->dtype.name() + ") has its dtype, not " +
                                   dtype.name() + " (tilec does not read a buffer's bytes as another type)");
  }
  std::vector<ir::Expr> shape =
      a["shape"].kind == K::None ? data.buffer->shape : el.to_shape(a["shape"], a.loc("shape"), fn + " shape");
  auto elements = [](const std::vector<ir::Expr>& dims) -> std::optional<int64_t> {
    int64_t n = 1, d;
    for (const ir::Expr& e : dims) {
      if (!ir::is_const_int(ir::simplify(e), &d) || d < 0 || (d > 0 && n > std::numeric_limits<int64_t>::max() / d))
        return std::nullopt;
      n *= d;
    }
    return n;
  };
  std::optional<int64_t> view_size = elements(shape), base_size = elements(base->shape);
  if (!base_size)
    error_at(a.loc(data_arg), fn + ": a view of '" + base->name + "' needs its shape constant (T.const dims)" +
                                  (tensor ? ", so that a call's strides can be checked against it" : ""));
  if (!view_size)
    error_at(a.loc("shape"), fn + ": a view's shape is of compile-time integers (of '" + base->name + "'s " +
                                 std::to_string(*base_size) + " elements)");
  if (*view_size != *base_size)
    error_at(a.loc("shape"), fn + ": a view of '" + base->name + "' has its " + std::to_string(*base_size) +
                                 " elements, not " + std::to_string(*view_size));
  auto view = std::make_shared<ir::BufferNode>(
      *ir::make_buffer(el.buffer_name_for(base->name + "_view"), base->dtype, shape, {}, base->scope, loc));
  view->view_of = base;
  el.note_made_buffer(view);
  el.kernel_allocs_.push_back(view);
  if (tensor) el.viewed_tensors_.insert(base.get());
  return CtValue::of_buffer(view);
}

static CtValue alloc_op(Elaborator& el, const EvaluatedCall& call, ir::MemoryScope scope) {
  CallArgs a = el.bind(call, {"shape", "dtype", "scope=None"});
  if (!el.in_kernel_)
    error_at(call.node->loc, call.callee_name + " must be called inside a T.Kernel block");
  std::vector<ir::Expr> shape = el.to_shape(a["shape"], a.loc("shape"), call.callee_name + " shape");
  DType dtype = el.to_dtype(a["dtype"], a.loc("dtype"), call.callee_name + " dtype");
  // On-chip memory is small (227 KiB of shared memory per block on Hopper); a
  // buffer past this bound is a mistake, and on the CPU it would exhaust memory.
  constexpr int64_t kMaxOnChipBytes = int64_t{64} << 20;
  int64_t bytes = dtype.bytes();
  for (const auto& dim : shape) {
    int64_t n;
    if (ir::is_const_int(dim, &n)) bytes = n > 0 && bytes > kMaxOnChipBytes / n ? kMaxOnChipBytes + 1 : bytes * n;
  }
  if (bytes > kMaxOnChipBytes)
    error_at(a.loc("shape"), call.callee_name + ": this buffer needs more than 64 MiB; on-chip buffers "
                             "are far smaller (shared memory is 227 KiB per block on Hopper)");
  ir::Buffer b = ir::make_buffer(el.buffer_name_for(std::string(ir::scope_name(scope)) + "_buf"), dtype, shape, {},
                                 scope, call.node->loc);
  el.note_made_buffer(b);
  el.kernel_allocs_.push_back(b);
  return CtValue::of_buffer(b);
}

// T.alloc_reducer(shape, dtype, op="sum", replication="all" | "none"): TileLang's (v1) reducer, a
// fragment the program clears and adds into (o[i] += ...) in T.Parallel loops over more dims than
// its own, then T.finalize_reducer(o). tilec's T.Parallel gives each of a fragment's elements to
// threads that run every iteration writing it (copies of the element on more threads each
// compute it whole), so the element is complete in each thread that holds it and
// T.finalize_reducer has nothing left to combine. Without replication= it is TileLang's v2
// reducer (T.reducer_init / T.reducer_update / T.finalize_reducer(acc, dst)), which tilec
// does not take yet.
static CtValue alloc_reducer_op(Elaborator& el, const EvaluatedCall& call) {
  CallArgs a = el.bind(call, {"shape", "dtype", "op=\"sum\"", "replication=None"});
  const CtValue& op = a["op"];
  if (!(op.kind == K::String && (op.text == "sum" || op.text == "max" || op.text == "min")))
    error_at(a.loc("op"), "T.alloc_reducer's op is \"sum\", \"max\" or \"min\", not " + describe(op));
  const CtValue& replication = a["replication"];
  if (replication.kind == K::None)
    error_at(call.node->loc, "T.alloc_reducer without replication= is TileLang's v2 reducer (T.reducer_init, "
                             "T.reducer_update, T.finalize_reducer(acc, dst)), which tilec does not support; "
                             "replication=\"all\" gives the v1 fragment reducer");
  if (!(replication.kind == K::String && (replication.text == "all" || replication.text == "none")))
    error_at(a.loc("replication"), "T.alloc_reducer's replication is \"all\" or \"none\", not " + describe(replication));
  EvaluatedCall fragment = call;
  fragment.positional.resize(std::min<size_t>(fragment.positional.size(), 2));
  fragment.positional_locs.resize(fragment.positional.size());
  std::vector<std::pair<std::string, CtValue>> keywords;
  std::vector<SourceLoc> keyword_locs;
  for (size_t k = 0; k < call.keywords.size(); ++k)
    if (call.keywords[k].first == "shape" || call.keywords[k].first == "dtype") {
      keywords.push_back(call.keywords[k]);
      keyword_locs.push_back(call.keyword_locs[k]);
    }
  fragment.keywords = std::move(keywords);
  fragment.keyword_locs = std::move(keyword_locs);
  CtValue buffer = alloc_op(el, fragment, ir::MemoryScope::Fragment);
  el.reducer_buffers_.insert(buffer.buffer.get());
  return buffer;
}

// T.finalize_reducer(reducer): the v1 reducer's last step, nothing to do (alloc_reducer_op).
static CtValue finalize_reducer_op(Elaborator& el, const EvaluatedCall& call) {
  CallArgs a = el.bind(call, {"reducer", "dst=None", "batch=1", "annotations=None"});
  const CtValue& reducer = a["reducer"];
  if (reducer.kind != K::Buffer || !el.reducer_buffers_.count(reducer.buffer.get()))
    error_at(a.loc("reducer"), "T.finalize_reducer takes a buffer of T.alloc_reducer's, not " + describe(reducer));
  if (a["dst"].kind != K::None)
    error_at(a.loc("dst"), "T.finalize_reducer(acc, dst) is TileLang's v2 reducer, which tilec does not support; "
                           "T.finalize_reducer(acc) ends a T.alloc_reducer(..., replication=\"all\")");
  return CtValue::none();
}

// ---------------------------------------------------------------- shared-memory layouts

static CtValue layout_value(ir::SharedLayoutRef layout) {
  CtValue v;
  v.kind = K::Layout;
  v.layout = std::move(layout);
  return v;
}

static std::vector<int64_t> constant_shape(const ir::Buffer& b, const SourceLoc& loc, const std::string& what) {
  std::vector<int64_t> shape;
  for (const ir::Expr& d : b->shape) {
    int64_t e;
    if (!ir::is_const_int(d, &e)) error_at(loc, what + ": buffer '" + b->name + "' needs a constant shape");
    shape.push_back(e);
  }
  return shape;
}

static std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t d = 0; d < shape.size(); ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// T.Layout(shape, lambda i, j, ...: offset): the lambda gives the element offset of each index,
// or a list of coordinates, read row-major over the extents they take (ir/shared_layout.h,
// from_coordinates). It must be a bijection onto the tile.
static CtValue layout_op(Elaborator& el, const EvaluatedCall& c) {
  const ast::Expr& call = *c.node;
  if (call.items.size() != 2 || !call.keywords.empty())
    error_at(call.loc, "T.Layout takes a shape and a function of the indices: T.Layout(shape, lambda i, j: offset)");
  const ast::Expr& shape_arg = *call.items[0];
  const ast::Expr& fn = *call.items[1];
  std::vector<int64_t> shape;
  for (const ir::Expr& d : el.to_shape(el.eval(shape_arg), shape_arg.loc, "T.Layout shape")) {
    int64_t e;
    if (!ir::is_const_int(d, &e))
      error_at(shape_arg.loc, "T.Layout needs a shape of compile-time integers; dim " + std::to_string(shape.size()) +
                                  " is " + ir::to_string(d) + " (layouts of symbolic shapes are not supported: "
                                  "compile the kernel for the tensor's size)");
    if (e < 1) error_at(shape_arg.loc, "T.Layout needs a shape of positive compile-time integers");
    shape.push_back(e);
  }
  if (fn.kind != ast::ExprKind::Lambda)
    error_at(fn.loc, "T.Layout's second argument is a lambda of the indices (lambda i, j: offset)");
  if (fn.items.size() != shape.size())
    error_at(fn.loc, "a layout of a " + std::to_string(shape.size()) + "-dim tile takes " +
                         std::to_string(shape.size()) + " indices; this lambda takes " + std::to_string(fn.items.size()));
  int64_t elements = 1;
  for (int64_t e : shape) elements = elements > std::numeric_limits<int64_t>::max() / e ? std::numeric_limits<int64_t>::max() : elements * e;
  const DType index_type = elements > std::numeric_limits<int32_t>::max() ? DType::Int64 : DType::Int32;
  std::vector<ir::Expr> vars;
  std::vector<CtValue> args;
  for (const auto& param : fn.items) {
    vars.push_back(ir::make_var(param->id, index_type));
    args.push_back(CtValue::of_expr(vars.back()));
  }
  const CtValue result = el.apply_lambda(fn, args);
  const SourceLoc& body = fn.value->loc;
  auto not_a_bijection = [&](const std::string& why) {
    error_at(fn.loc, "this layout is not a bijection onto its " + shape_text(shape) + " tile: " + why);
  };
  ir::SharedLayoutRef layout;
  if (result.is_sequence()) {
    if (result.items.empty()) error_at(body, "a layout's list of coordinates is empty");
    std::vector<ir::Expr> coordinates;
    for (const CtValue& item : result.items)
      coordinates.push_back(el.to_expr_of(item, index_type, body, "layout coordinate"));
    try {
      layout = ir::SharedLayout::from_coordinates(shape, vars, coordinates, fn.loc);
    } catch (const std::invalid_argument& e) {
      not_a_bijection(e.what());
    }
  } else {
    ir::Expr offset = el.to_expr(result, body, "layout offset");
    if (!offset->dtype.is_integer()) error_at(body, "a layout's offset is an integer, not " + describe(result));
    layout = ir::SharedLayout::user(shape, vars, offset, fn.loc);
    if (std::string why = layout->bijection_error(); !why.empty()) not_a_bijection(why);
  }
  return layout_value(layout);
}

// tilelang.layout.make_swizzled_layout(buf): the bank-conflict-free swizzle of TMA and wgmma,
// panels of the widest of 128, 64, 32 and 16 bytes that divides a row (row-major where none
// does). The compiler's layouts yield to what an op needs (ir/shared_layout.h), so on mma.sync
// the tile takes the mma swizzle instead.
static CtValue make_swizzled_layout_op(Elaborator& el, const EvaluatedCall& c) {
  CallArgs a = el.bind(c, {"buffer"});
  const CtValue& v = a["buffer"];
  if (v.kind != K::Buffer || v.buffer->scope != ir::MemoryScope::Shared)
    error_at(a.loc("buffer"), c.callee_name + " takes a shared buffer (T.alloc_shared), not " + describe(v));
  std::vector<int64_t> shape = constant_shape(v.buffer, a.loc("buffer"), c.callee_name);
  const int64_t elem = v.buffer->dtype.bytes();
  if (shape.size() >= 2 && shape[shape.size() - 2] % 8 == 0 && v.buffer->dtype.bits() >= 8)
    for (int64_t width : {128, 64, 32, 16})
      if (shape.back() * elem % width == 0 && width % elem == 0)
        return layout_value(ir::SharedLayout::panels(shape, elem, width));
  return layout_value(ir::SharedLayout::row_major(shape));
}

// T.annotate_layout({buf: layout, ...}): each shared buffer takes its layout for the whole
// T.Kernel block (elaborate_stmt.cc gives it when the block ends); each tensor parameter for the
// whole function, as the order its elements are stored in (Elaborator::apply_tensor_layouts).
static CtValue annotate_layout_op(Elaborator& el, const EvaluatedCall& c) {
  const ast::Expr& call = *c.node;
  if (!el.in_kernel_) error_at(call.loc, "T.annotate_layout goes inside a T.Kernel block");
  if (call.items.size() != 1 || !call.keywords.empty() || call.items[0]->kind != ast::ExprKind::Dict)
    error_at(call.loc, "T.annotate_layout takes one dict of shared buffers and their layouts: "
                       "T.annotate_layout({A_shared: layout, ...})");
  const ast::Expr& dict = *call.items[0];
  for (size_t i = 0; i < dict.items.size(); ++i) {
    const ast::Expr& key = *dict.items[i];
    const ast::Expr& value = *dict.values[i];
    CtValue buffer = el.eval(key);
    const bool tensor = buffer.kind == K::Buffer && buffer.buffer->scope == ir::MemoryScope::Global;
    if (buffer.kind != K::Buffer || (buffer.buffer->scope != ir::MemoryScope::Shared && !tensor))
      error_at(key.loc, "T.annotate_layout's keys are shared buffers (T.alloc_shared) or the kernel's tensors, not " +
                            describe(buffer) + " (fragment layouts are inferred)");
    const std::string& name = buffer.buffer->name;
    if (const ir::Buffer& base = buffer.buffer->view_of)
      error_at(key.loc, "T.annotate_layout: '" + name + "' is a view of '" + base->name + "' (at " +
                            buffer.buffer->loc.str() + "); lay out '" + base->name + "', and its views read it so");
    if (tensor)
      for (const ir::Expr& d : buffer.buffer->shape)
        if (!ir::is_const_int(d, nullptr))
          error_at(key.loc, "T.annotate_layout: tensor '" + name + "' has the symbolic dim " + ir::to_string(d) +
                                "; a tensor's layout needs a constant shape (compile the kernel for its size)");
    CtValue layout = el.eval(value);
    if (layout.kind != K::Layout)
      error_at(value.loc, "T.annotate_layout's values are layouts (T.Layout(shape, lambda i, j: offset) or "
                          "tilelang.layout.make_swizzled_layout(buf)), not " + describe(layout));
    std::vector<int64_t> shape = constant_shape(buffer.buffer, key.loc, "T.annotate_layout");
    if (layout.layout->shape() != shape)
      error_at(value.loc, "this layout is for a " + shape_text(layout.layout->shape()) + " tile; '" + name + "' is " +
                              shape_text(shape));
    const ir::BufferNode* b = buffer.buffer.get();
    if (auto copied = el.copied_in_vectors_.find(b);
        copied != el.copied_in_vectors_.end() && layout.layout->kind() == ir::SharedLayout::Kind::User)
      error_at(key.loc, "T.annotate_layout: T.copy_cluster at " + copied->second.str() + " moved '" + name +
                            "' 16 bytes at a time, which a layout of the user's may not keep together; annotate "
                            "it before that copy");
    if (!tensor) {
      if (!el.annotated_layouts_.emplace(b, layout.layout).second)
        error_at(key.loc, "'" + name + "' has a layout already (one T.annotate_layout a buffer)");
      continue;
    }
    if (layout.layout->kind() != ir::SharedLayout::Kind::User)
      error_at(value.loc, "a tensor's layout is a T.Layout (make_swizzled_layout lays out shared tiles)");
    if (!el.kernel_tensor_layouts_.insert(b).second)
      error_at(key.loc, "'" + name + "' has a layout already (one T.annotate_layout a buffer)");
    auto [it, fresh] = el.tensor_layouts_.try_emplace(b, Elaborator::TensorLayout{layout.layout, key.loc});
    if (!fresh && !ir::structural_equal(it->second.layout->offset(), layout.layout->offset(), true))
      error_at(value.loc, "tensor '" + name + "' has another layout from T.annotate_layout at " +
                              it->second.loc.str() + ": a tensor's elements are stored one way in the whole function");
  }
  return CtValue::none();
}

// ---------------------------------------------------------------- scalar functions

static CtValue intrinsic_call(Elaborator& el, const EvaluatedCall& call, const ir::IntrinsicInfo& info) {
  if (!call.keywords.empty())
    error_at(call.keyword_locs[0], call.callee_name + "() takes no keyword arguments");
  if (static_cast<int>(call.positional.size()) != info.arity)
    error_at(call.node->loc, call.callee_name + "() takes " + std::to_string(info.arity) +
                                 " argument" + (info.arity == 1 ? "" : "s") + " but " +
                                 std::to_string(call.positional.size()) + " were given");
  std::vector<ir::Expr> args;
  for (size_t i = 0; i < call.positional.size(); ++i)
    args.push_back(el.to_expr(call.positional[i], call.positional_locs[i], call.callee_name + " argument"));
  DType t = args[0]->dtype;
  for (auto& e : args) t = promote(t, e->dtype);
  if (info.float_only && !t.is_float()) t = DType::Float32;
  if (t.is_bool()) t = DType::Int32;
  for (auto& e : args) e = ir::make_cast(t, e);
  return CtValue::of_expr(ir::make_call(info.returns_bool ? DType(DType::Bool) : t, info.name, args));
}

// a < b of two compile-time numbers, exactly for ints, as Python compares them.
static bool number_less(const CtValue& a, const CtValue& b) {
  auto as_int = [](const CtValue& v) { return v.kind == K::Bool ? int64_t{v.bool_value} : v.int_value; };
  auto as_double = [&](const CtValue& v) {
    return v.kind == K::Float ? v.float_value : static_cast<double>(as_int(v));
  };
  if (a.kind != K::Float && b.kind != K::Float) return as_int(a) < as_int(b);
  return as_double(a) < as_double(b);
}

static CtValue min_max(Elaborator& el, const EvaluatedCall& call, bool is_max) {
  std::vector<CtValue> values = call.positional;
  std::vector<SourceLoc> locs = call.positional_locs;
  if (!call.keywords.empty())
    error_at(call.keyword_locs[0], call.callee_name + "() takes no keyword arguments");
  if (values.size() == 1 && values[0].is_sequence()) {
    values = values[0].items.vector();
    locs.assign(values.size(), call.positional_locs[0]);
    el.spend_sequence_work(static_cast<int64_t>(values.size()), call.positional_locs[0]);
  }
  if (values.size() < 2 && !(values.size() == 1 && call.callee_name.find("T.") != 0))
    error_at(call.node->loc, call.callee_name + "() needs at least two values");
  CtValue acc = values[0];
  for (size_t i = 1; i < values.size(); ++i) {
    const CtValue& v = values[i];
    if (acc.is_number() && v.is_number()) {
      if (is_max ? number_less(acc, v) : number_less(v, acc)) acc = v;  // the first extreme wins
      continue;
    }
    auto [a, b] = el.unify_operands(acc, v, locs[i], call.callee_name + " argument");
    acc = CtValue::of_expr(is_max ? ir::make_Max(a, b) : ir::make_Min(a, b));
  }
  return acc;
}

// ---------------------------------------------------------------- Python's iterating builtins

// The items of a compile-time sequence that sum, any, all, enumerate or zip iterates.
static std::vector<CtValue> iterable_items(Elaborator& el, const CtValue& v, const SourceLoc& loc,
                                           const std::string& fn) {
  if (!v.is_sequence())
    error_at(loc, fn + "() iterates a tuple, a list or a range of compile-time values, not " +
                      describe(v));
  el.spend_sequence_work(static_cast<int64_t>(v.items.size()), loc);
  return v.items.vector();
}

static CtValue sum_op(Elaborator& el, const EvaluatedCall& c) {
  CallArgs a = el.bind(c, {"iterable", "start=0"});
  if (a["start"].kind == K::String)
    error_at(a.loc("start"), "sum() can't sum strings (join them with '+')");
  CtValue total = a["start"];
  for (const auto& item : iterable_items(el, a["iterable"], a.loc("iterable"), "sum"))
    total = el.eval_binop("+", total, item, a.loc("iterable"));
  return total;
}

// any() (`wanted` true) or all() (false): the first item whose truth is `wanted` decides.
static CtValue any_all_op(Elaborator& el, const EvaluatedCall& c, bool wanted) {
  CallArgs a = el.bind(c, {"iterable"});
  for (const auto& item : iterable_items(el, a["iterable"], a.loc("iterable"), c.callee_name))
    if (el.truthy(item, a.loc("iterable")) == wanted) return CtValue::of_bool(wanted);
  return CtValue::of_bool(!wanted);
}

// Python's enumerate and zip give iterators; here they give the tuple of what the iterator
// would yield, which loops, comprehensions and the builtins above iterate the same way.
static CtValue enumerate_op(Elaborator& el, const EvaluatedCall& c) {
  CallArgs a = el.bind(c, {"iterable", "start=0"});
  int64_t index = el.to_int(a["start"], a.loc("start"), "enumerate() start");
  std::vector<CtValue> pairs;
  for (const auto& item : iterable_items(el, a["iterable"], a.loc("iterable"), "enumerate")) {
    pairs.push_back(CtValue::tuple({CtValue::of_int(index), item}));
    if (pairs.size() < a["iterable"].items.size()) index = fold_int("+", index, 1, a.loc("start"));
  }
  return CtValue::tuple(pairs);
}

static CtValue zip_op(Elaborator& el, const EvaluatedCall& c) {
  bool strict = false;
  for (size_t i = 0; i < c.keywords.size(); ++i) {
    if (c.keywords[i].first != "strict")
      error_at(c.keyword_locs[i], "zip() got an unexpected keyword argument '" +
                                      c.keywords[i].first + "' (it takes strict=)");
    strict = el.truthy(c.keywords[i].second, c.keyword_locs[i]);
  }
  std::vector<std::vector<CtValue>> columns;
  size_t rows = 0;
  for (size_t i = 0; i < c.positional.size(); ++i) {
    columns.push_back(iterable_items(el, c.positional[i], c.positional_locs[i], "zip"));
    rows = i == 0 ? columns[0].size() : std::min(rows, columns[i].size());
    if (strict && columns[i].size() != columns[0].size())
      error_at(c.positional_locs[i], "zip() argument " + std::to_string(i + 1) + " is " +
                                         (columns[i].size() < columns[0].size() ? "shorter" : "longer") +
                                         " than argument 1");
  }
  std::vector<CtValue> tuples;
  for (size_t r = 0; r < rows; ++r) {
    std::vector<CtValue> row;
    for (const auto& column : columns) row.push_back(column[r]);
    tuples.push_back(CtValue::tuple(row));
  }
  return CtValue::tuple(tuples);
}

// range() where a value is wanted (a comprehension's or a builtin's iterable; a for loop's
// range is a loop instead): the tuple of its ints, of compile-time bounds.
static CtValue range_op(Elaborator& el, const EvaluatedCall& c) {
  CompileTimeRange r = el.compile_time_range(c);
  // Past the limit, counted as just past it (a count past int64 would wrap the tally).
  el.spend_sequence_work(std::min(r.trips.value_or(kMaxSequenceWork + 1), kMaxSequenceWork + 1),
                         c.node->loc);
  std::vector<CtValue> values;
  for (int64_t k = 0; k < *r.trips; ++k) values.push_back(CtValue::of_int(r.start + k * r.step));
  return CtValue::tuple(values);
}

// ---------------------------------------------------------------- the table

static CtValue no_value_here(const EvaluatedCall& call, const std::string& how) {
  error_at(call.node->loc, call.callee_name + " " + how);
}

static const BuiltinTable& builtin_table() {
  static const BuiltinTable table = [] {
    BuiltinTable t;
    add_simt_builtins(t);
    add_thread_allreduce_builtins(t);
    add_warp_specialize_builtins(t);
    add_cluster_builtins(t);
    add_extern_builtins(t);
    add_tirx_builtins(t);
    add_tilec_math_builtins(t);
    using M = ir::MemoryScope;
    t["T.copy"] = copy_op;
    t["T.im2col"] = im2col_op;
    t["T.gemm"] = gemm_op;
    t["T.wgmma_gemm"] = gemm_op;
    t["T.gemv"] = gemv_op;
    t["T.fill"] = [](Elaborator& el, const EvaluatedCall& c) { return fill_op(el, c, false); };
    t["T.clear"] = [](Elaborator& el, const EvaluatedCall& c) { return fill_op(el, c, true); };
    t["T.reduce_sum"] = [](Elaborator& el, const EvaluatedCall& c) { return reduce_op(el, c, ir::ReduceKind::Sum); };
    t["T.reduce_max"] = [](Elaborator& el, const EvaluatedCall& c) { return reduce_op(el, c, ir::ReduceKind::Max); };
    t["T.reduce_min"] = [](Elaborator& el, const EvaluatedCall& c) { return reduce_op(el, c, ir::ReduceKind::Min); };
    t["T.reduce_abssum"] = [](Elaborator& el, const EvaluatedCall& c) { return reduce_op(el, c, ir::ReduceKind::AbsSum); };
    t["T.reduce_absmax"] = [](Elaborator& el, const EvaluatedCall& c) { return reduce_op(el, c, ir::ReduceKind::AbsMax); };
    t["T.cumsum"] = cumsum_op;
    t["T.atomic_add"] = atomic_add_op;
    t["T.atomic_addx2"] = [](Elaborator& el, const EvaluatedCall& c) { return atomic_add_lanes(el, c, 2); };
    t["T.atomic_addx4"] = [](Elaborator& el, const EvaluatedCall& c) { return atomic_add_lanes(el, c, 4); };
    t["T.alloc_shared"] = [](Elaborator& el, const EvaluatedCall& c) { return alloc_op(el, c, M::Shared); };
    t["T.alloc_fragment"] = [](Elaborator& el, const EvaluatedCall& c) { return alloc_op(el, c, M::Fragment); };
    t["T.alloc_local"] = [](Elaborator& el, const EvaluatedCall& c) { return alloc_op(el, c, M::Local); };
    t["T.alloc_reducer"] = alloc_reducer_op;
    t["T.finalize_reducer"] = finalize_reducer_op;
    t["T.Layout"] = layout_op;
    t["T.annotate_layout"] = annotate_layout_op;
    t["tilec.layout.make_swizzled_layout"] = make_swizzled_layout_op;
    t["T.make_swizzled_layout"] = make_swizzled_layout_op;
    t["T.use_swizzle"] = [](Elaborator& el, const EvaluatedCall& c) {
      // Block rasterization order: a GPU scheduling hint (every order gives the same result).
      CallArgs a = el.bind(c, {"panel_size", "order=\"row\"", "enable=True"});
      int64_t panel = el.to_int(a["panel_size"], a.loc("panel_size"), "panel_size");
      if (panel < 1) error_at(a.loc("panel_size"), "T.use_swizzle panel_size must be at least 1, not " + std::to_string(panel));
      std::string order = a["order"].kind == CtValue::Kind::String ? a["order"].text : "";
      if (order != "row" && order != "col" && order != "column")
        error_at(a.loc("order"), "T.use_swizzle order is \"row\" or \"col\"");
      if (el.truthy(a["enable"], a.loc("enable"))) el.use_block_swizzle(panel, order != "row", c.node->loc);
      return CtValue::none();
    };
    t["T.annotate_min_blocks_per_sm"] = [](Elaborator& el, const EvaluatedCall& c) {
      // An occupancy hint: ptxas keeps each thread's registers few enough for n blocks an SM.
      // An SM of sm_80 and sm_90 holds at most 32 blocks and 2048 threads.
      constexpr int64_t kMaxBlocksPerSm = 32, kMaxThreadsPerSm = 2048;
      CallArgs a = el.bind(c, {"n"});
      if (!el.kernel_) error_at(c.node->loc, "T.annotate_min_blocks_per_sm goes inside a T.Kernel block");
      const int64_t n = el.to_int(a["n"], a.loc("n"), "n");
      const int64_t threads = int64_t{el.kernel_->threads} * std::max<int64_t>(n, 1);
      if (n < 1 || n > kMaxBlocksPerSm)
        error_at(a.loc("n"), "T.annotate_min_blocks_per_sm takes 1 to " + std::to_string(kMaxBlocksPerSm) +
                                 " blocks, not " + std::to_string(n));
      if (threads > kMaxThreadsPerSm)
        error_at(a.loc("n"), "T.annotate_min_blocks_per_sm(" + std::to_string(n) + ") of " +
                                 std::to_string(el.kernel_->threads) + "-thread blocks is " + std::to_string(threads) +
                                 " threads, more than an SM holds (" + std::to_string(kMaxThreadsPerSm) + ")");
      if (el.kernel_->min_blocks_per_sm > 0)
        error_at(c.node->loc, "T.annotate_min_blocks_per_sm is given twice in this T.Kernel block");
      el.kernel_->min_blocks_per_sm = static_cast<int>(n);
      return CtValue::none();
    };
    // TileLang's two spellings of one hint: warp specialization keeps the registers as launched.
    for (const char* name : {"T.no_set_max_nreg", "T.disable_warp_group_reg_alloc"})
      t[name] = [](Elaborator& el, const EvaluatedCall& c) {
        el.bind(c, {});
        if (!el.kernel_) error_at(c.node->loc, c.callee_name + " goes inside a T.Kernel block");
        el.kernel_->keep_registers = true;
        return CtValue::none();
      };
    t["T.if_then_else"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"cond", "true_value", "false_value"});
      if (a["cond"].is_constant())
        return el.truthy(a["cond"], a.loc("cond")) ? a["true_value"] : a["false_value"];
      ir::Expr cond = el.to_bool_expr(a["cond"], a.loc("cond"));
      auto [x, y] = el.unify_operands(a["true_value"], a["false_value"], c.node->loc, "T.if_then_else value");
      return CtValue::of_expr(ir::make_select(cond, x, y));
    };
    t["T.cast"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"value", "dtype"});
      DType dtype = el.to_dtype(a["dtype"], a.loc("dtype"), "T.cast dtype");
      return CtValue::of_expr(el.to_expr_of(a["value"], dtype, a.loc("value"), "T.cast value"));
    };
    // T.reinterpret(value, dtype): value's bits read as dtype, of the same size.
    t["T.reinterpret"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"value", "dtype"});
      DType dtype = el.to_dtype(a["dtype"], a.loc("dtype"), "T.reinterpret dtype");
      ir::Expr value = el.to_expr(a["value"], a.loc("value"), "T.reinterpret value");
      if (value->dtype.bits() != dtype.bits() || dtype.is_bool() || value->dtype.is_bool())
        error_at(c.node->loc, std::string("T.reinterpret keeps the bits, so the dtypes have one size: ") +
                                  value->dtype.name() + " is " + std::to_string(value->dtype.bits()) + " bits, " +
                                  dtype.name() + " " + std::to_string(dtype.bits()));
      return CtValue::of_expr(ir::make_call(dtype, std::string(ir::kReinterpret), {value}));
    };
    t["T.Cast"] = [](Elaborator& el, const EvaluatedCall& c) {  // TVM's order: the dtype first
      CallArgs a = el.bind(c, {"dtype", "value"});
      DType dtype = el.to_dtype(a["dtype"], a.loc("dtype"), "T.Cast dtype");
      return CtValue::of_expr(el.to_expr_of(a["value"], dtype, a.loc("value"), "T.Cast value"));
    };
    // Python's floor division and modulo, as // and % are.
    t["T.floordiv"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"a", "b"});
      return el.eval_binop("//", a["a"], a["b"], c.node->loc);
    };
    t["T.floormod"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"a", "b"});
      return el.eval_binop("%", a["a"], a["b"], c.node->loc);
    };
    t["T.infinity"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"dtype"});
      DType dtype = el.to_dtype(a["dtype"], a.loc("dtype"), "T.infinity dtype");
      if (!dtype.is_float())
        error_at(a.loc("dtype"), std::string("T.infinity needs a float dtype, not ") + dtype.name());
      if (dtype == DType::Float8E4M3)
        error_at(a.loc("dtype"), "float8_e4m3 has no infinity");
      return CtValue::of_expr(ir::make_float(std::numeric_limits<double>::infinity(), dtype));
    };
    t["T.ceildiv"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"a", "b"});
      const CtValue& x = a["a"];
      const CtValue& y = a["b"];
      CtValue sum = el.eval_binop("+", x, y, c.node->loc);
      CtValue num = el.eval_binop("-", sum, CtValue::of_int(1), c.node->loc);
      return el.eval_binop("//", num, y, c.node->loc);
    };
    // TVM's names of the bit operators: T.shift_left(x, n) is x << n, and so on.
    for (const auto& [name, op] : std::vector<std::pair<std::string, std::string>>{
             {"T.shift_left", "<<"}, {"T.shift_right", ">>"}, {"T.bitwise_and", "&"}, {"T.bitwise_or", "|"},
             {"T.bitwise_xor", "^"}})
      t[name] = [op = op](Elaborator& el, const EvaluatedCall& c) {
        CallArgs a = el.bind(c, {"x", "y"});
        return el.eval_binop(op, a["x"], a["y"], c.node->loc);
      };
    t["T.max"] = [](Elaborator& el, const EvaluatedCall& c) { return min_max(el, c, true); };
    t["T.min"] = [](Elaborator& el, const EvaluatedCall& c) { return min_max(el, c, false); };
    t["max"] = t["T.max"];
    t["min"] = t["T.min"];
    t["T.clamp"] = [](Elaborator& el, const EvaluatedCall& c) {  // min(max(x, low), high)
      CallArgs a = el.bind(c, {"x", "low", "high"});
      EvaluatedCall at_least = c, at_most = c;
      at_least.callee_name = at_most.callee_name = "T.clamp";
      at_least.keywords.clear();
      at_least.keyword_locs.clear();
      at_least.positional = {a["x"], a["low"]};
      at_least.positional_locs = {a.loc("x"), a.loc("low")};
      at_most.keywords.clear();
      at_most.keyword_locs.clear();
      at_most.positional = {min_max(el, at_least, true), a["high"]};
      at_most.positional_locs = {a.loc("x"), a.loc("high")};
      return min_max(el, at_most, false);
    };
    auto symbolic = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"name", "dtype=\"int32\""});
      if (a["name"].kind != K::String)
        error_at(a.loc("name"), c.callee_name + " takes the dim's name as a string");
      DType dtype = el.to_dtype(a["dtype"], a.loc("dtype"), "symbolic dim dtype");
      if (!dtype.is_integer()) error_at(a.loc("dtype"), "symbolic dims are integers");
      // "batch, seq_len" or "batch seq_len" names several dims at once: a tuple of them.
      const std::string& names = a["name"].text;
      char separator = names.find(',') != std::string::npos ? ',' : ' ';
      std::vector<std::string> parts;
      for (size_t start = 0;;) {
        size_t end = std::min(names.find(separator, start), names.size());
        size_t first = names.find_first_not_of(" \t", start);
        size_t last = end == 0 ? std::string::npos : names.find_last_not_of(" \t", end - 1);
        if (first < end && last != std::string::npos && last >= first)
          parts.push_back(names.substr(first, last - first + 1));
        else if (separator == ',')
          error_at(a.loc("name"), c.callee_name + "(\"" + names + "\"): a name is missing between commas");
        if (end == names.size()) break;
        start = end + 1;
      }
      if (parts.empty()) error_at(a.loc("name"), c.callee_name + " needs the dim's name");
      for (const auto& part : parts)
        if (!is_identifier(part))
          error_at(a.loc("name"), c.callee_name + ": '" + part + "' is not a name (letters, digits and _, "
                                  "not starting with a digit)");
      if (parts.size() == 1) return CtValue::of_expr(el.symbolic_var(parts[0], dtype));
      std::vector<CtValue> dims;
      for (const auto& part : parts) dims.push_back(CtValue::of_expr(el.symbolic_var(part, dtype)));
      return CtValue::tuple(std::move(dims));
    };
    t["T.symbolic"] = symbolic;
    t["T.dynamic"] = symbolic;
    auto tensor_type = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"shape", "dtype=\"float32\"", "data=None", "strides=None"});
      if (a["data"].kind != K::None) return view_of(el, a, c, "data");
      auto type = std::make_shared<TensorTypeValue>();
      const CtValue& shape = a["shape"];
      type->shape = shape.is_sequence() ? shape.items.vector() : std::vector<CtValue>{shape};
      type->dtype = el.to_dtype(a["dtype"], a.loc("dtype"), "tensor dtype");
      if (a["strides"].kind != K::None)
        error_at(a.loc("strides"), "tensor strides are read from the arguments; declare the shape only");
      for (const auto& d : type->shape)
        if (!(d.kind == K::Int || d.kind == K::PendingDim ||
              (d.kind == K::Expr && d.expr->dtype.is_integer())))
          error_at(a.loc("shape"), "a tensor dim must be an int or a symbolic dim, not " + describe(d));
      CtValue v;
      v.kind = K::TensorType;
      v.tensor_type = type;
      return v;
    };
    t["T.Tensor"] = tensor_type;
    t["T.reshape"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"src", "shape"});
      return view_of(el, a, c, "src");
    };
    t["T.view"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"src", "shape=None", "dtype=None"});
      return view_of(el, a, c, "src");
    };
    t["T.Buffer"] = tensor_type;
    t["T.Kernel"] = [](Elaborator&, const EvaluatedCall& c) {
      return no_value_here(c, "is used as 'with T.Kernel(...) as (bx, by):'");
    };
    t["T.ClusterKernel"] = [](Elaborator&, const EvaluatedCall& c) {
      return no_value_here(c, "is used as 'with T.ClusterKernel(..., cluster_dims=2) as bx:'");
    };
    for (const char* loop : {"T.Parallel", "T.Pipelined", "T.serial", "T.Serial", "T.grid", "T.unroll",
                             "T.vectorized", "T.Persistent"})
      t[loop] = [](Elaborator&, const EvaluatedCall& c) {
        return no_value_here(c, "is used as the iterable of a for loop");
      };
    t["range"] = range_op;
    t["sum"] = sum_op;
    t["any"] = [](Elaborator& el, const EvaluatedCall& c) { return any_all_op(el, c, true); };
    t["all"] = [](Elaborator& el, const EvaluatedCall& c) { return any_all_op(el, c, false); };
    t["enumerate"] = enumerate_op;
    t["zip"] = zip_op;
    for (const char* deco : {"T.prim_func", "T.macro", "tilec.jit"})
      t[deco] = [](Elaborator&, const EvaluatedCall& c) {
        return no_value_here(c, "is used as a decorator");
      };
    t["len"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"obj"});
      const CtValue& v = a["obj"];
      if (v.is_sequence()) return CtValue::of_int(static_cast<int64_t>(v.items.size()));
      if (v.kind == K::String) return CtValue::of_int(static_cast<int64_t>(v.text.size()));
      if (v.kind == K::Buffer) {
        int64_t n;
        if (ir::is_const_int(v.buffer->shape[0], &n)) return CtValue::of_int(n);
        return CtValue::of_expr(v.buffer->shape[0]);
      }
      error_at(a.loc("obj"), "len() of " + describe(v));
    };
    t["abs"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"x"});
      const CtValue& v = a["x"];
      if (v.kind == K::Int) return CtValue::of_int(abs_int(v.int_value, c.node->loc));
      if (v.kind == K::Float) return CtValue::of_float(std::fabs(v.float_value));
      ir::Expr e = el.to_expr(v, a.loc("x"), "abs() argument");
      return CtValue::of_expr(ir::make_call(e->dtype, "abs", {e}));
    };
    // int(), float(), bool() of compile-time values as Python converts them;
    // of runtime values, a cast.
    auto convert = [](DType target) {
      return [target](Elaborator& el, const EvaluatedCall& c) {
        CallArgs a = el.bind(c, {"x"});
        const CtValue& v = a["x"];
        const SourceLoc& loc = a.loc("x");
        if (target.is_bool() && v.is_constant()) return CtValue::of_bool(el.truthy(v, loc));
        if (v.is_number() || v.kind == K::String) {
          if (target.is_float()) {
            if (v.kind != K::String) return CtValue::of_float(v.kind == K::Float ? v.float_value
                                                                                 : static_cast<double>(v.int_value));
            try {
              size_t used = 0;
              if (v.text.find_first_of("xX") != std::string::npos) throw std::invalid_argument("hex");
              double d = std::stod(v.text, &used);
              if (v.text.find_first_not_of(" \t\n\r\f\v", used) == std::string::npos) return CtValue::of_float(d);
            } catch (const std::logic_error&) {
            }
            error_at(loc, "could not convert string to float: '" + v.text + "'");
          }
          if (v.kind == K::Float) return CtValue::of_int(float_to_int(v.float_value, loc));
          if (v.kind == K::String) return CtValue::of_int(parse_int(v.text, loc));
          return CtValue::of_int(v.int_value);  // an int, or a bool (whose int_value is 0 or 1)
        }
        return CtValue::of_expr(ir::make_cast(target, el.to_expr(v, loc, c.callee_name + "() argument")));
      };
    };
    t["str"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"object=\"\""});
      auto text = python_str(a["object"]);
      if (!text) error_at(a.loc("object"), "str() of " + describe(a["object"]) + ": kernels convert only compile-time "
                                           "values (None, bools, numbers, strings, dtypes, tuples and lists of these)");
      return CtValue::of_string(*text);
    };
    t["int"] = convert(DType::Int32);
    t["float"] = convert(DType::Float32);
    t["bool"] = convert(DType::Bool);
    for (const char* seq : {"tuple", "list"})
      t[seq] = [](Elaborator& el, const EvaluatedCall& c) {
        CallArgs a = el.bind(c, {"items=()"});
        CtValue v = a["items"];
        if (v.kind == K::None) v = CtValue::tuple({});
        if (!v.is_sequence()) error_at(a.loc("items"), c.callee_name + "() of " + describe(v));
        v.kind = c.callee_name == "list" ? K::List : K::Tuple;
        return v;
      };
    t["print"] = [](Elaborator&, const EvaluatedCall& c) {
      return no_value_here(c, "is not supported in kernels");
    };
    t["T.const"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"names"});
      if (!el.eager_)
        error_at(c.node->loc, "T.const declares dims of an eager jit function's tensors; in a "
                              "prim_func use T.symbolic or a Python constant");
      if (a["names"].kind != K::String) error_at(a.loc("names"), "T.const takes names as a string: \"M, N\"");
      std::vector<CtValue> dims;
      std::string name;
      std::string text = a["names"].text + " ";
      for (char ch : text) {
        if (ch == ',' || ch == ' ' || ch == '\t') {
          if (name.empty()) continue;
          auto it = el.eager_->args.find(name);
          if (it != el.eager_->args.end() && it->second.kind == K::Int) {
            dims.push_back(it->second);
          } else if (el.finding_dims_) {
            ir::Expr placeholder = ir::make_var(name, DType::Int32);
            el.dim_placeholders_[placeholder.as<ir::Var>()] = name;
            dims.push_back(CtValue::of_expr(placeholder));
          } else if (auto declared = el.declared_dims().find(name); declared != el.declared_dims().end()) {
            dims.push_back(CtValue::of_int(declared->second.value));
          } else {
            CtValue p;
            p.kind = K::PendingDim;
            p.text = name;
            dims.push_back(p);
          }
          name.clear();
        } else {
          name += ch;
        }
      }
      if (dims.empty()) error_at(a.loc("names"), "T.const needs at least one name");
      return dims.size() == 1 ? dims[0] : CtValue::tuple(dims);
    };
    t["T.alloc_global"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"shape", "dtype", "scope=\"global\""});
      if (el.in_kernel_)
        error_at(c.node->loc, "T.alloc_global makes a scratch tensor for the function's T.Kernel blocks; "
                              "call it in the function body, before them");
      if (a["scope"].kind != K::String || a["scope"].text != "global")
        error_at(a.loc("scope"), "T.alloc_global's scope is \"global\"");
      el.workspaces_.push_back(new_tensor_param(el, c, a, "workspace"));
      return CtValue::of_buffer(el.workspaces_.back().buffer);
    };
    t["T.empty"] = [](Elaborator& el, const EvaluatedCall& c) {
      CallArgs a = el.bind(c, {"shape", "dtype=\"float32\""});
      if (!el.eager_ || el.in_kernel_)
        error_at(c.node->loc, "T.empty creates an output of an eager jit function, outside its T.Kernel block");
      el.eager_->outputs.push_back(new_tensor_param(el, c, a, "out"));
      return CtValue::of_buffer(el.eager_->outputs.back().buffer);
    };
    return t;
  }();
  return table;
}

bool Elaborator::is_builtin(const std::string& qualified) const {
  if (builtin_table().count(qualified)) return true;
  return qualified.rfind("T.", 0) == 0 && ir::find_intrinsic(qualified.substr(2)) != nullptr;
}

bool Elaborator::evaluates_own_arguments(const std::string& qualified) {
  return qualified == "T.Layout" || qualified == "T.annotate_layout" || qualified == "T.comm_reducer" ||
         qualified == "T.attr";
}

CtValue Elaborator::call_builtin(const std::string& name, const EvaluatedCall& call_in) {
  EvaluatedCall call = call_in;
  call.callee_name = name;
  auto it = builtin_table().find(name);
  if (it != builtin_table().end()) return it->second(*this, call);
  if (name.rfind("T.", 0) == 0)
    if (const ir::IntrinsicInfo* info = ir::find_intrinsic(name.substr(2)))
      return intrinsic_call(*this, call, *info);
  error_at(call.node->loc, "'" + name + "' cannot be called in kernels");
}

}  // namespace tilec::frontend
