// The entry points: which way a function is written, and how each way becomes
// a PrimFunc.
#include "frontend/elaborate.h"

#include <algorithm>

#include "frontend/elaborator.h"
#include "frontend/parser.h"
#include "ir/shared_layout.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "ir/visitor.h"
#include "passes/verify.h"

namespace tilec::frontend {

using K = CtValue::Kind;

std::string Elaborator::unique_buffer_name(const std::string& base) {
  std::string name = base;
  for (int i = 1; buffer_names_.count(name); ++i) name = base + "_" + std::to_string(i);
  buffer_names_.insert(name);
  return name;
}

std::string Elaborator::buffer_name_for(const std::string& fallback) {
  return unique_buffer_name(name_hint_.empty() ? fallback : name_hint_);
}

void Elaborator::note_made_buffer(const ir::Buffer& b) {
  if (name_hint_.empty()) unnamed_buffers_.insert(b.get());
}

void Elaborator::name_made_buffer(const CtValue& value, const std::string& name) {
  if (value.kind != CtValue::Kind::Buffer || !unnamed_buffers_.erase(value.buffer.get())) return;
  // The node is this elaboration's own, made moments ago and not yet printed: every use of it
  // shares it, so renaming it here renames them all.
  const_cast<ir::BufferNode&>(*value.buffer).name = unique_buffer_name(name);
}

ir::Expr Elaborator::symbolic_var(const std::string& name, DType dtype) {
  auto it = symbolic_vars_.find(name);
  if (it != symbolic_vars_.end()) return it->second;
  ir::Expr v = ir::make_var(name, dtype);
  symbolic_vars_[name] = v;
  return v;
}

CtValue Elaborator::from_value(const Value& value) {
  using VK = Value::Kind;
  switch (value.kind) {
    case VK::None: return CtValue::none();
    case VK::Bool: return CtValue::of_bool(value.bool_value);
    case VK::Int: return CtValue::of_int(value.int_value);
    case VK::Float: return CtValue::of_float(value.float_value);
    case VK::String: return CtValue::of_string(value.text);
    case VK::DType: return CtValue::of_dtype(value.dtype);
    case VK::Symbolic: return CtValue::of_expr(symbolic_var(value.text, DType::Int32));
    case VK::Arithmetic:
      return eval_binop(value.text, from_value(value.items.at(0)), from_value(value.items.at(1)), SourceLoc{});
    case VK::Tuple: case VK::List: {
      std::vector<CtValue> items;
      for (const auto& item : value.items) items.push_back(from_value(item));
      CtValue r = CtValue::tuple(std::move(items));
      if (value.kind == VK::List) r.kind = K::List;
      return r;
    }
    case VK::Function: {
      CtValue r;
      r.kind = K::Function;
      r.function = std::make_shared<FunctionValue>(parse_function(*value.function));
      return r;
    }
    case VK::Module: {
      CtValue r;
      r.kind = K::Module;
      r.text = value.text.rfind("tilelang", 0) == 0 ? "tilec" + value.text.substr(8) : value.text;
      r.host = value.host;
      // tilec.DataType, the class (a name the core resolves, as modules are): called in kernels.
      if (r.text == "tilec.DataType") return CtValue::builtin(r.text);
      return r;
    }
    case VK::TensorSpec: {
      CtValue r;
      r.kind = K::TensorSpec;
      r.dtype = value.dtype;
      for (const auto& d : value.items) r.items.push_back(CtValue::of_int(d.int_value));
      return r;
    }
    case VK::Host: {
      CtValue r;
      r.kind = K::Host;
      r.host = value.host;
      return r;
    }
    case VK::Opaque: {
      CtValue r;
      r.kind = K::Opaque;
      r.text = value.text;
      return r;
    }
  }
  return CtValue::none();
}

FunctionValue Elaborator::parse_function(const FunctionSource& source) {
  auto file = std::make_shared<SourceFile>();
  file->name = source.filename;
  file->text = source.source;
  file->first_line = source.first_line;
  auto module = std::make_shared<ast::Module>(parse(file));
  const ast::Stmt* def = nullptr;
  std::vector<const ast::Stmt*> defs;
  for (const auto& s : module->body) {
    if (s->kind != ast::StmtKind::FunctionDef) continue;
    defs.push_back(s.get());
    if (s->name == source.name) def = s.get();
  }
  if (!def && defs.size() == 1) def = defs[0];
  if (!def) error_at(SourceLoc{file, 1, 1}, "no function '" + source.name + "' in this source");
  FunctionValue f;
  f.module = module;
  f.def = def;
  f.closure = std::make_shared<std::map<std::string, CtValue>>();
  for (const auto& [name, value] : source.bindings) (*f.closure)[name] = from_value(value);
  return f;
}

// ---------------------------------------------------------------- tensors

ir::Buffer Elaborator::make_tensor_buffer(const std::string& name, const TensorTypeValue& type,
                                          const SourceLoc& loc) {
  std::vector<ir::Expr> shape, strides;
  for (const auto& d : type.shape) {
    if (d.kind == K::PendingDim)
      error_at(loc, "the size of T.const dim '" + d.text + "' is not known here: pass a tensor "
                    "argument that declares it first, or " + d.text + "=... to compile()");
    if (d.kind == K::Int) {
      if (d.int_value < 0) error_at(loc, "tensor '" + name + "' has a negative dim");
      shape.push_back(ir::make_int(d.int_value));
    } else if (d.kind == K::Expr && d.expr->dtype.is_integer()) {
      shape.push_back(d.expr);
    } else {
      error_at(loc, "a tensor dim must be an int or a symbolic dim, not " + describe(d));
    }
  }
  for (size_t i = 0; i < shape.size(); ++i)
    strides.push_back(i + 1 == shape.size() ? ir::make_int(1, DType::Int64)
                                            : ir::make_var(name + "_stride" + std::to_string(i), DType::Int64));
  return ir::make_buffer(name, type.dtype, shape, strides, ir::MemoryScope::Global, loc);
}

static std::string shape_text(const std::vector<CtValue>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i].int_value);
  return s + (dims.size() == 1 ? ",)" : ")");
}

