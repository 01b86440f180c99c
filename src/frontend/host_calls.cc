// Python objects that kernel source names (modules, classes, builtin functions), used at
// compile time: `math.ceil(n / block)`, `driver.get_num_sms()`, `tilelang.math.next_power_of_2(d)`
// run in Python while the kernel compiles, as they would in the Python that TileLang runs, and
// their results are compile-time values. Their arguments must be compile-time values too.
#include <string>
#include <utility>
#include <vector>

#include "frontend/elaborator.h"
#include "tilec/tilec.h"

namespace tilec::frontend {

using K = CtValue::Kind;

// `v` as a host value, for an argument of a call into Python.
static Value host_argument(const CtValue& v, const SourceLoc& loc, const std::string& callee) {
  switch (v.kind) {
    case K::None: return Value::none();
    case K::Bool: return Value::of_bool(v.bool_value);
    case K::Int: return Value::of_int(v.int_value);
    case K::Float: return Value::of_float(v.float_value);
    case K::String: return Value::of_string(v.text);
    case K::DType: return Value::of_dtype(v.dtype);
    case K::Host: return Value::of_host(v.host);
    case K::Tuple: case K::List: {
      std::vector<Value> items;
      for (const CtValue& item : v.items.vector()) items.push_back(host_argument(item, loc, callee));
      return v.kind == K::Tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
    }
    default:
      error_at(loc, callee + " runs in Python while the kernel compiles, so its arguments are "
                    "compile-time values (numbers, strings, dtypes, tuples of these), not " +
                        describe(v));
  }
}

CtValue Elaborator::host_attribute(const CtValue& base, const std::string& attr, const SourceLoc& loc) {
  try {
    return from_value(base.host->attribute(attr));
  } catch (const HostError& e) {
    error_at(loc, "reading '" + attr + "' of Python " + base.host->description() + " failed: " + e.what());
  }
}

CtValue Elaborator::call_host(const CtValue& callee, const EvaluatedCall& call) {
  std::vector<Value> positional;
  for (size_t i = 0; i < call.positional.size(); ++i)
    positional.push_back(host_argument(call.positional[i], call.positional_locs[i], call.callee_name));
  std::vector<std::pair<std::string, Value>> keywords;
  for (size_t i = 0; i < call.keywords.size(); ++i)
    keywords.emplace_back(call.keywords[i].first,
                          host_argument(call.keywords[i].second, call.keyword_locs[i], call.callee_name));
  try {
    return from_value(callee.host->call(positional, keywords));
  } catch (const HostError& e) {
    error_at(call.node->loc, call.callee_name + "(...) raised in Python: " + e.what());
  }
}

}  // namespace tilec::frontend
