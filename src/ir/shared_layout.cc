#include "ir/shared_layout.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/printer.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "ir/visitor.h"

namespace tilec::ir {
namespace {

Expr constant(int64_t v) { return make_int(v); }

std::vector<Expr> index_vars(size_t rank) {
  std::vector<Expr> vars;
  for (size_t d = 0; d < rank; ++d) vars.push_back(make_var("i" + std::to_string(d)));
  return vars;
}

// The row-major offset of `indices` in a tile of `shape`.
Expr row_major_offset(const std::vector<int64_t>& shape, const std::vector<Expr>& indices) {
  Expr offset;
  for (size_t d = 0; d < indices.size(); ++d)
    offset = d == 0 ? indices[d] : make_Add(make_Mul(offset, constant(shape[d])), indices[d]);
  return offset ? offset : constant(0);
}

// `within` (the offset in one rows x cols tile) after the whole tiles of the leading dims.
Expr after_leading_tiles(const std::vector<int64_t>& shape, const std::vector<Expr>& vars, Expr within) {
  const size_t rank = shape.size();
  if (rank == 2) return within;
  std::vector<int64_t> lead(shape.begin(), shape.end() - 2);
  std::vector<Expr> lead_vars(vars.begin(), vars.end() - 2);
  Expr tile = make_Mul(row_major_offset(lead, lead_vars), constant(shape[rank - 2] * shape[rank - 1]));
  return make_Add(tile, within);
}

std::string index_text(const std::vector<int64_t>& index) {
  std::string text = "(";
  for (size_t d = 0; d < index.size(); ++d) text += (d ? ", " : "") + std::to_string(index[d]);
  return text + (index.size() == 1 ? ",)" : ")");
}

// Calls f(index) for every index of `shape`, row-major.
template <typename F>
void for_each_index(const std::vector<int64_t>& shape, F f) {
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t e : shape)
    if (e <= 0) return;
  while (true) {
    f(index);
    size_t d = shape.size();
    while (d > 0 && ++index[d - 1] == shape[d - 1]) index[--d] = 0;
    if (d == 0) return;
  }
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

// a `kind` b for the integer operators a layout is written with; nothing for a division by zero
// or another operator (Div: layouts are written with // and %). Inlined: it is the inner step of
// every bijection check.
[[gnu::always_inline]] inline std::optional<int64_t> apply_binary(ExprKind kind, int64_t a, int64_t b) {
  switch (kind) {
    case ExprKind::Add: return a + b;
    case ExprKind::Sub: return a - b;
    case ExprKind::Mul: return a * b;
    case ExprKind::FloorDiv: return b == 0 ? std::nullopt : std::optional<int64_t>(floor_div(a, b));
    case ExprKind::FloorMod: return b == 0 ? std::nullopt : std::optional<int64_t>(a - floor_div(a, b) * b);
    case ExprKind::BitXor: return a ^ b;
    case ExprKind::BitAnd: return a & b;
    case ExprKind::BitOr: return a | b;
    case ExprKind::ShiftLeft: return b < 0 || b > 62 ? std::nullopt : std::optional<int64_t>(a << b);
    case ExprKind::ShiftRight: return b < 0 || b > 63 ? std::nullopt : std::optional<int64_t>(a >> b);
    case ExprKind::Min: return std::min(a, b);
    case ExprKind::Max: return std::max(a, b);
    case ExprKind::EQ: return a == b;
    case ExprKind::NE: return a != b;
    case ExprKind::LT: return a < b;
    case ExprKind::LE: return a <= b;
    case ExprKind::GT: return a > b;
    case ExprKind::GE: return a >= b;
    case ExprKind::And: return a && b;
    case ExprKind::Or: return a || b;
    default: return std::nullopt;
  }
}

// The value of integer expression `e` with vars[d] = values[d], or nullopt where it needs
// anything else (another Var, a load, a division by zero). What simplify would fold, without
// building nodes: a layout is evaluated at every element of its tile.
std::optional<int64_t> evaluate(const Expr& e, const std::vector<Expr>& vars, const std::vector<int64_t>& values) {
  int64_t c;
  if (is_const_int(e, &c)) return c;
  if (e.as<Var>()) {
    for (size_t d = 0; d < vars.size(); ++d)
      if (vars[d].same_as(e)) return values[d];
    return std::nullopt;
  }
  if (const auto* cast = e.as<Cast>()) {
    if (!e->dtype.is_integer()) return std::nullopt;
    auto v = evaluate(cast->value, vars, values);
    if (v && e->dtype.bits() == 32) return static_cast<int64_t>(static_cast<int32_t>(*v));
    return v;
  }
  if (const auto* s = e.as<Select>()) {
    auto cond = evaluate(s->condition, vars, values);
    if (!cond) return std::nullopt;
    return evaluate(*cond ? s->true_value : s->false_value, vars, values);
  }
  if (const auto* n = e.as<Not>()) {
    auto v = evaluate(n->a, vars, values);
    return v ? std::optional<int64_t>(!*v) : std::nullopt;
  }
  auto [pa, pb] = binary_operands(e.get());
  if (!pa) return std::nullopt;
  auto oa = evaluate(*pa, vars, values), ob = evaluate(*pb, vars, values);
  if (!oa || !ob) return std::nullopt;
  return apply_binary(e.kind(), *oa, *ob);
}

// `e` (an integer expression of `vars`) as a postfix program: what evaluate folds, evaluated at
// every element of a box without walking the tree each time. Both arms of a Select are
// evaluated, so where run gives nothing (a division by zero), evaluate decides.
class IndexProgram {
 public:
  // Nothing where `e` has a node evaluate does not fold either.
  static std::optional<IndexProgram> of(const Expr& e, const std::vector<Expr>& vars) {
    IndexProgram program;
    if (!program.add(e, vars)) return std::nullopt;
    return program;
  }

