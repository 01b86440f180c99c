#include "passes/cuda/infer_layout.h"

#include "passes/cuda/tma_copies.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "base/diagnostics.h"
#include "base/log.h"
#include "ir/region.h"
#include "ir/shared_layout.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "ir/mutator.h"
#include "ir/visitor.h"
#include "op/layout_constraints.h"
#include "op/op.h"
#include "op/parallel.h"
#include "passes/cuda/tma_copies.h"
#include "passes/hip/mfma.h"

namespace tilec::passes {
namespace {

std::string gemm_operand_name(const ir::BufferRegion& r, bool a);  // below
std::string mma_swizzle_problem(const ir::Gemm& op);

using ir::Expr;
using ir::Fragment;
using ir::Stmt;
using op::access_layout;
using op::const_extents;
using op::const_shape;
using op::default_run;
using op::FragmentAccess;
using op::is_fragment;
using op::owned_under;
using op::parallel_nest;
using op::ParallelNest;
using op::Site;
using op::site_layout;

class LayoutInference {
 public:
  explicit LayoutInference(const PassContext& ctx) : ctx_(ctx) {}

  Stmt run(const ir::KernelLaunch& launch, const Stmt& body) {
    threads_ = launch.threads;
    collect(body);
    for (const auto& [gemm, grid] : wgmma_gemms_) {
      auto c = const_shape(gemm->c.buffer);
      demand(gemm->c.buffer, ir::wgmma_accumulator(c[0], c[1], grid.groups_m, grid.groups_n), gemm->loc);
      if (is_fragment(gemm->a.buffer)) {
        auto a = const_shape(gemm->a.buffer);
        demand(gemm->a.buffer, ir::wgmma_accumulator(a[0], a[1], grid.groups_m, 1), gemm->loc);
      }
    }
    for (const auto& [gemm, grid] : mfma_gemms_) {
      auto c = const_shape(gemm->c.buffer);
      demand(gemm->c.buffer, ir::mfma_accumulator(c[0], c[1], grid.warps_m, grid.warps_n), gemm->loc);
      if (is_fragment(gemm->a.buffer)) demand(gemm->a.buffer, mfma_register_a_layout(*gemm, grid), gemm->loc);
      for (const ir::Buffer& operand : {gemm->a.buffer, gemm->b.buffer})
        if (operand->scope == ir::MemoryScope::Shared) row_major_.insert(operand.get());
    }
    for (const auto& [gemm, grid] : mma_gemms_) {
      Fragment acc = ir::mma_accumulator(const_shape(gemm->c.buffer)[0], const_shape(gemm->c.buffer)[1],
                                         grid.warps_m, grid.warps_n);
      demand(gemm->c.buffer, acc, gemm->loc);
      for (bool is_a : {true, false}) {
        const ir::Buffer& operand = is_a ? gemm->a.buffer : gemm->b.buffer;
        if (is_fragment(operand)) demand(operand, register_operand_layout(*gemm, grid, is_a), gemm->loc);
        else swizzle(operand);
      }
    }
    for (const auto& [buffer, loc] : scalar_uses_)
      if (!layouts_.count(buffer.get())) demand(buffer, ir::replicated_fragment(const_shape(buffer)), loc);
    for (;;) {
      while (propagate()) {
      }
      const ir::Buffer* next = seed_of_constrained_site();
      if (!next && seed_line_site()) continue;
      for (size_t i = 0; !next && i < fragments_.size(); ++i)
        if (!layouts_.count(fragments_[i].get())) next = &fragments_[i];
      if (!next) break;
      auto shape = const_shape(*next);
      demand(*next, ir::default_fragment(shape, threads_, default_run(shape, threads_, (*next)->dtype.bytes())),
             (*next)->loc);
    }
    check_sites();
    ir::BufferMap replaced;
    for (const auto& b : fragments_) {
      auto n = std::make_shared<ir::BufferNode>(*b);
      n->fragment = std::make_shared<Fragment>(layouts_.at(b.get()).layout);
      replaced[b.get()] = n;
    }
    // The layouts the ops need replace the compiler's and make_swizzled_layout's; a user's
    // layout reaches an op only where it gives the same offsets (ir/shared_layout.h).
    auto lay_out = [&](const ir::BufferNode* b, ir::SharedLayoutRef layout) {
      if (ir::has_user_layout(*b) &&
          ir::user_layout_differs(*b, layout ? *layout : *ir::SharedLayout::row_major(b->layout->shape())))
        throw std::logic_error("infer_layout: '" + b->name + "' would lose " + ir::user_layout_origin(*b));
      auto n = std::make_shared<ir::BufferNode>(*b);
      n->layout = std::move(layout);
      replaced[b] = n;
    };
    for (const auto& b : swizzled_) lay_out(b.get(), ir::mma_swizzle_of(*b));
    for (const auto* b : panels_) lay_out(b, ir::panels_of(*b, panel_bytes_of(*b)));
    for (const auto* b : row_major_)
      if (b->layout) lay_out(b, nullptr);
    return ir::replace_buffers(body, replaced);
  }

