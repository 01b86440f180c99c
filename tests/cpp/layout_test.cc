#include "ir/layout.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ir/simplify.h"

namespace tilec::ir {
namespace {

int64_t constant(const Expr& e) {
  int64_t v = -1;
  EXPECT_TRUE(is_const_int(simplify(e), &v)) << "not constant";
  return v;
}

// (thread, slot) -> indices, evaluated for every thread and slot.
std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> table(const Fragment& f, int64_t threads) {
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> out;
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t s = 0; s < f.slots(); ++s) {
      std::vector<int64_t> idx;
      for (const auto& e : f.indices(make_int(t), make_int(s))) idx.push_back(constant(e));
      out[{t, s}] = idx;
    }
  return out;
}

TEST(LayoutTest, MmaAccumulatorIsTheFragmentOfMmaSync) {
  // One warp, one 16x8 tile: frag_m16n8_c of device/cuda/mma.h.
  Fragment f = mma_accumulator(16, 8, 1, 1);
  EXPECT_EQ(f.threads(), 32);
  EXPECT_EQ(f.slots(), 4);
  for (const auto& [ts, idx] : table(f, 32)) {
    int64_t lane = ts.first, slot = ts.second;
    EXPECT_EQ(idx[0], lane / 4 + 8 * (slot / 2)) << lane << " " << slot;
    EXPECT_EQ(idx[1], 2 * (lane % 4) + slot % 2) << lane << " " << slot;
  }
}

TEST(LayoutTest, MmaAccumulatorOverWarpsMatchesGemmSs) {
  // gemm_ss: warp w at (w % WarpsM, w / WarpsM), slots (mi * NI + ni) * 4 + r.
  const int64_t M = 64, N = 32, WM = 2, WN = 2, MI = M / WM / 16, NI = N / WN / 8;
  Fragment f = mma_accumulator(M, N, WM, WN);
  EXPECT_EQ(f.threads(), 128);
  EXPECT_EQ(f.slots(), MI * NI * 4);
  std::set<std::vector<int64_t>> seen;
  for (const auto& [ts, idx] : table(f, 128)) {
    int64_t t = ts.first, s = ts.second, lane = t % 32, w = t / 32;
    int64_t mi = s / 4 / NI, ni = (s / 4) % NI, r = s % 4;
    EXPECT_EQ(idx[0], (w % WM) * (M / WM) + mi * 16 + lane / 4 + 8 * (r / 2));
    EXPECT_EQ(idx[1], (w / WM) * (N / WN) + ni * 8 + 2 * (lane % 4) + r % 2);
    seen.insert(idx);
    EXPECT_EQ(constant(f.slot_of({make_int(idx[0]), make_int(idx[1])})), s);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(M * N));  // every element once
}

TEST(LayoutTest, MfmaAccumulatorIsTheDOfMfma16x16) {
  // One wave, one 16x16 tile of v_mfma_f32_16x16x* run as D = (A B)^T: D's lane l, register r
  // (row 4 * (l / 16) + r, column l % 16) is C's row l % 16, column 4 * (l / 16) + r.
  Fragment f = mfma_accumulator(16, 16, 1, 1);
  EXPECT_EQ(f.threads(), 64);
  EXPECT_EQ(f.slots(), 4);
  for (const auto& [ts, idx] : table(f, 64)) {
    int64_t lane = ts.first, slot = ts.second;
    EXPECT_EQ(idx[0], lane % 16) << lane << " " << slot;
    EXPECT_EQ(idx[1], 4 * (lane / 16) + slot) << lane << " " << slot;
  }
}

TEST(LayoutTest, MfmaAccumulatorOverWavesMatchesMfmaGemmSs) {
  // mfma_gemm_ss: wave w at (w % WavesM, w / WavesM), slots (mi * NI + ni) * 4 + r.
  const int64_t M = 64, N = 96, WM = 2, WN = 2, MI = M / WM / 16, NI = N / WN / 16;
  Fragment f = mfma_accumulator(M, N, WM, WN);
  EXPECT_EQ(f.threads(), 256);
  EXPECT_EQ(f.slots(), MI * NI * 4);
  std::set<std::vector<int64_t>> seen;
  for (const auto& [ts, idx] : table(f, 256)) {
    int64_t t = ts.first, s = ts.second, lane = t % 64, w = t / 64;
    int64_t mi = s / 4 / NI, ni = (s / 4) % NI, r = s % 4;
    EXPECT_EQ(idx[0], (w % WM) * (M / WM) + mi * 16 + lane % 16);
    EXPECT_EQ(idx[1], (w / WM) * (N / WN) + ni * 16 + 4 * (lane / 16) + r);
    seen.insert(idx);
    EXPECT_EQ(constant(f.slot_of({make_int(idx[0]), make_int(idx[1])})), s);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(M * N));  // every element once
  EXPECT_THROW(mfma_accumulator(64, 40, 2, 2), std::logic_error);
}

TEST(LayoutTest, DefaultFragmentCoversOddShapesOncePerThreadGroup) {
  Fragment f = default_fragment({5, 33}, 128, 1);
  EXPECT_TRUE(f.covers_more());
  std::map<std::vector<int64_t>, int> count;
  for (const auto& [ts, idx] : table(f, f.threads()))
    if (idx[0] < 5 && idx[1] < 33) ++count[idx];
  EXPECT_EQ(count.size(), 5u * 33u);
  for (const auto& [idx, n] : count) EXPECT_EQ(n, 1);
}

TEST(LayoutTest, DefaultFragmentKeepsVectorsInConsecutiveSlots) {
  Fragment f = default_fragment({4, 64}, 32, 4);
  auto t = table(f, 32);
  for (int64_t s = 0; s + 1 < 4; ++s) EXPECT_EQ(t[std::make_pair(int64_t{0}, s + 1)][1], t[std::make_pair(int64_t{0}, s)][1] + 1);
}

TEST(LayoutTest, AScatteredProjectionPutsEachReplicasElementsOnOneOfThem) {
  // The DSA indexer's scores: a wgmma accumulator of 128 keys x 128 columns over one
  // warpgroup; a row's columns are spread over the 4 lanes of a quad, its rows over 4 slots.
  Fragment scores = wgmma_accumulator(128, 128, 1, 1);
  Fragment projected = scores.project({0});
  ASSERT_EQ(projected.slots(), 4);
  auto scattered = scores.scattered({0}, 1, 32);
  ASSERT_TRUE(scattered);
  EXPECT_EQ(scattered->shape(), std::vector<int64_t>{128});
  EXPECT_EQ(scattered->slots(), 1);
  EXPECT_FALSE(scattered->replicated());
  // Every row on exactly one thread, and that thread one of the quad the projection gave it to;
  // the lowest slot bit went to the lowest lane bit.
  std::map<int64_t, int64_t> holder;
  for (int64_t t = 0; t < 128; ++t) {
    const int64_t row = constant(scattered->indices(make_int(t), make_int(0))[0]);
    EXPECT_TRUE(holder.emplace(row, t).second) << "row " << row << " twice";
    const int64_t quad = t - t % 4;
    const int64_t slot = t % 4;  // the projection's slot this lane now holds alone
    EXPECT_EQ(row, constant(projected.indices(make_int(quad), make_int(slot))[0])) << t;
  }
  EXPECT_EQ(holder.size(), 128u);
  // Fewer slot bits than replica bits, or replicas across warps: none.
  EXPECT_FALSE(wgmma_accumulator(64, 8, 1, 1).scattered({0}, 1, 32));  // a row's 2 slots, 4 lanes
  EXPECT_FALSE(mma_accumulator(64, 64, 1, 4).scattered({0}, 1, 32));  // columns over 4 warps
}

TEST(LayoutTest, ProjectionReplicatesTheDroppedThreads) {
  Fragment f = mma_accumulator(16, 16, 1, 1);
  Fragment rows = f.project({0});
  EXPECT_EQ(rows.shape(), std::vector<int64_t>{16});
  EXPECT_EQ(rows.slots(), 2);  // the two row halves
  // Lanes 4g .. 4g+3 hold the same rows.
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t s = 0; s < 2; ++s)
      EXPECT_EQ(constant(rows.indices(make_int(lane), make_int(s))[0]),
                constant(rows.indices(make_int(lane - lane % 4), make_int(s))[0]));
  // projected_slot agrees with the projection's own slots.
  for (int64_t s = 0; s < f.slots(); ++s) {
    int64_t row = constant(f.indices(make_int(5), make_int(s))[0]);
    EXPECT_EQ(constant(rows.slot_of({make_int(row)})), constant(f.projected_slot({0}, make_int(s))));
  }
}

