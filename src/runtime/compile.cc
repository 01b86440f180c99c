// The compile driver: source -> elaborated IR -> target passes -> target
// source -> built module, with each stage logged and timed.
#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/env_switch.h"
#include "base/log.h"
#include "codegen/cpu/codegen_cpu.h"
#include "codegen/cuda/codegen_cuda.h"
#include "codegen/hip/codegen_hip.h"
#include "frontend/ast.h"
#include "frontend/elaborate.h"
#include "frontend/parser.h"
#include "ir/printer.h"
#include "op/accesses.h"
#include "passes/cuda/register_moves.h"
#include "passes/pipeline.h"
#include "passes/split_launches.h"
#include "runtime/cuda/cubin_registers.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_module.h"
#include "runtime/hip/hip_library.h"
#include "runtime/hip/hipcc.h"
#include "runtime/compile_flags.h"
#include "runtime/kernel_impl.h"
#include "runtime/pass_configs.h"

namespace tilec {
namespace {

// `options` with their pass configs normalized (runtime/pass_configs.h): TileLang's keys
// become tilec's switches; and with their compile flags as NVRTC options
// (runtime/compile_flags.h), --use_fast_math setting "tilec.fast_math".
CompileOptions with_normalized_pass_configs(const CompileOptions& options) {
  CompileOptions normalized = options;
  normalized.pass_configs = runtime::normalized_pass_configs(options.pass_configs);
  runtime::NvrtcFlags flags = runtime::nvrtc_flags(options.compile_flags);
  normalized.compile_flags = std::move(flags.nvrtc_options);
  if (flags.fast_math) {
    auto [it, fresh] = normalized.pass_configs.emplace("tilec.fast_math", "true");
    if (!fresh && !runtime::switch_on(it->second))
      throw std::invalid_argument(
          "compile flag '--use_fast_math' and pass config 'tilec.fast_math' (or TileLang's key for it) = false "
          "disagree");
  }
  return normalized;
}

}  // namespace

namespace {

// The Target options.target and options.arch name, if tilec can compile for it.
Target requested_target(const CompileOptions& options) {
  Target target = parse_target(options.target, options.arch);
  auto bounds = options.pass_configs.find("tilec.bounds_check");
  if (target.is_hip() && bounds != options.pass_configs.end() && runtime::switch_on(bounds->second))
    throw std::invalid_argument("pass config 'tilec.bounds_check' is not available on target 'hip' (use target "
                                "'cpu' to check a kernel's accesses)");
  return target;
}

}  // namespace

void check_options(const CompileOptions& options) { requested_target(with_normalized_pass_configs(options)); }

namespace {

// The Target to build for: the requested one, where a cuda arch not given is the current
// device's.
Target build_target(const CompileOptions& options) {
  Target target = requested_target(options);
  if (!target.is_cuda() || !target.arch.empty()) return target;
  std::string arch;
  try {
    arch = runtime::CudaModule::device_arch();
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(
        "target 'cuda' needs a GPU architecture and there is no CUDA device to take it from (" +
        std::string(e.what()) + "); pass one, e.g. arch \"sm_90a\" (H100, H200) or \"sm_80\" (A100)");
  }
  try {
    return parse_target(options.target, arch);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("this machine's GPU is " + arch + ", an arch tilec does not know (" + e.what() +
                                "); pass one of those as arch to build for it");
  }
}

// The line --emit output starts with, in the stage's comment syntax.
std::string target_header(const Target& target, const char* comment) {
  return std::string(comment) + " target: " + target.to_string() + "\n";
}

// The pass config "tilec.bounds_check", else the switch $TILEC_BOUNDS_CHECK (base/env_switch.h):
// check the kernel's buffer accesses (codegen/cpu/codegen_cpu.h, codegen/cuda/codegen_cuda.h).
// Target "hip" has no checked build: the switch is off there (check_options refuses the config).
bool bounds_check(const CompileOptions& options) {
  if (options.target == "hip") return false;
  auto it = options.pass_configs.find("tilec.bounds_check");
  if (it != options.pass_configs.end()) return runtime::switch_on(it->second);
  return env_switch("TILEC_BOUNDS_CHECK");
}

// `options` with the bounds-check switch read once, from the environment when no pass config
// sets it: every variant of one kernel (the general one is built later) is built alike.
CompileOptions with_bounds_check_fixed(const CompileOptions& options) {
  CompileOptions fixed = options;
  fixed.pass_configs["tilec.bounds_check"] = bounds_check(options) ? "true" : "false";
  return fixed;
}

// The pass config "tilec.specialize_contiguous" (default on): compile the variant for
// contiguous, 16-byte aligned tensors first (passes/specialize_contiguous.h).
bool specialize_contiguous(const CompileOptions& options) {
  auto it = options.pass_configs.find("tilec.specialize_contiguous");
  return it == options.pass_configs.end() || runtime::switch_on(it->second);
}

// The NVRTC options the (normalized) options ask for: "tilec.fast_math" (default off, as
// TileLang's tl.enable_fast_math) is nvcc's --use_fast_math: exp, log, sin, cos, division and
// square root approximated, denormals flushed to zero, multiply-adds fused; then the compile
// flags, as NVRTC options already.
std::vector<std::string> nvrtc_options(const CompileOptions& options) {
  std::vector<std::string> result;
  auto it = options.pass_configs.find("tilec.fast_math");
  if (it != options.pass_configs.end() && runtime::switch_on(it->second)) result.push_back("--use_fast_math");
  result.insert(result.end(), options.compile_flags.begin(), options.compile_flags.end());
  return result;
}

// Fast math and compile flags are NVRTC's: on the CPU and on hip they are accepted and have
// no effect.
void log_nvrtc_options_unused(const CompileOptions& options, const Target& target) {
  auto it = options.pass_configs.find("tilec.fast_math");
  if (it != options.pass_configs.end() && runtime::switch_on(it->second))
    log(LogLevel::Debug, "pass config 'tilec.fast_math' has no effect on target '" + target.name + "'");
  for (const std::string& flag : options.compile_flags)
    log(LogLevel::Debug, "compile flag '" + flag + "' has no effect on target '" + target.name + "'");
}

struct Lowered {
  ir::PrimFunc tile;
  std::vector<ir::PrimFunc> lowered;  // one function per launch, in order
  std::vector<ir::Stmt> laid_out;     // each launch's body as infer_layout left it
};

Lowered lower(const FunctionSource& func, const CompileOptions& options, const Target& target,
              bool contiguous_args) {
  Lowered r;
  {
    StageTimer t("parse + elaborate '" + func.name + "'");
    r.tile = frontend::elaborate(func);
  }
  passes::PassContext ctx;
  ctx.target = target;
  ctx.pass_configs = options.pass_configs;
  ctx.pass_configs["tilec.bounds_check"] = bounds_check(options) ? "true" : "false";  // guard_global_accesses asks
  ctx.contiguous_args = contiguous_args;
  ctx.after_pass = [&r](const char* pass, const ir::PrimFunc& f) {
    if (std::string_view(pass) == "infer_layout") r.laid_out.push_back(f.body);
  };
  std::vector<ir::PrimFunc> launches =
      target.is_cpu() ? std::vector<ir::PrimFunc>{r.tile} : passes::split_launches(r.tile, target.name);
  StageTimer t("passes (" + target.name + (contiguous_args ? ", contiguous" : "") + ")");
  for (const ir::PrimFunc& launch : launches) r.lowered.push_back(passes::run_pipeline(launch, ctx));
  return r;
}

// The texts of several launches as one: each under a comment line that numbers it.
std::string joined(const std::vector<std::string>& texts, const char* comment) {
  if (texts.size() == 1) return texts[0];
  std::string all;
  for (size_t i = 0; i < texts.size(); ++i)
    all += std::string(i ? "\n" : "") + comment + " launch " + std::to_string(i + 1) + " of " +
           std::to_string(texts.size()) + "\n" + texts[i];
  return all;
}

// `tile`'s params, as elaborated.
std::vector<ParamInfo> param_infos(const ir::PrimFunc& tile) {
  op::Accesses accesses(ir::MemoryScope::Global);
  accesses.visit(tile.body);
  std::vector<ParamInfo> infos;
  for (const auto& p : tile.params) {
    ParamInfo info;
    info.name = p.name;
    info.is_tensor = p.is_tensor();
    if (p.is_tensor()) {
      info.dtype = p.buffer->dtype;
      info.written = accesses.writes.count(p.buffer.get()) > 0;
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
  for (int w : tile.workspaces) infos[w].workspace = true;
  return infos;
}

// What to say, at the T.Kernel block, of a build that ptxas refused because
// T.annotate_min_blocks_per_sm left too few registers (C7602, "Insufficient registers (80) to
// compile instruction ..."); nothing for any other build error.
std::optional<std::string> register_shortfall(const std::runtime_error& error, const codegen::CudaLaunch& launch) {
  const std::string what = error.what();
  const size_t at = what.find("Insufficient registers");
  if (launch.min_blocks_per_sm == 0 || at == std::string::npos) return std::nullopt;
  const size_t end = what.find('\n', at);
  const int n = launch.min_blocks_per_sm;
  const std::string said = what.substr(at, end == std::string::npos ? std::string::npos : end - at);
  return "T.annotate_min_blocks_per_sm(" + std::to_string(n) + ") leaves each of this kernel's " +
         std::to_string(launch.threads) + " threads " + std::to_string(passes::registers_at_launch(launch.threads, n)) +
         " registers (64 K over " + std::to_string(n) + " blocks), fewer than its instructions need (ptxas: " + said +
         "); ask for fewer blocks an SM";
}

// Generates and builds the target code of `lowered`.
BuiltLaunch build_launch(ir::PrimFunc lowered, const CompileOptions& options, const Target& target) {
  BuiltLaunch v;
  v.abi = codegen::make_kernel_abi(lowered);
  v.func = std::move(lowered);
  if (!target.is_cuda()) log_nvrtc_options_unused(options, target);
  if (target.is_cpu()) {
    {
      StageTimer t("codegen (cpu)");
      v.source = codegen::generate_cpu_source(v.func, v.abi, target, bounds_check(options));
    }
    StageTimer t("build (cpu)");
    v.cpu_module = runtime::CpuModule::load(v.source, codegen::kernel_entry_name());
    v.kernel_error = reinterpret_cast<const char* (*)(int*)>(v.cpu_module->symbol(codegen::kernel_error_name()));
    return v;
  }
  if (target.is_hip()) {
    StageTimer t("codegen (hip " + target.arch + ")");
    codegen::CudaSource generated = codegen::generate_hip_source(v.func, v.abi, target);
    v.source = std::move(generated.source);
    v.cuda_launch = std::move(generated.launch);
    return v;
  }
  std::string kernel_name;
  {
    StageTimer t("codegen (cuda)");
    codegen::CudaSource generated = codegen::generate_cuda_source(v.func, v.abi, target, bounds_check(options));
    v.source = std::move(generated.source);
    v.cuda_launch = std::move(generated.launch);
    kernel_name = std::move(generated.kernel_name);
  }
  StageTimer t("build (cuda " + target.arch + ")");
  try {
    v.cuda_module = runtime::CudaModule::load(v.source, kernel_name, target.arch, nvrtc_options(options));
  } catch (const std::runtime_error& error) {
    if (std::optional<std::string> shortfall = register_shortfall(error, v.cuda_launch))
      error_at(v.cuda_launch.loc, *shortfall);
    throw;
  }
  // T.set_max_nreg's moves against what ptxas gave the kernel: a grow below it (or a drop
  // above) is an illegal instruction on the GPU
  if (std::optional<int> registers = runtime::cubin_registers(v.cuda_module->cubin(), kernel_name))
    passes::check_compiled_register_moves(v.func.body, *registers);
  return v;
}

KernelVariant build(std::vector<ir::PrimFunc> lowered, const CompileOptions& options, const Target& target) {
  KernelVariant v;
  std::vector<std::string> sources, irs;
  for (ir::PrimFunc& launch : lowered) {
    irs.push_back(ir::to_string(launch));
    v.launches.push_back(build_launch(std::move(launch), options, target));
    sources.push_back(v.launches.back().source);
  }
  v.source = joined(sources, "//");
  v.ir = joined(irs, "#");
  return v;
}

}  // namespace

const KernelVariant& general_variant(Kernel::Impl& impl) {
  std::call_once(impl.general_once, [&] {
    log(LogLevel::Debug, "building the general (strided or unaligned tensors) variant of '" + impl.name + "'");
    Lowered l = lower(impl.source, impl.options, impl.target, /*contiguous_args=*/false);
    impl.general = std::make_unique<KernelVariant>(build(std::move(l.lowered), impl.options, impl.target));
  });
  return *impl.general;
}

Kernel compile(const FunctionSource& func, const CompileOptions& given_options) {
  auto start = std::chrono::steady_clock::now();
  const CompileOptions options = with_bounds_check_fixed(with_normalized_pass_configs(given_options));
  auto impl = std::make_shared<Kernel::Impl>();
  impl->target = build_target(options);
  impl->first_is_contiguous = specialize_contiguous(options);
  Lowered l = lower(func, options, impl->target, impl->first_is_contiguous);
  impl->name = l.tile.name;
  impl->params = param_infos(l.tile);
  impl->out_idx = l.tile.out_idx;
  for (const auto& cd : l.tile.const_dims) impl->const_dims.push_back({cd.param, cd.dim, cd.value});
  impl->tile_ir = ir::to_string(l.tile);
  impl->tile = std::move(l.tile);
  impl->laid_out = std::move(l.laid_out);
  impl->first = build(std::move(l.lowered), options, impl->target);
  impl->source = func;
  impl->options = options;
  impl->compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log(LogLevel::Debug, "compiled '" + impl->name + "' for " + impl->target.to_string() + " in " +
                           std::to_string(impl->compile_seconds * 1e3) + " ms");
  return Kernel(impl);
}

namespace {

// One launch's text of the emit stage: the IR after the passes, the source or the assembly.
std::string emit_launch(const ir::PrimFunc& lowered, const CompileOptions& options, const Target& target,
                        EmitStage stage) {
  if (stage == EmitStage::IR) return ir::to_string(lowered);
  codegen::KernelAbi abi = codegen::make_kernel_abi(lowered);
  if (target.is_cpu()) return codegen::generate_cpu_source(lowered, abi, target, bounds_check(options));
  if (target.is_hip()) {
    std::string source = codegen::generate_hip_source(lowered, abi, target).source;
    if (stage == EmitStage::Source) return source;
    const runtime::Hipcc* hipcc = runtime::Hipcc::get();
    if (!hipcc && runtime::Hiprtc::get())
      throw std::runtime_error("AMDGCN assembly needs hipcc (hipRTC, " + runtime::Hiprtc::get()->library_path() +
                               ", builds code objects, not assembly), and " + runtime::Hipcc::unavailable_reason());
    if (!hipcc)
      throw std::runtime_error("AMDGCN assembly needs hipcc, and neither hipcc nor hipRTC is present: " +
                               runtime::Hipcc::unavailable_reason() + "; " + runtime::Hiprtc::unavailable_reason());
    return hipcc->assembly(source, target.arch);
  }
  codegen::CudaSource generated = codegen::generate_cuda_source(lowered, abi, target, bounds_check(options));
  if (stage == EmitStage::Source) return generated.source;
  return runtime::CudaModule::ptx(generated.source, generated.kernel_name, target.arch, nvrtc_options(options));
}

}  // namespace

std::string emit(const FunctionSource& func, const CompileOptions& given_options, EmitStage stage) {
  const CompileOptions options = with_normalized_pass_configs(given_options);
  const Target requested = requested_target(options);
  if (stage == EmitStage::TileIR) return target_header(requested, "#") + ir::to_string(frontend::elaborate(func));
  if (stage == EmitStage::PTX && !requested.is_cuda())
    throw std::invalid_argument("PTX is emitted for target 'cuda', not '" + requested.name + "'");
  if (stage == EmitStage::Asm && requested.is_cpu())
    throw std::invalid_argument("assembly is emitted for targets 'cuda' (PTX) and 'hip' (AMDGCN), not 'cpu'");
  const bool ptx = requested.is_cuda() && (stage == EmitStage::PTX || stage == EmitStage::Asm);
  const Target target = ptx ? build_target(options) : requested;
  Lowered l = lower(func, options, target, specialize_contiguous(options));
  std::vector<std::string> texts;
  for (const ir::PrimFunc& launch : l.lowered) texts.push_back(emit_launch(launch, options, target, stage));
  const bool assembly = ptx || (target.is_hip() && stage == EmitStage::Asm);
  const char* comment = stage == EmitStage::IR ? "#" : "//";
  return (stage == EmitStage::IR || assembly ? target_header(target, comment) : std::string()) + joined(texts, comment);
}

FunctionStyle function_style(const FunctionSource& func) { return frontend::function_style(func); }

void set_log_level(const std::string& level) {
  auto parsed = parse_log_level(level);
  if (!parsed)
    throw std::invalid_argument("unknown log level '" + level + "' (use ERROR, WARNING, INFO or DEBUG)");
  set_log_level(*parsed);
}

const char* version() { return TILEC_VERSION; }

bool cuda_available() { return runtime::cuda_available(); }
std::string cuda_unavailable_reason() { return runtime::cuda_unavailable_reason(); }

Value Value::tensor_spec(std::vector<int64_t> shape, DType t) {
  Value r;
  r.kind = Kind::TensorSpec;
  r.dtype = t;
  for (int64_t d : shape) r.items.push_back(of_int(d));
  return r;
}

}  // namespace tilec