 private:
  struct Assigned {
    Fragment layout;
    SourceLoc origin;
  };

  void collect(const Stmt& body) {
    struct Collector : ir::IRVisitor {
      LayoutInference* self;
      int in_site = 0;
      void visit_Allocate(const ir::Allocate* op) override {
        if (is_fragment(op->buffer)) {
          const_shape(op->buffer);
          self->fragments_.push_back(op->buffer);
        }
        IRVisitor::visit_Allocate(op);
      }
      void visit_For(const ir::For* op) override {
        if (op->for_kind == ir::ForKind::Parallel && in_site == 0) {
          if (auto nest = parallel_nest_of(op)) {
            self->add(op::layout_constraints(*nest));
            ++in_site;
            IRVisitor::visit_For(op);
            --in_site;
            return;
          }
        }
        IRVisitor::visit_For(op);
      }
      void visit_BufferLoad(const ir::BufferLoad* op) override {
        if (in_site == 0 && is_fragment(op->buffer)) self->scalar_uses_.push_back({op->buffer, op->loc});
        IRVisitor::visit_BufferLoad(op);
      }
      void visit_BufferStore(const ir::BufferStore* op) override {
        if (in_site == 0 && is_fragment(op->buffer)) self->scalar_uses_.push_back({op->buffer, op->loc});
        IRVisitor::visit_BufferStore(op);
      }
      // A tile op: the target's own layouts where it runs the op on its instructions (a
      // tensor-core gemm), else the constraints of the op's unit (op/op.h). Its operands are
      // no scalar uses.
      void visit(const Stmt& s) override {
        if (s && op::is_tile_op(s.kind())) {
          const auto* gemm = s.as<ir::Gemm>();
          if (!gemm || !self->on_tensor_cores(gemm)) self->add(op::layout_constraints_of(*s));
          return;
        }
        IRVisitor::visit(s);
      }
      using IRVisitor::visit;
    } collector;
    collector.self = this;
    // Shared operands of wgmma gemms and sources of TMA stores are panel tiles; an mma gemm
    // reading one of those runs off the tensor cores (its ldmatrix addressing knows the
    // swizzled layout only).
    struct Panels : ir::IRVisitor {
      LayoutInference* self;
      void visit_Gemm(const ir::Gemm* op) override {
        if (!wgmma_grid(*op, self->threads_, self->ctx_)) return;
        for (const auto* r : {&op->a, &op->b})
          if (r->buffer->scope == ir::MemoryScope::Shared) self->panels_.insert(r->buffer.get());
      }
      void visit_Copy(const ir::Copy* op) override {
        if (op->barrier) self->panels_.insert(op->dst.buffer.get());  // a TMA load (warp_specialize)
        if (is_tma_store(*op, self->ctx_)) self->panels_.insert(op->src.buffer.get());
      }
    } panels;
    panels.self = this;
    panels.visit(body);
    collector.visit(body);
  }

  static std::optional<ParallelNest> parallel_nest_of(const ir::For* op) {
    auto self = std::make_shared<ir::For>(*op);
    return parallel_nest(Stmt(self));
  }

