// The one C-like printer that every source-emitting backend shares.
//
// It prints lowered IR (loops, loads and stores, lets, conditionals, on-chip
// allocations, kernel launches) as C++: expressions with the fewest parentheses
// that keep them exact, statements one per line with 2-space indentation, and
// identifiers that are valid, unique and deterministic. What differs between
// targets is asked of small virtual hooks: the spelling of types and math
// functions, how a kernel launch and an on-chip buffer are written, loop
// pragmas, atomics and non-finite literals. A backend derives, overrides those,
// and drives the printing from its own `generate_*_source` function.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/dtype.h"
#include "codegen/kernel_abi.h"
#include "ir/ir.h"

namespace tilec::codegen {

// Binding strength of a printed expression, in C++'s order (tighter is larger).
enum class Prec : int {
  Cond = 1,        // c ? a : b
  LogicalOr,       // ||
  LogicalAnd,      // &&
  BitOr,           // |
  BitXor,          // ^
  BitAnd,          // &
  Equality,        // == !=
  Relational,      // < <= > >=
  Shift,           // << >>
  Additive,        // + -
  Multiplicative,  // * / %
  Unary,           // !x, -1, (int64_t)x
  Primary,         // names, literals, calls, a[i], (parenthesized)
};

// A printed expression and how tightly it binds.
struct CExpr {
  std::string text;
  Prec prec = Prec::Primary;
};

// The multiplier of one index in a buffer offset: `symbol` (an int64 name or
// parenthesized expression) when set, else `constant`.
struct Stride {
  int64_t constant = 1;
  std::string symbol;
};

class CFamilyPrinter {
 public:
  virtual ~CFamilyPrinter() = default;

  // The source text printed so far.
  std::string source() const { return out_.str(); }

 protected:
  // ------------------------------------------------------------ target hooks

  // The C++ spelling of a scalar type: <cstdint>'s names, bool, float and double here;
  // the types without native C++ support (DType::is_soft_float) are the target's.
  virtual std::string type_name(DType t) const;
  virtual std::string soft_float_type_name(DType t) const = 0;
  // Whether arithmetic and comparisons on `t` are done by converting the
  // operands to float and the result back (types without native operators).
  virtual bool computes_in_float(DType t) const { return t.is_soft_float(); }
  // The function that computes math operation `name` (an intrinsic of
  // ir/intrinsics.h, or "min", "max", "floordiv", "floormod") on operands of
  // type `t`.
  virtual std::string math_function(const std::string& name, DType t) const = 0;
  // A soft float of type `t` from `value` (C++ text of an integer, float or
  // double), rounded once.
  virtual std::string soft_float_from(DType t, const std::string& value) const {
    return type_name(t) + "(" + value + ")";
  }
  // A literal for an infinite or NaN `value` of float type `t`.
  virtual CExpr non_finite_literal(double value, DType t) const = 0;
  // The statement that atomically adds `value` (of type `t`) to `*address`.
  // `value` (of a type the size of `to`) with its bits read as `to`.
  virtual std::string reinterpret(DType to, const std::string& value) const = 0;
  virtual std::string atomic_add(const std::string& address, const std::string& value,
                                 DType t) const = 0;
  // The pragma line written before a loop, or "" for none.
  virtual std::string loop_pragma(const ir::For& op) const = 0;
  // Declares the storage of the on-chip buffer `buffer` under `name`
  // (already bound); its body follows in the same scope.
  virtual void declare_buffer(const ir::Buffer& buffer, const std::string& name) = 0;

  // Binds every tensor, int slot and float param of `abi`, reading them from the arrays
  // named `tensors`, `ints` and `floats` (C++ expressions).
  void emit_abi_prologue(const ir::PrimFunc& func, const KernelAbi& abi, const std::string& tensors,
                         const std::string& ints, const std::string& floats);

  // ------------------------------------------------------------ statements
  //
  // One method per statement kind; emit_stmt dispatches after writing the
  // source comment. Tile operations must have been lowered: their default
  // throws std::logic_error naming the kind. KernelLaunch is the target's.

  void emit_stmt(const ir::Stmt& s);
  virtual void emit_BufferStore(const ir::BufferStore& op);
  virtual void emit_For(const ir::For& op);
  virtual void emit_While(const ir::While& op);
  virtual void emit_IfThenElse(const ir::IfThenElse& op);
  virtual void emit_Seq(const ir::Seq& op);
  virtual void emit_LetStmt(const ir::LetStmt& op);
  virtual void emit_Allocate(const ir::Allocate& op);
  virtual void emit_Evaluate(const ir::Evaluate& op);
  virtual void emit_KernelLaunch(const ir::KernelLaunch& op) = 0;
  virtual void emit_Copy(const ir::Copy& op);
  virtual void emit_Gemm(const ir::Gemm& op);
  virtual void emit_Gemv(const ir::Gemv& op);
  virtual void emit_Fill(const ir::Fill& op);
  virtual void emit_Reduce(const ir::Reduce& op);
  virtual void emit_CumSum(const ir::CumSum& op);
  // The scalar form (every dst extent 1, src.buffer null); the tile form throws.
  virtual void emit_AtomicAdd(const ir::AtomicAdd& op);

