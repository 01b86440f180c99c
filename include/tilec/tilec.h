// libtilec: compile tile-language kernel source at run time and launch it.
//
//   tilec::FunctionSource f{source, "gemm.py", 12, "main", bindings};
//   tilec::Kernel k = tilec::compile(f, {.target = "cpu"});
//   k.launch({tilec::ArgValue(a_view), tilec::ArgValue(b_view), tilec::ArgValue(c_view)});
//
// Errors: tilec::CompileError (kernel source problems: the text names
// file:line:col and shows the line), tilec::ArgumentError (call-time argument
// problems: the text names the parameter; tilec::ArgumentTypeError, one of them, for
// an argument of the wrong kind).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

// In the source tree these two are src/base/ (on the include path); installed, they lie in
// base/ beside this header.
#include "base/diagnostics.h"
#include "base/dtype.h"

namespace tilec {

struct FunctionSource;
struct Value;

// An object of the host language (a Python module, class or builtin function) that kernel
// source names: reading its attributes and calling it with compile-time arguments run in the
// host while the kernel compiles, as the same code would run in Python. Either may throw
// HostError with the host's message. Implementations must be callable from any thread.
class HostObject {
 public:
  virtual ~HostObject() = default;
  // What it is, for messages ("module math", "builtin_function_or_method ceil").
  virtual std::string description() const = 0;
  virtual Value attribute(const std::string& name) const = 0;
  virtual Value call(const std::vector<Value>& positional,
                     const std::vector<std::pair<std::string, Value>>& keywords) const = 0;
};

struct HostError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A compile-time value for a free name of kernel source (or a jit parameter).
struct Value {
  enum class Kind {
    None, Bool, Int, Float, String, DType,
    Symbolic,    // a symbolic dim (T.symbolic / T.dynamic); text = its name
    Arithmetic,  // arithmetic on symbolic dims: text = the operator (+ - * // %), items = its operands
    Tuple, List,
    Function,    // a @T.prim_func, @T.macro or plain function, as its own source
    Module,      // text = "tilec.language" (the T namespace) or "tilec"
    TensorSpec,  // an argument tensor of an eager call: items = shape (Ints), dtype
    Host,        // a host object (module, class, builtin function): host
    Opaque,      // anything else; text = its Python type name (an error if used)
  };
  Kind kind = Kind::None;
  bool bool_value = false;
  int64_t int_value = 0;
  double float_value = 0;
  std::string text;
  DType dtype;
  std::vector<Value> items;
  std::shared_ptr<const FunctionSource> function;
  std::shared_ptr<const HostObject> host;  // Host; for a Module, its Python module if known

  static Value none() { return Value{}; }
  static Value of_bool(bool v) { Value r; r.kind = Kind::Bool; r.bool_value = v; return r; }
  static Value of_int(int64_t v) { Value r; r.kind = Kind::Int; r.int_value = v; return r; }
  static Value of_float(double v) { Value r; r.kind = Kind::Float; r.float_value = v; return r; }
  static Value of_string(std::string v) { Value r; r.kind = Kind::String; r.text = std::move(v); return r; }
  static Value of_dtype(DType t) { Value r; r.kind = Kind::DType; r.dtype = t; return r; }
  static Value symbolic(std::string name) { Value r; r.kind = Kind::Symbolic; r.text = std::move(name); return r; }
  static Value tuple(std::vector<Value> v) { Value r; r.kind = Kind::Tuple; r.items = std::move(v); return r; }
  static Value list(std::vector<Value> v) { Value r; r.kind = Kind::List; r.items = std::move(v); return r; }
  static Value module(std::string name) { Value r; r.kind = Kind::Module; r.text = std::move(name); return r; }
  static Value of_function(std::shared_ptr<const FunctionSource> f) { Value r; r.kind = Kind::Function; r.function = std::move(f); return r; }
  static Value tensor_spec(std::vector<int64_t> shape, DType t);
  static Value of_host(std::shared_ptr<const HostObject> h) { Value r; r.kind = Kind::Host; r.host = std::move(h); return r; }
  static Value opaque(std::string type_name) { Value r; r.kind = Kind::Opaque; r.text = std::move(type_name); return r; }
};

// The source of one function and the values of the free names it uses.
struct FunctionSource {
  std::string source;    // the function's text, decorators included (may be indented)
  std::string filename;  // for diagnostics
  int first_line = 1;    // line of `source`'s first line in `filename`
  std::string name;      // the function's name
  std::map<std::string, Value> bindings;
};

struct CompileOptions {
  std::string target = "cpu";  // "cpu", "cuda" or "hip"
  // The GPU architecture of target "cuda" ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a") or
  // "hip" ("gfx906", "gfx90a", "gfx940"; needed); "" takes the current CUDA device's. With an
  // explicit arch, compile() needs no GPU: launching does. src/target/target.cc has the table.
  std::string arch;
  // Switches by name ("1", "true" or "True"; "0", "false" or "False"), as docs/language.md
  // lists them. Without "tilec.bounds_check", $TILEC_BOUNDS_CHECK decides, read by compile()
  // and emit(); a value of it that is no switch is a std::invalid_argument.
  std::map<std::string, std::string> pass_configs;
  // nvcc's command-line flags (TileLang's compile_flags), one a string ("-DNDEBUG", "-Xptxas",
  // "-v"): for target "cuda" those NVRTC understands are passed to it, --use_fast_math is the
  // "tilec.fast_math" switch, nvcc's own are logged at DEBUG as having no effect; an unknown
  // one is a std::invalid_argument. src/runtime/compile_flags.h has the table. Other targets
  // check them and ignore them.
  std::vector<std::string> compile_flags;
};

enum class DeviceType { CPU = 1, CUDA = 2 };

// Bytes of memory as offsets from a tensor's data pointer: [begin, end).
struct ByteRange {
  int64_t begin = 0, end = 0;
};

// A view of a caller's tensor (DLPack-style). Strides are in elements.
struct TensorView {
  void* data = nullptr;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DeviceType device = DeviceType::CPU;
  int device_id = 0;
  // The memory may not be written (DLPack's read-only flag, a read-only NumPy array): a call
  // passing it for a tensor the kernel writes is refused.
  bool read_only = false;
  // The memory the caller owns around `data`, when it knows: a call whose view reaches
  // outside it is refused. The Python face sets it for an array retyped to another dtype
  // (the array's own reach); unset, the view's own reach is taken to be the caller's.
  std::optional<ByteRange> memory;