  // CUDA's and HIP's tensor-core gemms (wgmma, MFMA, mma.sync), whose operands take their
  // instructions' layouts (run): whether `op` is one.
  bool on_tensor_cores(const ir::Gemm* op) {
    std::string why_not;
    if (auto grid = wgmma_grid(*op, threads_, ctx_, &why_not)) {
      wgmma_gemms_.push_back({op, *grid});
      return true;
    }
    if (auto grid = mfma_wave_grid(*op, threads_, ctx_)) {
      mfma_gemms_.push_back({op, *grid});
      return true;
    }
    auto panels = [&](const ir::BufferRegion& r) { return panels_.count(r.buffer.get()) > 0; };
    auto grid = mma_warp_grid(*op, threads_, ctx_);
    const bool on_mma = grid && !panels(op->a) && !panels(op->b);
    if (!grid && log_enabled(LogLevel::Debug) && (ir::has_user_layout(*op->a.buffer) || ir::has_user_layout(*op->b.buffer)))
      if (std::string why = mma_swizzle_problem(*op); !why.empty())
        log(LogLevel::Debug, op->loc.str() + ": T.gemm runs on CUDA cores, not mma.sync: " + why);
    if (log_enabled(LogLevel::Debug) && hopper_feature(ctx_, "tilec.wgmma"))
      log(LogLevel::Debug, op->loc.str() + ": T.gemm runs on " + (on_mma ? "mma.sync" : "CUDA cores") +
                               ", not wgmma: " + why_not);
    if (on_mma) {
      mma_gemms_.push_back({op, *grid});
      return true;
    }
    return false;
  }

  void add(const op::LayoutConstraints& c) {
    sites_.insert(sites_.end(), c.sites.begin(), c.sites.end());
    projections_.insert(projections_.end(), c.projections.begin(), c.projections.end());
    scalar_uses_.insert(scalar_uses_.end(), c.replicated.begin(), c.replicated.end());
  }

  void swizzle(const ir::Buffer& b) {
    for (const auto& s : swizzled_)
      if (s == b) return;
    swizzled_.push_back(b);
  }

  const Fragment* layout_of(const ir::Buffer& b) const {
    auto it = layouts_.find(b.get());
    return it == layouts_.end() ? nullptr : &it->second.layout;
  }

  // Gives `b` `layout`, or reports a conflict with the layout it already has.
  bool demand(const ir::Buffer& b, const Fragment& layout, const SourceLoc& loc) {
    auto it = layouts_.find(b.get());
    if (it == layouts_.end()) {
      layouts_.emplace(b.get(), Assigned{layout, loc});
      return true;
    }
    if (it->second.layout != layout) conflict(b, it->second, layout, loc);
    return false;
  }

  [[noreturn]] void conflict(const ir::Buffer& b, const Assigned& first, const Fragment& second,
                             const SourceLoc& loc) const {
    error_at(loc,
             "layout conflict for fragment '" + b->name + "': this statement needs its elements spread over "
             "threads as " + second.to_string() + ", but they are spread as " + first.layout.to_string() +
             "; copy it into a fragment of its own (or through shared memory) between the two",
             first.origin, "'" + b->name + "' got its layout here");
  }

  [[noreturn]] void not_owned(const FragmentAccess& a, const Fragment& loop, const SourceLoc& loc) const {
    std::string dims;
    for (size_t d = 0; d < a.dims.size(); ++d)
      dims += (d ? ", " : "") + (a.dims[d] < 0 ? std::string("-") : std::to_string(a.dims[d]));
    const Assigned& first = layouts_.at(a.buffer.get());
    error_at(loc,
             "layout conflict for fragment '" + a.buffer->name + "': here it is indexed by the loop's dims (" + dims +
             "), so the thread that runs a loop element does not hold the element of '" + a.buffer->name +
             "' it uses (the loop runs as " + loop.to_string() + "; '" + a.buffer->name + "' is spread as " +
             first.layout.to_string() + "); copy it into a fragment of its own (or through shared memory) first",
             first.origin, "'" + a.buffer->name + "' got its layout here");
  }

