#include "ir/substitute.h"

#include "ir/mutator.h"

namespace tilec::ir {

namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}

 protected:
  Expr mutate_Var(const Var* op, const Expr& self) override {
    auto it = map_.find(op);
    return it == map_.end() ? self : it->second;
  }

 private:
  const VarMap& map_;
};

}  // namespace

Expr substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  return Substituter(map).mutate(e);
}

Stmt substitute(const Stmt& s, const VarMap& map) {
  if (map.empty()) return s;
  return Substituter(map).mutate(s);
}

Expr substitute(const Expr& e, const Expr& var, const Expr& value) {
  return substitute(e, VarMap{{var.get(), value}});
}

}  // namespace tilec::ir