void Elaborator::declare_tensor(const std::string& name, const TensorTypeValue& type_in,
                                const SourceLoc& loc) {
  if (!eager_)
    error_at(loc, "tensor declarations in a body belong to eager jit functions; a prim_func "
                  "declares its tensors as parameters");
  if (in_kernel_) error_at(loc, "declare tensors before the T.Kernel block");
  EagerState& st = *eager_;
  if (std::find(st.declared_order.begin(), st.declared_order.end(), name) != st.declared_order.end())
    error_at(loc, "tensor '" + name + "' is declared twice");
  TensorTypeValue type = type_in;
  int param_index = static_cast<int>(st.tensor_params.size());
  auto arg = st.args.find(name);
  if (arg != st.args.end() && arg->second.kind == K::TensorSpec) {
    const CtValue& spec = arg->second;
    if (spec.dtype != type.dtype)
      throw ArgumentError("argument '" + name + "' has dtype " + spec.dtype.name() + " but '" +
                          name + "' is declared " + type.dtype.name() + " (at " + loc.str() + ")");
    if (spec.items.size() != type.shape.size())
      throw ArgumentError("argument '" + name + "' has " + std::to_string(spec.items.size()) +
                          " dims " + shape_text(spec.items.vector()) + " but '" + name + "' is declared with " +
                          std::to_string(type.shape.size()) + " (at " + loc.str() + ")");
    for (size_t d = 0; d < type.shape.size(); ++d) {
      CtValue& dim = type.shape[d];
      int64_t actual = spec.items[d].int_value;
      if (finding_dims_ && dim.kind == K::Expr) {
        auto placeholder = dim_placeholders_.find(dim.expr.as<ir::Var>());
        if (placeholder != dim_placeholders_.end())
          found_dims_.emplace(placeholder->second, DeclaredDim{name, static_cast<int>(d), actual});
      }
      if (dim.kind == K::PendingDim) {
        std::string dim_name = dim.text;
        dim = CtValue::of_int(actual);
        frame().names[dim_name] = dim;
        st.const_dims.push_back({param_index, static_cast<int>(d), actual});
      } else if (dim.kind == K::Int && dim.int_value != actual) {
        throw ArgumentError("argument '" + name + "' has shape " + shape_text(spec.items.vector()) +
                            " but dim " + std::to_string(d) + " must be " +
                            std::to_string(dim.int_value) + " (declared at " + loc.str() + ")");
      }
    }
    // T.const dims this declaration binds that were used before it (declared_dims): the
    // kernel holds their values, so a call must bring the same.
    if (st.declared_dims)
      for (const auto& [dim_name, declared] : *st.declared_dims)
        if (declared.tensor == name) st.const_dims.push_back({param_index, declared.dim, declared.value});
  }
  // Dims fixed by an earlier tensor are constants now; a name bound since the
  // type was written resolves here too.
  for (auto& dim : type.shape)
    if (dim.kind == K::PendingDim) {
      auto bound = frame().names.find(dim.text);
      if (bound != frame().names.end() && bound->second.kind == K::Int) dim = bound->second;
    }
  ir::Buffer buffer = make_tensor_buffer(name, type, loc);
  buffer_names_.insert(name);
  ir::Param p;
  p.name = name;
  p.buffer = buffer;
  p.loc = loc;
  st.tensor_params.push_back(p);
  st.declared_order.push_back(name);
  frame().names[name] = CtValue::of_buffer(buffer);
}

