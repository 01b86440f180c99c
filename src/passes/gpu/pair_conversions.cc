#include "passes/gpu/pair_conversions.h"

#include <string>
#include <vector>

#include "ir/device_calls.h"
#include "ir/equal.h"
#include "ir/intrinsics.h"
#include "ir/mutator.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "ir/visitor.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;

// The FP8 value a float conversion reads from a local run (`float(e4m3(raw[i]))`, or of an
// FP8 run itself), with its run and index; null where `cast` is no such conversion.
struct Fp8Read {
  const ir::BufferLoad* load = nullptr;
  DType format;
};

Fp8Read fp8_read(const ir::Cast& cast) {
  if (cast.dtype != DType::Float32) return {};
  const Expr* value = &cast.value;
  if (const auto* call = value->as<ir::Call>(); call && call->name == ir::kReinterpret && call->args.size() == 1)
    value = &call->args[0];
  const auto* load = value->as<ir::BufferLoad>();
  const DType format = cast.value->dtype;
  if (!load || load->buffer->scope != ir::MemoryScope::Local || load->indices.empty() ||
      load->buffer->dtype.bytes() != 1 || (format != DType::Float8E4M3 && format != DType::Float8E5M2))
    return {};
  return {load, format};
}

// The even base of an FP8 read's run index base + lane (the other dims free of lane), by which
// it is paired with the next element; null for any other index.
Expr pair_base(const ir::BufferLoad& load, const Expr& lane) {
  const std::vector<Expr>& indices = load.indices;
  for (size_t d = 0; d + 1 < indices.size(); ++d)
    if (ir::uses_var(indices[d], lane.get())) return Expr();
  const Expr& index = indices.back();
  const Expr base = ir::simplify(ir::substitute(index, lane, ir::make_int(0, lane->dtype)));
  if (ir::uses_var(base, lane.get()) || !ir::is_zero(ir::simplify(ir::make_Sub(ir::make_Sub(index, lane), base))) ||
      !ir::is_zero(ir::simplify(ir::make_FloorMod(base, ir::make_int(2, base->dtype)))))
    return Expr();
  return base;
}

// Puts each FP8 conversion whose run index is base + lane in its last dim (base even, the other
// dims free of lane) in a pair: the pair's conversion reads run[.., base + 2p] and the element
// after it into a local of 2 floats, and the value reads that local at lane - 2p (element 0 for
// the pair's first, 1 for its second).
class PairFp8Reads : public ir::IRMutator {
 public:
  PairFp8Reads(Expr lane, Expr first, std::vector<ir::Buffer>& locals, std::vector<Stmt>& conversions)
      : lane_(std::move(lane)), first_(std::move(first)), locals_(locals), conversions_(conversions) {}

 protected:
  Expr mutate_Cast(const ir::Cast* op, const Expr& self) override {
    const Fp8Read read = fp8_read(*op);
    if (!read.load) return IRMutator::mutate_Cast(op, self);
    const Expr base = pair_base(*read.load, lane_);
    if (!base) return IRMutator::mutate_Cast(op, self);
    const std::vector<Expr>& indices = read.load->indices;
    std::vector<Expr> at_pair(indices.begin(), indices.end() - 1);
    at_pair.push_back(ir::simplify(ir::make_Add(base, first_)));
    ir::Buffer pair = ir::make_buffer(read.load->buffer->name + "_pair", DType::Float32, {ir::make_int(2)}, {},
                                      ir::MemoryScope::Local, op->loc);
    locals_.push_back(pair);
    const char* convert = read.format == DType::Float8E4M3 ? "e4m3_pair_to_float" : "e5m2_pair_to_float";
    conversions_.push_back(ir::device_call(
        convert,
        {ir::address_of(pair, {ir::make_int(0)}), ir::address_of(read.load->buffer, at_pair)},
        op->loc));
    return ir::make_load(pair, {ir::make_Sub(lane_, first_)});
  }

 private:
  Expr lane_, first_;
  std::vector<ir::Buffer>& locals_;
  std::vector<Stmt>& conversions_;
};

