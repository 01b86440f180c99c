// The compile driver: source -> elaborated IR -> target passes -> target
// source -> built module, with each stage logged and timed.
#include <chrono>
#include <cstdlib>
#include <stdexcept>

#include "base/log.h"
#include "codegen/cpu/codegen_cpu.h"
#include "frontend/ast.h"
#include "frontend/elaborate.h"
#include "frontend/parser.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "runtime/kernel_impl.h"

namespace tilec {
namespace {

void check_target(const std::string& target) {
  if (target != "cpu")
    throw std::invalid_argument("target '" + target + "' is not available in this build (targets: cpu)");
}

// TILEC_BOUNDS_CHECK=1, or the pass config "tilec.bounds_check": check every
// buffer access of the kernel (CPU target).
bool bounds_check(const CompileOptions& options) {
  auto it = options.pass_configs.find("tilec.bounds_check");
  if (it != options.pass_configs.end()) return it->second == "1" || it->second == "true" || it->second == "True";
  const char* env = std::getenv("TILEC_BOUNDS_CHECK");
  return env && std::string(env) == "1";
}

struct Lowered {
  ir::PrimFunc tile;
  ir::PrimFunc lowered;
};

Lowered lower(const FunctionSource& func, const CompileOptions& options) {
  check_target(options.target);
  Lowered r;
  {
    StageTimer t("parse + elaborate '" + func.name + "'");
    r.tile = frontend::elaborate(func);
  }
  passes::PassContext ctx;
  ctx.target = options.target;
  ctx.pass_configs = options.pass_configs;
  {
    StageTimer t("passes (" + options.target + ")");
    r.lowered = passes::run_pipeline(r.tile, ctx);
  }
  return r;
}

std::vector<ParamInfo> param_infos(const ir::PrimFunc& func) {
  std::vector<ParamInfo> infos;
  for (const auto& p : func.params) {
    ParamInfo info;
    info.name = p.name;
    info.is_tensor = p.is_tensor();
    if (p.is_tensor()) {
      info.dtype = p.buffer->dtype;
      for (const auto& d : p.buffer->shape) {
        DimInfo dim;
        int64_t v;
        if (ir::is_const_int(d, &v)) dim.value = v;
        dim.expr = ir::to_string(d);
        info.shape.push_back(dim);
      }
    } else {
      info.dtype = p.var->dtype;
    }
    infos.push_back(info);
  }
  return infos;
}

}  // namespace

Kernel compile(const FunctionSource& func, const CompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  auto impl = std::make_shared<Kernel::Impl>();
  Lowered l = lower(func, options);
  impl->name = l.lowered.name;
  impl->target = options.target;
  impl->params = param_infos(l.lowered);
  impl->out_idx = l.lowered.out_idx;
  for (const auto& cd : l.lowered.const_dims) impl->const_dims.push_back({cd.param, cd.dim, cd.value});
  impl->tile_ir = ir::to_string(l.tile);
  impl->ir = ir::to_string(l.lowered);
  impl->abi = codegen::make_kernel_abi(l.lowered);
  {
    StageTimer t("codegen (" + options.target + ")");
    impl->source = codegen::generate_cpu_source(l.lowered, impl->abi, bounds_check(options));
  }
  {
    StageTimer t("build (" + options.target + ")");
    impl->module = runtime::CpuModule::load(impl->source, codegen::kernel_entry_name());
  }
  impl->bounds_error = reinterpret_cast<const char* (*)()>(impl->module->symbol(codegen::kernel_error_name()));
  impl->func = std::move(l.lowered);
  impl->compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log(LogLevel::Debug, "compiled '" + impl->name + "' in " +
                           std::to_string(impl->compile_seconds * 1e3) + " ms");
  return Kernel(impl);
}

std::string emit(const FunctionSource& func, const CompileOptions& options, EmitStage stage) {
  check_target(options.target);
  if (stage == EmitStage::TileIR) return ir::to_string(frontend::elaborate(func));
  Lowered l = lower(func, options);
  if (stage == EmitStage::IR) return ir::to_string(l.lowered);
  return codegen::generate_cpu_source(l.lowered, codegen::make_kernel_abi(l.lowered), bounds_check(options));
}

FunctionStyle function_style(const FunctionSource& func) { return frontend::function_style(func); }

void set_log_level(const std::string& level) {
  auto parsed = parse_log_level(level);
  if (!parsed)
    throw std::invalid_argument("unknown log level '" + level + "' (use ERROR, WARNING, INFO or DEBUG)");
  set_log_level(*parsed);
}

const char* version() { return TILEC_VERSION; }

Value Value::tensor_spec(std::vector<int64_t> shape, DType t) {
  Value r;
  r.kind = Kind::TensorSpec;
  r.dtype = t;
  for (int64_t d : shape) r.items.push_back(of_int(d));
  return r;
}

}  // namespace tilec
