#include "passes/cuda/warp_specialize.h"

#include <algorithm>
#include <optional>

#include "ir/device_calls.h"
#include "ir/region.h"
#include "ir/shared_layout.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "ir/visitor.h"
#include "op/accesses.h"
#include "passes/cuda/register_moves.h"
#include "passes/cuda/tma_copies.h"
#include "passes/gpu/pipeline_stages.h"
#include "passes/thread_groups.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;

constexpr int kProducerThreads = 128;
// Registers a thread of the producer warpgroup keeps: it only counts and issues copies (ptxas
// spills nothing of the library's producers at 24, FlashAttention-3's figure; the attention
// backward's consumers need the 240 that leaves them).
constexpr int kProducerRegisters = 24;

// The registers a consumer thread grows to with setmaxnreg, or nothing when it would not grow.
// The consumers may ask for no more than the producer gives back (passes/cuda/register_moves.h):
// with two consumer warpgroups that is 168 -> 240; with three, 128 -> 160; with one, every
// thread starts with 248 and there is nothing to gain.
std::optional<int> consumer_registers(int consumer_threads, int min_blocks) {
  constexpr int kMostPerThread = 240;
  const int threads = consumer_threads + kProducerThreads;
  const int at_launch = registers_at_launch(threads, min_blocks);
  const int pool = at_launch * threads - kProducerRegisters * kProducerThreads;
  const int grown = std::min(kMostPerThread, pool / consumer_threads / 8 * 8);
  if (at_launch <= kProducerRegisters || grown <= at_launch) return std::nullopt;
  return grown;
}

// Whether a statement writes one of `buffers`.
bool writes_any(const Stmt& s, const ir::BufferMap& buffers) {
  op::Accesses accesses;
  accesses.visit(s);
  return std::any_of(accesses.writes.begin(), accesses.writes.end(),
                     [&](const ir::BufferNode* b) { return buffers.count(b) > 0; });
}

// Whether a statement reads `buffer`.
bool reads(const Stmt& s, const ir::BufferNode* buffer) {
  op::Accesses accesses;
  accesses.visit(s);
  return accesses.reads.count(buffer) > 0;
}

// Whether a statement issues a gemm that doesn't wait for itself (wg_wait != 0).
bool issues_asynchronous_gemm(const Stmt& s) {
  struct Find : ir::IRVisitor {
    bool found = false;
    void visit_Gemm(const ir::Gemm* op) override { found |= op->wg_wait != 0; }
  } find;
  find.visit(s);
  return find.found;
}

// Whether `body` writes a buffer that `e` reads.
bool writes_what_it_reads(const Stmt& body, const Expr& e) {
  op::Accesses read, written;
  read.visit(e);
  written.visit(body);
  return std::any_of(read.reads.begin(), read.reads.end(), [&](const ir::BufferNode* b) { return written.writes.count(b) > 0; });
}

// Pipelined loops anywhere in a statement.
int count_pipelined(const Stmt& s) {
  struct Count : ir::IRVisitor {
    int n = 0;
    void visit_For(const ir::For* op) override {
      n += op->for_kind == ir::ForKind::Pipelined;
      IRVisitor::visit_For(op);
    }
  } count;
  count.visit(s);
  return count.n;
}

class Specializer {
 public:
  Specializer(const ir::KernelLaunch& launch, const PassContext& ctx)
      : launch_(launch), ctx_(ctx), lets_(ir::let_values(launch.body)) {}

  // The launch's body rewritten, or null when its loop doesn't qualify.
  Stmt run() {
    if (count_pipelined(launch_.body) != 1) return Stmt();
    uses_ = count_uses(launch_.body);
    // The producer must be a whole warpgroup of its own (setmaxnreg and the consumers' named
    // barrier count whole warps).
    warp_specialized_ = hopper_feature(ctx_, "tilec.warp_specialize") && launch_.threads % 128 == 0;
    return rewrite(launch_.body);
  }

  bool warp_specialized() const { return warp_specialized_; }
  bool persistent() const { return persistent_; }
  // Each buffer the rewritten body holds in another form: the stage buffers and the tile
  // copies' panel tiles.
  ir::BufferMap replaced() const {
    ir::BufferMap all = staged_;
    all.insert(tile_copied_.begin(), tile_copied_.end());
    return all;
  }

