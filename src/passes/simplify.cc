#include "passes/simplify.h"

#include "ir/simplify.h"

namespace tilec::passes {

ir::Stmt simplify(const ir::Stmt& body, const PassContext&) { return ir::simplify(body); }

}  // namespace tilec::passes