  // When nothing propagates: a site that holds a fragment along a dim it doesn't spread
  // over threads (gemv's matrix along k, a gemm operand read from registers) constrains its
  // fragments most, so its own output is laid out first and the rest follow from it.
  const ir::Buffer* seed_of_constrained_site() const {
    for (const Site& site : sites_) {
      bool constrained = false;
      for (const auto& a : site.accesses)
        if (is_fragment(a.buffer) && !layout_of(a.buffer) &&
            std::find(a.dims.begin(), a.dims.end(), -1) != a.dims.end())
          constrained = true;
      if (!constrained) continue;
      for (const auto& a : site.accesses) {
        if (!is_fragment(a.buffer) || layout_of(a.buffer) || a.dims.size() != site.extents.size()) continue;
        if (std::find(a.dims.begin(), a.dims.end(), -1) == a.dims.end()) return &a.buffer;
      }
    }
    return nullptr;
  }

  // Next, a constrained site none of whose fragments covers it, each holding some dims whole
  // (a scan's lines): its first fragment takes the site's default layout, extended over the
  // dims the site doesn't spread. Whether one was laid out.
  bool seed_line_site() {
    for (const Site& site : sites_) {
      auto has_layout = [this](const ir::Buffer& b) { return layout_of(b); };
      if (site_layout(site, has_layout)) continue;
      bool whole = false, constrained = false;
      for (const auto& a : site.accesses) {
        if (!is_fragment(a.buffer)) continue;
        const bool lines = std::find(a.dims.begin(), a.dims.end(), -1) != a.dims.end();
        constrained |= lines && !layout_of(a.buffer);
        whole |= !lines && a.dims.size() == site.extents.size();
      }
      if (whole || !constrained) continue;
      Fragment layout = ir::default_fragment(site.extents, threads_, 1);
      for (const auto& a : site.accesses) {
        if (!is_fragment(a.buffer) || layout_of(a.buffer)) continue;
        if (auto l = access_layout(layout, a, site.extents)) return demand(a.buffer, *l, site.loc);
      }
    }
    return false;
  }

  bool propagate() {
    bool changed = false;
    for (const op::Projection& p : projections_) {
      const Fragment* from = layout_of(p.from);
      if (!from || !is_fragment(p.to)) continue;
      Fragment projected = from->project(p.keep);
      // Of another shape (a result that keeps extent-1 dims): only a replicated one fits.
      if (projected.shape() != const_shape(p.to)) projected = ir::replicated_fragment(const_shape(p.to));
      changed |= demand(p.to, projected, p.loc);
    }
    for (const Site& site : sites_) {
      auto layout = site_layout(site, [this](const ir::Buffer& b) { return layout_of(b); });
      if (!layout) continue;
      for (const auto& a : site.accesses) {
        if (!is_fragment(a.buffer) || layout_of(a.buffer)) continue;
        if (auto l = access_layout(*layout, a, site.extents)) changed |= demand(a.buffer, *l, site.loc);
      }
    }
    return changed;
  }

  void check_sites() const {
    for (const Site& site : sites_) {
      auto layout = site_layout(site, [this](const ir::Buffer& b) { return layout_of(b); });
      if (!layout) continue;
      for (const auto& a : site.accesses) {
        const Fragment* f = layout_of(a.buffer);
        if (f && !owned_under(*f, a.dims, *layout)) not_owned(a, *layout, site.loc);
      }
    }
    for (const op::Projection& p : projections_) {
      if (is_fragment(p.to) || !is_fragment(p.from)) continue;
      error_at(p.loc, "the result of " + p.what + " of fragment '" + p.from->name + "' must be a fragment (got " +
                          ir::scope_name(p.to->scope) + " '" + p.to->name + "')");
    }
  }

