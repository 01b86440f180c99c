#include "passes/split_launches.h"

#include <functional>
#include <string>

#include "base/diagnostics.h"

namespace tilec::passes {

std::vector<ir::PrimFunc> split_launches(const ir::PrimFunc& func, const std::string& target_name) {
  std::vector<ir::PrimFunc> parts;
  // `wrap` puts a block back inside the lets and allocations found around it so far.
  std::function<void(const ir::Stmt&, const std::function<ir::Stmt(ir::Stmt)>&)> visit =
      [&](const ir::Stmt& s, const std::function<ir::Stmt(ir::Stmt)>& wrap) {
        if (s.as<ir::KernelLaunch>()) {
          ir::PrimFunc part = func;
          part.body = wrap(s);
          parts.push_back(std::move(part));
        } else if (const auto* seq = s.as<ir::Seq>()) {
          for (const auto& inner : seq->stmts) visit(inner, wrap);
        } else if (const auto* let = s.as<ir::LetStmt>()) {
          ir::Expr var = let->var, value = let->value;
          visit(let->body, [&wrap, var, value](ir::Stmt body) { return wrap(ir::make_let(var, value, body)); });
        } else if (const auto* alloc = s.as<ir::Allocate>()) {
          ir::Buffer buffer = alloc->buffer;
          visit(alloc->body, [&wrap, buffer](ir::Stmt body) { return wrap(ir::make_allocate(buffer, body)); });
        } else if (s) {
          error_at(s->loc, "code outside `with T.Kernel(...)` runs on no GPU thread (target " + target_name +
                               "): move this statement into the kernel block");
        }
      };
  visit(func.body, [](ir::Stmt body) { return body; });
  if (parts.empty())
    error_at(func.loc, "function '" + func.name + "' has no `with T.Kernel(...)` block: a " + target_name +
                           " kernel runs its body in one");
  if (parts.size() == 1) parts[0] = func;
  return parts;
}

}  // namespace tilec::passes
