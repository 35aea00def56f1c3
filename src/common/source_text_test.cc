#include "common/source_text.h"

#include <gtest/gtest.h>

#include "common/json_dump.h"

namespace kiln {
namespace {

TEST(SourceText, Utf8PassesThrough) {
  std::string s = "x = 'caf\xC3\xA9'\n";
  auto d = DecodePythonSourceDetailed(s);
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(d.text, s);
  EXPECT_EQ(d.encoding, "utf-8");
}

TEST(SourceText, ByteOrderMarkRemoved) {
  auto d = DecodePythonSourceDetailed("\xEF\xBB\xBFx = 1\n");
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(d.text, "x = 1\n");
  auto withcoding = DecodePythonSourceDetailed("\xEF\xBB\xBF# coding: utf-8\nx = 1\n");
  EXPECT_TRUE(withcoding.ok) << withcoding.error;
  auto bad = DecodePythonSourceDetailed("\xEF\xBB\xBF# coding: latin-1\nx = 1\n");
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.line, 1);
  EXPECT_NE(bad.error.find("byte-order mark"), std::string::npos) << bad.error;
}

TEST(SourceText, Latin1DeclarationConvertedAndRewritten) {
  auto d = DecodePythonSourceDetailed("# -*- coding: latin-1 -*-\ns = 'caf\xE9'\n");
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(d.encoding, "iso-8859-1");
  // The text is UTF-8 and says so, for Python reading it again.
  EXPECT_EQ(d.text, "# -*- coding: utf-8 -*-\ns = 'caf\xC3\xA9'\n");
}

TEST(SourceText, Cp1252OnSecondLineUnderAComment) {
  auto d = DecodePythonSourceDetailed("#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\ns = '\x80'\n");
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(d.encoding, "cp1252");
  EXPECT_NE(d.text.find("'\xE2\x82\xAC'"), std::string::npos);  // the euro sign
  // Undefined in cp1252: located error.
  auto bad = DecodePythonSourceDetailed("# coding: cp1252\nx = 1\ns = '\x81'\n");
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.line, 3);
  EXPECT_EQ(bad.column, 6);
  EXPECT_NE(bad.error.find("0x81"), std::string::npos) << bad.error;
}

TEST(SourceText, DeclarationAfterCodeIsNotOne) {
  // Line 2 counts only under a blank or comment line 1 (tokenize.detect_encoding).
  auto d = DecodePythonSourceDetailed("x = 1\n# coding: latin-1\ns = '\xE9'\n");
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.column, 6);
  EXPECT_NE(d.error.find("cannot decode byte 0xe9 as utf-8"), std::string::npos) << d.error;
}

TEST(SourceText, InvalidUtf8Located) {
  for (std::string bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82", "\xFF"}) {
    auto d = DecodePythonSourceDetailed("x = 1\ny = '" + bad + "'\n");
    EXPECT_FALSE(d.ok);
    EXPECT_EQ(d.line, 2);
    EXPECT_EQ(d.column, 6);
  }
}

TEST(SourceText, UnknownEncodingAndNul) {
  auto u = DecodePythonSourceDetailed("# coding: klingon-7\nx = 1\n");
  EXPECT_FALSE(u.ok);
  EXPECT_EQ(u.line, 1);
  EXPECT_EQ(u.column, 11);
  EXPECT_NE(u.error.find("unknown encoding 'klingon-7'"), std::string::npos) << u.error;
  auto n = DecodePythonSource(std::string("x = 1\ny = 2\0\nz = 3\n", 18), "c.py");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().message(), "c.py:2:6: error: source contains a NUL byte (not a Python source file)");
}

TEST(SourceText, DumpJsonReplacesInvalidUtf8) {
  nlohmann::json j{{"message", std::string("caf\xE9")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
  EXPECT_EQ(DumpJson(j), "{\"message\":\"caf\xEF\xBF\xBD\"}");
}

}  // namespace
}  // namespace kiln