  const PassContext& ctx_;
  int threads_ = 128;
  std::vector<ir::Buffer> fragments_;
  std::vector<ir::Buffer> swizzled_;
  std::vector<std::pair<ir::Buffer, SourceLoc>> scalar_uses_;
  std::vector<Site> sites_;
  std::vector<op::Projection> projections_;
  std::vector<std::pair<const ir::Gemm*, WarpGrid>> mma_gemms_;
  std::vector<std::pair<const ir::Gemm*, WarpGrid>> mfma_gemms_;
  std::vector<std::pair<const ir::Gemm*, WarpgroupGrid>> wgmma_gemms_;
  std::unordered_set<const ir::BufferNode*> panels_;
  std::unordered_set<const ir::BufferNode*> row_major_;  // MFMA operands (read row-major)
  std::unordered_map<const ir::BufferNode*, Assigned> layouts_;
};

class KernelLayouts : public ir::IRMutator {
 public:
  explicit KernelLayouts(const PassContext& ctx) : ctx_(ctx) {}

 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt&) override {
    auto n = std::make_shared<ir::KernelLaunch>(*op);
    n->body = LayoutInference(ctx_).run(*op, op->body);
    return Stmt(n);
  }

 private:
  const PassContext& ctx_;
};

// The mma.sync kind for operands of type t (tensor_core_k says which types have one).
TargetFeature mma_kind(DType t) {
  if (t.bytes() == 1) return TargetFeature::MmaFp8;
  return t == DType::Float32 ? TargetFeature::MmaTf32 : TargetFeature::MmaF16;
}

}  // namespace

bool whole_fragment(const ir::BufferRegion& r) {
  if (!is_fragment(r.buffer) || r.region.size() != 2) return false;
  for (size_t d = 0; d < 2; ++d) {
    int64_t e, f;
    if (!ir::is_zero(ir::simplify(r.region[d].min)) || !ir::is_const_int(ir::simplify(r.region[d].extent), &e) ||
        !ir::is_const_int(ir::simplify(r.buffer->shape[d]), &f) || e != f)
      return false;
  }
  return true;
}

bool whole_shared_tile(const ir::BufferRegion& r) {
  size_t rank = r.region.size();
  if (r.buffer->scope != ir::MemoryScope::Shared || rank < 2) return false;
  for (size_t d = 0; d < rank; ++d) {
    Expr extent = ir::simplify(r.region[d].extent);
    if (d + 2 < rank) {
      if (!ir::is_one(extent)) return false;
      continue;
    }
    int64_t e, f;
    if (!ir::is_zero(ir::simplify(r.region[d].min)) || !ir::is_const_int(extent, &e) ||
        !ir::is_const_int(ir::simplify(r.buffer->shape[d]), &f) || e != f)
      return false;
  }
  return true;
}

std::optional<GemmShape> gemm_shape(const ir::Gemm& op) {
  auto ec = const_extents(ir::squeezed_extents(op.c));
  auto ea = const_extents(ir::squeezed_extents(op.a));
  if (ec.size() != 2 || ea.size() != 2 || op.c.buffer->shape.size() != 2) return std::nullopt;
  for (size_t d = 0; d < 2; ++d) {
    int64_t extent;
    if (!ir::is_const_int(op.c.buffer->shape[d], &extent) || extent != ec[d]) return std::nullopt;
  }
  return GemmShape{ec[0], ec[1], op.transpose_a ? ea[0] : ea[1]};
}

// The K of one tensor-core instruction (mma.sync or wgmma) for operands of type t (fp32: tf32),
// or 0 when there is none.
int64_t tensor_core_k(DType t) {
  switch (t.code()) {
    case DType::Float16: case DType::BFloat16: return 16;
    case DType::Float32: return 8;
    case DType::Float8E4M3: case DType::Float8E5M2: return 32;
    default: return 0;
  }
}

