#include "op/lowering.h"

namespace tilec::op {

using ir::Expr;
using ir::Stmt;

Stmt Lowering::nest(const std::vector<Expr>& vars, const std::vector<Expr>& extents, Stmt body,
                    ir::ForKind innermost) const {
  for (size_t i = vars.size(); i-- > 0;) {
    ir::ForKind kind = i + 1 == vars.size() ? innermost : ir::ForKind::Serial;
    if (threaded_) kind = ir::ForKind::Parallel;
    body = ir::make_for(vars[i], ir::make_int(0, vars[i]->dtype), ir::make_cast(vars[i]->dtype, extents[i]),
                        kind, body);
  }
  return body;
}

}  // namespace tilec::op
