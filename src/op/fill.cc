#include "op/fill.h"

namespace tilec::op {

Regions regions(const ir::Fill& op) { return {{}, {op.dst}}; }

}  // namespace tilec::op
