// T.reduce_sum/max/min/abssum/absmax (ir::Reduce): dst = reduce(src) over one dim.
#pragma once

#include "op/op.h"

namespace tilec::op {

// Without clear the reduction is combined with what dst held: dst is read too.
Regions regions(const ir::Reduce& op);

}  // namespace tilec::op
