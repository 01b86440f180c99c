#include "op/copy.h"

namespace tilec::op {

Regions regions(const ir::Copy& op) { return {{op.src}, {op.dst}}; }

}  // namespace tilec::op
