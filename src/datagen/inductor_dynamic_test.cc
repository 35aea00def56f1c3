// The dynamic-shape conversion: size arithmetic, symbol binding, the prologue, grids (each reject reason);
// the candidates of the dynamic captures recorded with Inductor's Triton CPU backend
// (tests/datagen/dynamic_cpu/, tests/datagen/record_dynamic_cpu.py), one of them golden.
// KILN_UPDATE_GOLDEN=1 rewrites the golden file.
#include "datagen/inductor_dynamic.h"

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "common/file.h"
#include "common/strings.h"
#include "datagen/inductor.h"
#include "datagen/inductor_test_data.h"

namespace kiln::datagen {
namespace {

namespace fs = std::filesystem;

using test_data::kData;

// The expression of `x = <expr>` parsed, translated with s0, s1, ks (-> ks_0) bound.
Result<std::string> Translate(const std::string& expr) {
  KILN_ASSIGN_OR_RETURN(auto tree, pyast::Tree::Parse("x = " + expr + "\n"));
  pyast::Node e = tree->root().named_child(0).named_child(0).field("right");
  return TranslateSizeExpression(e, [](std::string_view id) -> std::optional<std::string> {
    if (id == "s0" || id == "s1") return std::string(id);
    if (id == "ks") return std::string("ks_0");
    return std::nullopt;
  });
}

std::string Reason(const Status& st) { return st.message().substr(0, st.message().find(':')); }

TEST(DynamicSizeExpression, TranslatesInductorsSizeArithmetic) {
  EXPECT_EQ(*Translate("5*s0"), "5*s0");
  EXPECT_EQ(*Translate("((1 + s0) // 2)"), "((1 + s0) // 2)");
  EXPECT_EQ(*Translate("s0**2"), "s0**2");
  EXPECT_EQ(*Translate("(s1, 64*s0, 1)"), "(s1, 64*s0, 1)");
  EXPECT_EQ(*Translate("(s0, )"), "(s0,)");
  EXPECT_EQ(*Translate("max(1, s0 - 3)"), "max(1, s0 - 3)");
  EXPECT_EQ(*Translate("-ks % 4"), "-ks_0 % 4");
}

TEST(DynamicSizeExpression, RejectsWhatItDoesNotTranslate) {
  for (const char* e : {"s0 / 2", "s0 * 0.5", "math.floor(s0)", "s0 if s1 else 2", "s0 < s1", "f(s0)(1)",
                        "max(s0, key=s1)", "s0 & 1"}) {
    auto r = Translate(e);
    ASSERT_FALSE(r.ok()) << e;
    EXPECT_EQ(Reason(r.status()), "untranslated_size_expression") << e << ": " << r.status().message();
  }
  auto unbound = Translate("4*s9");
  ASSERT_FALSE(unbound.ok());
  EXPECT_EQ(Reason(unbound.status()), "unbound_symbol");
  EXPECT_TRUE(Contains(unbound.status().message(), "s9"));
}

Result<SymbolTable> Bind(const std::string& body) {
  std::string src = "def call(args):\n" + body;
  KILN_ASSIGN_OR_RETURN(auto tree, pyast::Tree::Parse(src));
  pyast::Node def = tree->root().named_child(0);
  return BindSymbols(def.field("body"), {{"arg2_1", "x"}, {"arg3_1", "y"}});
}

TEST(DynamicSymbols, BindsSymbolsFromTheInputsAssertedSizes) {
  auto t = Bind(
      "    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1 = args\n"
      "    s77 = arg0_1\n    s27 = arg1_1\n"
      "    assert_size_stride(arg2_1, (s77, s27, 64), (64*s27, 64, 1))\n"
      "    assert_size_stride(arg3_1, (s77, 1), (1, 1))\n"
      "    assert_size_stride(arg4_1, (64, ), (1, ))\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->symbols.at("s77"), "x.size(0)");
  EXPECT_EQ(t->symbols.at("s27"), "x.size(1)");
  EXPECT_EQ(t->order, (std::vector<std::string>{"s77", "s27"}));
  EXPECT_EQ(t->int_args.at("arg0_1"), "s77");
  EXPECT_EQ(t->int_args.at("arg1_1"), "s27");
  ASSERT_EQ(t->inputs.size(), 2u);  // arg4_1 is a weight: no guard
  std::vector<std::string> want = {
      "if x.dim() != 3 or x.size(2) != 64:",
      "    raise ValueError(f\"the kernels take x of shape (s77, s27, 64) (s...: any size), got {tuple(x.shape)}\")",
      "if y.dim() != 2 or y.size(1) != 1:",
      "    raise ValueError(f\"the kernels take y of shape (s77, 1) (s...: any size), got {tuple(y.shape)}\")",
      "s77 = x.size(0)",
      "s27 = x.size(1)",
      "if y.size(0) != s77:",
      "    raise ValueError(f\"y.size(0) must equal x.size(0) ({s77}), got {y.size(0)}\")"};
  EXPECT_EQ(DynamicPrologue(*t), want);
}

TEST(DynamicSymbols, BindsSymbolsFromSizeCallsAndDropsUnusedOnes) {
  auto t = Bind(
      "    s77 = arg0_1\n    arg2_1_size = arg2_1.size()\n    s4 = arg2_1_size[0]\n    s9 = arg3_1.size(1)\n"
      "    assert_size_stride(arg2_1, (s4, 8), (8, 1))\n    buf0 = empty_strided_cpu((s4, s9), (s9, 1))\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->symbols.at("s4"), "x.size(0)");
  EXPECT_EQ(t->symbols.at("s9"), "y.size(1)");
  EXPECT_FALSE(t->symbols.count("s77"));  // named by nothing but its own binding: dropped
  EXPECT_TRUE(t->int_args.empty());
  EXPECT_EQ(t->prologue_names, (std::set<std::string>{"s77", "arg2_1_size", "s4", "s9"}));
}

TEST(DynamicSymbols, RejectsSymbolsNoInputDimIs) {
  auto t = Bind("    s5 = arg0_1\n    assert_size_stride(arg2_1, (4, ), (1, ))\n    buf0 = empty_strided_cpu((s5, ), (1, ))\n");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(Reason(t.status()), "unbound_symbol") << t.status().message();
  auto expr = Bind("    s5 = arg0_1\n    assert_size_stride(arg2_1, (2*s5, ), (1, ))\n");
  ASSERT_FALSE(expr.ok());
  EXPECT_EQ(Reason(expr.status()), "untranslated_size_expression") << expr.status().message();
}

TEST(DynamicGrid, FromTheGridTypeAndTheRecordedBlockSizes) {
  nlohmann::json cfg = {{"XBLOCK", 8}, {"YBLOCK", 16}, {"ZBLOCK", 1}, {"R0_BLOCK", 64}};
  std::map<std::string, std::string> numels = {{"xnumel", "s0*s1"}, {"ynumel", "64"}, {"znumel", "s0"}};
  EXPECT_EQ(LaunchGrid("Grid1D", numels, cfg)->grid, "(triton.cdiv(s0*s1, 8), 1, 1)");
  EXPECT_EQ(LaunchGrid("Grid2D", numels, cfg)->grid, "(triton.cdiv(s0*s1, 8), 4, 1)");  // 64 / 16 folded
  EXPECT_EQ(LaunchGrid("Grid3D", numels, cfg)->grid, "(triton.cdiv(s0*s1, 8), 4, s0)");  // ZBLOCK 1: the numel
  EXPECT_EQ(LaunchGrid("Grid1D", {{"xnumel", "s0"}}, nlohmann::json::object())->grid, "(s0, 1, 1)");  // no XBLOCK
  EXPECT_TRUE(LaunchGrid("Grid2D", numels, cfg)->prefix.empty());
  // y blocks past 65535 go to z: constants folded, symbolic sizes through named lines
  auto folded = LaunchGrid("Grid2DWithYZOverflow", {{"xnumel", "8"}, {"ynumel", "2097136"}}, cfg, "k");  // 131071 y blocks
  EXPECT_EQ(folded->grid, "(1, 43691, 3)");
  EXPECT_TRUE(folded->prefix.empty());
  auto sym = LaunchGrid("Grid2DWithYZOverflow", {{"xnumel", "s1"}, {"ynumel", "s0*s1"}}, cfg, "k");
  EXPECT_EQ(sym->prefix, (std::vector<std::string>{"y_blocks_k = triton.cdiv(s0*s1, 16)",
                                                   "z_blocks_k = triton.cdiv(y_blocks_k, 65535)"}));
  EXPECT_EQ(sym->grid, "(triton.cdiv(s1, 8), triton.cdiv(y_blocks_k, z_blocks_k), z_blocks_k)");
  for (const char* g : {"FixedGrid", "SplitScanGrid", "CooperativeReductionGrid", ""}) {
    auto r = LaunchGrid(g, numels, cfg);
    ASSERT_FALSE(r.ok()) << g;
    EXPECT_EQ(Reason(r.status()), "grid_type_unsupported") << g;
  }
  auto no_numel = LaunchGrid("Grid2D", {{"xnumel", "s0"}}, cfg);
  ASSERT_FALSE(no_numel.ok());
  EXPECT_EQ(Reason(no_numel.status()), "grid_type_unsupported");
  EXPECT_EQ(GridType("@triton_heuristics.pointwise(inductor_meta={'grid_type': 'Grid2D', 'x': 1})"), "Grid2D");
  EXPECT_EQ(GridType("@triton.jit"), "");
}

std::map<std::string, nlohmann::json> DynamicCaptures() { return test_data::Captures("dynamic_cpu/captures.jsonl"); }

// tests/datagen/programs (the static recordings' programs too) or dynamic_cpu/programs (composed for these).
std::string Program(const std::string& id) {
  auto t = ReadFile((kData / "programs" / (id + ".py")).string());
  if (!t.ok()) t = ReadFile((kData / "dynamic_cpu" / "programs" / (id + ".py")).string());
  return t.ok() ? *t : "";
}

TEST(DynamicConversion, CpuBackendRecordingsConvertToShapeGenericCandidates) {
  auto caps = DynamicCaptures();
  ASSERT_EQ(caps.size(), 24u);
  int converted = 0;
  for (const auto& [id, cap] : caps) {
    Conversion c = ConvertCapture(Program(id), cap);
    if (id == "comp_5_00014" || id == "comp_5_00015") {  // bmm: the CPU backend has no Triton template for it
      EXPECT_EQ(c.reason, "extern_kernel") << id << ": " << c.message;
      continue;
    }
    ASSERT_FALSE(Program(id).empty()) << id;
    ASSERT_TRUE(c.ok) << id << ": " << c.reason << ": " << c.message;
    ++converted;
    EXPECT_TRUE(c.dynamic) << id;
    ASSERT_FALSE(c.symbols.empty()) << id;
    EXPECT_TRUE(EndsWith(c.symbols[0], " = x.size(0)")) << id << ": " << c.symbols[0];  // the batch is a symbol
    for (const char* banned : {"empty_strided_cpu", "get_raw_stream", "set_driver_to_cpu", "triton_helpers",
                               "reinterpret_tensor", "arg0_1", "of shape (2,", "of shape (3,", "of shape (4,"})
      EXPECT_FALSE(Contains(c.source, banned)) << id << " still has " << banned;
    EXPECT_TRUE(std::regex_search(c.source, std::regex(R"(\w\[\((triton\.cdiv\(|[a-z_]))")))
        << id << ": no grid computed from the sizes";
  }
  EXPECT_EQ(converted, 22);
  // x and y share the batch symbol: bound from x, checked on y; y0's own symbol is dropped (nothing uses it)
  Conversion two = ConvertCapture(Program("comp_77_00026"), caps.at("comp_77_00026"));
  EXPECT_TRUE(Contains(two.source, "if y0.size(0) != ")) << two.source;
  // a transposed copy: Grid2DWithYZOverflow, y blocks spread over y and z
  Conversion yz = ConvertCapture(Program("comp_77_00005"), caps.at("comp_77_00005"));
  EXPECT_TRUE(Contains(yz.source, "z_blocks_0 = triton.cdiv(")) << yz.source;
  // golden: a looped reduction (log_softmax + logsumexp) whose row length is a kernel argument (ks0), and a
  // transposed copy (Grid2DWithYZOverflow) of a strided slice, whose buffer sizes are `(1 + s53) // 2`
  for (const std::string id : {"comp_5_00007", "comp_77_00005"}) {
    Conversion g = ConvertCapture(Program(id), caps.at(id));
    fs::path golden = kData / "golden" / "dynamic" / (id + ".py");
    if (std::getenv("KILN_UPDATE_GOLDEN")) {
      fs::create_directories(golden.parent_path());
      ASSERT_TRUE(WriteFile(golden.string(), g.source).ok());
      continue;
    }
    auto want = ReadFile(golden.string());
    ASSERT_TRUE(want.ok()) << golden << " is missing (KILN_UPDATE_GOLDEN=1 writes it)";
    EXPECT_EQ(g.source, *want) << id;
  }
}

TEST(DynamicConversion, RejectsWithNamedReasons) {
  auto caps = DynamicCaptures();
  const nlohmann::json& cap = caps.at("comp_5_00007");
  std::string program = Program("comp_5_00007");
  auto with_code = [&](const std::string& from, const std::string& to) {
    nlohmann::json j = cap;
    std::string code = j["codes"][0];
    size_t at = code.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) code.replace(at, from.size(), to);
    j["codes"][0] = code;
    return ConvertCapture(program, j);
  };
  Conversion grid = with_code("'grid_type': 'Grid1D'", "'grid_type': 'SplitScanGrid'");
  EXPECT_EQ(grid.reason, "grid_type_unsupported") << grid.message;
  Conversion fixed_no_args = with_code("'grid_type': 'Grid1D'", "'grid_type': 'FixedGrid'");
  EXPECT_EQ(fixed_no_args.reason, "grid_type_unsupported") << fixed_no_args.message;
  // a template's FixedGrid: the launch's three trailing arguments, translated, are the grid
  nlohmann::json fixed = cap;
  std::string code = fixed["codes"][0];
  for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"'grid_type': 'Grid1D'", "'grid_type': 'FixedGrid'"},
           {"(buf4, arg2_1, s27, s77, s27,", "(buf4, arg2_1, s27, s77, s27, ((1 + s77) // 2), 1, 1,"}}) {
    size_t at = code.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    code.replace(at, from.size(), to);
  }
  fixed["codes"][0] = code;
  Conversion f = ConvertCapture(program, fixed);
  ASSERT_TRUE(f.ok) << f.reason << ": " << f.message;
  EXPECT_TRUE(Contains(f.source, "_0[(((1 + s77) // 2), 1, 1)](out, x, s27, s77, s27, R0_BLOCK=16")) << f.source;
  Conversion buffer = with_code("empty_strided_cpu((s77, 1), (1, s77)", "empty_strided_cpu((s77 / 2, 1), (1, s77)");
  EXPECT_EQ(buffer.reason, "untranslated_size_expression") << buffer.message;
  Conversion view = with_code("reinterpret_tensor(buf0, (s77, ), (1, ), 0)", "reinterpret_tensor(buf0, (s77, ), (1, ), s77 / 2)");
  EXPECT_EQ(view.reason, "untranslated_size_expression") << view.message;
  Conversion unbound = with_code("assert_size_stride(arg2_1, (s77, s27)", "assert_size_stride(arg2_1, (s77, 16)");
  EXPECT_EQ(unbound.reason, "unbound_symbol") << unbound.message;
  Conversion launch = with_code("(buf4, arg2_1, s27, s77, s27,", "(buf4, arg2_1, s27, math.floor(s77), s27,");
  EXPECT_EQ(launch.reason, "untranslated_size_expression") << launch.message;
  // the same capture read as static keeps its recorded grid and the full shape guard
  nlohmann::json stat = cap;
  stat["dynamic"] = false;
  Conversion s = ConvertCapture(program, stat);
  EXPECT_FALSE(s.dynamic);
  EXPECT_TRUE(Contains(s.source, "if tuple(x.shape) != (4, 16):")) << s.source;
}

}  // namespace
}  // namespace kiln::datagen