  std::optional<int64_t> run(const std::vector<int64_t>& values) const {
    stack_.clear();
    for (const Step& step : steps_) {
      switch (step.op) {
        case Op::Constant: stack_.push_back(step.value); break;
        case Op::Index: stack_.push_back(values[static_cast<size_t>(step.value)]); break;
        case Op::Truncate: stack_.back() = static_cast<int32_t>(stack_.back()); break;
        case Op::Not: stack_.back() = !stack_.back(); break;
        case Op::Select: {
          const int64_t false_value = stack_.back();
          stack_.pop_back();
          const int64_t true_value = stack_.back();
          stack_.pop_back();
          stack_.back() = stack_.back() ? true_value : false_value;
          break;
        }
        case Op::Binary: {
          const int64_t b = stack_.back();
          stack_.pop_back();
          std::optional<int64_t> value = apply_binary(step.kind, stack_.back(), b);
          if (!value) return std::nullopt;
          stack_.back() = *value;
          break;
        }
      }
    }
    return stack_.back();
  }

 private:
  enum class Op { Constant, Index, Truncate, Not, Select, Binary };
  struct Step {
    Op op;
    ExprKind kind;  // Binary
    int64_t value;  // Constant: the value; Index: which index
  };

  bool add(const Expr& e, const std::vector<Expr>& vars) {
    int64_t c;
    if (is_const_int(e, &c)) return push({Op::Constant, e.kind(), c});
    if (e.as<Var>()) {
      for (size_t d = 0; d < vars.size(); ++d)
        if (vars[d].same_as(e)) return push({Op::Index, e.kind(), static_cast<int64_t>(d)});
      return false;
    }
    if (const auto* cast = e.as<Cast>()) {
      if (!e->dtype.is_integer() || !add(cast->value, vars)) return false;
      return e->dtype.bits() != 32 || push({Op::Truncate, e.kind(), 0});
    }
    if (const auto* select = e.as<Select>())
      return add(select->condition, vars) && add(select->true_value, vars) && add(select->false_value, vars) &&
             push({Op::Select, e.kind(), 0});
    if (const auto* n = e.as<Not>()) return add(n->a, vars) && push({Op::Not, e.kind(), 0});
    switch (e.kind()) {
#define TILEC_BINARY(n)                                                                        \
  case ExprKind::n:                                                                            \
    return add(static_cast<const n*>(e.get())->a, vars) && add(static_cast<const n*>(e.get())->b, vars) && \
           push({Op::Binary, e.kind(), 0});
      TILEC_FOR_EACH_BINARY_EXPR(TILEC_BINARY)
#undef TILEC_BINARY
      default: return false;
    }
  }
  bool push(Step step) {
    steps_.push_back(step);
    return true;
  }

