// Gettext catalogs read as gettext reads them: a .po file by ReadPo and by
// gettext's own libgettextpo, the .mo file gettext's msgfmt compiles from it
// by ReadMo, and the .po file msgunfmt writes back from that .mo, all give
// the same messages; what msgfmt refuses, ReadPo refuses too.
#include "common/formats/gettext_catalog.h"

#include <gettext-po.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/formats/mo_reader.h"
#include "common/formats/po_reader.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

// A catalog as translators' tools write one: a header, references, flags,
// a context, a fuzzy and an untranslated message, a plural message,
// escapes and an obsolete message.
const char kCatalog[] = R"po(# Chinese translations for demo.
msgid ""
msgstr ""
"Project-Id-Version: demo 1.0\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=1; plural=0;\n"

#: src/main.c:10
#, c-format
msgid "Hello, %s!"
msgstr "你好，%s！"

msgctxt "menu"
msgid "&File"
msgstr "文件(&F)"

#, fuzzy
msgid "Open"
msgstr "打开"

msgid "Save"
msgstr ""

#, c-format
msgid "One file"
msgid_plural "%d files"
msgstr[0] "%d 个文件"

msgid ""
"Line one\n"
"Line \"two\"\t\101\x42"
msgstr "第一行\n"
"第二行\t\101\x42"

#~ msgid "Old"
#~ msgstr "旧的"
)po";

std::string Write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

std::string Read(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file),
                     std::istreambuf_iterator<char>());
}

// Runs a shell command; its exit status.
int RunCommand(const std::string& command) {
  const int status = std::system((command + " 2>/dev/null").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// What a message means, for comparing readers.
using Meaning = std::tuple<bool, std::string, std::string, bool, std::string,
                           std::vector<std::string>, bool, bool>;

Meaning MeaningOf(const CatalogEntry& entry) {
  return {entry.has_context, entry.context,       entry.source,
          entry.has_plural,  entry.source_plural, entry.translations,
          entry.fuzzy,       entry.obsolete};
}

std::vector<Meaning> Meanings(const GettextCatalog& catalog,
                              bool compiled_only = false) {
  std::vector<Meaning> meanings;
  for (const CatalogEntry& entry : catalog.entries) {
    // msgfmt compiles neither fuzzy nor obsolete nor untranslated
    // messages.
    bool untranslated = true;
    for (const std::string& translation : entry.translations) {
      untranslated = untranslated && translation.empty();
    }
    if (compiled_only && (entry.fuzzy || entry.obsolete || untranslated)) {
      continue;
    }
    meanings.push_back(MeaningOf(entry));
  }
  return meanings;
}

// Sorted: msgfmt writes a .mo file's messages in msgid order.
std::vector<Meaning> Sorted(std::vector<Meaning> meanings) {
  std::sort(meanings.begin(), meanings.end());
  return meanings;
}

// Without the header, whose charset line a conversion changes.
std::vector<Meaning> Messages(std::vector<Meaning> meanings) {
  meanings.erase(meanings.begin());
  return meanings;
}

// The catalog at `path` as libgettextpo reads it.
std::vector<Meaning> GettextMeanings(const std::string& path) {
  static const auto fail = [](int, po_message_t, const char*, size_t, size_t,
                              int, const char* text) {
    ADD_FAILURE() << "libgettextpo: " << text;
  };
  static const auto fail2 = [](int, po_message_t, const char*, size_t, size_t,
                               int, const char* text, po_message_t, const char*,
                               size_t, size_t, int, const char*) {
    ADD_FAILURE() << "libgettextpo: " << text;
  };
  const po_xerror_handler handler{fail, fail2};
  po_file_t file = po_file_read(path.c_str(), &handler);
  std::vector<Meaning> meanings;
  if (file == nullptr) return meanings;
  po_message_iterator_t iterator = po_message_iterator(file, nullptr);
  while (po_message_t message = po_next_message(iterator)) {
    const char* context = po_message_msgctxt(message);
    const char* plural = po_message_msgid_plural(message);
    std::vector<std::string> translations;
    if (plural == nullptr) {
      translations.emplace_back(po_message_msgstr(message));
    } else {
      for (int k = 0; po_message_msgstr_plural(message, k) != nullptr; ++k) {
        translations.emplace_back(po_message_msgstr_plural(message, k));
      }
    }
    meanings.emplace_back(context != nullptr, context != nullptr ? context : "",
                          po_message_msgid(message), plural != nullptr,
                          plural != nullptr ? plural : "", translations,
                          po_message_is_fuzzy(message) != 0,
                          po_message_is_obsolete(message) != 0);
  }
  po_message_iterator_free(iterator);
  po_file_free(file);
  return meanings;
}

TEST(GettextCatalogTest, ReadsEveryKindOfMessage) {
  const GettextCatalog catalog = ReadPo(kCatalog);
  ASSERT_EQ(catalog.entries.size(), 8u);
  const CatalogEntry& header = catalog.entries[0];
  EXPECT_EQ(header.source, "");
  EXPECT_NE(header.translations.at(0).find("nplurals=1"), std::string::npos);
  EXPECT_EQ(catalog.entries[1].source, "Hello, %s!");
  EXPECT_EQ(catalog.entries[1].line_number, 10);
  EXPECT_TRUE(catalog.entries[2].has_context);
  EXPECT_EQ(catalog.entries[2].context, "menu");
  EXPECT_TRUE(catalog.entries[3].fuzzy);
  EXPECT_EQ(catalog.entries[4].translations, std::vector<std::string>{""});
  EXPECT_EQ(catalog.entries[5].source_plural, "%d files");
  EXPECT_EQ(catalog.entries[6].source, "Line one\nLine \"two\"\tAB");
  EXPECT_EQ(catalog.entries[6].translations.at(0), "第一行\n第二行\tAB");
  EXPECT_TRUE(catalog.entries[7].obsolete);
  EXPECT_EQ(catalog.entries[7].source, "Old");
}

TEST(GettextCatalogTest, TrainsOnTranslatedMessagesOnly) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const CatalogPair& pair : TrainingPairs(ReadPo(kCatalog))) {
    pairs.emplace_back(pair.source, pair.target);
  }
  EXPECT_EQ(pairs, (std::vector<std::pair<std::string, std::string>>{
                       {"Hello, %s!", "你好，%s！"},
                       {"&File", "文件(&F)"},
                       {"One file", "%d 个文件"},
                       {"%d files", "%d 个文件"},
                       {"Line one Line \"two\" AB", "第一行 第二行 AB"}}));
}

