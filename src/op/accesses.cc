#include "op/accesses.h"

#include "op/op.h"

namespace tilec::op {

void Accesses::visit(const ir::Stmt& s) {
  if (s && is_tile_op(s.kind())) {
    Regions r = regions_of(*s);
    for (const ir::BufferRegion& region : r.reads) note(region.buffer, &reads);
    for (const ir::BufferRegion& region : r.writes) note(region.buffer, &writes);
  }
  // On into the op's index expressions and values, whose loads are reads too.
  IRVisitor::visit(s);
}

void Accesses::visit_BufferLoad(const ir::BufferLoad* op) {
  note(op->buffer, &reads);
  IRVisitor::visit_BufferLoad(op);
}

void Accesses::visit_BufferStore(const ir::BufferStore* op) {
  note(op->buffer, &writes);
  IRVisitor::visit_BufferStore(op);
}

void Accesses::note(const ir::Buffer& b, BufferSet* set) const {
  // A view's elements are its buffer's (BufferNode::view_of).
  if (b && (!scope_ || b->scope == *scope_)) set->insert(b->view_of ? b->view_of.get() : b.get());
}

}  // namespace tilec::op