  std::vector<Step> steps_;
  mutable std::vector<int64_t> stack_;
};

void check_tile(const std::vector<int64_t>& shape, size_t min_rank, const char* what) {
  if (shape.size() < min_rank)
    throw std::invalid_argument(std::string(what) + " needs a tile of at least " + std::to_string(min_rank) +
                                " dims, not " + std::to_string(shape.size()));
  for (int64_t e : shape)
    if (e < 1) throw std::invalid_argument(std::string(what) + " needs positive extents, not " + std::to_string(e));
}


// The indices among `vars` that `e` uses.
std::vector<size_t> used_indices(const Expr& e, const std::vector<Expr>& vars) {
  struct Uses : IRVisitor {
    const std::vector<Expr>* vars;
    std::vector<bool> used;
    void visit_Var(const Var* op) override {
      for (size_t d = 0; d < vars->size(); ++d)
        if ((*vars)[d].get() == op) used[d] = true;
    }
  } uses;
  uses.vars = &vars;
  uses.used.assign(vars.size(), false);
  uses.visit(e);
  std::vector<size_t> dims;
  for (size_t d = 0; d < vars.size(); ++d)
    if (uses.used[d]) dims.push_back(d);
  return dims;
}

void check_vars(const std::vector<int64_t>& shape, const std::vector<Expr>& vars) {
  if (vars.size() != shape.size())
    throw std::invalid_argument("a layout of a " + std::to_string(shape.size()) + "-dim tile takes " +
                                std::to_string(shape.size()) + " indices, not " + std::to_string(vars.size()));
  for (const Expr& v : vars)
    if (!v.as<Var>() || (v->dtype != DType::Int32 && v->dtype != DType::Int64) || v->dtype != vars[0]->dtype)
      throw std::invalid_argument("a layout's indices are Vars, all int32 or all int64");
}

// One group of from_coordinates: the coordinates that share indices, and the indices they use.
struct CoordinateGroup {
  std::vector<size_t> dims;
  std::vector<size_t> coordinates;
};

// The groups of `coordinates` (their indices among `vars`): a union of coordinates and
// indices, joined where a coordinate uses an index. An index no coordinate uses is a group of
// its own without coordinates.
std::vector<CoordinateGroup> coordinate_groups(const std::vector<std::vector<size_t>>& uses, size_t rank) {
  std::vector<size_t> parent(rank + uses.size());
  for (size_t n = 0; n < parent.size(); ++n) parent[n] = n;
  auto root = [&](size_t n) {
    while (parent[n] != n) n = parent[n] = parent[parent[n]];
    return n;
  };
  for (size_t c = 0; c < uses.size(); ++c)
    for (size_t d : uses[c]) parent[root(rank + c)] = root(d);
  std::map<size_t, CoordinateGroup> groups;
  for (size_t d = 0; d < rank; ++d) groups[root(d)].dims.push_back(d);
  for (size_t c = 0; c < uses.size(); ++c) groups[root(rank + c)].coordinates.push_back(c);
  std::vector<CoordinateGroup> out;
  for (auto& entry : groups) out.push_back(std::move(entry.second));
  return out;
}

}  // namespace

SharedLayout::SharedLayout(Kind kind, std::vector<int64_t> shape, std::vector<Expr> vars, Expr offset,
                           int64_t elem_bytes, int64_t panel_bytes, SourceLoc loc)
    : kind_(kind), shape_(std::move(shape)), vars_(std::move(vars)), offset_(simplify(offset)),
      elem_bytes_(elem_bytes), panel_bytes_(panel_bytes), loc_(std::move(loc)) {}

SharedLayoutRef SharedLayout::row_major(std::vector<int64_t> shape) {
  check_tile(shape, 1, "a row-major layout");
  std::vector<Expr> vars = index_vars(shape.size());
  Expr offset = row_major_offset(shape, vars);
  return std::make_shared<SharedLayout>(Kind::RowMajor, std::move(shape), std::move(vars), offset, 0, 0);
}

SharedLayoutRef SharedLayout::mma_swizzle(std::vector<int64_t> shape, int64_t elem_bytes) {
  check_tile(shape, 2, "the mma swizzle");
  const size_t rank = shape.size();
  const int64_t rows = shape[rank - 2], cols = shape[rank - 1], row_bytes = cols * elem_bytes;
  if (elem_bytes < 1 || 16 % elem_bytes != 0)
    throw std::invalid_argument("the mma swizzle needs elements of 1, 2, 4, 8 or 16 bytes, not " +
                                std::to_string(elem_bytes));
  if (rows * row_bytes % 128 != 0)
    throw std::invalid_argument("the mma swizzle permutes 16-byte chunks in 128-byte lines: a " +
                                std::to_string(rows) + " x " + std::to_string(cols) + " tile of " +
                                std::to_string(elem_bytes) + "-byte elements is not whole lines");
  std::vector<Expr> vars = index_vars(rank);
  const Expr& r = vars[rank - 2];
  const Expr& c = vars[rank - 1];
  Expr byte = make_Add(make_Mul(r, constant(row_bytes)), make_Mul(c, constant(elem_bytes)));
  Expr chunk = make_FloorDiv(byte, constant(16));
  Expr key = row_bytes % 128 == 0 ? r : make_FloorDiv(chunk, constant(8));
  Expr swizzled = make_BitXor(chunk, make_FloorMod(key, constant(8)));
  Expr within = make_FloorDiv(make_Add(make_Mul(swizzled, constant(16)), make_FloorMod(byte, constant(16))),
                              constant(elem_bytes));
  Expr offset = after_leading_tiles(shape, vars, within);
  return std::make_shared<SharedLayout>(Kind::MmaSwizzle, std::move(shape), std::move(vars), offset, elem_bytes, 0);
}

SharedLayoutRef SharedLayout::panels(std::vector<int64_t> shape, int64_t elem_bytes, int64_t panel_bytes) {
  check_tile(shape, 2, "a panel layout");
  if (panel_bytes != 128 && panel_bytes != 64 && panel_bytes != 32 && panel_bytes != 16)
    throw std::invalid_argument("panels are 128, 64, 32 or 16 bytes wide, not " + std::to_string(panel_bytes));
  if (elem_bytes < 1 || panel_bytes % elem_bytes != 0)
    throw std::invalid_argument("a " + std::to_string(panel_bytes) + "-byte panel holds no whole number of " +
                                std::to_string(elem_bytes) + "-byte elements");
  const size_t rank = shape.size();
  const int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  // Swizzled panels repeat their pattern every 8 rows; 16-byte panels aren't swizzled and take
  // one row (a row of LSE values that TMA loads).
  if ((rows % 8 != 0 && !(rows == 1 && panel_bytes == 16)) || cols * elem_bytes % panel_bytes != 0)
    throw std::invalid_argument("a tile in " + std::to_string(panel_bytes) + "-byte panels has rows in groups of 8 "
                                "(or one row of 16-byte panels) and whole panels a row: not " + std::to_string(rows) +
                                " x " + std::to_string(cols) + " of " + std::to_string(elem_bytes) + "-byte elements");
  std::vector<Expr> vars = index_vars(rank);
  const Expr& r = vars[rank - 2];
  const Expr& c = vars[rank - 1];
  const int64_t panel_cols = panel_bytes / elem_bytes;
  Expr byte = make_Add(make_Mul(r, constant(panel_bytes)),
                       make_Mul(make_FloorMod(c, constant(panel_cols)), constant(elem_bytes)));
  Expr pattern = make_FloorMod(make_FloorDiv(byte, constant(128)), constant(panel_bytes / 16));
  Expr swizzled = make_BitXor(byte, make_Mul(pattern, constant(16)));
  Expr within = make_Add(make_Mul(make_FloorDiv(c, constant(panel_cols)), constant(rows * panel_cols)),
                         make_FloorDiv(swizzled, constant(elem_bytes)));
  Expr offset = after_leading_tiles(shape, vars, within);
  return std::make_shared<SharedLayout>(Kind::Panels, std::move(shape), std::move(vars), offset, elem_bytes,
                                        panel_bytes);
}

SharedLayoutRef SharedLayout::user(std::vector<int64_t> shape, std::vector<Expr> vars, Expr offset, SourceLoc loc) {
  check_tile(shape, 1, "a layout");
  check_vars(shape, vars);
  if (!offset || !offset->dtype.is_integer())
    throw std::invalid_argument("a layout's offset is an integer expression of its indices");
  offset = make_cast(vars[0]->dtype, offset);
  return std::make_shared<SharedLayout>(Kind::User, std::move(shape), std::move(vars), offset, 0, 0, std::move(loc));
}

SharedLayoutRef SharedLayout::bound(std::string origin) const {
  auto layout = std::make_shared<SharedLayout>(Kind::User, shape_, vars_, offset_, 0, 0, loc_);
  layout->origin_ = std::move(origin);
  return layout;
}

SharedLayoutRef SharedLayout::viewed(std::vector<int64_t> shape) const {
  check_tile(shape, 1, "a view's layout");
  std::vector<Expr> vars = index_vars(shape.size());
  // The view's flat index, then this layout's indices of it.
  Expr flat = row_major_offset(shape, vars);
  std::vector<Expr> indices(shape_.size());
  int64_t inner = 1;
  for (size_t d = shape_.size(); d-- > 0;) {
    Expr above = inner == 1 ? flat : make_FloorDiv(flat, constant(inner));
    indices[d] = d == 0 ? above : make_FloorMod(above, constant(shape_[d]));  // the flat index is in range
    inner *= shape_[d];
  }
  auto layout = std::make_shared<SharedLayout>(Kind::User, std::move(shape), std::move(vars), offset_of(indices), 0, 0,
                                               loc_);
  layout->origin_ = origin_;
  return layout;
}

SharedLayoutRef SharedLayout::from_coordinates(std::vector<int64_t> shape, std::vector<Expr> vars,
                                               std::vector<Expr> coordinates, SourceLoc loc) {
  check_tile(shape, 1, "a layout");
  check_vars(shape, vars);
  const DType index_type = vars[0]->dtype;
  std::vector<std::vector<size_t>> uses;
  for (Expr& c : coordinates) {
    if (!c || !c->dtype.is_integer())
      throw std::invalid_argument("a layout's coordinates are integer expressions of its indices");
    c = simplify(make_cast(index_type, c));
    uses.push_back(used_indices(c, vars));
  }
  auto coordinate_text = [&](size_t c) {
    return "coordinate " + std::to_string(c) + " (" + ir::to_string(coordinates[c]) + ")";
  };
  std::vector<int64_t> extents(coordinates.size(), 0);
  for (const CoordinateGroup& group : coordinate_groups(uses, shape.size())) {
    std::vector<int64_t> group_shape;
    int64_t elements = 1;
    for (size_t d : group.dims) {
      group_shape.push_back(shape[d]);
      // saturated: a product past int64 (dims near 2^63) must not wrap under the limit below
      if (__builtin_mul_overflow(elements, shape[d], &elements)) elements = INT64_MAX;
    }
    if (group.coordinates.empty()) {
      if (elements > 1)
        throw std::invalid_argument("no coordinate uses index " + ir::to_string(vars[group.dims[0]]) +
                                    " (dim " + std::to_string(group.dims[0]) + " of " +
                                    std::to_string(shape[group.dims[0]]) + "): elements that differ there alone "
                                    "would share a place");
      continue;
    }
    // A coordinate that is its index itself: a bijection onto the index's extent, whatever its length.
    if (group.dims.size() == 1 && group.coordinates.size() == 1 &&
        coordinates[group.coordinates[0]].same_as(vars[group.dims[0]])) {
      extents[group.coordinates[0]] = shape[group.dims[0]];
      continue;
    }
    if (elements > kMaxGroupElements) {
      std::string names;
      for (size_t d : group.dims) names += (names.empty() ? "" : ", ") + ir::to_string(vars[d]);
      throw std::invalid_argument("its coordinates tie indices " + names + " together, " + std::to_string(elements) +
                                  " elements, more than the " + std::to_string(kMaxGroupElements) +
                                  " a bijection check enumerates; write coordinates that each use fewer of them");
    }
    // Each coordinate's values over the box of the indices it uses, row-major there: evaluated
    // once per combination of its own indices, then looked up for every element of the group.
    const size_t width = group.coordinates.size();
    std::vector<std::vector<int64_t>> tables(width);
    std::vector<std::vector<std::pair<size_t, int64_t>>> strides(width);  // (position in group.dims, stride)
    for (size_t k = 0; k < width; ++k) {
      const size_t c = group.coordinates[k];
      std::vector<int64_t> own_shape;
      for (size_t d : uses[c]) own_shape.push_back(shape[d]);
      int64_t stride = 1;
      for (size_t u = uses[c].size(); u-- > 0;) {
        const size_t at = static_cast<size_t>(std::find(group.dims.begin(), group.dims.end(), uses[c][u]) -
                                              group.dims.begin());
        strides[k].emplace_back(at, stride);
        stride *= shape[uses[c][u]];
      }
      std::vector<int64_t> full(shape.size(), 0);
      const std::optional<IndexProgram> program = IndexProgram::of(coordinates[c], vars);
      for_each_index(own_shape, [&](const std::vector<int64_t>& index) {
        for (size_t u = 0; u < index.size(); ++u) full[uses[c][u]] = index[u];
        std::optional<int64_t> value = program ? program->run(full) : std::nullopt;
        if (!value) value = evaluate(coordinates[c], vars, full);
        if (!value)
          throw std::invalid_argument(coordinate_text(c) + " of " + index_text(full) +
                                      " is not a constant: a layout is a function of its indices alone");
        if (*value < 0)
          throw std::invalid_argument(coordinate_text(c) + " of " + index_text(full) + " is " +
                                      std::to_string(*value) + ": coordinates count from 0");
        tables[k].push_back(*value);
        extents[c] = std::max(extents[c], *value + 1);
      });
    }
    int64_t places = 1;
    for (size_t c : group.coordinates)
      places = extents[c] > elements || places > elements / extents[c] ? elements + 1 : places * extents[c];
    auto index_at = [&](int64_t position) {
      std::vector<int64_t> index(shape.size(), 0);
      for (size_t k = group.dims.size(); k-- > 0;) {
        index[group.dims[k]] = position % group_shape[k];
        position /= group_shape[k];
      }
      return index_text(index);
    };
    if (places > elements) {
      std::string text;
      for (size_t c : group.coordinates) text += (text.empty() ? "" : ", ") + coordinate_text(c);
      throw std::invalid_argument(text + " take" + (width == 1 ? "s" : "") + " more places than the " +
                                  std::to_string(elements) + " elements of their indices fill: some place is "
                                  "left empty, so some other is shared");
    }
    std::vector<int64_t> owner(static_cast<size_t>(elements), -1);
    int64_t position = 0;
    for_each_index(group_shape, [&](const std::vector<int64_t>& index) {
      int64_t place = 0;
      for (size_t k = 0; k < width; ++k) {
        int64_t entry = 0;
        for (const auto& stride : strides[k]) entry += index[stride.first] * stride.second;
        place = place * extents[group.coordinates[k]] + tables[k][static_cast<size_t>(entry)];
      }
      int64_t& seen = owner[static_cast<size_t>(place)];
      if (seen >= 0)
        throw std::invalid_argument(index_at(seen) + " and " + index_at(position) +
                                    " have the same coordinates: a layout gives each element its own place");
      seen = position++;
    });
  }
  Expr offset;
  for (size_t c = 0; c < coordinates.size(); ++c)
    offset = c == 0 ? coordinates[c]
                    : make_Add(make_Mul(offset, make_int(extents[c], index_type)), coordinates[c]);
  auto layout = std::make_shared<SharedLayout>(Kind::User, std::move(shape), std::move(vars), offset, 0, 0,
                                               std::move(loc));
  layout->checked_bijective_ = true;
  return layout;
}

int64_t SharedLayout::elements() const {
  int64_t n = 1;
  for (int64_t e : shape_) n *= e;
  return n;
}

bool SharedLayout::swizzled() const {
  return kind_ == Kind::MmaSwizzle || (kind_ == Kind::Panels && panel_bytes_ > 16);
}

Expr SharedLayout::offset_of(const std::vector<Expr>& indices) const {
  if (indices.size() != vars_.size())
    throw std::logic_error("SharedLayout: " + std::to_string(indices.size()) + " indices for a " +
                           std::to_string(vars_.size()) + "-dim tile");
  VarMap map;
  for (size_t d = 0; d < vars_.size(); ++d) map[vars_[d].get()] = make_cast(vars_[d]->dtype, indices[d]);
  return simplify(substitute(offset_, map));
}

std::string SharedLayout::device_offset() const {
  const size_t rank = shape_.size();
  switch (kind_) {
    case Kind::MmaSwizzle:
      return "swizzled_offset<" + std::to_string(shape_[rank - 1]) + ", " + std::to_string(elem_bytes_) + ">";
    case Kind::Panels:
      return "panel_offset<" + std::to_string(shape_[rank - 2]) + ", " + std::to_string(shape_[rank - 1]) + ", " +
             std::to_string(elem_bytes_) + ", " + std::to_string(panel_bytes_) + ">";
    default: return "";
  }
}

std::vector<int64_t> SharedLayout::all_offsets() const {
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(elements()));
  const std::optional<IndexProgram> program = IndexProgram::of(offset_, vars_);
  for_each_index(shape_, [&](const std::vector<int64_t>& index) {
    std::optional<int64_t> offset = program ? program->run(index) : std::nullopt;
    offsets.push_back(offset ? *offset : offset_at(index));
  });
  return offsets;
}