std::optional<WarpGrid> mma_warp_grid(const ir::Gemm& op, int threads, const PassContext& ctx) {
  if (!is_fragment(op.c.buffer) || op.c.buffer->dtype != DType::Float32) return std::nullopt;
  // One operand in registers (gemm_rs, gemm_sr): 16-bit, laid out as an accumulator of its
  // M x K (N x K) shape over the warps, which is the mma operand register for register
  // (device/cuda/gemm.h, operand_layout below).
  const bool a_in_registers = whole_fragment(op.a), b_in_registers = whole_fragment(op.b);
  if (a_in_registers ? op.a.buffer->dtype.bytes() != 2 : !whole_shared_tile(op.a)) return std::nullopt;
  if (b_in_registers ? a_in_registers || op.b.buffer->dtype.bytes() != 2 : !whole_shared_tile(op.b))
    return std::nullopt;
  DType t = op.a.buffer->dtype;
  if (op.b.buffer->dtype != t) return std::nullopt;
  const int64_t kstep = tensor_core_k(t);
  if (kstep == 0 || !ctx.target.has(mma_kind(t))) return std::nullopt;
  auto shape = gemm_shape(op);
  if (!shape || shape->k % kstep != 0) return std::nullopt;
  if (!mma_swizzle_problem(op).empty()) return std::nullopt;
  const int64_t m = shape->m, n = shape->n;
  // The most warps (of the block's, halving) that split the tile as the policy says.
  for (int64_t warps = threads / 32; warps >= 1; warps /= 2) {
    std::optional<WarpGrid> best;
    for (int64_t wm = 1; wm <= warps; ++wm) {
      if (warps % wm) continue;
      int64_t wn = warps / wm;
      if (m % (16 * wm) || n % (8 * wn)) continue;
      if ((op.policy == ir::WarpPolicy::FullRow && wn != 1) || (op.policy == ir::WarpPolicy::FullCol && wm != 1))
        continue;
      if (a_in_registers && wn != 1) continue;  // each warp holds whole rows of A
      if (b_in_registers && (wm != 1 || n % (16 * wn))) continue;  // ... whole columns of B
      auto score = [&](const WarpGrid& g) { return std::abs(m / g.warps_m - n / g.warps_n); };
      WarpGrid g{wm, wn};
      if (!best || score(g) < score(*best)) best = g;
    }
    if (best) return best;
  }
  return std::nullopt;
}

namespace {

// The widest panels b's tile can be cut into, whatever layout it has.
int64_t panel_width_that_fits(const ir::BufferNode& b) {
  size_t rank = b.shape.size();
  int64_t rows, cols;
  if (b.scope != ir::MemoryScope::Shared || rank < 2 || !ir::is_const_int(ir::simplify(b.shape[rank - 2]), &rows) ||
      !ir::is_const_int(ir::simplify(b.shape[rank - 1]), &cols))
    return 0;
  for (size_t d = 0; d + 2 < rank; ++d)
    if (!ir::is_const_int(ir::simplify(b.shape[d]), nullptr)) return 0;
  if (rows % 8 != 0) return 0;
  for (int64_t width : {128, 64, 32, 16})
    if (cols * b.dtype.bytes() % width == 0) return width;
  return 0;
}

}  // namespace

int64_t panel_bytes_of(const ir::BufferNode& b) {
  const int64_t width = panel_width_that_fits(b);
  if (width && ir::has_user_layout(b) && ir::user_layout_differs(b, *ir::panels_of(b, width))) return 0;
  return width;
}

namespace {

std::string gemm_operand_name(const ir::BufferRegion& r, bool a) {
  return std::string(a ? "A" : "B") + " ('" + r.buffer->name + "')";
}

// Why gemm_ss / ldmatrix can't read a shared operand of `op` (its user layout is not the mma
// swizzle they address), or "".
std::string mma_swizzle_problem(const ir::Gemm& op) {
  for (bool a : {true, false}) {
    const ir::BufferRegion& r = a ? op.a : op.b;
    if (r.buffer->scope != ir::MemoryScope::Shared || !ir::has_user_layout(*r.buffer)) continue;
    const std::vector<int64_t>& shape = r.buffer->layout->shape();
    const size_t rank = shape.size();
    const bool whole_lines = rank >= 2 && shape[rank - 2] * shape[rank - 1] * r.buffer->dtype.bytes() % 128 == 0;
    if (!whole_lines || ir::user_layout_differs(*r.buffer, *ir::mma_swizzle_of(*r.buffer)))
      return gemm_operand_name(r, a) + " has " + ir::user_layout_origin(*r.buffer) +
             ", not the mma swizzle that gemm_ss reads";
  }
  return "";
}

// Why shared operand `r` of a gemm can't be read by wgmma, or "".
std::string wgmma_operand_problem(const ir::BufferRegion& r, bool a) {
  if (!whole_shared_tile(r)) return gemm_operand_name(r, a) + " is not a whole shared tile";
  if (const int64_t width = panel_width_that_fits(*r.buffer); width && !panel_bytes_of(*r.buffer))
    return gemm_operand_name(r, a) + " has " + ir::user_layout_origin(*r.buffer) + ", not the " +
           std::to_string(width) + "-byte panels wgmma reads";
  if (!panel_bytes_of(*r.buffer))
    return gemm_operand_name(r, a) + " can't be stored in panels (its tile needs constant dims, rows a multiple "
                                     "of 8 and a row of whole 16-byte chunks)";
  return "";
}

}  // namespace