// Whether `e` reads `buffer`.
bool reads(const Expr& e, const ir::Buffer& buffer) {
  struct Reads : ir::IRVisitor {
    const ir::BufferNode* buffer;
    bool found = false;
    void visit_BufferLoad(const ir::BufferLoad* op) override {
      found = found || op->buffer.get() == buffer;
      ir::IRVisitor::visit_BufferLoad(op);
    }
  } r;
  r.buffer = buffer.get();
  r.visit(e);
  return r.found;
}

// Whether `e` is a constant 0 (integer or float, either sign).
bool zero_constant(const Expr& e) {
  const Expr value = ir::simplify(e);
  const auto* f = value.as<ir::FloatImm>();
  return f ? f->value == 0.0 : ir::is_zero(value);
}

// `e` at lane 0 where it is the same at every lane of [0, width), each simplified (without the
// bounds of its other variables: (8g + 1) >> 3 stays, as g may be such that 8g + 1 wraps);
// null otherwise.
Expr same_at_every_lane(const Expr& e, const Expr& lane, int64_t width) {
  const Expr first = ir::simplify(ir::substitute(e, lane, ir::make_int(0, lane->dtype)));
  for (int64_t k = 1; k < width; ++k)
    if (!ir::structural_equal(ir::simplify(ir::substitute(e, lane, ir::make_int(k, lane->dtype))), first)) return Expr();
  return first;
}

// float(e4m3(run[i])) * float(scale), scale a bfloat16 the same at every lane (either order):
// the FP8 read and the scale; a null read otherwise.
struct ScaledFp8 {
  const ir::BufferLoad* load = nullptr;
  Expr scale;
};

ScaledFp8 scaled_e4m3(const Expr& value, const Expr& lane, int64_t width) {
  const auto* mul = value.as<ir::Mul>();
  if (!mul) return {};
  for (const auto& [fp8, other] : {std::pair{mul->a, mul->b}, std::pair{mul->b, mul->a}}) {
    const auto* read_cast = fp8.as<ir::Cast>();
    const auto* scale_cast = other.as<ir::Cast>();
    if (!read_cast || !scale_cast || scale_cast->dtype != DType::Float32 || scale_cast->value->dtype != DType::BFloat16)
      continue;
    const Fp8Read read = fp8_read(*read_cast);
    if (!read.load || read.format != DType::Float8E4M3 || !pair_base(*read.load, lane)) continue;
    if (Expr scale = same_at_every_lane(scale_cast->value, lane, width)) return {read.load, scale};
  }
  return {};
}

// The run's FP8 dequantization by a bfloat16 scale four elements at a time in bf16x2 multiplies
// (e4m3_quad_times); null where the value is no such product, or its run's quads are not whole
// 4-byte words.
Stmt bf16x2_dequantization(const ir::BufferStore& store, const Expr& value, const Expr& lane, int64_t width,
                           const SourceLoc& loc) {
  const ScaledFp8 scaled = scaled_e4m3(value, lane, width);
  if (!scaled.load || store.buffer->dtype != DType::BFloat16 || width % 4) return Stmt();
  const Expr base = pair_base(*scaled.load, lane);
  if (!ir::is_zero(ir::simplify(ir::make_FloorMod(base, ir::make_int(4, base->dtype))))) return Stmt();
  const Expr quad = ir::make_var("q", lane->dtype);
  const Expr first = ir::make_Mul(quad, ir::make_int(4, lane->dtype));
  std::vector<Expr> at_quad(scaled.load->indices.begin(), scaled.load->indices.end() - 1);
  at_quad.push_back(ir::simplify(ir::make_Add(base, first)));
  return ir::with_loc(ir::make_for(quad, ir::make_int(0), ir::make_int(width / 4), ir::ForKind::Unrolled,
                                   ir::device_call("e4m3_quad_times",
                                                   {ir::address_of(store.buffer, {first}),
                                                    ir::address_of(scaled.load->buffer, at_quad), scaled.scale},
                                                   loc)),
                      loc);
}

}  // namespace