TEST(LayoutTest, AReducedFragmentThatKeepsExtentOneDimsHoldsTheProjectionsSlots) {
  // (64, 64) reduced along dim 1 into (64, 1): each row in the slot, on the threads, the
  // projection to (64,) gives it.
  Fragment acc = mma_accumulator(64, 64, 2, 2);
  Fragment rows = acc.project({0});
  std::optional<Fragment> kept = reduced_fragment(acc, {0}, {64, 1});
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->shape(), (std::vector<int64_t>{64, 1}));
  EXPECT_EQ(kept->slots(), rows.slots());
  for (int64_t t = 0; t < 128; ++t)
    for (int64_t s = 0; s < rows.slots(); ++s) {
      std::vector<Expr> at = kept->indices(make_int(t), make_int(s));
      EXPECT_EQ(constant(at[0]), constant(rows.indices(make_int(t), make_int(s))[0])) << t << " " << s;
      EXPECT_EQ(constant(at[1]), 0);
    }
  // A 1-D source reduced to (1,): every thread holds the one element.
  std::optional<Fragment> one = reduced_fragment(default_fragment({128}, 128, 1), {}, {1});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->shape(), std::vector<int64_t>{1});
  EXPECT_TRUE(one->replicated());
  EXPECT_EQ(one->slots(), 1);
  // The projection's own shape gives the projection; another element count, nothing.
  EXPECT_EQ(*reduced_fragment(acc, {0}, {64}), rows);
  EXPECT_FALSE(reduced_fragment(acc, {0}, {32, 1}));
}

