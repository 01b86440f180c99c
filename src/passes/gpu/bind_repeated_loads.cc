#include "passes/gpu/bind_repeated_loads.h"

#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/device_calls.h"
#include "ir/equal.h"
#include "ir/mutator.h"
#include "ir/visitor.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Stmt;

bool is_address_of(const ir::ExprNode* e) {
  return e->kind == ExprKind::Call && static_cast<const ir::Call*>(e)->name == ir::kAddressOf;
}

bool reads_memory(const ir::BufferLoad* load) {
  return load->buffer->scope == ir::MemoryScope::Global || load->buffer->scope == ir::MemoryScope::Shared;
}

// A hash that structurally equal values share (ir/equal.h: buffers by name).
size_t hash_of(const Expr& e) {
  auto mix = [](size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); };
  size_t h = mix(static_cast<size_t>(e->kind), static_cast<size_t>(e->dtype.code()));
  if (const auto* imm = e.as<ir::IntImm>()) return mix(h, std::hash<int64_t>()(imm->value));
  if (const auto* imm = e.as<ir::FloatImm>()) return mix(h, std::hash<double>()(imm->value));
  if (e.as<ir::Var>()) return mix(h, std::hash<const void*>()(e.get()));
  if (auto [a, b] = ir::binary_operands(e.get()); a) return mix(mix(h, hash_of(*a)), hash_of(*b));
  if (const auto* n = e.as<ir::Not>()) return mix(h, hash_of(n->a));
  if (const auto* s = e.as<ir::Select>())
    return mix(mix(mix(h, hash_of(s->condition)), hash_of(s->true_value)), hash_of(s->false_value));
  if (const auto* c = e.as<ir::Cast>()) return mix(h, hash_of(c->value));
  if (const auto* call = e.as<ir::Call>()) {
    h = mix(h, std::hash<std::string>()(call->name));
    for (const Expr& a : call->args) h = mix(h, hash_of(a));
    return h;
  }
  const auto* load = e.as<ir::BufferLoad>();
  h = mix(h, std::hash<std::string>()(load->buffer->name));
  for (const Expr& i : load->indices) h = mix(h, hash_of(i));
  return h;
}

// The values in a call's arguments (and in the values already bound for it) that read memory,
// each with its size and whether it is evaluated on every path.
class Occurrences {
 public:
  struct Value {
    Expr expr;
    size_t nodes = 0;
    int count = 0;
    bool unconditional = false;
  };

  void add_root(const Expr& e) { walk(e, false); }

  // The largest value named more than once and evaluated unconditionally somewhere; null if none.
  Expr best() const {
    const Value* best = nullptr;
    for (const auto& [hash, values] : by_hash_)
      for (const Value& v : values)
        if (v.count > 1 && v.unconditional && (!best || v.nodes > best->nodes)) best = &v;
    return best ? best->expr : Expr();
  }

 private:
  // Visits e; returns its node count and whether it reads memory.
  std::pair<size_t, bool> walk(const Expr& e, bool conditional) {
    if (!e) return {0, false};
    size_t nodes = 1;
    bool reads = false;
    auto child = [&](const Expr& c, bool c_conditional) {
      auto [n, r] = walk(c, c_conditional);
      nodes += n;
      reads |= r;
    };
    if (auto [a, b] = ir::binary_operands(e.get()); a) {
      child(*a, conditional);
      // && and || evaluate their right side only on some paths
      child(*b, conditional || e->kind == ExprKind::And || e->kind == ExprKind::Or);
    } else if (const auto* n = e.as<ir::Not>()) {
      child(n->a, conditional);
    } else if (const auto* s = e.as<ir::Select>()) {
      child(s->condition, conditional);
      child(s->true_value, true);
      child(s->false_value, true);
    } else if (const auto* c = e.as<ir::Cast>()) {
      child(c->value, conditional);
    } else if (const auto* call = e.as<ir::Call>()) {
      for (const Expr& a : call->args) {
        // an address names its element without reading it: only the element's indices are values
        const auto* element = is_address_of(e.get()) ? a.as<ir::BufferLoad>() : nullptr;
        if (!element) {
          child(a, conditional);
          continue;
        }
        for (const Expr& i : element->indices) child(i, conditional);
      }
    } else if (const auto* load = e.as<ir::BufferLoad>()) {
      for (const Expr& i : load->indices) child(i, conditional);
      reads |= reads_memory(load);
    }
    if (reads) record(e, nodes, conditional);
    return {nodes, reads};
  }

  void record(const Expr& e, size_t nodes, bool conditional) {
    std::vector<Value>& values = by_hash_[hash_of(e)];
    for (Value& v : values) {
      if (!ir::structural_equal(v.expr, e)) continue;
      ++v.count;
      v.unconditional |= !conditional;
      return;
    }
    values.push_back({e, nodes, 1, !conditional});
  }

  std::unordered_map<size_t, std::vector<Value>> by_hash_;
};

// Every occurrence of `value` replaced by `var` (not an address_of's element, which is no value).
class ReplaceValue : public ir::IRMutator {
 public:
  ReplaceValue(Expr value, Expr var) : value_(std::move(value)), var_(std::move(var)) {}

  Expr mutate(const Expr& e) override {
    if (e && ir::structural_equal(e, value_)) return var_;
    return IRMutator::mutate(e);
  }

 protected:
  Expr mutate_Call(const ir::Call* op, const Expr& self) override {
    if (op->name != ir::kAddressOf || op->args.size() != 1 || !op->args[0].as<ir::BufferLoad>())
      return IRMutator::mutate_Call(op, self);
    const auto* element = op->args[0].as<ir::BufferLoad>();
    std::vector<Expr> indices;
    for (const Expr& i : element->indices) indices.push_back(mutate(i));
    return ir::make_call(op->dtype, op->name, {ir::make_load(element->buffer, std::move(indices))});
  }

 private:
  Expr value_, var_;
};

Stmt bind_in_call(const ir::Evaluate* op, const Stmt& self) {
  Expr call = op->value;
  std::vector<std::pair<Expr, Expr>> lets;  // (var, value), each before the ones that use it
  for (;;) {
    Occurrences occurrences;
    occurrences.add_root(call);
    for (const auto& [var, value] : lets) occurrences.add_root(value);
    Expr value = occurrences.best();
    if (!value) break;
    Expr var = ir::make_var("reused", value->dtype);
    ReplaceValue replace(value, var);
    call = replace.mutate(call);
    size_t after = 0;  // past the last let the value uses
    for (size_t i = 0; i < lets.size(); ++i) {
      lets[i].second = replace.mutate(lets[i].second);
      if (ir::uses_var(value, lets[i].first.get())) after = i + 1;
    }
    lets.insert(lets.begin() + static_cast<std::ptrdiff_t>(after), {var, value});
  }
  if (lets.empty()) return self;
  Stmt result = ir::with_loc(ir::make_evaluate(call), op->loc);
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    result = ir::with_loc(ir::make_let(it->first, it->second, result), op->loc);
  return result;
}

class BindRepeatedLoads : public ir::IRMutator {
 protected:
  Stmt mutate_Evaluate(const ir::Evaluate* op, const Stmt& self) override {
    const auto* call = op->value.as<ir::Call>();
    if (!call || call->name.rfind(ir::kDeviceCallPrefix, 0) != 0) return self;
    return bind_in_call(op, self);
  }
};

}  // namespace

ir::Stmt bind_repeated_loads(const ir::Stmt& body, const PassContext& /*ctx: the same on every GPU target*/) {
  return BindRepeatedLoads().mutate(body);
}

}  // namespace tilec::passes
