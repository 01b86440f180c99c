// T.gemm's wg_wait and T.wait_wgmma (TileLang's asynchronous wgmma), made concrete for the
// target. A wgmma gemm (sm_90a) with wg_wait -1 issues and goes on, its accumulator (and its A
// operand, when in registers) in flight until a T.wait_wgmma(n) leaves at most n of the
// thread's wgmma groups pending; wg_wait n >= 0 is the gemm then T.wait_wgmma(n) (0: the
// gemm waits for itself, as every gemm does by default).
//
//   T.gemm(Q_s, K_s, S, wg_wait=-1)          T.gemm(Q_s, K_s, S, wg_wait=-1)
//   T.gemm(P, V_s, O, wg_wait=-1)      ->    T.gemm(P, V_s, O, wg_wait=-1)
//   T.wait_wgmma(1)                          wgmma_wait<1>(); fence_fragment<64>(&S[0, 0])
//
// After a wait, each fragment an asynchronous gemm of the launch (of the thread group, in a
// T.ws block) writes or reads is fenced: the C++ compiler must not move its reads or writes
// above the wait (the hardware writes an accumulator long after the wgmma instruction). Not the
// fragments of the n gemms issued last before a wait<n>, where the statements before it say
// which they are (above: P V's P and O): they are still in flight, and a fence, to ptxas a read
// and write of their registers, makes it serialize every wgmma of the kernel (C7514). Reading a
// fragment while its gemm is in flight is the program's error, as in TileLang. Every other gemm (mma.sync, MFMA, FMA loops,
// the CPU) finishes before the next statement: its wg_wait becomes 0 and the waits vanish.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt wgmma_waits(const ir::Stmt& body, const PassContext& ctx);

// Refuses (CompileError, with the gemm as a note) what would use an asynchronous gemm's result
// or operand before a wait, on every target alike (verify_source runs it on the elaborated
// source): a statement that reads or writes a fragment a gemm with wg_wait other than 0 earlier
// in the same list still uses, with no T.wait_wgmma between (a gemm's own wg_wait n > 0 leaves
// it in flight), or that surely writes part of a shared tile such a gemm reads (a region shown
// to meet it; one that may or may not, such as another stage's, is let be); a T.Pipelined loop
// iteration that ends with a gemm in flight (its stages are refilled there); and a launch with
// such a gemm but no T.wait_wgmma at all. Any wait ends the flight of every gemm before it, so
// that no correct program is refused; another asynchronous gemm adding into the same
// accumulator is the hardware's to order (one that clears it is refused). A serial loop or a
// branch entered with a gemm in flight is looked into, its body with what is in flight on
// entering (a loop's twice, the second time as its later iterations run it: a branch on its
// variable being its first value, clear_accum=(k == 0)'s, is left out), so that a loop may issue
// the next step's gemm, then wait for the last one's and read it.
void check_wgmma_flight(const ir::Stmt& body);

}  // namespace tilec::passes