// ---------------------------------------------------------------- styles

// Whether `body` defines a @T.prim_func, itself or in a function it defines (a factory that
// builds its kernel through a helper: def kernel_func(block_M): @T.prim_func def main ...).
static bool defines_prim_func(const ast::StmtList& body) {
  for (const auto& s : body) {
    if (s->kind == ast::StmtKind::FunctionDef) {
      for (const auto& d : s->decorators) {
        const ast::Expr* e = d.get();
        if (e->kind == ast::ExprKind::Call) e = e->value.get();
        if ((e->kind == ast::ExprKind::Attribute || e->kind == ast::ExprKind::Name) && e->id == "prim_func")
          return true;
      }
      if (defines_prim_func(s->body)) return true;
      continue;
    }
    if (defines_prim_func(s->body) || defines_prim_func(s->orelse)) return true;
  }
  return false;
}

static void new_frame(Elaborator& el, const FunctionValue& f) {
  Elaborator::Frame frame;
  frame.closure = f.closure;
  frame.module = f.module;
  for (auto& [name, count] : assigned_names(f.def->body))
    if (count > 1) frame.multi_assigned.insert(name);
  el.frames_.push_back(std::move(frame));
}

ir::PrimFunc Elaborator::prim_func(const FunctionValue& f, const std::string& name) {
  const ast::Stmt& def = *f.def;
  new_frame(*this, f);
  ir::PrimFunc func;
  func.name = name.empty() ? def.name : name;
  func.loc = def.loc;
  for (const auto& p : def.params) {
    if (p.star) error_at(p.loc, "*args and **kwargs are not supported in a prim_func");
    if (!p.annotation)
      error_at(p.loc, "parameter '" + p.name + "' needs a type: 'A: T.Tensor((M, K), dtype)' or "
                      "'n: T.int32'");
    CtValue type = eval(*p.annotation);
    ir::Param param;
    param.name = p.name;
    param.loc = p.loc;
    if (type.kind == K::TensorType) {
      param.buffer = make_tensor_buffer(p.name, *type.tensor_type, p.annotation->loc);
      buffer_names_.insert(p.name);
      frame().names[p.name] = CtValue::of_buffer(param.buffer);
    } else if (type.kind == K::DType) {
      param.var = ir::make_var(p.name, type.dtype);
      frame().names[p.name] = CtValue::of_expr(param.var);
    } else if (type.kind == K::Builtin && type.text == "int") {
      param.var = ir::make_var(p.name, DType::Int32);
      frame().names[p.name] = CtValue::of_expr(param.var);
    } else if (type.kind == K::Builtin && type.text == "float") {
      param.var = ir::make_var(p.name, DType::Float32);
      frame().names[p.name] = CtValue::of_expr(param.var);
    } else {
      error_at(p.annotation->loc, "parameter '" + p.name + "' must be a T.Tensor or a scalar dtype, "
                                  "not " + describe(type));
    }
    func.params.push_back(param);
  }
  std::vector<ir::Param> outer_workspaces = std::move(workspaces_);
  workspaces_.clear();
  func.body = collect([&] { exec_block(def.body); });
  frames_.pop_back();
  append_workspaces(func);
  apply_tensor_layouts(func);
  apply_tensor_views(func);
  workspaces_ = std::move(outer_workspaces);
  return func;
}

void Elaborator::append_workspaces(ir::PrimFunc& func) {
  for (ir::Param& w : workspaces_) {
    func.workspaces.push_back(static_cast<int>(func.params.size()));
    func.params.push_back(std::move(w));
  }
  workspaces_.clear();
}