// The catalog through gettext's own tools: libgettextpo reads the same
// messages; msgfmt --check accepts it and compiles what ReadMo reads back;
// msgunfmt writes that .mo as a .po that ReadPo reads the same; msgconv
// writes it in GB2312, which ReadPo reads back as UTF-8.
TEST(GettextCatalogTest, AgreesWithGettextsOwnTools) {
  const fs::path directory = testing_util::MakeTempDir("gettext_catalog");
  const std::string po = Write(directory / "zh_CN.po", kCatalog);
  EXPECT_EQ(Meanings(ReadPo(kCatalog)), GettextMeanings(po));

  const std::string mo = (directory / "zh_CN.mo").string();
  ASSERT_EQ(RunCommand("msgfmt --check -o " + mo + " " + po), 0);
  const GettextCatalog compiled = ReadMo(Read(mo));
  EXPECT_EQ(Meanings(compiled), Sorted(Meanings(ReadPo(kCatalog), true)));

  const std::string back = (directory / "back.po").string();
  ASSERT_EQ(RunCommand("msgunfmt -o " + back + " " + mo), 0);
  EXPECT_EQ(Meanings(ReadPo(Read(back))), Meanings(compiled));
  EXPECT_EQ(Meanings(ReadPo(Read(back))), GettextMeanings(back));

  const std::string gb = (directory / "gb2312.po").string();
  ASSERT_EQ(RunCommand("msgconv -t GB2312 -o " + gb + " " + po), 0);
  ASSERT_NE(Read(gb), Read(po));  // Converted: other bytes.
  EXPECT_EQ(Messages(Meanings(ReadPo(Read(gb)))),
            Messages(Meanings(ReadPo(kCatalog))));
  const std::string gb_mo = (directory / "gb2312.mo").string();
  ASSERT_EQ(RunCommand("msgfmt -o " + gb_mo + " " + gb), 0);
  EXPECT_EQ(Messages(Meanings(ReadMo(Read(gb_mo)))),
            Messages(Meanings(compiled)));
}