  // ------------------------------------------------------------ expressions

  CExpr print(const ir::Expr& e);
  // A Call: the math intrinsics of ir/intrinsics.h (a target adds its own).
  virtual CExpr print_call(const ir::Call& op);
  std::string print_expr(const ir::Expr& e) { return print(e).text; }
  // `e` printed with parentheses unless it binds at least as tightly as `min`.
  static std::string wrap(const CExpr& e, Prec min);
  // `code` (of type `from`) converted to type `to`.
  CExpr convert(const CExpr& code, DType from, DType to) const;
  CExpr int_literal(int64_t value, DType t) const;
  CExpr float_literal(double value, DType t) const;
  // The element offset of `indices` in `buffer` (global buffers through their
  // strides in int64 arithmetic, on-chip buffers row-major or by their SharedLayout).
  std::string buffer_offset(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices);
  // The offset of `indices` in a buffer laid out by `layout`: its offset expression (a target
  // may call the device helper the layout names instead).
  virtual std::string layout_offset(const ir::SharedLayout& layout, const std::vector<ir::Expr>& indices);
  // `name[offset]` for a bound buffer (a target may check the indices first).
  virtual std::string buffer_element(const ir::Buffer& buffer,
                                     const std::vector<ir::Expr>& indices);

  // ------------------------------------------------------------ names

  // A valid identifier from `hint`, unused so far in this translation unit.
  std::string fresh_name(const std::string& hint);
  // Names `var` (a Var) until unbind_var; returns the name. `loop_scoped`: its
  // C++ declaration ends with the IR scope (a for-init), so when the same Var
  // is bound again later (sibling loops over one Var) it gets the same name.
  std::string bind_var(const ir::Expr& var, bool loop_scoped = false);
  void unbind_var(const ir::Expr& var);
  // Binds `buffer` to `name` (from fresh_name) until unbind_buffer. `strides`,
  // one per dim, are the multipliers of its indices; tensors with strides in
  // the IR leave them empty and are indexed through those. `wide`: offsets
  // need int64 arithmetic.
  void bind_buffer(const ir::Buffer& buffer, const std::string& name,
                   std::vector<Stride> strides = {}, bool wide = false);
  void unbind_buffer(const ir::Buffer& buffer);
  const std::string& var_name(const ir::Expr& var) const;
  const std::string& buffer_name(const ir::Buffer& buffer) const;

  // The row-major strides of `buffer` (constant or symbolic shape): constants
  // where the shape allows, else int64 consts declared here and named after
  // `name`. Sets *wide when offsets need int64 arithmetic.
  std::vector<Stride> declare_row_major_strides(const ir::Buffer& buffer, const std::string& name,
                                                bool* wide);
  // The number of elements of `buffer` as C++ text; *constant is the number
  // when the shape is constant, else -1 (and the text an int64 expression).
  std::string element_count(const ir::Buffer& buffer, int64_t* constant);

  // ------------------------------------------------------------ output

  void emit_line(const std::string& text);
  // Writes `head {` and indents.
  void open_block(const std::string& head);
  // Dedents and writes "}" and `tail` (";" after a struct).
  void close_block(const std::string& tail = "");
  // Dedents, writes `text` ("} else {") and indents again.
  void reopen_block(const std::string& text);
  // `// file:line: source text` before a statement that starts a new line.
  void emit_source_comment(const SourceLoc& loc);
  // `text` made safe inside a `//` comment: no control characters, no
  // surrounding blanks, no trailing backslash (which would continue it).
  static std::string comment_text(const std::string& text);
  // `text` (free of control characters, as comment_text makes it) as a C++ string literal.
  static std::string string_literal(const std::string& text);
  // "file:line: source text" of the statement being emitted ("" before any).
  const std::string& current_source_line() const { return current_source_line_; }

 private:
  CExpr print_binary(ir::ExprKind kind, const ir::Expr& a, const ir::Expr& b, DType t);
  CExpr print_arith(ir::ExprKind kind, const CExpr& a, const CExpr& b, DType t);

  struct BufferBinding {
    std::string name;
    std::vector<Stride> strides;
    bool wide = false;
  };

  std::ostringstream out_;
  int indent_ = 0;
  std::unordered_set<std::string> used_names_;
  // Innermost binding last: a node may be bound again in a nested scope.
  std::unordered_map<const ir::ExprNode*, std::vector<std::pair<std::string, bool>>> var_names_;
  // Names of loop-scoped bindings that have ended, for the same Var's next loop.
  std::unordered_map<const ir::ExprNode*, std::string> loop_names_;
  std::unordered_map<const ir::BufferNode*, std::vector<BufferBinding>> buffers_;
  std::string current_source_line_;
  const SourceFile* last_comment_file_ = nullptr;
  int last_comment_line_ = 0;
};

}  // namespace tilec::codegen