void Elaborator::apply_tensor_layouts(ir::PrimFunc& func) {
  ir::BufferMap laid_out;
  for (ir::Param& p : func.params) {
    if (!p.is_tensor()) continue;
    auto it = tensor_layouts_.find(p.buffer.get());
    if (it == tensor_layouts_.end()) continue;
    auto n = std::make_shared<ir::BufferNode>(*p.buffer);
    n->layout = it->second.layout;
    n->strides.resize(n->shape.size());
    ir::Expr stride = ir::make_int(1, DType::Int64);
    for (size_t d = n->shape.size(); d-- > 0;) {
      n->strides[d] = stride;
      stride = ir::simplify(ir::make_Mul(stride, ir::make_cast(DType::Int64, n->shape[d])));
    }
    laid_out[p.buffer.get()] = n;
    p.buffer = n;
  }
  for (const auto& [buffer, layout] : tensor_layouts_)
    if (!laid_out.count(buffer))
      error_at(layout.loc, "T.annotate_layout lays out shared buffers and the function's tensor parameters; '" +
                               buffer->name + "' is neither");
  for (const KernelTensors& kernel : kernels_)
    for (const auto& entry : laid_out) {
      if (kernel.annotated.count(entry.first)) continue;
      if (ir::replace_buffers(kernel.body, {{entry.first, entry.second}}).same_as(kernel.body)) continue;
      error_at(kernel.loc, "this T.Kernel block uses tensor '" + entry.first->name + "', which T.annotate_layout at " +
                               tensor_layouts_.at(entry.first).loc.str() + " lays out in another: annotate it here "
                               "too (a tensor's layout is how its elements are stored, in every block)");
    }
  if (!laid_out.empty()) func.body = ir::replace_buffers(func.body, laid_out);
  tensor_layouts_.clear();
  kernels_.clear();
}

void Elaborator::apply_tensor_views(ir::PrimFunc& func) {
  ir::BufferMap compact;
  for (ir::Param& p : func.params) {
    if (!p.is_tensor() || !viewed_tensors_.count(p.buffer.get())) continue;
    auto n = std::make_shared<ir::BufferNode>(*p.buffer);
    n->strides.resize(n->shape.size());
    int64_t stride = 1;
    for (size_t d = n->shape.size(); d-- > 0;) {
      n->strides[d] = ir::make_int(stride, DType::Int64);
      int64_t extent = 0;
      ir::is_const_int(n->shape[d], &extent);  // constant: tensor_view checked
      stride *= extent;
    }
    compact[p.buffer.get()] = n;
    p.buffer = n;
  }
  viewed_tensors_.clear();
  if (compact.empty()) return;
  func.body = ir::replace_buffers(func.body, compact);  // and their views (BufferNode::view_of)
}

ir::PrimFunc Elaborator::eager(const FunctionValue& f, const std::map<std::string, CtValue>& args) {
  const ast::Stmt& def = *f.def;
  eager_ = std::make_unique<EagerState>();
  eager_->function = &f;
  eager_->args = args;
  new_frame(*this, f);
  for (const auto& p : def.params) {
    if (p.star) error_at(p.loc, "*args and **kwargs are not supported in a jit function");
    eager_->param_names.push_back(p.name);
    auto it = args.find(p.name);
    if (it != args.end()) {
      frame().names[p.name] = it->second;
    } else if (p.default_value) {
      frame().names[p.name] = eval(*p.default_value);
    } else {
      CtValue pending;  // a tensor the body declares; compiled without its argument
      pending.kind = K::TensorSpec;
      pending.text = p.name;
      frame().names[p.name] = pending;
    }
  }
  ir::PrimFunc func;
  func.name = def.name;
  func.loc = def.loc;
  func.body = collect([&] { exec_block(def.body); });
  EagerState& st = *eager_;
  for (const auto& p : def.params) {
    const CtValue& bound = frame().names[p.name];
    if (bound.kind != K::TensorSpec) continue;
    if (!args.count(p.name))
      error_at(p.loc, "parameter '" + p.name + "' has no value: pass it in the call or to compile()");
    error_at(p.loc, "parameter '" + p.name + "' is a tensor but the body never declares it: "
                    "write '" + p.name + ": T.Tensor((M, K), dtype)' before the T.Kernel block");
  }
  // Kernel params: the function's tensors in signature order, then tensors
  // declared only in the body, then the outputs.
  std::vector<ir::Param> ordered;
  for (const auto& name : st.param_names)
    for (const auto& p : st.tensor_params)
      if (p.name == name) ordered.push_back(p);
  for (const auto& p : st.tensor_params)
    if (std::find(st.param_names.begin(), st.param_names.end(), p.name) == st.param_names.end())
      ordered.push_back(p);
  // Const dims were recorded against declaration positions; renumber them.
  for (auto& cd : st.const_dims) {
    const std::string& name = st.tensor_params[cd.param].name;
    for (size_t i = 0; i < ordered.size(); ++i)
      if (ordered[i].name == name) cd.param = static_cast<int>(i);
  }
  std::vector<ir::Buffer> returned;
  if (frame().return_value) {
    const CtValue& r = *frame().return_value;
    std::vector<CtValue> items = r.is_sequence() ? r.items.vector() : std::vector<CtValue>{r};
    for (const auto& item : items) {
      if (item.kind == K::None && items.size() == 1) break;
      bool is_output = item.kind == K::Buffer &&
                       std::any_of(st.outputs.begin(), st.outputs.end(),
                                   [&](const ir::Param& p) { return p.buffer == item.buffer; });
      if (!is_output)
        error_at(def.loc, "'" + def.name + "' returns " + describe(item) + "; an eager kernel "
                          "returns the tensors it creates with T.empty");
      returned.push_back(item.buffer);
    }
  }
  for (const auto& out : st.outputs)
    if (std::find(returned.begin(), returned.end(), out.buffer) == returned.end())
      error_at(out.loc, "output '" + out.name + "' made with T.empty is never returned");
  for (const auto& b : returned) {
    for (const auto& out : st.outputs)
      if (out.buffer == b) {
        func.out_idx.push_back(static_cast<int>(ordered.size()));
        ordered.push_back(out);
      }
  }
  func.params = ordered;
  append_workspaces(func);
  func.const_dims = st.const_dims;
  apply_tensor_layouts(func);
  apply_tensor_views(func);
  frames_.pop_back();
  eager_.reset();
  return func;
}