std::optional<WarpgroupGrid> wgmma_grid(const ir::Gemm& op, int threads, const PassContext& ctx, std::string* why_not) {
  std::string ignored;
  std::string& why = why_not ? *why_not : ignored;
  if (!hopper_feature(ctx, "tilec.wgmma")) {
    why = "wgmma needs a target that has it (sm_90a) and the pass config tilec.wgmma on";
    return std::nullopt;
  }
  if (threads % 128 != 0) {
    why = "the block's " + std::to_string(threads) + " threads are not whole warpgroups of 128";
    return std::nullopt;
  }
  if (!is_fragment(op.c.buffer) || op.c.buffer->dtype != DType::Float32) {
    why = "the accumulator C ('" + op.c.buffer->name + "') is not a float32 fragment";
    return std::nullopt;
  }
  const bool a_in_registers = whole_fragment(op.a);
  DType t = op.a.buffer->dtype;
  if (op.b.buffer->dtype != t) {
    why = std::string("A and B have different dtypes (") + t.name() + ", " + op.b.buffer->dtype.name() + ")";
    return std::nullopt;
  }
  // fp16 / bf16 k16, tf32 (float32 operands) k8 and fp8 k32: each k step is 32 bytes of a row.
  const int64_t kstep = tensor_core_k(t);
  if (kstep == 0) {
    why = std::string("wgmma has no ") + t.name() + " operands";
    return std::nullopt;
  }
  why = wgmma_operand_problem(op.b, false);
  if (why.empty() && a_in_registers && (op.transpose_a || t.bytes() != 2))
    why = "A ('" + op.a.buffer->name + "') in registers must be 16-bit and not transposed";
  if (why.empty() && !a_in_registers) why = wgmma_operand_problem(op.a, true);
  if (!why.empty()) return std::nullopt;
  // Only 16-bit operands may be MN-major (imm-trans-a / imm-trans-b).
  if (t.bytes() != 2 && (op.transpose_a || !op.transpose_b)) {
    why = std::string(t == DType::Float32 ? "tf32" : "fp8") + " wgmma reads K-major operands only: A stored M x K "
          "and B stored N x K (transpose_B=True)" + (op.transpose_a ? "; A is stored K x M" : "; B is stored K x N");
    return std::nullopt;
  }
  auto shape = gemm_shape(op);
  if (!shape || shape->k % kstep != 0) {
    why = shape ? "K = " + std::to_string(shape->k) + " is not a multiple of the instruction's k (" +
                      std::to_string(kstep) + ")"
                : std::string("the gemm's shape is not constant");
    return std::nullopt;
  }
  const int64_t m = shape->m, n = shape->n;
  // A B stored K x N is read by each instruction from the first column of a panel.
  const int64_t panel = op.transpose_b ? 0 : panel_bytes_of(*op.b.buffer) / t.bytes(), groups = threads / 128;
  auto width = [](int64_t cols) {  // device/cuda/wgmma.h, detail::wgmma_width
    int64_t w = std::min<int64_t>(cols, 256);
    while (w > 0 && cols % w != 0) w -= 8;
    return w;
  };
  std::vector<int64_t> orders;  // groups_m, most first (FullCol: fewest first)
  for (int64_t gm = groups; gm >= 1; --gm) orders.push_back(gm);
  if (op.policy == ir::WarpPolicy::FullCol) std::reverse(orders.begin(), orders.end());
  for (int64_t gm : orders) {
    if (groups % gm) continue;
    int64_t gn = groups / gm;
    if (m % (64 * gm) || n % (8 * gn) || (a_in_registers && gn != 1)) continue;
    if ((op.policy == ir::WarpPolicy::FullRow && gn != 1) || (op.policy == ir::WarpPolicy::FullCol && gm != 1)) continue;
    int64_t wn = n / gn, w = width(wn);
    if (panel && ((gn > 1 && wn % panel) || (w != wn && w % panel))) continue;
    return WarpgroupGrid{gm, gn};
  }
  why = "no grid of the " + std::to_string(groups) + " warpgroups splits the " + std::to_string(m) + " x " +
        std::to_string(n) + " tile into m64 strips" + (a_in_registers ? " (A in registers: all along M)" : "") +
        (panel ? " with each instruction's columns starting a " + std::to_string(panel) +
                     "-column panel of B (stored K x N)"
               : "");
  return std::nullopt;
}