// What msgfmt refuses, ReadPo refuses naming the line; and a message with
// more than 16 plural forms (no language has more than 6).
TEST(GettextCatalogTest, RefusesWhatMsgfmtRefuses) {
  const fs::path directory = testing_util::MakeTempDir("gettext_bad");
  std::string seventeen = "msgid \"a\"\nmsgid_plural \"b\"\n";
  for (int k = 0; k < 17; ++k) {
    seventeen += "msgstr[" + std::to_string(k) + "] \"x\"\n";
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"msgid \"a\"\n", "line 1"},
      {"msgstr \"a\"\n", "line 1: msgstr out of place"},
      {"msgid \"a\nmsgstr \"b\"\n", "line 1: a string without its closing"},
      {"msgid \"a\\q\"\nmsgstr \"b\"\n", "line 1: unknown escape \\q"},
      {"msgid \"a\"\nmsgid_plural \"b\"\nmsgstr[1] \"x\"\n",
       "line 3: expected msgstr[0]"},
      {"msgid \"a\"\nmsgstr \"b\" x\n", "line 2: text after"},
      {"msgid \"a\"\nmsgtxt \"b\"\n", "line 2: unknown keyword"},
      {"\"a\"\n", "line 1: a string continues no keyword"},
      {"msgid \"a\"\nmsgid_plural \"b\"\nmsgstr \"x\"\n",
       "line 3: a plural message needs msgstr[N]"},
      {"msgid \"a\"\n# note\nmsgstr \"b\"\n", "line 2: a comment inside"},
      {"msgid \"a\"\n#~ msgstr \"b\"\n", "line 2: inconsistent use of #~"},
      {"#~ msgid \"a\"\n\"b\"\n#~ msgstr \"c\"\n",
       "line 2: inconsistent use of #~"},
      {"msgid \"it\\'s\"\nmsgstr \"b\"\n", "line 1: unknown escape \\'"},
      {"msgctxt \"c\"\n", "line 1: the message has no msgstr"},
  };
  int k = 0;
  for (const auto& [text, message] : cases) {
    const std::string path =
        Write(directory / ("bad" + std::to_string(k++) + ".po"), text);
    EXPECT_NE(RunCommand("msgfmt --check -o /dev/null " + path), 0) << text;
    try {
      ReadPo(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << e.what();
    }
  }
  try {
    ReadPo(seventeen);
    ADD_FAILURE() << "accepted 17 plural forms";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("line 19: more than 16 plural forms"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ReadPo("msgid \"\"\nmsgstr \"Content-Type: text/plain; "
                      "charset=NOPE-1\\n\"\n"),
               std::invalid_argument);
  // As C reads it, \x takes every hex digit that follows.
  EXPECT_THROW(ReadPo("msgid \"\\x414\"\nmsgstr \"b\"\n"),
               std::invalid_argument);
}

// Only the header's Content-Type names the charset; its Language is the
// catalog's.
TEST(GettextCatalogTest, TheHeaderNamesTheCharsetAndLanguage) {
  const GettextCatalog headless =
      ReadPo("msgid \"Set charset=ISO-8859-1 here\"\nmsgstr \"在此设置\"\n");
  EXPECT_EQ(headless.entries.at(0).translations.at(0), "在此设置");
  EXPECT_EQ(headless.language, "");
  EXPECT_EQ(ReadPo("msgid \"\"\nmsgstr \"Language: zh_CN\\n\"\n").language,
            "zh_CN");
}

// A .mo file's table entries pointing at the same bytes would be copied
// for each: refused.
TEST(GettextCatalogTest, RefusesMoFilesWhoseStringsOverlap) {
  // 3 messages whose msgids and msgstrs all point at one string of 64
  // bytes (offset 76): 384 bytes of strings in a file of 140.
  const auto word = [](uint32_t value) {
    std::string bytes(4, '\0');
    for (int k = 0; k < 4; ++k) bytes[k] = static_cast<char>(value >> (8 * k));
    return bytes;
  };
  std::string mo = word(0x950412DE) + word(0) + word(3) + word(28) + word(52) +
                   word(0) + word(0);
  for (int table = 0; table < 2; ++table) {
    for (int k = 0; k < 3; ++k) mo += word(64) + word(76);
  }
  mo += std::string(64, 'a');
  ASSERT_EQ(mo.size(), 140u);
  try {
    ReadMo(mo);
    ADD_FAILURE() << "accepted overlapping strings";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("overlap"), std::string::npos)
        << e.what();
  }
}

// A damaged .mo file is refused, never read out of bounds: every prefix of
// a real one, and one whose tables point outside it.
TEST(GettextCatalogTest, RefusesDamagedMoFiles) {
  const fs::path directory = testing_util::MakeTempDir("gettext_mo");
  const std::string po = Write(directory / "zh_CN.po", kCatalog);
  const std::string mo_path = (directory / "zh_CN.mo").string();
  ASSERT_EQ(RunCommand("msgfmt -o " + mo_path + " " + po), 0);
  const std::string mo = Read(mo_path);
  for (std::size_t size = 0; size < mo.size(); ++size) {
    try {
      ReadMo(std::string_view(mo).substr(0, size));
    } catch (const std::invalid_argument&) {
    }
  }
  std::string far = mo;
  far[12] = '\xFF';  // The originals table's offset.
  far[13] = '\xFF';
  EXPECT_THROW(ReadMo(far), std::invalid_argument);
  EXPECT_THROW(ReadMo("not a catalog at all, no magic"), std::invalid_argument);
}

// A message of a million lines is read in one pass.
TEST(GettextCatalogTest, ReadsLongMessagesLinearly) {
  std::string po = "msgid \"\"\n";
  for (int i = 0; i < 1000000; ++i) po += "\"ab\"\n";
  po += "msgstr \"x\"\n";
  const GettextCatalog catalog = ReadPo(po);
  ASSERT_EQ(catalog.entries.size(), 1u);
  EXPECT_EQ(catalog.entries[0].source.size(), 2000000u);
}

}  // namespace
}  // namespace fanyi