TEST(LayoutTest, ReplicatedFragmentHoldsEverythingEverywhere) {
  Fragment f = replicated_fragment({3, 4});
  EXPECT_TRUE(f.replicated());
  EXPECT_EQ(f.slots(), 12);
  EXPECT_EQ(constant(f.slot_of({make_int(2), make_int(1)})), 9);
}

TEST(LayoutTest, ReplicatedFragmentsPlaceAlikeWhateverReplicasTheyWrite) {
  // A row statistic every thread holds, as a (1,) fill lays it out and as a reduction of a
  // spread row projects it (a replica digit over 128 threads): the same placement.
  Fragment filled = replicated_fragment({1});
  Fragment reduced = default_fragment({1, 1024}, 128, 4).project({0});
  EXPECT_NE(filled, reduced);
  EXPECT_TRUE(reduced.replicated());
  EXPECT_TRUE(filled.same_placement(reduced));
  EXPECT_TRUE(reduced.same_placement(filled));
  // Held whole by every thread, but in other slots; or spread over threads: not alike.
  Fragment by_columns = extend_fragment(replicated_fragment({4}), {0}, {4, 2});
  EXPECT_TRUE(by_columns.replicated());
  EXPECT_EQ(constant(by_columns.slot_of({make_int(1), make_int(0)})), 1);
  EXPECT_FALSE(replicated_fragment({4, 2}).same_placement(by_columns));
  EXPECT_FALSE(default_fragment({64}, 64, 1).same_placement(replicated_fragment({64})));
}

TEST(LayoutTest, ExtendAddsLoopDimsAsSlots) {
  Fragment rows = default_fragment({8}, 8, 1);
  Fragment loop = extend_fragment(rows, {0}, {8, 6});
  EXPECT_EQ(loop.slots(), 6);
  auto t = table(loop, 8);
  for (int64_t th = 0; th < 8; ++th)
    for (int64_t s = 0; s < 6; ++s) EXPECT_EQ(t[std::make_pair(th, s)], (std::vector<int64_t>{th, s}));
}