int64_t SharedLayout::offset_at(const std::vector<int64_t>& index) const {
  if (auto value = evaluate(offset_, vars_, index)) return *value;
  std::vector<Expr> indices;
  for (int64_t i : index) indices.push_back(constant(i));
  throw std::invalid_argument("the offset of " + index_text(index) + " is " + ir::to_string(offset_of(indices)) +
                              ", not a constant: a layout is a function of its indices alone");
}

std::string SharedLayout::bijection_error() const {
  if (checked_bijective_) return "";
  if (elements() > kMaxGroupElements)
    return "its " + std::to_string(elements()) + " elements are more than the " + std::to_string(kMaxGroupElements) +
           " a bijection check of one offset enumerates; give the layout as coordinates "
           "(lambda i, j: [i // 8, j, i % 8]), which are checked group by group";
  std::vector<int64_t> offsets;
  try {
    offsets = all_offsets();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  const int64_t n = elements();
  std::unordered_map<int64_t, std::vector<int64_t>> owner;  // offset -> the index that has it
  std::string error;
  int64_t k = 0;
  for_each_index(shape_, [&](const std::vector<int64_t>& index) {
    const int64_t offset = offsets[static_cast<size_t>(k++)];
    if (!error.empty()) return;
    if (offset < 0 || offset >= n) {
      error = "the offset of " + index_text(index) + " is " + std::to_string(offset) + ", outside the tile's " +
              std::to_string(n) + " elements [0, " + std::to_string(n) + ")";
    } else if (auto [it, fresh] = owner.try_emplace(offset, index); !fresh) {
      error = index_text(it->second) + " and " + index_text(index) + " both have offset " + std::to_string(offset) +
              ": a layout gives each element its own place";
    }
  });
  return error;
}

bool SharedLayout::same_offsets(const SharedLayout& other) const {
  return shape_ == other.shape_ && all_offsets() == other.all_offsets();
}

int64_t SharedLayout::contiguous_elements() const {
  const int64_t cols = shape_.back();
  int64_t run = 1;
  while (cols % (run * 2) == 0) run *= 2;
  // The swizzles move whole 16-byte chunks.
  if (kind_ == Kind::MmaSwizzle || kind_ == Kind::Panels) return std::min(run, 16 / elem_bytes_);
  if (kind_ == Kind::RowMajor) return run;
  std::call_once(contiguous_once_, [&] {
    const std::vector<int64_t> offsets = all_offsets();
    contiguous_ = longest_run(offsets, run);
  });
  return contiguous_;
}

int64_t SharedLayout::longest_run(const std::vector<int64_t>& offsets, int64_t run) {
  for (; run > 1; run /= 2) {
    bool whole = true;
    for (size_t start = 0; whole && start < offsets.size(); start += static_cast<size_t>(run)) {
      whole = offsets[start] % run == 0;
      for (int64_t k = 1; whole && k < run; ++k) whole = offsets[start + static_cast<size_t>(k)] == offsets[start] + k;
    }
    if (whole) break;
  }
  return run;
}

SharedLayoutRef SharedLayout::staged(int64_t stages) const {
  std::vector<int64_t> shape = shape_;
  shape.insert(shape.begin(), stages);
  switch (kind_) {
    case Kind::RowMajor: return row_major(shape);
    case Kind::MmaSwizzle: return mma_swizzle(shape, elem_bytes_);
    case Kind::Panels: return panels(shape, elem_bytes_, panel_bytes_);
    case Kind::User: break;
  }
  std::vector<Expr> vars = vars_;
  Expr stage = make_var("stage");
  vars.insert(vars.begin(), stage);
  return user(shape, vars, make_Add(make_Mul(stage, constant(elements())), offset_), loc_);
}

int64_t SharedLayout::bank_conflicts(const std::vector<std::vector<int64_t>>& first, int64_t bytes,
                                     int64_t elem_bytes) const {
  if (elem_bytes < 1 || bytes < elem_bytes || bytes > 16 || bytes % elem_bytes != 0)
    throw std::invalid_argument("a thread reads whole elements, 16 bytes at most");
  const size_t phase = static_cast<size_t>(128 / std::max<int64_t>(bytes, 4));
  int64_t extra = 0;
  for (size_t start = 0; start < first.size(); start += phase) {
    std::unordered_map<int64_t, std::unordered_set<int64_t>> words;  // bank -> the words it serves
    for (size_t t = start; t < std::min(first.size(), start + phase); ++t) {
      for (int64_t e = 0; e < bytes / elem_bytes; ++e) {
        std::vector<int64_t> index = first[t];
        index.back() += e;
        const int64_t byte = offset_at(index) * elem_bytes;
        for (int64_t w = byte / 4; w <= (byte + elem_bytes - 1) / 4; ++w) words[w % 32].insert(w);
      }
    }
    size_t wavefronts = 1;
    for (const auto& [bank, set] : words) wavefronts = std::max(wavefronts, set.size());
    extra += static_cast<int64_t>(wavefronts) - 1;
  }
  return extra;
}

std::string SharedLayout::to_string() const {
  switch (kind_) {
    case Kind::RowMajor: return "row-major";
    case Kind::MmaSwizzle: return "swizzled";
    case Kind::Panels: return std::to_string(panel_bytes_) + "-byte panels";
    case Kind::User: break;
  }
  std::string args;
  for (size_t d = 0; d < vars_.size(); ++d) args += (d ? ", " : "") + ir::to_string(vars_[d]);
  return "layout (" + args + ") -> " + ir::to_string(offset_);
}

namespace {

std::vector<int64_t> constant_shape(const BufferNode& b) {
  std::vector<int64_t> shape;
  for (const Expr& d : b.shape) {
    int64_t e;
    if (!is_const_int(simplify(d), &e))
      throw std::logic_error("SharedLayout: buffer '" + b.name + "' has a symbolic shape");
    shape.push_back(e);
  }
  return shape;
}

template <typename Make>
SharedLayoutRef layout_of(const BufferNode& b, Make make) {
  try {
    return make(constant_shape(b));
  } catch (const std::invalid_argument& e) {
    throw std::logic_error("SharedLayout of buffer '" + b.name + "': " + e.what());
  }
}

}  // namespace

SharedLayoutRef mma_swizzle_of(const BufferNode& b) {
  return layout_of(b, [&](std::vector<int64_t> shape) { return SharedLayout::mma_swizzle(shape, b.dtype.bytes()); });
}

SharedLayoutRef panels_of(const BufferNode& b, int64_t panel_bytes) {
  return layout_of(b, [&](std::vector<int64_t> shape) {
    return SharedLayout::panels(shape, b.dtype.bytes(), panel_bytes);
  });
}

int64_t panel_width(const BufferNode& b) { return b.layout ? b.layout->panel_bytes() : 0; }

bool mma_swizzled(const BufferNode& b) { return b.layout && b.layout->kind() == SharedLayout::Kind::MmaSwizzle; }

bool has_user_layout(const BufferNode& b) { return b.layout && b.layout->kind() == SharedLayout::Kind::User; }

bool user_layout_differs(const BufferNode& b, const SharedLayout& wanted) {
  return has_user_layout(b) && !b.layout->same_offsets(wanted);
}

std::string user_layout_origin(const BufferNode& b) {
  if (!b.layout->origin().empty()) return b.layout->origin();
  const SourceLoc& loc = b.layout->loc();
  return "the layout T.annotate_layout gave it" + (loc.valid() ? " (T.Layout at " + loc.str() + ")" : std::string());
}

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

namespace {

// Tiles in the mma swizzle or in panels: their patterns repeat every 1024 bytes (TMA and
// wgmma descriptors count on a tile starting a period) and span whole 128-byte lines.
bool in_device_layout(const BufferNode& b) { return mma_swizzled(b) || panel_width(b); }

}  // namespace

int64_t shared_footprint(const BufferNode& b) {
  int64_t count = 1;
  for (const auto& d : b.shape) {
    int64_t v;
    if (!is_const_int(d, &v)) return -1;
    count *= v;
  }
  return round_up(count * b.dtype.bytes(), in_device_layout(b) ? 128 : 16);
}

int64_t shared_alignment(const BufferNode& b) { return in_device_layout(b) ? 1024 : 128; }

}  // namespace tilec::ir
