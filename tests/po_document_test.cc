// A .po file filled in: the untranslated messages (each plural form as a
// translator's tool lays them out) get their translations and the fuzzy
// mark, everything else stays byte for byte, and gettext's msgfmt --check
// accepts the result.
#include "common/formats/po_document.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/formats/po_reader.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using Strings = std::vector<std::string>;

const char kCatalog[] = R"po(# Chinese translations for demo.
msgid ""
msgstr ""
"Project-Id-Version: demo 1.0\n"
"Language: zh_CN\n"
"MIME-Version: 1.0\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Content-Transfer-Encoding: 8bit\n"
"Plural-Forms: nplurals=1; plural=0;\n"

#: src/main.c:10
#, c-format
msgid "Hello, %s!"
msgstr "你好，%s！"

#: src/main.c:12
#, c-format
msgid "Cannot open %s"
msgstr ""

msgctxt "menu"
msgid "&Save"
msgstr ""

#, c-format
msgid "%d file"
msgid_plural "%d files"
msgstr[0] ""

msgid ""
"A long message that a tool wrapped over two lines, "
"as msgmerge does."
msgstr ""
"一条被工具折成两行的长消息，"
"如 msgmerge 所做。"

#~ msgid "Old"
#~ msgstr ""
)po";

// True when gettext's msgfmt --check (fuzzy messages checked too) accepts
// `po`, written to a scratch folder of its own named `name`.
bool MsgfmtAccepts(const std::string& name, const std::string& po) {
  const std::string path = testing_util::MakeTempDir(name) + "/checked.po";
  std::ofstream(path, std::ios::binary) << po;
  const int status = std::system(
      ("msgfmt --check --use-fuzzy -o /dev/null " + path + " >/dev/null 2>&1")
          .c_str());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(PoDocumentTest, TranslatesTheUntranslatedMessagesOnly) {
  const PoDocument po(kCatalog);
  EXPECT_EQ(po.language(), "zh_CN");
  // One form in Chinese: the plural message's one msgstr reads for every
  // count, so it comes from the msgid_plural.
  EXPECT_EQ(po.texts(), (Strings{"Cannot open %s", "&Save", "%d files"}));
}

TEST(PoDocumentTest, WritesTranslationsMarkedFuzzyAndKeepsTheRest) {
  const PoDocument po(kCatalog);
  const std::string written =
      po.Write({"无法打开 %s", "保存(&S)", "%d 个文件"});
  std::string expected = kCatalog;
  const auto replace = [&expected](const std::string& from,
                                   const std::string& to) {
    const std::size_t at = expected.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    expected.replace(at, from.size(), to);
  };
  replace(
      "#: src/main.c:12\n#, c-format\nmsgid \"Cannot open %s\"\nmsgstr \"\"",
      "#: src/main.c:12\n#, fuzzy, c-format\nmsgid \"Cannot open %s\"\n"
      "msgstr \"无法打开 %s\"");
  replace("msgctxt \"menu\"\nmsgid \"&Save\"\nmsgstr \"\"",
          "#, fuzzy\nmsgctxt \"menu\"\nmsgid \"&Save\"\nmsgstr \"保存(&S)\"");
  replace(
      "#, c-format\nmsgid \"%d file\"\nmsgid_plural \"%d files\"\n"
      "msgstr[0] \"\"",
      "#, fuzzy, c-format\nmsgid \"%d file\"\nmsgid_plural \"%d files\"\n"
      "msgstr[0] \"%d 个文件\"");
  EXPECT_EQ(written, expected);

  // gettext's own check accepts it, and reads the fuzzy messages back.
  EXPECT_TRUE(MsgfmtAccepts("po_document", written));
  const GettextCatalog read = ReadPo(written);
  EXPECT_TRUE(read.entries.at(2).fuzzy);
  EXPECT_EQ(read.entries.at(2).translations, Strings{"无法打开 %s"});

  // Nothing translated (the model gave nothing): the file as it was.
  EXPECT_EQ(po.Write({"", "", ""}), kCatalog);
}

TEST(PoDocumentTest, PluralFormsAndLinesAsTheFileHasThem) {
  // Two forms, CRLF line ends, a byte order mark.
  const std::string catalog =
      "\xEF\xBB\xBFmsgid \"\"\r\nmsgstr \"Content-Type: text/plain; "
      "charset=UTF-8\\n\"\r\n\r\nmsgid \"One file\"\r\nmsgid_plural \"%d "
      "files\"\r\nmsgstr[0] \"\"\r\nmsgstr[1] \"\"\r\n";
  const PoDocument po(catalog);
  ASSERT_EQ(po.texts(), (Strings{"One file", "%d files"}));
  const std::string written = po.Write({"Ein \"Ding\"\nzwei", "%d Dinge"});
  EXPECT_EQ(written,
            "\xEF\xBB\xBFmsgid \"\"\r\nmsgstr \"Content-Type: text/plain; "
            "charset=UTF-8\\n\"\r\n\r\n#, fuzzy\r\nmsgid \"One file\"\r\n"
            "msgid_plural \"%d files\"\r\nmsgstr[0] \"\"\r\n\"Ein "
            "\\\"Ding\\\"\\n\"\r\n\"zwei\"\r\nmsgstr[1] \"%d Dinge\"\r\n");
  EXPECT_EQ(ReadPo(written).entries.at(1).translations,
            (Strings{"Ein \"Ding\"\nzwei", "%d Dinge"}));
}

// msgfmt wants "#," before "#|" (a previous msgid), and a message with a
// context and no msgid has nothing to translate.
TEST(PoDocumentTest, FuzzyGoesBeforeThePreviousMsgid) {
  const std::string catalog =
      "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=UTF-8\\n\"\n\n"
      "#: a.c:1\n#| msgid \"Old\"\nmsgid \"New\"\nmsgstr \"\"\n\n"
      "msgctxt \"c\"\nmsgid \"\"\nmsgstr \"\"\n";
  const PoDocument po(catalog);
  ASSERT_EQ(po.texts(), Strings{"New"});
  EXPECT_EQ(po.Write({"新"}),
            "msgid \"\"\nmsgstr \"Content-Type: text/plain; "
            "charset=UTF-8\\n\"\n\n#: a.c:1\n#, fuzzy\n#| msgid \"Old\"\nmsgid "
            "\"New\"\nmsgstr "
            "\"新\"\n\nmsgctxt \"c\"\nmsgid \"\"\nmsgstr \"\"\n");
  EXPECT_TRUE(MsgfmtAccepts("po_previous", po.Write({"新"})));
}

TEST(PoDocumentTest, StringsAreEscapedAsMsgfmtReadsThem) {
  EXPECT_EQ(PoString("a\"b\\c\td", "\n"), "\"a\\\"b\\\\c\\td\"");
  EXPECT_EQ(PoString("line\n", "\n"), "\"line\\n\"");
  EXPECT_EQ(PoString("one\ntwo\n", "\n"), "\"\"\n\"one\\n\"\n\"two\\n\"");
  EXPECT_EQ(PoString(std::string("\x01", 1), "\n"), "\"\\001\"");
  // msgfmt would end the string at a NUL: it is left out.
  EXPECT_EQ(PoString(std::string("a\0b", 3), "\n"), "\"ab\"");
  for (const std::string& text :
       Strings{"plain", "quote \" and \\ backslash", "two\nlines", "\a\b\f\v\r",
               "中文\n第二行\n", std::string("nul\x1F", 4)}) {
    const std::string po = "msgid \"x\"\nmsgstr " + PoString(text, "\n") + "\n";
    EXPECT_EQ(ReadPo(po).entries.at(0).translations.at(0), text) << po;
  }
}

TEST(PoDocumentTest, RefusesWhatItCannotFillIn) {
  EXPECT_THROW(PoDocument("msgid \"a\"\nmsgstr \"b\"\n"),
               std::invalid_argument);
  try {
    PoDocument(
        "msgid \"\"\nmsgstr \"Content-Type: text/plain; "
        "charset=ISO-8859-1\\n\"\n\nmsgid \"a\"\nmsgstr \"\"\n");
    ADD_FAILURE() << "accepted a Latin-1 catalog";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("msgconv -t UTF-8"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(PoDocument("msgid \"a\"\nmsgstr \"b\" x\n"),
               std::invalid_argument);
  EXPECT_THROW(PoDocument("msgid \"a\\0b\"\nmsgstr \"\"\n"),
               std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