// Every (thread, slot) of `view` holds the element `base` holds there, read in row-major order.
void expect_same_elements(const Fragment& base, const Fragment& view, int64_t threads) {
  auto flat = [](const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
    int64_t f = 0;
    for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
    return f;
  };
  ASSERT_EQ(view.slots(), base.slots());
  ASSERT_EQ(view.threads(), base.threads());
  auto b = table(base, threads), v = table(view, threads);
  for (const auto& [ts, idx] : b) {
    EXPECT_EQ(flat(v.at(ts), view.shape()), flat(idx, base.shape())) << ts.first << " " << ts.second;
    std::vector<Expr> at;
    for (int64_t i : v.at(ts)) at.push_back(make_int(i));
    EXPECT_EQ(constant(view.slot_of(at)), ts.second);
  }
}

TEST(LayoutTest, ReshapedSplitsTheColumnsOfAWgmmaAccumulatorAtTheHeads) {
  // The indexer's scores: [keys, queries * heads] read as [keys, queries, heads]. The
  // accumulator's column digits (2 in a slot, 4 lanes, then 8-column groups) split at 64.
  Fragment scores = wgmma_accumulator(64, 128, 1, 1);
  auto by_head = scores.reshaped({64, 2, 64});
  ASSERT_TRUE(by_head.has_value());
  expect_same_elements(scores, *by_head, 128);
  // And back: the merged dims give the accumulator itself.
  auto merged = by_head->reshaped({64, 128});
  ASSERT_TRUE(merged.has_value());
  EXPECT_TRUE(merged->same_placement(scores));
}

TEST(LayoutTest, ReshapedSplitsADigitThatStraddlesANewDim) {
  // 8 consecutive columns a thread: the slot digit of radix 8 splits at a dim of extent 2.
  Fragment f = default_fragment({4, 64}, 32, 8);
  auto view = f.reshaped({4, 32, 2});
  ASSERT_TRUE(view.has_value());
  expect_same_elements(f, *view, 32);
  auto flat = f.reshaped({256});
  ASSERT_TRUE(flat.has_value());
  expect_same_elements(f, *flat, 32);
}

TEST(LayoutTest, ReshapedIsNullWhereTheDigitsDoNotSplitWhole) {
  auto slot = [](int dim, int64_t radix, int64_t place, int64_t stride) {
    return FragmentDigit{dim, radix, place, false, stride};
  };
  auto thread = [](int dim, int64_t radix, int64_t place, int64_t stride) {
    return FragmentDigit{dim, radix, place, true, stride};
  };
  // 12 elements: 4 in each thread's slots, 3 threads. Read as (2, 6), the thread digit
  // (places 4 and 8) straddles 6 at no whole step.
  Fragment twelve({12}, {slot(0, 4, 1, 1), thread(0, 3, 4, 1)});
  EXPECT_FALSE(twelve.reshaped({2, 6}).has_value());
  EXPECT_TRUE(twelve.reshaped({3, 4}).has_value());
  // Read as (6, 2), the slot digit splits in two.
  auto pairs = twelve.reshaped({6, 2});
  ASSERT_TRUE(pairs.has_value());
  expect_same_elements(twelve, *pairs, 3);
  // A fragment covering more than its shape (rows rounded up to 4) has no row-major reading.
  Fragment rounded({3, 4}, {thread(0, 4, 1, 1), slot(1, 4, 1, 1)});
  ASSERT_TRUE(rounded.covers_more());
  EXPECT_FALSE(rounded.reshaped({12}).has_value());
  // Nor has another count of elements.
  EXPECT_FALSE(default_fragment({4, 64}, 32, 4).reshaped({4, 60}).has_value());
  // A replicated fragment reads any shape.
  auto any = replicated_fragment({2, 6}).reshaped({4, 3});
  ASSERT_TRUE(any.has_value());
  expect_same_elements(replicated_fragment({2, 6}), *any, 1);
}

}  // namespace
}  // namespace tilec::ir