Stmt pair_conversions(const Stmt& element, const Expr& lane, int64_t width, std::vector<ir::Buffer>& locals,
                      bool bf16x2_multiplies) {
  const auto* store = element.as<ir::BufferStore>();
  if (!store || width < 2 || width % 2 || store->indices.size() != 1 || !ir::structural_equal(store->indices[0], lane))
    return Stmt();
  const DType t = store->buffer->dtype;
  const auto* cast = store->value.as<ir::Cast>();
  if ((t != DType::BFloat16 && t != DType::Float16) || !cast || cast->value->dtype != DType::Float32) return Stmt();
  if (bf16x2_multiplies)
    if (Stmt quads = bf16x2_dequantization(*store, cast->value, lane, width, element->loc)) return quads;
  Expr pair = ir::make_var("p", lane->dtype);
  Expr first = ir::make_Mul(pair, ir::make_int(2, lane->dtype));
  std::vector<Stmt> body;
  Expr value = PairFp8Reads(lane, first, locals, body).mutate(cast->value);
  auto at = [&](const Expr& which) { return ir::simplify(ir::substitute(value, lane, which)); };
  body.push_back(ir::device_call("from_float_pair",
                                 {ir::address_of(store->buffer, {first}), at(first),
                                  at(ir::make_Add(first, ir::make_int(1, lane->dtype)))},
                                 element->loc));
  return ir::with_loc(ir::make_for(pair, ir::make_int(0), ir::make_int(width / 2), ir::ForKind::Unrolled,
                                   ir::make_seq(body)),
                      element->loc);
}

Stmt pair_max_conversions(const Stmt& body, const Expr& slot, int64_t slots) {
  const auto* store = body.as<ir::BufferStore>();
  if (!store || slots < 2 || slots % 2 || store->indices.size() != 1 || store->buffer->scope != ir::MemoryScope::Local)
    return Stmt();
  const DType t = store->buffer->dtype;
  const auto* cast = store->value.as<ir::Cast>();
  if ((t != DType::BFloat16 && t != DType::Float16) || !cast || cast->value->dtype != DType::Float32) return Stmt();
  // max(x, floor) with floor the same in every slot; or x < 0 ? 0 : x, a ReLU that keeps NaN
  Expr x, floor;
  if (const auto* max = cast->value.as<ir::Max>()) {
    const bool a_varies = ir::uses_var(max->a, slot.get()), b_varies = ir::uses_var(max->b, slot.get());
    if (a_varies == b_varies) return Stmt();
    x = a_varies ? max->a : max->b;
    floor = a_varies ? max->b : max->a;
  } else if (const auto* select = cast->value.as<ir::Select>()) {
    const auto* negative = select->condition.as<ir::LT>();
    if (!negative || !zero_constant(negative->b) || !zero_constant(select->true_value) ||
        !ir::structural_equal(negative->a, select->false_value))
      return Stmt();
    x = select->false_value;
  } else {
    return Stmt();
  }
  // A value that reads the run itself may read what the slot before it stored
  if (reads(x, store->buffer) || (floor.defined() && reads(floor, store->buffer))) return Stmt();
  Expr pair = ir::make_var("p", slot->dtype);
  Expr first = ir::make_Mul(pair, ir::make_int(2, slot->dtype));
  Expr second = ir::make_Add(first, ir::make_int(1, slot->dtype));
  auto at = [&](const Expr& e, const Expr& which) { return ir::simplify(ir::substitute(e, slot, which)); };
  // Slot 2p + 1 stores the element after slot 2p's, an even one: checked slot by slot (the
  // layout's index of a slot, digits of it, is one the simplifier can't subtract).
  const Expr& index = store->indices[0];
  for (int64_t p = 0; p < slots / 2; ++p) {
    int64_t even, odd;
    if (!ir::is_const_int(at(index, ir::make_int(2 * p, slot->dtype)), &even) ||
        !ir::is_const_int(at(index, ir::make_int(2 * p + 1, slot->dtype)), &odd) || even % 2 || odd != even + 1)
      return Stmt();
  }
  std::vector<Expr> args = {ir::address_of(store->buffer, {at(index, first)}), at(x, first), at(x, second)};
  if (floor.defined()) args.push_back(floor);
  Stmt call = ir::device_call(floor.defined() ? "from_float_pair_max" : "from_float_pair_relu", args, body->loc);
  return ir::with_loc(ir::make_for(pair, ir::make_int(0), ir::make_int(slots / 2), ir::ForKind::Unrolled, call),
                      body->loc);
}

}  // namespace tilec::passes