  // Whether the view has no elements (a dim of 0).
  bool empty() const {
    for (int64_t d : shape)
      if (d == 0) return true;
    return false;
  }

  // The bytes that elements of `element_bytes` bytes at this view's shape and strides (one
  // stride a dim) cover: empty for a zero-size view, nullopt when an offset passes int64.
  std::optional<ByteRange> reach(int64_t element_bytes) const;
};

// A launch argument: a tensor or a scalar. An integer past int64's range (for a uint64
// param) is a uint64_t. Each scalar is checked against its param's dtype: an integer or bool
// must lie in its range, a float param takes any number within its finite range (or inf,
// NaN), an integer param no double.
using ArgValue = std::variant<TensorView, int64_t, uint64_t, double, bool>;

// One dimension of a parameter's declared shape.
struct DimInfo {
  std::optional<int64_t> value;  // a constant dim
  std::string expr;              // its text otherwise ("n", "n * 2")
};

struct ParamInfo {
  std::string name;
  bool is_tensor = true;
  DType dtype;                   // element type, or the scalar's type
  std::vector<DimInfo> shape;    // tensors only
  bool written = false;          // tensors: the kernel writes it (an output)
  // A scratch tensor (T.alloc_global): the last params; a call passes a fresh one, whose
  // contents nobody reads afterwards.
  bool workspace = false;
};

struct ConstDimInfo {
  int param = 0, dim = 0;
  int64_t value = 0;
};

// Where a tile's elements live, for pictures (tilec.plot_layout) and tests. Element e is the
// e-th of the tile's shape in row-major order.
struct TileLayout {
  std::string name;         // the buffer's, or the layout's ("mma accumulator")
  std::string scope;        // "fragment" or "shared"
  DType dtype;
  std::vector<int64_t> shape;
  std::string description;  // the compiler's own text of the layout
  // Fragments: the threads and registers (slots) a thread; for each element the lowest thread
  // holding it, its slot there, and how many threads hold it (replicas hold copies).
  int64_t threads = 0, slots = 0;
  std::vector<int64_t> thread, slot, holders;
  // Shared tiles: each element's offset from the buffer's start, in elements.
  std::vector<int64_t> offset;
};

class Kernel {
 public:
  struct Impl;
  explicit Kernel(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  const std::string& name() const;
  const std::string& target() const;
  const std::string& arch() const;  // target "cuda": the architecture built for; else ""
  const std::vector<ParamInfo>& params() const;
  // Params that are outputs of an eager kernel (T.empty), in return order.
  const std::vector<int>& out_idx() const;
  // Dims fixed at compile time from an eager call's tensors (T.const).
  const std::vector<ConstDimInfo>& const_dims() const;
  const std::string& source() const;   // generated target source
  const std::string& tile_ir() const;  // IR after elaboration
  const std::string& ir() const;       // IR after the last pass
  // The layout of each fragment and shared buffer as layout inference left it (on a GPU
  // target; a CPU kernel has none), in the order the kernel allocates them, each launch's in turn.
  const std::vector<TileLayout>& layouts() const;
  double compile_seconds() const;

  // Shapes of the tensor params whose entry in `args` is null, solved from the
  // others' shapes and the scalars given; throws ArgumentError when a dim of
  // an output can't be solved or the given tensors disagree.
  std::vector<std::vector<int64_t>> output_shapes(
      const std::vector<std::optional<ArgValue>>& args) const;
  // The same from the tensor params' shapes alone (null for each output; a scalar's entry is
  // ignored): what a caller with no data yet has (torch's fake tensors while tracing).
  std::vector<std::vector<int64_t>> output_shapes(
      const std::vector<std::optional<std::vector<int64_t>>>& shapes) const;

  // Checks every argument (count, kind, dtype, rank, shape, device, strides, alignment,
  // outputs writable, the memory a view reaches; each scalar's range) and runs the kernel. `stream` is the caller's CUstream for CUDA kernels (null: the
  // default stream), which run on their tensors' device and return without
  // waiting; it is ignored on the CPU.
  void launch(const std::vector<ArgValue>& args, void* stream = nullptr) const;

 private:
  std::shared_ptr<Impl> impl_;
};

// A layout the compiler gives tiles, by kind, for pictures and docs:
//   "mma_accumulator", "wgmma_accumulator", "mfma_accumulator": the gemm accumulator of an
//     [m, n] `shape` over args = {warps (warpgroups, waves) along m, along n};
//   "default_fragment": an unconstrained fragment, args = {threads, vector elements a thread};
//   "mma_swizzle", "row_major", "panels" (args = {panel bytes}): a shared tile of `dtype`.
// std::invalid_argument names an unknown kind, or arguments the layout refuses.
TileLayout standard_layout(const std::string& kind, const std::vector<int64_t>& shape, DType dtype,
                           const std::vector<int64_t>& args = {});

// Throws std::invalid_argument when `options` name a target, arch, pass config or
// config value this build doesn't know or can't compile for, or an arch of another
// target (the message lists the valid ones): the check compile() and emit() make
// before reading any source.
void check_options(const CompileOptions& options);

// Parses, elaborates, lowers and builds one kernel. `func` is a @T.prim_func,
// an eager jit function (its tensors' specs and constants in bindings), or a
// jit factory that the core can evaluate itself (the command line's case).
Kernel compile(const FunctionSource& func, const CompileOptions& options = {});

// The function `name` of a Python file's text (or, when name is empty, the one
// top-level function decorated with jit/prim_func), cut out with its first
// line, for the command line. Module-level assignments of constants before it
// become bindings; `defines` (the command line's -D NAME=VALUE) override them.
FunctionSource load_function(const std::string& file_text, const std::string& filename,
                             const std::string& name,
                             const std::map<std::string, Value>& defines = {});

// Parses a -D value: an int, float, True/False, None, a dtype name, or else a string. An int
// past int64 throws std::invalid_argument.
Value parse_define_value(const std::string& text);

// How a jit function is written: a factory (runs in Python, returns or defines
// a @T.prim_func) or an eager kernel (its body is the kernel).
enum class FunctionStyle { Factory, Eager };
FunctionStyle function_style(const FunctionSource& func);

// The stages of compile() printed as text, for `tilec compile --emit` and tests.
// Source needs no GPU for target "cuda" or "hip"; PTX (target "cuda" only) needs the arch
// (options.arch, else the current device's) and NVRTC; Asm is PTX on "cuda" and AMDGCN
// assembly on "hip", built with hipcc (runtime/hip/hipcc.h).
enum class EmitStage { TileIR, IR, Source, PTX, Asm };
std::string emit(const FunctionSource& func, const CompileOptions& options, EmitStage stage);

// A CUDA driver loads here and sees at least one device; otherwise
// cuda_unavailable_reason() says why ("" when one does).
bool cuda_available();
std::string cuda_unavailable_reason();

// Records a caller keeps in tilec's disk cache (the Python autotuner's best configs), under
// the cache's rules (runtime/cache.h): the folder <cache>/<folder> is this user's and 0700, a
// record is written atomically as 0600 beside its hash, and a record that is damaged, not this
// user's or writable by others reads as missing. `folder` and `name` are plain names (no '/',
// not "." or ".."); anything else throws std::invalid_argument.
std::optional<std::string> read_cache_record(const std::string& folder, const std::string& name);
void write_cache_record(const std::string& folder, const std::string& name, const std::string& bytes);
// The folder a record of `folder` lies in (created if missing), for messages.
std::string cache_record_folder(const std::string& folder);

// NVTX ranges for profilers (Nsight Systems), off by default: on, each launch is a range named
// after its kernel and each compile stage one named as DEBUG logs it. $TILEC_NVTX=1 turns them
// on too. They need libnvtx3interop (in the CUDA 13 toolkit), found as NVRTC is;
// nvtx_unavailable_reason() says why ranges asked for are not emitted ("" when they are, or
// were not asked for).
void set_nvtx(bool on);
std::string nvtx_unavailable_reason();

// "WARNING" (default), "INFO", "DEBUG": DEBUG logs every stage and its time.
void set_log_level(const std::string& level);
const char* version();

}  // namespace tilec
