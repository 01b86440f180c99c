// The compile flags a compile takes (CompileOptions::compile_flags, TileLang's
// jit(compile_flags=[...])): nvcc's command-line flags, read as what NVRTC, which builds tilec's
// CUDA kernels, makes of them.
//
//   {"-O3", "-DNDEBUG", "--ptxas-options=-v,--register-usage-level=10", "--use_fast_math",
//    "-Wno-deprecated-declarations", "--expt-relaxed-constexpr"}
//   -> nvrtc_options {"-DNDEBUG", "--ptxas-options=-v", "--ptxas-options=--register-usage-level=10"},
//      fast_math true; -O3, -Wno-... and --expt-relaxed-constexpr logged at DEBUG as having no
//      effect under NVRTC.
//
// A flag is one of:
//   - passed to NVRTC in its own spelling: -D/--define-macro, -U/--undefine-macro,
//     -I/--include-path (value attached, after '=', or the next flag), --maxrregcount, --ftz,
//     --prec-div, --prec-sqrt, --fmad, --std, --diag-suppress/--diag-error/--diag-warn (value
//     after '=' or the next flag; one dash works too), -G/--device-debug, -w/--disable-warnings,
//     --restrict, --extra-device-vectorization; --ptxas-options/-Xptxas with nvcc's
//     comma-separated list becomes one --ptxas-options per item (NVRTC hands ptxas one each);
//   - --use_fast_math (-use_fast_math): the "tilec.fast_math" switch, which adds NVRTC's own;
//   - -lineinfo/--generate-line-info: on already in every tilec build;
//   - nvcc's alone, accepted with no effect and logged at DEBUG: -O<n> (nvcc's host
//     optimization level; NVRTC optimizes device code fully and refuses -O), -W<anything> (host
//     compiler warnings), --expt-relaxed-constexpr, --expt-extended-lambda, --extended-lambda
//     (language extensions NVRTC lacks and tilec's generated code does not use),
//     -Xcompiler/--compiler-options (takes a value), -v/--verbose, -keep/--keep,
//     -res-usage/--resource-usage;
//   - refused: -arch/--gpu-architecture, -code/--gpu-code, -gencode/--generate-code (tilec
//     builds for the compile's arch), and any flag not listed here.
#pragma once

#include <string>
#include <vector>

namespace tilec::runtime {

struct NvrtcFlags {
  std::vector<std::string> nvrtc_options;  // in the order given
  bool fast_math = false;                  // --use_fast_math was given
};

// What `flags` ask NVRTC for. Flags with no effect are logged at DEBUG, each once a call. Throws
// std::invalid_argument naming the flag for a refused or unknown one, and for a flag that takes
// a value and was given none.
NvrtcFlags nvrtc_flags(const std::vector<std::string>& flags);

}  // namespace tilec::runtime
