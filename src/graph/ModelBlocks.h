//===- ModelBlocks.h - A model's repeated blocks of layers -----*- C++ -*-===//
//
// A transformer's 12 layers, ResNet's bottlenecks: the longest run of one
// sequence of layers (nn.Module ranges, or operators where the trace has
// none) repeated back to back at one depth of the module hierarchy. The
// language gives them as `trace.blocks` and `model_blocks(min_layers)`,
// each with its layers and its tasks; std.layers repeats or drops them.
//
// The search, per depth: the layers of that depth in order, each named by
// its base ("h.3" and "GPT2Block#2" count as "h" and "GPT2Block"); a
// period p is worth trying where some name recurs p layers later (its 1st
// to 4th next occurrence); for each p, the runs where every layer's name
// is the name p layers on, at least p long: k = (run + p) / p blocks.
// Of the runs holding at least a tenth of the GPU time (kernels and
// communication), the one of most blocks wins (ResNet-50's six bottlenecks
// of its third stage, not a longer sequence seen twice); among as many,
// the one holding more GPU time; where no run holds a tenth, the one
// holding most. Cost: near-linear in the layers (the periods tried come
// from each name's next occurrences).
//
//===----------------------------------------------------------------------===//
#ifndef DD_GRAPH_MODELBLOCKS_H
#define DD_GRAPH_MODELBLOCKS_H

#include "graph/Graph.h"

#include <string>
#include <string_view>
#include <vector>

namespace dd::graph {

struct ModelBlocks {
  /// The run: Count blocks of Period layers each, in order (block B is
  /// Layers[B * Period .. (B + 1) * Period)). Empty where none repeats.
  std::vector<LayerId> Layers;
  uint32_t Period = 0, Count = 0;
  /// The GPU time of the run's layers and their children (live kernels,
  /// copies, sets and communication), and of the whole graph (kernels
  /// and communication; at least 1).
  int64_t GpuTime = 0, AllGpuTime = 1;
};

/// The model's repeated blocks in \p G: runs of blocks of \p MinLayers
/// layers or more.
ModelBlocks findModelBlocks(const Graph &G, unsigned MinLayers);

/// A layer name's base: up to a '#', less trailing digits (keeping the
/// first character) and then one '_' or '.' before them: "h.3" -> "h",
/// "GPT2Block#2" -> "GPT2Block", "layer_10" -> "layer".
std::string_view layerBaseName(std::string_view Name);

} // namespace dd::graph

#endif