const std::map<std::string, Elaborator::DeclaredDim>& Elaborator::declared_dims() {
  EagerState& st = *eager_;
  if (!st.declared_dims) {
    Elaborator finder;
    finder.finding_dims_ = true;
    try {
      finder.eager(*st.function, st.args);
    } catch (const CompileError&) {
    } catch (const ArgumentError&) {
    }
    st.declared_dims = finder.found_dims_;
  }
  return *st.declared_dims;
}

FunctionValue Elaborator::run_factory(const FunctionValue& f, const std::map<std::string, CtValue>& args) {
  const ast::Stmt& def = *f.def;
  new_frame(*this, f);
  for (const auto& p : def.params) {
    auto it = args.find(p.name);
    if (it != args.end()) frame().names[p.name] = it->second;
    else if (p.default_value) frame().names[p.name] = eval(*p.default_value);
    else error_at(p.loc, "factory parameter '" + p.name + "' has no value (pass -D " + p.name + "=...)");
  }
  exec_block(def.body);
  std::optional<CtValue> result = frame().return_value;
  frames_.pop_back();
  if (result && result->kind == K::Function) return *result->function;
  if (result && result->kind != K::None)
    error_at(def.loc, "jit factory '" + def.name + "' returns " + describe(*result) + ", not a prim_func");
  if (defined_prim_funcs_.size() != 1)
    error_at(def.loc, "jit factory '" + def.name + "' returns nothing and defines " +
                          std::to_string(defined_prim_funcs_.size()) +
                          " prim_funcs; return the one to compile");
  return defined_prim_funcs_[0];
}

// ---------------------------------------------------------------- entry points

FunctionStyle function_style(const FunctionSource& source) {
  Elaborator el;
  FunctionValue f = el.parse_function(source);
  if (f.is_prim_func() || defines_prim_func(f.def->body)) return FunctionStyle::Factory;
  return FunctionStyle::Eager;
}

static ir::PrimFunc elaborate_function(Elaborator& el, const FunctionValue& f) {
  if (f.is_prim_func()) return el.prim_func(f, "");
  std::map<std::string, CtValue> args(f.closure->begin(), f.closure->end());
  if (defines_prim_func(f.def->body)) {
    FunctionValue kernel = el.run_factory(f, args);
    return el.prim_func(kernel, "");
  }
  return el.eager(f, args);
}

ir::PrimFunc elaborate(const FunctionSource& source) {
  Elaborator el;
  ir::PrimFunc func = elaborate_function(el, el.parse_function(source));
  // What elaboration can't see at a name's use (a value that carried a block's
  // buffer or index out of it, a symbolic dim no tensor gives) is reported here.
  passes::verify_source(func);
  return func;
}

}  // namespace tilec::frontend
