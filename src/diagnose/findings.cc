#include "diagnose/findings.h"

#include <cmath>

#include <fmt/format.h>

namespace kiln::diagnose {

namespace {

struct MoveEntry {
  Move m;
  const char* name;
};
constexpr MoveEntry kMoves[] = {
    {Move::kBiggerTiles, "bigger_tiles"},
    {Move::kSmallerTiles, "smaller_tiles"},
    {Move::kMoreWarps, "more_warps"},
    {Move::kFewerWarps, "fewer_warps"},
    {Move::kMoreStages, "more_stages"},
    {Move::kFewerStages, "fewer_stages"},
    {Move::kGroupMSwizzle, "group_m_swizzle"},
    {Move::kSplitK, "split_k"},
    {Move::kPersistentGrid, "persistent_grid"},
    {Move::kEvictionHints, "eviction_hints"},
    {Move::kPrecision, "precision"},
    {Move::kMultipleRowsPerProgram, "multiple_rows_per_program"},
    {Move::kFuse, "fuse"},
    {Move::kCoalesceAccess, "coalesce_access"},
    {Move::kTileShape, "tile_shape"},
};

std::string FormatValue(double v, const std::string& unit) {
  if (unit == "%") return fmt::format("{:.1f}%", v);
  if (unit == "second") {
    if (v < 1e-3) return fmt::format("{:.2f} us", v * 1e6);
    return fmt::format("{:.3f} ms", v * 1e3);
  }
  if (unit == "byte/second") return fmt::format("{:.3f} TB/s", v / 1e12);
  if (unit == "flop/second") return fmt::format("{:.1f} TFLOP/s", v / 1e12);
  if (unit == "fraction") return fmt::format("{:.1f}%", v * 100);
  if (std::fabs(v) >= 1e6 || (v != 0 && std::fabs(v) < 1e-3)) return fmt::format("{:.4g}", v);
  if (v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

}  // namespace

const char* MoveName(Move m) {
  for (const auto& e : kMoves) {
    if (e.m == m) return e.name;
  }
  return "?";
}

std::optional<Move> MoveFromName(const std::string& s) {
  for (const auto& e : kMoves) {
    if (s == e.name) return e.m;
  }
  return std::nullopt;
}

std::vector<Move> OpposingMoves(Move m) {
  switch (m) {
    case Move::kBiggerTiles: return {Move::kSmallerTiles};
    case Move::kSmallerTiles: return {Move::kBiggerTiles, Move::kMultipleRowsPerProgram};
    case Move::kMoreWarps: return {Move::kFewerWarps};
    case Move::kFewerWarps: return {Move::kMoreWarps};
    case Move::kMoreStages: return {Move::kFewerStages};
    case Move::kFewerStages: return {Move::kMoreStages};
    case Move::kMultipleRowsPerProgram: return {Move::kSmallerTiles, Move::kSplitK};
    case Move::kSplitK: return {Move::kMultipleRowsPerProgram};
    default: return {};
  }
}

const char* SeverityName(FindingSeverity s) {
  switch (s) {
    case FindingSeverity::kInfo: return "info";
    case FindingSeverity::kMinor: return "minor";
    case FindingSeverity::kMajor: return "major";
  }
  return "?";
}

nlohmann::json ToJson(const Evidence& e) {
  nlohmann::json j{{"metric", e.metric}, {"value", e.value}, {"unit", e.unit}};
  if (e.threshold) {
    j["threshold"] = *e.threshold;
    j["op"] = e.op;
  }
  return j;
}

nlohmann::json ToJson(const Finding& f) {
  nlohmann::json ev = nlohmann::json::array();
  for (const auto& e : f.evidence) ev.push_back(ToJson(e));
  nlohmann::json mv = nlohmann::json::array();
  for (auto m : f.moves) mv.push_back(MoveName(m));
  return {{"rule", f.rule},       {"severity", SeverityName(f.severity)},
          {"kernel", f.kernel},   {"class", f.is_class},
          {"message", f.message}, {"evidence", ev},
          {"moves", mv}};
}

std::string FormatFinding(const Finding& f) {
  std::string s = fmt::format("[{}] {}: {}\n", SeverityName(f.severity), f.rule, f.message);
  for (const auto& e : f.evidence) {
    s += fmt::format("      {} = {}", e.metric, FormatValue(e.value, e.unit));
    if (e.threshold) s += fmt::format("  ({} {})", e.op, FormatValue(*e.threshold, e.unit));
    s += "\n";
  }
  if (!f.moves.empty()) {
    s += "      moves:";
    for (auto m : f.moves) s += std::string(" ") + MoveName(m);
    s += "\n";
  }
  return s;
}

}  // namespace kiln::diagnose
