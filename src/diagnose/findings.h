// kiln/diagnose: findings: structured records that print as text and serialise as JSON.
//
// A Finding names a rule, a severity, the kernel, the evidence (metric -> value, with the threshold
// it crossed), a message, and the moves that address it (the search turns moves into rewrites).
//
// Roadmap: Move is a closed enum so the search can map each to rewrites; its string names are
// stable (they appear in JSON and golden files).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::diagnose {

enum class Move {
  kBiggerTiles,
  kSmallerTiles,
  kMoreWarps,
  kFewerWarps,
  kMoreStages,
  kFewerStages,
  kGroupMSwizzle,
  kSplitK,
  kPersistentGrid,
  kEvictionHints,
  kPrecision,
  kMultipleRowsPerProgram,
  kFuse,
  kCoalesceAccess,  // reorder/transposed indexing so consecutive lanes read consecutive addresses
  kTileShape,       // change the tile's shape (e.g. for shared-memory bank conflicts)
};
const char* MoveName(Move m);
std::optional<Move> MoveFromName(const std::string& s);
// The move that undoes `m` (bigger/smaller tiles, more/fewer warps, more/fewer stages,
// multiple rows per program / smaller tiles), if any.
std::vector<Move> OpposingMoves(Move m);

enum class FindingSeverity { kInfo, kMinor, kMajor };
const char* SeverityName(FindingSeverity s);

struct Evidence {
  std::string metric;  // ncu metric name or a derived quantity ("roofline.fraction_of_roof")
  double value = 0;
  std::string unit;  // "%", "byte/second", "second", "" ...
  std::optional<double> threshold;
  std::string op;  // how value compares to threshold: "<", ">=", ...
};

struct Finding {
  std::string rule;  // stable id: "memory_bound_headroom", "dominant_stall_long_scoreboard", ...
  FindingSeverity severity = FindingSeverity::kMinor;
  std::string kernel;
  std::vector<Evidence> evidence;
  std::string message;
  std::vector<Move> moves;
  bool is_class = false;  // the top-level classification finding
};

nlohmann::json ToJson(const Evidence& e);
nlohmann::json ToJson(const Finding& f);
// One finding as text: "[major] memory_bound_headroom: message\n    evidence...\n    moves: ..."
std::string FormatFinding(const Finding& f);

}  // namespace kiln::diagnose