ir::Fragment register_operand_layout(const ir::Gemm& op, const WarpGrid& grid, bool a) {
  // A (M x K) as the accumulator of an M x K tile over the warps along M; B as that of an
  // N x K tile over the warps along N. Stored the other way round (transpose_a, or B as
  // K x N), the same registers hold the transposed tile.
  auto shape = const_shape(a ? op.a.buffer : op.b.buffer);
  bool stored_k_major = a ? op.transpose_a : !op.transpose_b;
  int64_t rows = stored_k_major ? shape[1] : shape[0], k = stored_k_major ? shape[0] : shape[1];
  ir::Fragment acc = ir::mma_accumulator(rows, k, a ? grid.warps_m : grid.warps_n, 1);
  return stored_k_major ? acc.project({1, 0}) : acc;
}

std::optional<WarpGrid> ldmatrix_copy_grid(const ir::Copy& op, int threads) {
  const ir::Buffer& dst = op.dst.buffer;
  if (!whole_fragment(op.dst) || !whole_shared_tile(op.src) || op.src.region.size() != 2 || !dst->fragment ||
      (op.src.buffer->layout && !ir::mma_swizzled(*op.src.buffer)) ||
      dst->dtype.bytes() != 2 || op.src.buffer->dtype != dst->dtype)
    return std::nullopt;
  auto shape = const_shape(dst);
  if (shape[1] * 2 % 16 != 0) return std::nullopt;
  for (int64_t warps = threads / 32; warps >= 1; warps /= 2)
    for (int64_t wm = 1; wm <= warps; ++wm) {
      if (warps % wm || shape[0] % (16 * wm) || shape[1] % (8 * (warps / wm))) continue;
      if (*dst->fragment == ir::mma_accumulator(shape[0], shape[1], wm, warps / wm)) return WarpGrid{wm, warps / wm};
    }
  return std::nullopt;
}

std::optional<WarpgroupGrid> stmatrix_copy_grid(const ir::Copy& op, int threads) {
  const ir::Buffer& src = op.src.buffer;
  const ir::Buffer& dst = op.dst.buffer;
  if (!whole_fragment(op.src) || !whole_shared_tile(op.dst) || op.dst.region.size() != 2 || !src->fragment ||
      !ir::panel_width(*dst) || src->dtype != DType::Float32 || dst->dtype.bytes() != 2 || !dst->dtype.is_float())
    return std::nullopt;
  auto shape = const_shape(src);
  if (shape.size() != 2) return std::nullopt;
  const int64_t groups = threads / 128;
  for (int64_t gm = 1; gm <= groups; ++gm) {
    const int64_t gn = groups / gm;
    if (groups % gm || shape[0] % (64 * gm) || shape[1] % (16 * gn)) continue;
    if (*src->fragment == ir::wgmma_accumulator(shape[0], shape[1], gm, gn)) return WarpgroupGrid{gm, gn};
  }
  return std::nullopt;
}

ir::Stmt infer_layout(const ir::Stmt& body, const PassContext& ctx) { return KernelLayouts(ctx).mutate(body); }

}  // namespace tilec::passes
