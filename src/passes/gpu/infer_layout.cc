#include "passes/gpu/infer_layout.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "base/diagnostics.h"
#include "base/log.h"
#include "ir/mutator.h"
#include "ir/region.h"
#include "ir/shared_layout.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "ir/visitor.h"
#include "op/layout_constraints.h"
#include "op/op.h"
#include "op/parallel.h"
#include "passes/gpu/gemm_layouts.h"
#include "passes/thread_groups.h"

namespace tilec::passes {
namespace {

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
  LayoutInference(const PassContext& ctx, GemmLayoutHook gemm_layouts) : ctx_(ctx), gemm_layouts_(gemm_layouts) {}

  Stmt run(const ir::KernelLaunch& launch, const Stmt& body) {
    threads_ = launch.threads;
    collect(body);
    find_scatterable();
    for (const ir::Gemm* gemm : tensor_core_gemms_) demand_gemm_layouts(*gemm);
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
      demand(*next, seed_layout(*next), (*next)->loc);
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
    for (const auto& [b, layout] : gemm_shared_layouts_)
      if (layout || b->layout) lay_out(b.get(), layout);
    for (const auto& [b, width] : panels_) lay_out(b, ir::panels_of(*b, width));
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
          if (op->buffer->view_of) self->views_.push_back(op->buffer);
        }
        IRVisitor::visit_Allocate(op);
      }
      // A T.ws group's tile code is spread over its threads.
      void visit_IfThenElse(const ir::IfThenElse* op) override {
        auto span = thread_group_of(*op);
        if (!span) return IRVisitor::visit_IfThenElse(op);
        const int block = self->group_threads_;
        self->group_threads_ = static_cast<int>(span->threads());
        visit(op->then_case);
        self->group_threads_ = block;
        if (op->else_case) visit(op->else_case);
      }
      void visit_region(const ir::BufferRegion& r) override {
        self->note_threads(r.buffer);
        IRVisitor::visit_region(r);
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
        self->note_threads(op->buffer);
        if (in_site == 0 && is_fragment(op->buffer)) self->scalar_uses_.push_back({op->buffer, op->loc});
        IRVisitor::visit_BufferLoad(op);
      }
      void visit_BufferStore(const ir::BufferStore* op) override {
        self->note_threads(op->buffer);
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
    // Shared operands of ops whose instructions read or write them in panels (wgmma gemms, TMA
    // loads, stores and reduce-adds) are panel tiles of the width their instructions say (so are pipeline
    // stages TMA fills: warp_specialize made them so).
    struct Panels : ir::IRVisitor {
      LayoutInference* self;
      void visit_Gemm(const ir::Gemm* op) override {
        if (op->instruction.a_panel_bytes) self->panels_[op->a.buffer.get()] = op->instruction.a_panel_bytes;
        if (op->instruction.b_panel_bytes) self->panels_[op->b.buffer.get()] = op->instruction.b_panel_bytes;
      }
      void visit_Copy(const ir::Copy* op) override {
        if (!op->instruction.panel_bytes) return;
        for (const ir::BufferRegion* side : {&op->src, &op->dst})
          if (side->buffer->scope == ir::MemoryScope::Shared)
            self->panels_[side->buffer.get()] = op->instruction.panel_bytes;
      }
      void visit_AtomicAdd(const ir::AtomicAdd* op) override {
        if (op->instruction.panel_bytes) self->panels_[op->src.buffer.get()] = op->instruction.panel_bytes;
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

  // The gemms select_instructions put on the target's matrix cores, whose operands take their
  // instructions' layouts (run): whether `op` is one.
  bool on_tensor_cores(const ir::Gemm* op) {
    if (!op->instruction.selected())
      throw std::logic_error("infer_layout: a T.gemm without an instruction (select_instructions runs first)");
    if (!op->instruction.on_matrix_cores()) return false;
    tensor_core_gemms_.push_back(op);
    return true;
  }

  // The layouts a gemm on the target's matrix cores demands of its operands, as the target's
  // hook says (passes/gpu/gemm_layouts.h).
  void demand_gemm_layouts(const ir::Gemm& gemm) {
    std::optional<GemmLayoutDemands> demands;
    if (gemm_layouts_) demands = gemm_layouts_(gemm);
    if (!demands)
      throw std::logic_error("infer_layout: target " + ctx_.target.name + " has no layouts for a gemm via " +
                             ir::to_string(gemm.instruction) + " (its hook in passes/gpu/gemm_layouts.h knows " +
                             "no such instruction)");
    for (const auto& f : demands->fragments) demand(f.buffer, f.layout, gemm.loc);
    gemm_shared_layouts_.insert(gemm_shared_layouts_.end(), demands->shared.begin(), demands->shared.end());
  }

  // The threads a fragment is spread over: those of the T.ws group that first uses it, else the
  // block's.
  void note_threads(const ir::Buffer& b) {
    if (is_fragment(b) && group_threads_ > 0) fragment_threads_.emplace(b.get(), group_threads_);
  }
  int threads_of(const ir::Buffer& b) const {
    auto it = fragment_threads_.find(b.get());
    return it == fragment_threads_.end() ? threads_ : it->second;
  }

  void add(const op::LayoutConstraints& c) {
    site_threads_.insert(site_threads_.end(), c.sites.size(), group_threads_ > 0 ? group_threads_ : threads_);
    sites_.insert(sites_.end(), c.sites.begin(), c.sites.end());
    projections_.insert(projections_.end(), c.projections.begin(), c.projections.end());
    scalar_uses_.insert(scalar_uses_.end(), c.replicated.begin(), c.replicated.end());
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
    if (!it->second.layout.same_placement(layout)) conflict(b, it->second, layout, loc);
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

  // `loop`: the site's layout, or null where no fragment gave it one (nothing says which thread
  // runs which element, so none need hold what it uses).
  [[noreturn]] void not_owned(const FragmentAccess& a, const Fragment* loop, const SourceLoc& loc) const {
    std::string dims;
    for (size_t d = 0; d < a.dims.size(); ++d)
      dims += (d ? ", " : "") + (a.dims[d] < 0 ? std::string("-") : std::to_string(a.dims[d]));
    const Assigned& first = layouts_.at(a.buffer.get());
    const std::string runs = loop ? "the loop runs as " + loop->to_string() + "; "
                                  : "no fragment of the loop says which thread runs which element; ";
    error_at(loc,
             "layout conflict for fragment '" + a.buffer->name + "': here it is indexed by the loop's dims (" + dims +
             "), so the thread that runs a loop element does not hold the element of '" + a.buffer->name +
             "' it uses (" + runs + "'" + a.buffer->name + "' is spread as " + first.layout.to_string() +
             "); copy it into a fragment of its own (or through shared memory) first",
             first.origin, "'" + a.buffer->name + "' got its layout here");
  }

  // Whether each thread of the site holds some dim of the access whole: a dim the site doesn't
  // spread (-1) with more than one element. An extent-1 dim (the row of `A[bx:bx + 1, :]`)
  // is held whole by any layout.
  static bool holds_lines(const FragmentAccess& a) {
    const auto shape = const_shape(a.buffer);
    for (size_t d = 0; d < a.dims.size(); ++d)
      if (a.dims[d] == -1 && shape[d] > 1) return true;
    return false;
  }

  // When nothing propagates: a site that holds a fragment along a dim it doesn't spread
  // over threads (gemv's matrix along k, a gemm operand read from registers) constrains its
  // fragments most, so its own output is laid out first and the rest follow from it; the
  // sites seeded_first (op/layout_constraints.h) before the others.
  const ir::Buffer* seed_of_constrained_site() const {
    for (const bool first : {true, false})
      for (const Site& site : sites_)
        if (site.seeded_first == first)
          if (const ir::Buffer* seed = seed_of(site)) return seed;
    return nullptr;
  }

  // The output of `site` to lay out first when the site is constrained (holding a fragment
  // without a layout along a dim it doesn't spread), else null.
  const ir::Buffer* seed_of(const Site& site) const {
    bool constrained = false;
    for (const auto& a : site.accesses)
      if (is_fragment(a.buffer) && !layout_of(a.buffer) && holds_lines(a)) constrained = true;
    if (!constrained) return nullptr;
    for (const auto& a : site.accesses) {
      if (!is_fragment(a.buffer) || layout_of(a.buffer) || a.dims.size() != site.extents.size()) continue;
      if (!holds_lines(a)) return &a.buffer;
    }
    return nullptr;
  }

  // Next, a constrained site none of whose fragments covers it, each holding some dims whole
  // (a scan's lines): its first fragment takes the site's default layout, extended over the
  // dims the site doesn't spread. Whether one was laid out.
  bool seed_line_site() {
    for (size_t i = 0; i < sites_.size(); ++i) {
      const Site& site = sites_[i];
      auto has_layout = [this](const ir::Buffer& b) { return layout_of(b); };
      if (site_layout(site, has_layout)) continue;
      bool whole = false, constrained = false;
      for (const auto& a : site.accesses) {
        if (!is_fragment(a.buffer)) continue;
        const bool lines = holds_lines(a);
        constrained |= lines && !layout_of(a.buffer);
        whole |= !lines && a.dims.size() == site.extents.size();
      }
      if (whole || !constrained) continue;
      Fragment layout = ir::default_fragment(site.extents, site_threads_[i], 1);
      for (const auto& a : site.accesses) {
        if (!is_fragment(a.buffer) || layout_of(a.buffer)) continue;
        if (auto l = access_layout(layout, a, site.extents)) return demand(a.buffer, *l, site.loc);
      }
    }
    return false;
  }

  // The default layout of a fragment nothing constrains. A view (T.reshape) and the fragment it
  // views share registers, so the layout must read in both shapes: the widest run a thread
  // holds that gives such a layout, laid out in either shape.
  Fragment seed_layout(const ir::Buffer& b) const {
    auto default_of = [this](const ir::Buffer& f, int64_t run) {
      return ir::default_fragment(const_shape(f), threads_of(f), run);
    };
    auto widest_run = [this](const ir::Buffer& f) {
      auto shape = const_shape(f);
      return default_run(shape, threads_of(f), f->dtype.bytes());
    };
    std::vector<ir::Buffer> partners;
    for (const ir::Buffer& view : views_) {
      if (view.get() == b.get()) partners.push_back(view->view_of);
      if (view->view_of.get() == b.get()) partners.push_back(view);
    }
    if (partners.empty()) return default_of(b, widest_run(b));
    auto reads_in_all = [&](const Fragment& layout) {
      if (layout.covers_more()) return false;
      for (const ir::Buffer& p : partners)
        if (!layout.reshaped(const_shape(p))) return false;
      return true;
    };
    for (const ir::Buffer& first : {b, partners[0]})
      for (int64_t run = widest_run(first); run >= 1; run /= 2) {
        if (const_shape(first).back() % run != 0) continue;
        Fragment layout = default_of(first, run);
        if (first.get() != b.get()) {
          auto in_b = layout.reshaped(const_shape(b));
          if (!in_b) continue;
          layout = *in_b;
        }
        if (reads_in_all(layout)) return layout;
      }
    return default_of(b, widest_run(b));  // propagate() names the view that can't read it
  }

  // The layout a view (T.reshape) or the fragment it views takes from the other's: the same
  // registers read in its shape.
  Fragment reshaped(const ir::Buffer& view, const ir::Buffer& to, const ir::Buffer& from) const {
    const Assigned& known = layouts_.at(from.get());
    if (auto layout = known.layout.reshaped(const_shape(to))) return *layout;
    error_at(view->loc,
             "'" + view->name + "' reads the registers of fragment '" + view->view_of->name + "' in another shape, "
             "but '" + from->name + "' is spread over threads as " + known.layout.to_string() + ", which no layout "
             "of '" + to->name + "' reads in row-major order (a digit would split unevenly, or the layout covers "
             "more than the shape); copy it into a fragment of the shape you need",
             known.origin, "'" + from->name + "' got its layout here");
  }

  bool propagate() {
    bool changed = false;
    for (const ir::Buffer& view : views_) {
      const ir::Buffer& base = view->view_of;
      if (layout_of(base) && !layout_of(view))
        changed |= demand(view, reshaped(view, view, base), view->loc);
      else if (layout_of(view) && !layout_of(base))
        changed |= demand(base, reshaped(view, base, view), view->loc);
    }
    for (const op::Projection& p : projections_) {
      const Fragment* from = layout_of(p.from);
      if (!from || !is_fragment(p.to)) continue;
      const std::vector<int64_t> shape = const_shape(p.to);
      Fragment projected = from->project(p.keep);
      if (projected.shape() != shape) {
        // A result that keeps extent-1 dims holds the projection's elements where it does;
        // of any other shape, only a replicated one fits.
        std::optional<Fragment> same = ir::reduced_fragment(*from, p.keep, shape);
        projected = same ? *same : ir::replicated_fragment(shape);
      } else if (scatterable_.count(p.to.get())) {
        if (auto scattered = from->scattered(p.keep, reduced_dim(p), ctx_.target.warp_size)) projected = *scattered;
      }
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

  static int reduced_dim(const op::Projection& p) {
    for (int d = 0;; ++d)
      if (std::find(p.keep.begin(), p.keep.end(), d) == p.keep.end()) return d;
  }

  // The reductions' results that may hold each element on one of the threads that reduced it
  // (ir::Fragment::scattered), so that what uses them runs once an element rather than on every
  // replica: results of one source alone, used by loops and tile ops that touch no other
  // fragment, and in no gemm, view or reduction of their own, nor as a scalar.
  void find_scatterable() {
    std::unordered_map<const ir::BufferNode*, const ir::BufferNode*> source;
    std::unordered_set<const ir::BufferNode*> excluded;
    for (const op::Projection& p : projections_) {
      excluded.insert(p.from.get());
      auto [it, fresh] = source.emplace(p.to.get(), p.from.get());
      if (!fresh && it->second != p.from.get()) excluded.insert(p.to.get());
    }
    for (const ir::Buffer& v : views_) {
      excluded.insert(v.get());
      excluded.insert(v->view_of.get());
    }
    for (const auto& [buffer, loc] : scalar_uses_) excluded.insert(buffer.get());
    for (const ir::Gemm* gemm : tensor_core_gemms_)
      for (const ir::Buffer* b : {&gemm->a.buffer, &gemm->b.buffer, &gemm->c.buffer}) excluded.insert(b->get());
    for (const Site& site : sites_) {
      std::unordered_set<const ir::BufferNode*> fragments;
      for (const auto& a : site.accesses)
        if (is_fragment(a.buffer)) fragments.insert(a.buffer.get());
      if (fragments.size() > 1) excluded.insert(fragments.begin(), fragments.end());
    }
    for (const auto& [to, from] : source)
      if (!excluded.count(to)) scatterable_.insert(to);
  }

  void check_sites() const {
    for (const ir::Buffer& view : views_) {
      const Fragment& layout = layouts_.at(view.get()).layout;
      if (!reshaped(view, view, view->view_of).same_placement(layout))
        conflict(view, layouts_.at(view.get()), reshaped(view, view, view->view_of), view->loc);
    }
    for (const Site& site : sites_) {
      auto layout = site_layout(site, [this](const ir::Buffer& b) { return layout_of(b); });
      for (const auto& a : site.accesses) {
        const Fragment* f = layout_of(a.buffer);
        if (!f) continue;
        // Without a layout of its own the site runs as its default, which no fragment's threads
        // follow: only a fragment every thread holds whole is read where it runs.
        if (layout ? !owned_under(*f, a.dims, *layout) : !f->replicated())
          not_owned(a, layout ? &*layout : nullptr, site.loc);
      }
    }
    for (const op::Projection& p : projections_) {
      if (is_fragment(p.to) || !is_fragment(p.from)) continue;
      error_at(p.loc, "the result of " + p.what + " of fragment '" + p.from->name + "' must be a fragment (got " +
                          ir::scope_name(p.to->scope) + " '" + p.to->name + "')");
    }
  }

  const PassContext& ctx_;
  GemmLayoutHook gemm_layouts_;
  int threads_ = 128;
  int group_threads_ = 0;  // of the T.ws group being collected; 0 outside one
  std::unordered_map<const ir::BufferNode*, int> fragment_threads_;
  std::vector<int> site_threads_;  // sites_[i]'s threads
  std::vector<ir::Buffer> fragments_;
  std::vector<ir::Buffer> views_;  // fragments that view another (T.reshape)
  std::vector<std::pair<ir::Buffer, SourceLoc>> scalar_uses_;
  std::vector<Site> sites_;
  std::vector<op::Projection> projections_;
  std::vector<const ir::Gemm*> tensor_core_gemms_;
  std::unordered_map<const ir::BufferNode*, int64_t> panels_;  // shared buffer -> its panels' bytes
  std::vector<GemmLayoutDemands::InShared> gemm_shared_layouts_;  // in the order the gemms demand them
  std::unordered_map<const ir::BufferNode*, Assigned> layouts_;
  std::unordered_set<const ir::BufferNode*> scatterable_;  // find_scatterable
};

class KernelLayouts : public ir::IRMutator {
 public:
  KernelLayouts(const PassContext& ctx, GemmLayoutHook gemm_layouts) : ctx_(ctx), gemm_layouts_(gemm_layouts) {}

 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt&) override {
    auto n = std::make_shared<ir::KernelLaunch>(*op);
    n->body = LayoutInference(ctx_, gemm_layouts_).run(*op, op->body);
    return Stmt(n);
  }

 private:
  const PassContext& ctx_;
  GemmLayoutHook gemm_layouts_;
};

}  // namespace

ir::Stmt infer_layout(const ir::Stmt& body, const PassContext& ctx) {
  return infer_layout(body, ctx, gemm_layout_hook(ctx.target));
}

ir::Stmt infer_layout(const ir::Stmt& body, const PassContext& ctx, GemmLayoutHook gemm_layouts) {
  return KernelLayouts(ctx, gemm_layouts).mutate(body);
}

}  // namespace tilec::passes
