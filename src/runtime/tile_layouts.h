// The layouts of a kernel's on-chip tiles as data (tilec::TileLayout): what tilec.plot_layout
// draws and Kernel::layouts() returns.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/layout.h"
#include "ir/shared_layout.h"
#include "tilec/tilec.h"

namespace tilec::runtime {

// The most elements, and thread-slot pairs of a fragment, a TileLayout is made of: enough
// for any tile a block holds on chip. More is a std::invalid_argument.
constexpr int64_t kMaxLayoutElements = int64_t{1} << 22;

TileLayout fragment_layout(std::string name, DType dtype, const ir::Fragment& fragment);
// `layout` null: compact row-major.
TileLayout shared_layout(std::string name, DType dtype, const std::vector<int64_t>& shape,
                         const ir::SharedLayout* layout);

// Every fragment and shared buffer `body` allocates with a constant shape (a view's own shape
// and layout; a fragment not yet given a layout is left out), in the order of the Allocates.
// The mbarriers of the compiler's pipelines are shared buffers too, but hold no tile: they are
// left out.
std::vector<TileLayout> tile_layouts(const ir::Stmt& body);

}  // namespace tilec::runtime
