// The program's own CUDA device code, as TileLang's dequantizing GEMMs bring theirs in:
// T.import_source(text) adds it to the kernel's source (KernelLaunch::extern_sources), and
// T.call_extern calls a function of it by name. CUDA only (passes/require_gpu_features.h).
#include <algorithm>

#include "frontend/builtin_table.h"
#include "frontend/lexer.h"
#include "ir/device_calls.h"

namespace tilec::frontend {

using K = CtValue::Kind;

namespace {

// The source text a kernel may carry: 1 MiB of it at most.
constexpr size_t kMaxImportedBytes = size_t{1} << 20;

CtValue import_source(Elaborator& el, const EvaluatedCall& call) {
  if (!el.in_kernel_) error_at(call.node->loc, "T.import_source goes inside a T.Kernel block");
  CallArgs a = el.bind(call, {"source"});
  const CtValue& source = a["source"];
  if (source.kind != K::String)
    error_at(a.loc("source"), "T.import_source takes the CUDA source as a string, not " + describe(source));
  std::vector<std::string>& sources = el.kernel_->extern_sources;
  size_t bytes = source.text.size();
  for (const std::string& s : sources) bytes += s.size();
  if (bytes > kMaxImportedBytes)
    error_at(a.loc("source"), "T.import_source: the kernel's imported source is over 1 MiB");
  if (std::find(sources.begin(), sources.end(), source.text) == sources.end()) sources.push_back(source.text);
  return CtValue::none();
}

// T.call_extern(func_name, *args, dtype=...) as TileLang's programs write it, or TVM's
// T.call_extern(dtype, func_name, *args): a statement calling func_name(args...), its result
// (of `dtype`) unused. Arguments are numbers, runtime values and T.access_ptr addresses.
CtValue call_extern(Elaborator& el, const EvaluatedCall& call) {
  if (!el.in_kernel_) error_at(call.node->loc, "T.call_extern goes inside a T.Kernel block");
  auto check_dtype = [&](const CtValue& v, const SourceLoc& loc) {
    if (!(v.kind == K::String && v.text == "handle")) el.to_dtype(v, loc, "T.call_extern dtype");
  };
  size_t first = 0;
  bool dtype_given = false;
  for (size_t k = 0; k < call.keywords.size(); ++k) {
    if (call.keywords[k].first != "dtype")
      error_at(call.keyword_locs[k], "T.call_extern() got an unexpected keyword argument '" + call.keywords[k].first + "'");
    check_dtype(call.keywords[k].second, call.keyword_locs[k]);
    dtype_given = true;
  }
  // TVM's order, the dtype first: T.call_extern("handle", "f", ...), T.call_extern(T.float32, "f", ...).
  if (!dtype_given && call.positional.size() >= 2 && call.positional[1].kind == K::String &&
      (call.positional[0].kind == K::DType || call.positional[0].kind == K::String)) {
    check_dtype(call.positional[0], call.positional_locs[0]);
    first = 1;
  }
  if (first >= call.positional.size() || call.positional[first].kind != K::String)
    error_at(call.node->loc, "T.call_extern takes the name of the function to call, as a string");
  const std::string& name = call.positional[first].text;
  if (!is_identifier(name))
    error_at(call.positional_locs[first], "T.call_extern: '" + name + "' is not a C++ function name");
  std::vector<ir::Expr> args;
  for (size_t i = first + 1; i < call.positional.size(); ++i)
    args.push_back(el.to_expr(call.positional[i], call.positional_locs[i], "T.call_extern argument"));
  el.emit(ir::with_loc(ir::make_evaluate(ir::make_call(DType::Int32, ir::kExternCallPrefix + name, args)),
                       call.node->loc));
  return CtValue::none();
}

}  // namespace

void add_extern_builtins(BuiltinTable& t) {
  t["T.import_source"] = import_source;
  t["T.call_extern"] = call_extern;
}

}  // namespace tilec::frontend
