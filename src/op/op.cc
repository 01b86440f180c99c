#include "op/op.h"

#include <stdexcept>

#include "op/atomic_add.h"
#include "op/copy.h"
#include "op/cumsum.h"
#include "op/fill.h"
#include "op/gemm.h"
#include "op/gemv.h"
#include "op/reduce.h"

namespace tilec::op {

bool is_tile_op(ir::StmtKind kind) {
  switch (kind) {
#define TILEC_TILE_OP_CASE(n) case ir::StmtKind::n:
    TILEC_FOR_EACH_TILE_OP(TILEC_TILE_OP_CASE)
#undef TILEC_TILE_OP_CASE
    return true;
    default: return false;
  }
}

Regions regions_of(const ir::StmtNode& op) {
  switch (op.kind) {
#define TILEC_TILE_OP_REGIONS(n) \
  case ir::StmtKind::n: return regions(static_cast<const ir::n&>(op));
    TILEC_FOR_EACH_TILE_OP(TILEC_TILE_OP_REGIONS)
#undef TILEC_TILE_OP_REGIONS
    default: throw std::logic_error(std::string("regions_of: ") + ir::kind_name(op.kind) + " is not a tile op");
  }
}

LayoutConstraints layout_constraints_of(const ir::StmtNode& op) {
  switch (op.kind) {
#define TILEC_TILE_OP_CONSTRAINTS(n) \
  case ir::StmtKind::n: return layout_constraints(static_cast<const ir::n&>(op));
    TILEC_FOR_EACH_TILE_OP(TILEC_TILE_OP_CONSTRAINTS)
#undef TILEC_TILE_OP_CONSTRAINTS
    default:
      throw std::logic_error(std::string("layout_constraints_of: ") + ir::kind_name(op.kind) + " is not a tile op");
  }
}

ir::Stmt lower_of(const ir::Stmt& op, Lowering& l) {
  switch (op.kind()) {
#define TILEC_TILE_OP_LOWER(n) \
  case ir::StmtKind::n: return lower(static_cast<const ir::n&>(*op), op, l);
    TILEC_FOR_EACH_TILE_OP(TILEC_TILE_OP_LOWER)
#undef TILEC_TILE_OP_LOWER
    default: throw std::logic_error(std::string("lower_of: ") + ir::kind_name(op.kind()) + " is not a tile op");
  }
}

}  // namespace tilec::op
