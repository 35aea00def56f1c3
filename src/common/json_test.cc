#include "common/json.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

using nlohmann::json;

TEST(Json, ReadsPresentFieldsOfTheRightType) {
  json j = json::parse(R"({"d": 2.5, "i": 7, "big": 9007199254740993, "s": "x", "o": {"a": 1}, "b": true})");
  EXPECT_EQ(JsonNumber(j, "d"), 2.5);
  EXPECT_EQ(JsonNumber(j, "i"), 7.0);
  EXPECT_EQ(JsonInt(j, "i"), 7);
  EXPECT_EQ(JsonInt(j, "d"), 2);                     // truncated
  EXPECT_EQ(JsonInt(j, "big"), 9007199254740993LL);  // exact, not through a double
  EXPECT_EQ(JsonString(j, "s"), "x");
  EXPECT_EQ(JsonObject(j, "o"), json({{"a", 1}}));
  EXPECT_TRUE(JsonBool(j, "b"));
}

TEST(Json, MissingOrMistypedIsAbsent) {
  json j = json::parse(R"({"n": null, "s": "3", "a": [1], "huge": 1e300, "neg": -2.7})");
  for (const char* k : {"n", "s", "a", "missing"}) {
    EXPECT_FALSE(JsonNumber(j, k).has_value()) << k;
    EXPECT_FALSE(JsonInt(j, k).has_value()) << k;
    EXPECT_EQ(JsonObject(j, k), json::object()) << k;
    EXPECT_TRUE(JsonBool(j, k, true)) << k;
    EXPECT_FALSE(JsonBool(j, k)) << k;
  }
  EXPECT_EQ(JsonString(j, "n"), "");
  EXPECT_EQ(JsonString(j, "missing"), "");
  EXPECT_FALSE(JsonInt(j, "huge").has_value());  // outside int64
  EXPECT_EQ(JsonInt(j, "neg"), -2);
}

TEST(Json, NonObjectsHaveNoFields) {
  for (const json& j : {json::array({1, 2}), json("s"), json(3), json(nullptr)}) {
    EXPECT_FALSE(JsonNumber(j, "k").has_value());
    EXPECT_EQ(JsonString(j, "k"), "");
    EXPECT_EQ(JsonObject(j, "k"), json::object());
  }
}

// A body of 400000 nested brackets killed kiln serve (nlohmann's copy and dump recurse per level):
// ParseJson discards anything nested deeper than kMaxJsonDepth, counted without recursion.
TEST(Json, DeepNestingIsDiscardedBeforeAnyRecursion) {
  EXPECT_EQ(JsonDepth(R"({"a": [1, {"b": "[[[{{{"}], "c": "\"]"})"), 3);
  EXPECT_EQ(JsonDepth("[]"), 1);
  EXPECT_EQ(JsonDepth("3"), 0);
  std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  nlohmann::json j = ParseJson(ok);
  ASSERT_FALSE(j.is_discarded());
  nlohmann::json copy = j;  // the recursive operations a request goes through
  EXPECT_EQ(copy.dump().size(), ok.size());
  const int n = 400000;
  EXPECT_TRUE(ParseJson(std::string(n, '[') + std::string(n, ']')).is_discarded());
  EXPECT_TRUE(ParseJson("{\"items\": " + std::string(n, '{') + "}").is_discarded());
  EXPECT_TRUE(ParseJson("{\"a\": ").is_discarded());  // and bad JSON as before
  EXPECT_EQ(ParseJson(R"({"a": [1, 2]})")["a"][1], 2);
}

}  // namespace
}  // namespace kiln
