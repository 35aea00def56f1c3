#include "common/strings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kiln {
namespace {

TEST(Strings, StartsEndsContains) {
  EXPECT_TRUE(StartsWith("occupancy_limited_regs", "occupancy_limited_"));
  EXPECT_TRUE(StartsWith("abc", ""));
  EXPECT_FALSE(StartsWith("ab", "abc"));
  EXPECT_FALSE(StartsWith("xabc", "abc"));
  EXPECT_TRUE(EndsWith("BLOCK_D", "_D"));
  EXPECT_TRUE(EndsWith("abc", ""));
  EXPECT_FALSE(EndsWith("D", "_D"));
  EXPECT_FALSE(EndsWith("_Dx", "_D"));
  EXPECT_TRUE(Contains("input_precision='ieee'", "ieee"));
  EXPECT_FALSE(Contains("tf32", "ieee"));
}

TEST(Strings, TrimRemovesWhitespaceAtBothEndsOnly) {
  EXPECT_EQ(Trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(Trim("\v\fx"), "x");
  EXPECT_EQ(Trim("   "), "");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim("a"), "a");
}

TEST(Strings, HtmlEscapeEscapesBothQuotes) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x" title='y'>&amp;</a>)"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("plain text, 100% ok"), "plain text, 100% ok");
  EXPECT_EQ(HtmlEscape(""), "");
}

TEST(Strings, FormatDurationDefaultStyle) {  // exec's summary: milliseconds in, NaN unknown
  EXPECT_EQ(FormatDuration(0.0123, TimeUnit::kMilliseconds), "12.3 us");
  EXPECT_EQ(FormatDuration(1.23456, TimeUnit::kMilliseconds), "1.235 ms");
  EXPECT_EQ(FormatDuration(1.0, TimeUnit::kMilliseconds), "1.000 ms");
  EXPECT_EQ(FormatDuration(0, TimeUnit::kMilliseconds), "0.0 us");
  EXPECT_EQ(FormatDuration(NAN, TimeUnit::kMilliseconds), "?");
}

TEST(Strings, FormatDurationStyles) {
  DurationStyle report{.us_below_ms = 1.0, .us_decimals = 2, .ms_decimals = 3, .unknown = "n/a", .positive_only = true};
  EXPECT_EQ(FormatDuration(12.5e-6, TimeUnit::kSeconds, report), "12.50 us");
  EXPECT_EQ(FormatDuration(2.5e-3, TimeUnit::kSeconds, report), "2.500 ms");
  EXPECT_EQ(FormatDuration(0, TimeUnit::kSeconds, report), "n/a");
  EXPECT_EQ(FormatDuration(-1, TimeUnit::kSeconds, report), "n/a");
  EXPECT_EQ(FormatDuration(std::numeric_limits<double>::infinity(), TimeUnit::kSeconds, report), "n/a");
  DurationStyle search{.us_below_ms = 0.1, .us_decimals = 2, .ms_decimals = 4, .unknown = "-", .positive_only = true};
  EXPECT_EQ(FormatDuration(0.05, TimeUnit::kMilliseconds, search), "50.00 us");
  EXPECT_EQ(FormatDuration(0.5, TimeUnit::kMilliseconds, search), "0.5000 ms");
  EXPECT_EQ(FormatDuration(NAN, TimeUnit::kMilliseconds, search), "-");
}

TEST(Strings, SplitLines) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(SplitLines(""), V{});
  EXPECT_EQ(SplitLines("a"), V{"a"});
  EXPECT_EQ(SplitLines("a\n"), V{"a"});
  EXPECT_EQ(SplitLines("a\n\nb"), (V{"a", "", "b"}));
  EXPECT_EQ(SplitLines("a\r\nb\n\n"), (V{"a\r", "b", ""}));
  EXPECT_TRUE(IsBlankLine(""));
  EXPECT_TRUE(IsBlankLine(" \t\r"));
  EXPECT_FALSE(IsBlankLine(" x "));
}

TEST(Strings, NowIsoUtcIsIso8601ToTheSecond) {
  const std::string now = NowIsoUtc();
  ASSERT_EQ(now.size(), 20u) << now;
  for (size_t i : {4u, 7u}) EXPECT_EQ(now[i], '-') << now;
  EXPECT_EQ(now[10], 'T');
  EXPECT_EQ(now[13], ':');
  EXPECT_EQ(now[16], ':');
  EXPECT_EQ(now[19], 'Z');
  EXPECT_EQ(now.substr(0, 2), "20");
}

TEST(Strings, ParseDecimal) {
  EXPECT_EQ(ParseDecimal("42"), 42);
  EXPECT_EQ(ParseDecimal("-7"), -7);
  EXPECT_EQ(ParseDecimal("007"), 7);
  EXPECT_EQ(ParseDecimal("9223372036854775807"), INT64_MAX);
  EXPECT_FALSE(ParseDecimal("9223372036854775808"));  // past int64: absent, not a thrown out_of_range
  EXPECT_FALSE(ParseDecimal("99999999999999999999"));
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "1x", "0x10", "1_000", "1.5"}) EXPECT_FALSE(ParseDecimal(bad)) << bad;
}

}  // namespace
}  // namespace kiln
