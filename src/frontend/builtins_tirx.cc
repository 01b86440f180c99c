// TVM's tirx (tir) expression helpers, which TileLang kernels call through `from tvm import
// tirx` (tilec.tvm.tirx on the Python side): each is a T primitive under TVM's name and
// argument order.
//   tirx.const(value, dtype=None)            value as dtype (T.cast); without dtype, value
//   tirx.Select(condition, true_value, false_value)   T.if_then_else
//   tirx.Cast(dtype, value)                  T.Cast
//   tirx.reinterpret(dtype, value)           T.reinterpret(value, dtype)
//   tirx.Min(a, b), tirx.Max(a, b)           T.min, T.max
// and TVM's DataType(dtype) (tilec.DataType), whose .bits kernels read
// (`TILE_K = 128 // DataType(dtype).bits`): the dtype itself.
#include "frontend/builtin_table.h"

namespace tilec::frontend {

using K = CtValue::Kind;

// `call` with its arguments bound to TVM's `params` and passed on positionally in `order` to
// the builtin `target`.
static CtValue forward(const std::string& target, Elaborator& el, const EvaluatedCall& call,
                       const std::vector<std::string>& params, const std::vector<std::string>& order) {
  CallArgs a = el.bind(call, params);
  EvaluatedCall forwarded;
  forwarded.node = call.node;
  forwarded.callee_name = call.callee_name;
  for (const std::string& name : order) {
    forwarded.positional.push_back(a[name]);
    forwarded.positional_locs.push_back(a.loc(name));
  }
  return el.call_builtin(target, forwarded);
}

void add_tirx_builtins(BuiltinTable& t) {
  t["tilec.DataType"] = [](Elaborator& el, const EvaluatedCall& c) {
    CallArgs a = el.bind(c, {"dtype"});
    return CtValue::of_dtype(el.to_dtype(a["dtype"], a.loc("dtype"), "DataType argument"));
  };
  t["tilec.tvm.tirx.const"] = [](Elaborator& el, const EvaluatedCall& c) {
    CallArgs a = el.bind(c, {"value", "dtype=None"});
    if (a["dtype"].kind == K::None) {
      if (!a["value"].is_number())
        error_at(a.loc("value"), "tirx.const takes a number, not " + describe(a["value"]));
      return a["value"];
    }
    DType dtype = el.to_dtype(a["dtype"], a.loc("dtype"), "tirx.const dtype");
    return CtValue::of_expr(el.to_expr_of(a["value"], dtype, a.loc("value"), "tirx.const value"));
  };
  t["tilec.tvm.tirx.Select"] = [](Elaborator& el, const EvaluatedCall& c) {
    return forward("T.if_then_else", el, c, {"condition", "true_value", "false_value"},
                   {"condition", "true_value", "false_value"});
  };
  t["tilec.tvm.tirx.Cast"] = [](Elaborator& el, const EvaluatedCall& c) {
    return forward("T.Cast", el, c, {"dtype", "value"}, {"dtype", "value"});
  };
  t["tilec.tvm.tirx.reinterpret"] = [](Elaborator& el, const EvaluatedCall& c) {
    return forward("T.reinterpret", el, c, {"dtype", "value"}, {"value", "dtype"});
  };
  t["tilec.tvm.tirx.Min"] = [](Elaborator& el, const EvaluatedCall& c) {
    return forward("T.min", el, c, {"a", "b"}, {"a", "b"});
  };
  t["tilec.tvm.tirx.Max"] = [](Elaborator& el, const EvaluatedCall& c) {
    return forward("T.max", el, c, {"a", "b"}, {"a", "b"});
  };
}

}  // namespace tilec::frontend
