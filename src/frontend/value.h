// Compile-time values of the elaborator: what a name of kernel source stands
// for while the kernel is being turned into IR. Python-level values (ints,
// tuples, dtypes...) fold; runtime values are IR expressions; buffers, regions
// and functions are handles the tile ops and calls consume.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "frontend/ast.h"
#include "ir/ir.h"

namespace tilec {
struct FunctionSource;
class HostObject;
}

namespace tilec::frontend {

struct CtValue;
using CtValuePtr = std::shared_ptr<CtValue>;

// The items of a tuple or list. Copies of a value share its items until one of
// them changes them: a value is copied at every use of a name, and a long
// tuple read in a compile-time loop was copied whole each time.
class ItemList {
 public:
  ItemList() = default;
  ItemList(std::vector<CtValue> items);  // NOLINT(google-explicit-constructor): a vector is a list
  size_t size() const;
  bool empty() const { return size() == 0; }
  const CtValue& operator[](size_t i) const;
  std::vector<CtValue>::const_iterator begin() const;
  std::vector<CtValue>::const_iterator end() const;
  const std::vector<CtValue>& vector() const;
  // Tuples and lists inside one another, this one counted: 1 + its items' deepest.
  int depth() const;
  // Whether every item is a Python-level constant (CtValue::is_constant).
  bool all_constant() const;
  void push_back(CtValue item);
  void append(const ItemList& other);
  void clear() { shared_.reset(); }

 private:
  struct Shared;
  Shared& own();  // the items, copied first when another value shares them
  std::shared_ptr<Shared> shared_;  // null: no items
};

// A function defined in kernel source or handed in by the Python face: its
// definition, the module that owns the AST, and the names it closes over.
struct FunctionValue {
  std::shared_ptr<const ast::Module> module;  // keeps `def` alive
  const ast::Stmt* def = nullptr;
  std::shared_ptr<std::map<std::string, CtValue>> closure;
  bool is_prim_func() const;
  bool is_macro() const;
  bool has_decorator(const std::string& attr) const;
};

// `T.Tensor((M, K), dtype)`: a tensor type, before it names a parameter.
struct TensorTypeValue {
  std::vector<CtValue> shape;
  DType dtype;
  std::vector<CtValue> strides;  // empty: row-major
};

// An index into a buffer: one entry per indexed dim; a point (extent null) or
// a slice. Fewer entries than the buffer has dims leaves the rest whole.
struct RegionValue {
  ir::Buffer buffer;
  std::vector<ir::Range> ranges;  // extent null => point index
  SourceLoc loc;                  // the subscript
  bool all_points() const;
};

struct CtValue {
  enum class Kind {
    None, Bool, Int, Float, String, DType,
    Tuple, List,
    Expr,        // a runtime IR expression (loop index, load, arithmetic...)
    MutableVar,  // a runtime scalar that is assigned more than once: a 1-element local buffer;
                 // bool_value: declared by T.alloc_var, with its dtype
    Buffer,      // a whole buffer
    Region,      // buffer[indices]
    Function,
    Module,      // text: "tilec", "tilec.language", "tilec.layout", "tilec.math", "tilec.tvm", "tilec.tvm.tirx"
    Builtin,     // text: the builtin's name ("copy", "range", "T.float16" callable ...)
    TensorType,
    PendingDim,  // T.const dim not known yet (eager kernels); text: its name
    TensorSpec,  // an eager call's argument tensor: items = shape ints, dtype
    Host,        // a Python module, class or builtin function, run at compile time: host
    Opaque,      // text: the Python type name of a value kernels can't use
    Layout,      // a shared tile's layout (T.Layout, make_swizzled_layout): layout
  };
  Kind kind = Kind::None;
  bool bool_value = false;
  int64_t int_value = 0;
  double float_value = 0;
  std::string text;
  DType dtype;
  ItemList items;
  ir::Expr expr;
  ir::Buffer buffer;
  std::shared_ptr<RegionValue> region;
  std::shared_ptr<FunctionValue> function;
  std::shared_ptr<TensorTypeValue> tensor_type;
  std::shared_ptr<const ir::SharedLayout> layout;
  std::shared_ptr<const HostObject> host;

  static CtValue none() { return CtValue{}; }
  static CtValue of_bool(bool v);
  static CtValue of_int(int64_t v);
  static CtValue of_float(double v);
  static CtValue of_string(std::string v);
  static CtValue of_dtype(DType t);
  static CtValue of_expr(ir::Expr e);
  static CtValue of_buffer(ir::Buffer b);
  static CtValue builtin(std::string name);
  static CtValue tuple(std::vector<CtValue> items);

  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool is_sequence() const { return kind == Kind::Tuple || kind == Kind::List; }
  // A Python-level value that folds (no IR involved).
  bool is_constant() const;
};

// "int", "str 'text'", "tuple", "buffer", "runtime int32 value", ... for error messages.
std::string describe(const CtValue& v);

// What Python's str() gives for a compile-time value (None, bool, int, float, str, a dtype's
// name, tuples and lists of these), or nullopt for any other value.
std::optional<std::string> python_str(const CtValue& v);

}  // namespace tilec::frontend