 private:
  // Down through allocations and lets to the statement list holding the loop.
  Stmt rewrite(const Stmt& s) {
    if (const auto* alloc = s.as<ir::Allocate>()) {
      Stmt body = rewrite(alloc->body);
      return body ? ir::with_loc(ir::make_allocate(alloc->buffer, body), alloc->loc) : Stmt();
    }
    if (const auto* let = s.as<ir::LetStmt>()) {
      const bool per_tile = uses_block_vars(let->value);
      if (per_tile) tile_lets_.push_back(s);
      Stmt body = rewrite(let->body);
      if (!body) return Stmt();
      // A persistent block binds its block vars once a tile: the let moved into the tile loop.
      if (per_tile && persistent_) return body;
      auto n = std::make_shared<ir::LetStmt>(*let);
      n->body = body;
      return Stmt(n);
    }
    std::vector<Stmt> stmts;
    if (const auto* seq = s.as<ir::Seq>()) stmts = seq->stmts;
    else stmts = {s};
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (count_pipelined(stmts[i]) != 1) continue;
      // What hides the loop from the list is opened up: a nested list is spliced in, a loop of
      // one iteration (over GQA's query heads of a K/V head, with one) becomes its body, and a
      // let of pure arithmetic moves above the list (no statement of the list but its own
      // body can name its var).
      if (stmts[i].as<ir::Seq>()) return rewrite(ir::make_seq(stmts));  // make_seq splices it
      const auto* once = stmts[i].as<ir::For>();
      int64_t trips = 0;
      if (once && once->for_kind == ir::ForKind::Serial && ir::is_const_int(ir::simplify(once->extent), &trips) &&
          trips == 1) {
        stmts[i] = ir::substitute(once->body, ir::VarMap{{once->var.get(), once->min}});
        return rewrite(ir::make_seq(stmts));
      }
      const auto* let = stmts[i].as<ir::LetStmt>();
      if (let) {
        if (!is_pure_arithmetic(let->value)) return Stmt();
        auto hoisted = std::make_shared<ir::LetStmt>(*let);
        stmts[i] = let->body;
        hoisted->body = ir::make_seq(stmts);
        return rewrite(Stmt(hoisted));
      }
      const auto* loop = stmts[i].as<ir::For>();
      if (!loop || loop->for_kind != ir::ForKind::Pipelined) continue;
      std::vector<Stmt> before(stmts.begin(), stmts.begin() + i), after(stmts.begin() + i + 1, stmts.end());
      return specialize(*loop, before, after);
    }
    return Stmt();
  }

  Stmt specialize(const ir::For& loop, const std::vector<Stmt>& before, const std::vector<Stmt>& after) {
    const int stages = std::max(loop.num_stages, 1);
    std::vector<Stmt> body_stmts = loop_body_statements(loop.body);
    std::unordered_map<const ir::BufferNode*, int> uses_in_loop = count_uses(loop.body);
    std::vector<Stmt> producers, consumers;
    std::vector<int64_t> producer_bytes;
    for (const Stmt& s : body_stmts) {
      const auto* copy = s.as<ir::Copy>();
      bool global_to_shared = copy && copy->src.buffer->scope == ir::MemoryScope::Global &&
                              copy->dst.buffer->scope == ir::MemoryScope::Shared;
      if (!global_to_shared) {
        consumers.push_back(s);
        continue;
      }
      const ir::Buffer& dst = copy->dst.buffer;
      auto tile = tma_tile(copy->dst, copy->src, lets_);
      if (!is_producer(s) || !copy->allow_tma || !tile || uses_[dst.get()] != uses_in_loop[dst.get()] || staged_.count(dst.get()))
        return Stmt();
      producers.push_back(s);
      producer_bytes.push_back(tile->rows * tile->cols * tile->bytes);
      std::vector<Expr> shape = dst->shape;
      shape.insert(shape.begin(), ir::make_int(stages));
      auto staged = std::make_shared<ir::BufferNode>(*ir::make_buffer(dst->name, dst->dtype, shape, {}, dst->scope, dst->loc));
      staged->layout = ir::panels_of(*staged, panel_bytes_of(*dst));
      staged_[dst.get()] = staged;
    }
    if (producers.empty()) return Stmt();
    for (const Stmt& s : consumers) {
      if (writes_any(s, staged_)) return Stmt();
      bool all_wgmma = true;
      struct Gemms : ir::IRVisitor {
        std::vector<const ir::Gemm*> found;
        void visit_Gemm(const ir::Gemm* op) override { found.push_back(op); }
      } gemms;
      gemms.visit(s);
      for (const ir::Gemm* g : gemms.found) all_wgmma &= g->instruction.kind == ir::GemmInstructionKind::Wgmma;
      if (!all_wgmma) return Stmt();
    }

    // The producer runs none of the statements before the loop but those that set the local
    // scalars its trip count reads (producer_prelude); a count it can't know would leave it
    // filling stages the consumers never take, or waiting for ones they never free. Then
    // thread 0, which runs those statements too, issues the copies.
    std::optional<std::vector<Stmt>> prelude = producer_prelude(loop, before);
    if (!prelude) warp_specialized_ = false;
    // The consumers' statements: those before the loop the producer doesn't take, the loop (at
    // index loop_at), and those after it.
    std::vector<Stmt> work = warp_specialized_ ? take_tile_copies(loop, before, after) : before;
    const size_t loop_at = work.size();
    work.push_back(Stmt());
    work.insert(work.end(), after.begin(), after.end());

    // The copies complete on one full barrier for each consumer statement that first reads
    // what they fill (attention's K for the first gemm, V for the second), so a consumer
    // waits only for the tiles it is about to read: the first gemm starts before V lands.
    // first_readers[g]: the index in `consumers` of group g's statement (consumers.size():
    // none reads them; they are waited for at the iteration's end, before its stage is freed).
    std::vector<size_t> first_readers;
    std::vector<int> group_of(producers.size());
    for (size_t p = 0; p < producers.size(); ++p) {
      const ir::BufferNode* dst = producers[p].as<ir::Copy>()->dst.buffer.get();
      size_t reader = 0;
      while (reader < consumers.size() && !reads(consumers[reader], dst)) ++reader;
      auto at = std::find(first_readers.begin(), first_readers.end(), reader);
      group_of[p] = static_cast<int>(at - first_readers.begin());
      if (at == first_readers.end()) first_readers.push_back(reader);
    }
    const int groups = static_cast<int>(first_readers.size());
    barrier_bytes_ = ir::round_up(8 * stages * groups, 128) + ir::round_up(8 * stages, 128) +
                     (tile_copies_.empty() ? 0 : ir::round_up(16 * static_cast<int64_t>(tile_copies_.size()), 128));

    const SourceLoc& loc = loop.loc;
    DType t = loop.var->dtype;
    auto int_of = [t](int64_t v) { return ir::make_int(v, t); };
    full_ = ir::make_buffer("full_barriers", DType::UInt64, {ir::make_int(stages * groups)}, {}, ir::MemoryScope::Shared,
                            loc);
    empty_ = ir::make_buffer("empty_barriers", DType::UInt64, {ir::make_int(stages)}, {}, ir::MemoryScope::Shared, loc);
    if (!tile_copies_.empty())
      tile_barriers_ = ir::make_buffer("tile_barriers", DType::UInt64, {ir::make_int(2 * tile_copies_.size())}, {},
                                       ir::MemoryScope::Shared, loc);
    auto barrier = [&](const ir::Buffer& b, const Expr& stage) { return ir::address_of(b, {stage}); };
    auto stage_of = [&](const Expr& i) { return ir::make_cast(DType::Int32, ir::make_FloorMod(i, int_of(stages))); };
    auto parity_of = [&](const Expr& i, int64_t round_offset) {
      return ir::make_cast(DType::Int32,
                           ir::make_FloorMod(ir::make_Add(ir::make_FloorDiv(i, int_of(stages)), int_of(round_offset)),
                                             int_of(2)));
    };
    // Group g's full barrier of stage `stage`.
    auto full = [&](const Expr& stage, int g) {
      if (groups == 1) return barrier(full_, stage);
      return barrier(full_, ir::make_Add(ir::make_Mul(stage, ir::make_int(groups)), ir::make_int(g)));
    };
    // Iteration i's copies into stage `stage`, group by group in the order they are read,
    // each group completing on its full barrier.
    auto issue = [&](const Expr& i, const Expr& stage) {
      std::vector<Stmt> out;
      for (int g = 0; g < groups; ++g) {
        int64_t bytes = 0;
        for (size_t p = 0; p < producers.size(); ++p) bytes += group_of[p] == g ? producer_bytes[p] : 0;
        out.push_back(ir::device_call("mbarrier_arrive_expect_tx", {full(stage, g), ir::make_int(bytes)}, loc));
        for (size_t p = 0; p < producers.size(); ++p) {
          if (group_of[p] != g) continue;
          Stmt s = ir::substitute(producers[p], ir::VarMap{{loop.var.get(), ir::make_Add(loop.min, i)}});
          s = StageAccesses(staged_, stage).mutate(s);
          auto copy = std::make_shared<ir::Copy>(*s.as<ir::Copy>());
          copy->instruction = {.kind = ir::CopyInstructionKind::TmaLoad,
                               .panel_bytes = ir::panel_width(*copy->dst.buffer)};
          copy->barrier = full(stage, g);
          copy->loc = producers[p]->loc;
          out.push_back(Stmt(copy));
        }
      }
      return ir::make_seq(out);
    };
    // Iteration i of the loop, the pipeline's iteration `round` (i, or counted on over the
    // tiles of a persistent block): each group's wait right before its first reader.
    auto consume = [&](const Expr& i, const Expr& round) {
      std::vector<Stmt> body;
      for (size_t c = 0; c <= consumers.size(); ++c) {
        for (int g = 0; g < groups; ++g)
          if (first_readers[g] == c)
            body.push_back(
                ir::device_call("mbarrier_wait_parity", {full(stage_of(round), g), parity_of(round, 0)}, loc));
        if (c < consumers.size()) body.push_back(consumers[c]);
      }
      Stmt rest = ir::substitute(ir::make_seq(body), ir::VarMap{{loop.var.get(), ir::make_Add(loop.min, i)}});
      return StageAccesses(staged_, stage_of(round)).mutate(rest);
    };
    const Expr& n = loop.extent;
    const int consumer_warps = launch_.threads / 32;

    std::vector<Stmt> init;
    for (int s = 0; s < stages; ++s) {
      for (int g = 0; g < groups; ++g)
        init.push_back(ir::device_call("mbarrier_init", {full(ir::make_int(s), g), ir::make_int(1)}, loc));
      if (warp_specialized_)
        init.push_back(
            ir::device_call("mbarrier_init", {barrier(empty_, ir::make_int(s)), ir::make_int(consumer_warps)}, loc));
    }
    for (size_t c = 0; c < tile_copies_.size(); ++c) {
      init.push_back(ir::device_call("mbarrier_init", {tile_full(c), ir::make_int(1)}, loc));
      init.push_back(ir::device_call("mbarrier_init", {tile_empty(c), ir::make_int(consumer_warps)}, loc));
    }
    init.push_back(ir::device_call("fence_mbarrier_init", {}, loc));
    std::vector<Stmt> out = {in_threads(0, 1, ir::make_seq(init)), ir::device_call("sync_threads", {}, loc)};

    Expr i = ir::make_var(loop.var.as<ir::Var>()->name + "_iter", t);
    if (warp_specialized_) {
      Stmt prelude_stmts = ir::make_seq(*prelude);
      // A trip count that differs from tile to tile (causal attention's) is counted up, after
      // each tile's loop, in a register of each thread's; it must then still read, after the
      // loop, what it read before it.
      const bool varying = uses_block_vars(n) || uses_block_vars(prelude_stmts);
      // A cluster's blocks are launched together: one wave of them looping over tiles would
      // need the tiles handed out a cluster at a time.
      persistent_ = hopper_feature(ctx_, "tilec.persistent") && !launch_.clustered() && fits_without_reuse() &&
                    (!varying || !writes_what_it_reads(loop.body, n));
      // A persistent block's tile loop: tile_iter counts its tiles, and the pipeline's rounds
      // go on from one tile to the next: round tile_iter * n + i, or rounds_done[0] + i.
      Expr tile_iter = ir::make_var("tile_iter", t);
      Expr round = i;
      if (persistent_ && varying) {
        rounds_done_ = ir::make_buffer("rounds_done", t, {int_of(1)}, {}, ir::MemoryScope::Local, loc);
        round = ir::make_Add(ir::make_load(rounds_done_, {int_of(0)}), i);
      } else if (persistent_) {
        round = ir::make_Add(ir::make_Mul(tile_iter, n), i);
      }
      // (A loop of a negative trip count runs no rounds.)
      const Stmt count_rounds =
          rounds_done_ ? ir::make_store(rounds_done_, {int_of(0)},
                                        ir::make_Add(ir::make_load(rounds_done_, {int_of(0)}), ir::make_Max(n, int_of(0))))
                       : Stmt();
      Stmt wait_empty = ir::make_if(
          ir::make_GE(round, int_of(stages)),
          ir::device_call("mbarrier_wait_parity", {barrier(empty_, stage_of(round)), parity_of(round, 1)}, loc));
      // The tile copies' mbarriers go through one phase a tile. A tile first read after the
      // loop is loaded after the producer's loop in a persistent block, where the load waits
      // for the consumers to free the last tile's: the next tile's stages go first.
      Expr tile = persistent_ ? tile_iter : int_of(0);
      auto after_loop = [&](size_t first) { return persistent_ && first > loop_at; };
      Stmt produce = ir::make_seq(
          {prelude_stmts, issue_tile_copies(tile, [&](size_t first) { return !after_loop(first); }, loc),
           ir::make_for(i, int_of(0), n, ir::ForKind::Serial, ir::make_seq({wait_empty, issue(i, stage_of(round))})),
           count_rounds, issue_tile_copies(tile, after_loop, loc)});
      work[loop_at] = ir::make_seq(
          {ir::with_loc(ir::make_for(i, int_of(0), n, ir::ForKind::Serial,
                                     ir::make_seq({consume(i, round),
                                                   ir::device_call("mbarrier_arrive_per_warp",
                                                                   {barrier(empty_, stage_of(round))}, loc)})),
                        loc),
           count_rounds});
      Stmt consumer_work = consume_tile_copies(work, tile, loc);
      if (persistent_) {
        const Stmt no_rounds_yet = rounds_done_ ? ir::make_store(rounds_done_, {int_of(0)}, int_of(0)) : Stmt();
        produce = ir::make_seq({no_rounds_yet, over_tiles(tile_iter, with_tile_lets(produce), loc)});
        consumer_work = ir::make_seq({no_rounds_yet, over_tiles(tile_iter, with_tile_lets(consumer_work), loc)});
      }
      const std::optional<int> grown =
          hopper_feature(ctx_, "tilec.setmaxnreg") && !launch_.keep_registers ? consumer_registers(launch_.threads, launch_.min_blocks_per_sm) : std::nullopt;
      std::vector<Stmt> producer, consumer;
      if (grown)
        producer.push_back(ir::device_call("setmaxnreg_dec<" + std::to_string(kProducerRegisters) + ">", {}, loc));
      producer.push_back(in_threads(launch_.threads, launch_.threads + 1, ir::with_loc(produce, loc)));
      if (grown) consumer.push_back(ir::device_call("setmaxnreg_inc<" + std::to_string(*grown) + ">", {}, loc));
      consumer.push_back(consumer_work);
      out.push_back(in_threads(launch_.threads, launch_.threads + kProducerThreads, ir::make_seq(producer),
                               ir::make_seq(consumer)));
    } else {
      out.insert(out.end(), before.begin(), before.end());
      std::vector<Stmt> prologue;
      for (int p = 0; p < stages; ++p)
        prologue.push_back(ir::make_if(ir::make_LT(int_of(p), n), issue(int_of(p), ir::make_int(p))));
      out.push_back(in_threads(0, 1, ir::make_seq(prologue)));
      Expr next = ir::make_Add(i, int_of(stages));
      Stmt refill = in_threads(0, 1, ir::make_if(ir::make_LT(next, n), issue(next, stage_of(i))));
      Stmt steady = ir::make_for(
          i, int_of(0), n, ir::ForKind::Serial,
          ir::make_seq({consume(i, i), ir::device_call("sync_threads", {}, loc), refill}));
      out.push_back(ir::with_loc(steady, loc));
      out.insert(out.end(), after.begin(), after.end());
    }
    Stmt result = ir::make_seq(out);
    if (rounds_done_) result = ir::make_allocate(rounds_done_, result);
    if (tile_barriers_) result = ir::make_allocate(tile_barriers_, result);
    if (warp_specialized_) result = ir::make_allocate(empty_, result);
    return ir::with_loc(ir::make_allocate(full_, result), loc);
  }

  // A tile copy: one statement before the loop whose tile the producer loads by TMA, once a
  // tile, on an mbarrier pair of its own (attention's Q tile). The consumers wait for it right
  // before `first` of their statements (work in specialize) and free it right after `last`, the
  // first and last that read it; a persistent block's producer then loads the next tile's while
  // the consumers finish this one.
  struct TileCopy {
    Stmt copy;  // the TMA load, into the copy's buffer in panels
    size_t first = 0, last = 0;
    int64_t bytes = 0;
  };

  // `before` without the copies the producer takes: a copy of a whole shared panel tile from
  // global memory (is_producer, tma_tile) whose buffer nothing else writes, that no statement
  // before it touches, and that is read by a later statement (the loop included) of which the
  // last waits for its own gemms.
  std::vector<Stmt> take_tile_copies(const ir::For& loop, const std::vector<Stmt>& before,
                                     const std::vector<Stmt>& after) {
    std::vector<Stmt> work = before;
    work.push_back(loop.body);
    work.insert(work.end(), after.begin(), after.end());
    std::vector<bool> taken(work.size(), false);
    for (size_t p = 0; p < before.size(); ++p) {
      const auto* copy = before[p].as<ir::Copy>();
      if (!copy || !copy->allow_tma || !is_producer(before[p]) || !tma_tile(copy->dst, copy->src, lets_)) continue;
      const ir::Buffer& dst = copy->dst.buffer;
      const ir::BufferMap just_dst{{dst.get(), dst}};
      size_t first = work.size(), last = 0;
      bool alone = true;
      for (size_t w = 0; w < work.size() && alone; ++w) {
        if (w == p) continue;
        alone = !writes_any(work[w], just_dst) && (w > p || !reads(work[w], dst.get()));
        if (reads(work[w], dst.get())) {
          first = std::min(first, w);
          last = w;
        }
      }
      if (!alone || first == work.size() || (last != before.size() && issues_asynchronous_gemm(work[last]))) continue;
      auto panels = std::make_shared<ir::BufferNode>(*dst);
      panels->layout = ir::panels_of(*panels, panel_bytes_of(*dst));
      tile_copied_[dst.get()] = panels;
      auto tma = std::make_shared<ir::Copy>(*copy);
      tma->dst.buffer = panels;
      tma->instruction = {.kind = ir::CopyInstructionKind::TmaLoad, .panel_bytes = ir::panel_width(*panels)};
      const TmaTile tile = *tma_tile(copy->dst, copy->src, lets_);
      tile_copies_.push_back({Stmt(tma), first, last, tile.rows * tile.cols * tile.bytes});
      taken[p] = true;
    }
    // Reader indices count the taken copies; the consumers' list drops them.
    std::vector<Stmt> kept;
    for (size_t p = 0; p < before.size(); ++p)
      if (!taken[p]) kept.push_back(before[p]);
    for (TileCopy& c : tile_copies_) {
      auto dropped = [&](size_t w) { return std::count(taken.begin(), taken.begin() + w, true); };
      c.first -= dropped(c.first);
      c.last -= dropped(c.last);
    }
    return kept;
  }

  Expr tile_full(size_t c) const { return ir::address_of(tile_barriers_, {ir::make_int(2 * c)}); }
  Expr tile_empty(size_t c) const { return ir::address_of(tile_barriers_, {ir::make_int(2 * c + 1)}); }

  // The producer's loads of the tile copies `which` takes (by its first reader), for tile
  // `tile`: from the second tile on, each waits until the consumers have freed the last.
  template <typename Which>
  Stmt issue_tile_copies(const Expr& tile, Which which, const SourceLoc& loc) const {
    std::vector<Stmt> out;
    const DType t = tile->dtype;
    for (size_t c = 0; c < tile_copies_.size(); ++c) {
      if (!which(tile_copies_[c].first)) continue;
      Expr last_parity = ir::make_cast(DType::Int32, ir::make_FloorMod(ir::make_Sub(tile, ir::make_int(1, t)),
                                                                      ir::make_int(2, t)));
      if (persistent_)
        out.push_back(ir::make_if(ir::make_GE(tile, ir::make_int(1, t)),
                                  ir::device_call("mbarrier_wait_parity", {tile_empty(c), last_parity}, loc)));
      out.push_back(ir::device_call("mbarrier_arrive_expect_tx", {tile_full(c), ir::make_int(tile_copies_[c].bytes)}, loc));
      auto copy = std::make_shared<ir::Copy>(*tile_copies_[c].copy.as<ir::Copy>());
      copy->barrier = tile_full(c);
      out.push_back(Stmt(copy));
    }
    return ir::make_seq(out);
  }

  // The consumers' statements with each tile copy's wait before its first reader and, in a
  // persistent block, its release after its last.
  Stmt consume_tile_copies(const std::vector<Stmt>& work, const Expr& tile, const SourceLoc& loc) const {
    Expr parity = ir::make_cast(DType::Int32, ir::make_FloorMod(tile, ir::make_int(2, tile->dtype)));
    std::vector<Stmt> out;
    for (size_t w = 0; w < work.size(); ++w) {
      for (size_t c = 0; c < tile_copies_.size(); ++c)
        if (tile_copies_[c].first == w)
          out.push_back(ir::device_call("mbarrier_wait_parity", {tile_full(c), parity}, loc));
      out.push_back(work[w]);
      for (size_t c = 0; c < tile_copies_.size() && persistent_; ++c)
        if (tile_copies_[c].last == w) out.push_back(ir::device_call("mbarrier_arrive_per_warp", {tile_empty(c)}, loc));
    }
    return ir::make_seq(out);
  }

  // The statements before `loop` the producer must run to know its trip count: the stores to
  // local scalars that the loop's bounds read, each computed from values every thread has
  // (tensors no statement before the loop writes, and the scalars stored before it). Nothing
  // when the bounds read another on-chip buffer, or a scalar that is set some other way too.
  static std::optional<std::vector<Stmt>> producer_prelude(const ir::For& loop, const std::vector<Stmt>& before) {
    if (!reads_on_chip(loop.min) && !reads_on_chip(loop.extent)) return std::vector<Stmt>{};
    op::Accesses tensors(ir::MemoryScope::Global);
    for (const Stmt& s : before) tensors.visit(s);
    const op::BufferSet& written = tensors.writes;  // the tensors statements before the loop write
    std::vector<Stmt> prelude;
    ir::BufferMap replayed;  // the scalars the prelude sets
    auto known = [&](const Expr& e) {
      op::Accesses accesses;
      accesses.visit(e);
      return std::none_of(accesses.reads.begin(), accesses.reads.end(), [&](const ir::BufferNode* b) {
        return b->scope == ir::MemoryScope::Global ? written.count(b) > 0 : replayed.count(b) == 0;
      });
    };
    for (const Stmt& s : before) {
      const auto* store = s.as<ir::BufferStore>();
      if (store && store->buffer->scope == ir::MemoryScope::Local && known(store->value) &&
          std::all_of(store->indices.begin(), store->indices.end(), known)) {
        prelude.push_back(s);
        replayed[store->buffer.get()] = store->buffer;
      } else if (writes_any(s, replayed)) {
        return std::nullopt;
      }
    }
    if (!known(loop.min) || !known(loop.extent)) return std::nullopt;
    return prelude;
  }

  // Whether the kernel's shared buffers (the staged ones with their stages) fit in shared
  // memory side by side: in a persistent block the producer fills the next tile's stages while
  // the consumers finish the last, so no buffer may reuse another's bytes.
  bool fits_without_reuse() const {
    struct Shared : ir::IRVisitor {
      std::vector<ir::Buffer> buffers;
      void visit_Allocate(const ir::Allocate* op) override {
        if (op->buffer->scope == ir::MemoryScope::Shared) buffers.push_back(op->buffer);
        IRVisitor::visit_Allocate(op);
      }
    } shared;
    shared.visit(launch_.body);
    int64_t bytes = barrier_bytes_;
    for (const ir::Buffer& b : shared.buffers) {
      auto staged = staged_.find(b.get());
      int64_t footprint = ir::shared_footprint(staged == staged_.end() ? *b : *staged->second);
      if (footprint < 0) return false;
      bytes += ir::round_up(footprint, 1024);  // at most every buffer a swizzled tile
    }
    return bytes <= ctx_.target.max_shared_bytes;
  }

  // Whether `e` (an expression or statement) uses one of the launch's block vars, directly or
  // through a let around the loop that does.
  template <typename Node>
  bool uses_block_vars(const Node& e) const {
    ir::VarMap marked;
    for (const Expr& v : launch_.block_vars) marked[v.get()] = ir::make_int(0, v->dtype);
    for (const Stmt& s : tile_lets_) {
      const Expr& var = s.as<ir::LetStmt>()->var;
      marked[var.get()] = ir::make_int(0, var->dtype);
    }
    return !ir::substitute(e, marked).same_as(e);
  }

  // `work` inside the lets around the loop that use block vars, outermost first.
  Stmt with_tile_lets(Stmt work) const {
    for (size_t i = tile_lets_.size(); i-- > 0;) {
      const auto* let = tile_lets_[i].as<ir::LetStmt>();
      work = ir::with_loc(ir::make_let(let->var, let->value, work), let->loc);
    }
    return work;
  }

  // for tile_iter in range(ceildiv(tiles - first, stride)): the block vars bound to tile
  // first + tile_iter * stride of the grid (in T.use_swizzle's order), then `work`. `first` and
  // `stride` are the block's index and the launch's blocks (device/cuda/blocks.h).
  Stmt over_tiles(const Expr& tile_iter, const Stmt& work, const SourceLoc& loc) const {
    DType t = tile_iter->dtype;
    std::vector<Expr> extents;
    Expr tiles = ir::make_int(1, t);
    for (const Expr& g : launch_.grid) {
      extents.push_back(ir::make_cast(t, g));
      tiles = ir::make_Mul(tiles, extents.back());
    }
    Expr first = ir::device_value(t, "persistent_first", {}), stride = ir::device_value(t, "persistent_stride", {});
    Expr count = ir::make_FloorDiv(ir::make_Add(ir::make_Sub(tiles, first), ir::make_Sub(stride, ir::make_int(1, t))),
                                   stride);
    Expr tile = ir::make_Add(first, ir::make_Mul(tile_iter, stride));
    std::vector<Expr> coords;
    if (launch_.swizzle_panel > 0) {  // x and y in T.use_swizzle's order, within each z
      std::string order = std::to_string(launch_.swizzle_panel) + (launch_.swizzle_columns ? ", true>" : ", false>");
      Expr plane = ir::make_Mul(extents[0], extents[1]);
      Expr in_plane = extents.size() == 3 ? ir::make_FloorMod(tile, plane) : tile;
      for (const char* axis : {"x", "y"})
        coords.push_back(
            ir::device_value(t, std::string("tile_block_") + axis + "<" + order, {in_plane, extents[0], extents[1]}));
      if (extents.size() == 3) coords.push_back(ir::make_FloorDiv(tile, plane));
    } else {
      Expr rest = tile;
      for (const Expr& extent : extents) {
        coords.push_back(rest);
        rest = ir::make_FloorDiv(rest, extent);
      }
    }
    ir::VarMap bound;
    std::vector<std::pair<Expr, Expr>> lets;
    for (size_t d = 0; d < coords.size(); ++d) {
      const Expr& var = launch_.block_vars[d];
      Expr fresh = ir::make_var(var.as<ir::Var>()->name, var->dtype);
      bound[var.get()] = fresh;
      // Already in [0, extent); the floormod says so to the bound analysis, which then drops
      // the edge checks of whole tiles as it does for blockIdx.
      lets.push_back({fresh, ir::make_cast(var->dtype, ir::make_FloorMod(coords[d], extents[d]))});
    }
    Stmt body = ir::substitute(work, bound);
    for (size_t d = lets.size(); d-- > 0;) body = ir::make_let(lets[d].first, lets[d].second, body);
    return ir::with_loc(ir::make_for(tile_iter, ir::make_int(0, t), count, ir::ForKind::Serial, body), loc);
  }

  static Stmt in_threads(int lo, int hi, Stmt then_case, Stmt else_case = Stmt()) {
    return ir::make_if(ir::thread_in(lo, hi), std::move(then_case), std::move(else_case));
  }

  const ir::KernelLaunch& launch_;
  const PassContext& ctx_;
  const ir::VarMap lets_;  // what the kernel's names stand for (the TMA tiles' corners)
  bool warp_specialized_ = false;
  bool persistent_ = false;
  std::vector<Stmt> tile_lets_;  // the lets around the loop that use block vars (directly or not)
  std::unordered_map<const ir::BufferNode*, int> uses_;
  ir::BufferMap staged_;
  ir::BufferMap tile_copied_;  // the tile copies' buffers, to their copies in panels
  std::vector<TileCopy> tile_copies_;
  ir::Buffer full_, empty_, tile_barriers_;
  ir::Buffer rounds_done_;  // a persistent block's rounds before this tile, when tiles differ in trip count
  int64_t barrier_bytes_ = 0;  // the full and empty barriers' shared memory
};

class KernelSpecializer : public ir::IRMutator {
 public:
  explicit KernelSpecializer(const PassContext& ctx) : ctx_(ctx) {}

 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    // Statements that read the thread index (T.get_thread_binding) are written for the block's
    // `threads` threads; a producer warpgroup past them, or blocks looping over tiles, would
    // change what the index means to them.
    if (op->thread_index) return self;
    // A kernel whose T.ws groups split the block itself.
    if (has_thread_groups(op->body)) return self;
    Specializer specializer(*op, ctx_);
    Stmt body = specializer.run();
    if (!body) return self;
    auto n = std::make_shared<ir::KernelLaunch>(*op);
    n->body = ir::replace_buffers(body, specializer.replaced());
    if (specializer.warp_specialized()) n->producer_threads = kProducerThreads;
    n->persistent = specializer.persistent();
    return Stmt(n);
  }

 private:
  const PassContext& ctx_;
};

}  // namespace

ir::Stmt warp_specialize(const ir::Stmt& body, const PassContext& ctx) {
  if (!hopper_feature(ctx, "tilec.tma") || !ctx.contiguous_args) return body;
  return KernelSpecializer(ctx).mutate(body);
}

}  // namespace tilec::passes
