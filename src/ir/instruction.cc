#include "ir/instruction.h"

namespace tilec::ir {
namespace {

std::string grid(int64_t m, int64_t n, const char* of) {
  return std::to_string(m) + "x" + std::to_string(n) + " " + of;
}

std::string shared_operand(const char* name, int64_t panel_bytes, bool swizzled) {
  if (panel_bytes) return std::string(", ") + name + " in " + std::to_string(panel_bytes) + "-byte panels";
  return swizzled ? std::string(", ") + name + " swizzled" : std::string();
}

}  // namespace

std::string to_string(const GemmInstruction& in) {
  std::string text;
  std::string shape = "m" + std::to_string(in.inst_m) + "n" + std::to_string(in.inst_n) + "k" + std::to_string(in.inst_k);
  switch (in.kind) {
    case GemmInstructionKind::Unselected: return "";
    case GemmInstructionKind::Fma: return "fma loops";
    case GemmInstructionKind::MmaSync: text = "mma.sync " + shape; break;
    case GemmInstructionKind::Wgmma: text = "wgmma " + shape; break;
    case GemmInstructionKind::Mfma:
      text = "mfma " + std::to_string(in.inst_m) + "x" + std::to_string(in.inst_n) + "x" + std::to_string(in.inst_k);
      break;
  }
  if (in.a_in_registers) text += ", A in registers";
  if (in.b_in_registers) text += ", B in registers";
  text += shared_operand("A", in.a_panel_bytes, in.a_swizzled) + shared_operand("B", in.b_panel_bytes, in.b_swizzled);
  const char* of = in.kind == GemmInstructionKind::Wgmma ? "warpgroups"
                   : in.kind == GemmInstructionKind::Mfma ? "waves"
                                                          : "warps";
  text += ", " + grid(in.grid_m, in.grid_n, of);
  if (in.take_turn) text += ", takes the turn on barrier " + std::to_string(in.take_turn) + " + warpgroup";
  if (in.pass_turn) text += ", passes it on barrier " + std::to_string(in.pass_turn + 1) + " - warpgroup";
  return text;
}

std::string to_string(const CopyInstruction& in) {
  auto swizzle = [&] {
    return in.panel_bytes == 16 ? std::string("16-byte panels, no swizzle")
                                : std::to_string(in.panel_bytes) + "-byte swizzle";
  };
  switch (in.kind) {
    case CopyInstructionKind::Unselected: return "";
    case CopyInstructionKind::Loops: return "loops";
    case CopyInstructionKind::CpAsync: return "cp.async";
    case CopyInstructionKind::TmaLoad: return "tma load, " + swizzle();
    case CopyInstructionKind::TmaStore: return "tma store, " + swizzle();
    case CopyInstructionKind::TmaReduceAdd: return "tma reduce-add, " + swizzle();
    case CopyInstructionKind::Ldmatrix: return "ldmatrix, " + grid(in.grid_m, in.grid_n, "warps");
    case CopyInstructionKind::Stmatrix:
      return "stmatrix, " + grid(in.grid_m, in.grid_n, "warpgroups") + ", " + std::to_string(in.panel_bytes) +
             "-byte panels";
  }
  return "";
}

}  // namespace tilec::ir
