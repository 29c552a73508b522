// Translation memories: TMX and XLIFF written by the Translate Toolkit (the
// converters Pootle and Weblate use) from a gettext catalog give that
// catalog's pairs; the XLIFF 2.0 and TMX shapes tools write (inline codes,
// states, languages either way round) read as translators mean them; a
// document streamed a byte at a time reads the same; hostile documents are
// refused in bounded memory.
#include "common/formats/translation_memory.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/formats/gettext_catalog.h"
#include "common/formats/po_reader.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;
using Pairs = std::vector<std::pair<std::string, std::string>>;
using Format = TranslationMemoryReader::Format;

Pairs Read(Format format, std::string_view document, std::string source = "en",
           std::string target = "zh") {
  TranslationMemoryReader reader(format, std::move(source), std::move(target));
  std::vector<MemoryPair> found;
  reader.Feed(document, true, &found);
  Pairs pairs;
  for (const MemoryPair& pair : found)
    pairs.emplace_back(pair.source, pair.target);
  return pairs;
}

std::string FileText(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

int RunCommand(const std::string& command) {
  const int status = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char kCatalog[] = R"po(msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Language: zh_CN\n"

#, c-format
msgid "Hello, %s!"
msgstr "你好，%s！"

#, fuzzy
msgid "Open"
msgstr "打开"

msgid "Save <b>now</b>"
msgstr "现在<b>保存</b>"

msgid "Untranslated"
msgstr ""

msgid ""
"Two\n"
"lines"
msgstr "两\n行"
)po";

// The Translate Toolkit's po2tmx and po2xliff (pip translate-toolkit, which
// scripts/test.sh installs) write the catalog's translated messages.
TEST(TranslationMemoryTest, ReadsWhatTheTranslateToolkitWrites) {
  const fs::path directory = testing_util::MakeTempDir("translation_memory");
  const std::string po = (directory / "zh_CN.po").string();
  std::ofstream(po, std::ios::binary) << kCatalog;
  Pairs expected;
  for (const CatalogPair& pair : TrainingPairs(ReadPo(kCatalog))) {
    expected.emplace_back(pair.source, pair.target);
  }
  ASSERT_EQ(expected.size(), 3u);
  const std::string tmx = (directory / "zh_CN.tmx").string();
  ASSERT_EQ(RunCommand("po2tmx -l zh_CN " + po + " " + tmx), 0)
      << "po2tmx (pip translate-toolkit) is needed";
  EXPECT_EQ(Read(Format::kTmx, FileText(tmx)), expected);
  const std::string xliff = (directory / "zh_CN.xlf").string();
  ASSERT_EQ(RunCommand("po2xliff " + po + " " + xliff), 0);
  EXPECT_EQ(Read(Format::kXliff, FileText(xliff)), expected);
  // The other way round, by the languages asked for.
  Pairs reversed;
  for (const auto& [source, target] : expected) {
    reversed.emplace_back(target, source);
  }
  EXPECT_EQ(Read(Format::kTmx, FileText(tmx), "zh", "en"), reversed);
  EXPECT_EQ(Read(Format::kXliff, FileText(xliff), "zh", "en"), reversed);
  EXPECT_EQ(Read(Format::kXliff, FileText(xliff), "en", "fr"), Pairs{});
}

const char kXliff2[] = R"(<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0"
       srcLang="en-US" trgLang="zh-CN">
  <file id="f1">
    <notes><note>Not a segment.</note></notes>
    <unit id="u1">
      <originalData><data id="d1">&lt;b&gt;</data></originalData>
      <segment state="translated">
        <source>Click <pc id="1">Save</pc> <ph id="2" dataRef="d1"/>now.</source>
        <target>现在点击<pc id="1">保存</pc><ph id="2" dataRef="d1"/>。</target>
      </segment>
      <ignorable><source> </source><target> </target></ignorable>
      <segment state="initial">
        <source>Not yet.</source>
        <target>还没有。</target>
      </segment>
      <segment>
        <source>Good <mrk id="m1" translate="yes">night</mrk>.</source>
        <target>晚安。</target>
      </segment>
    </unit>
  </file>
</xliff>
)";

const char kXliff12[] = R"(<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
  <file original="a" source-language="zh" target-language="en"
        datatype="plaintext">
    <body>
      <trans-unit id="1">
        <source>再见<x id="1"/>！</source>
        <seg-source><mrk mtype="seg" mid="1">再见！</mrk></seg-source>
        <target state="final">Good<g id="2"> bye</g>!</target>
        <alt-trans><source>再见</source><target>Bye</target></alt-trans>
      </trans-unit>
      <trans-unit id="2">
        <source>早上好。</source>
        <target state="needs-review-translation">Morning.</target>
      </trans-unit>
    </body>
  </file>
</xliff>
)";

const char kTmx[] = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE tmx SYSTEM "tmx14.dtd">
<tmx version="1.4">
  <header srclang="en" datatype="plaintext"><note>A note.</note></header>
  <body>
    <tu>
      <tuv xml:lang="EN-GB"><seg>Press <bpt i="1">&lt;b&gt;</bpt>OK<ept i="1">&lt;/b&gt;</ept> <hi>now</hi>.</seg></tuv>
      <tuv xml:lang="fr"><seg>Appuyez sur OK.</seg></tuv>
      <tuv lang="zh-Hans"><seg>现在按<ph>&lt;br/&gt;</ph>确定。</seg></tuv>
    </tu>
    <tu><tuv xml:lang="en"><seg>Only English.</seg></tuv></tu>
    <tu>
      <tuv xml:lang="en"><seg>  Many
          spaces  </seg></tuv>
      <tuv xml:lang="zh"><seg>空格</seg></tuv>
    </tu>
  </body>
</tmx>
)";

TEST(TranslationMemoryTest, ReadsTheShapesToolsWrite) {
  EXPECT_EQ(Read(Format::kXliff, kXliff2),
            (Pairs{{"Click Save now.", "现在点击保存。"},
                   {"Good night.", "晚安。"}}));
  // A zh to en file, read en to zh: its sides swapped.
  EXPECT_EQ(Read(Format::kXliff, kXliff12), (Pairs{{"Good bye!", "再见！"}}));
  EXPECT_EQ(Read(Format::kTmx, kTmx), (Pairs{{"Press OK now.", "现在按确定。"},
                                             {"Many spaces", "空格"}}));
  // A second file that names only its source language is not en to zh.
  EXPECT_EQ(
      Read(Format::kXliff,
           "<xliff version=\"1.2\"><file source-language=\"en\" "
           "target-language=\"zh\"><body><trans-unit id=\"1\"><source>Hi"
           "</source><target>嗨</target></trans-unit></body></file><file "
           "source-language=\"de\"><body><trans-unit id=\"2\"><source>Hallo"
           "</source><target>Bonjour</target></trans-unit></body></file>"
           "</xliff>"),
      (Pairs{{"Hi", "嗨"}}));
  // The encoding the XML declaration names.
  EXPECT_EQ(Read(Format::kTmx,
                 "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><tmx><body>"
                 "<tu><tuv xml:lang=\"en\"><seg>caf\xE9</seg></tuv><tuv "
                 "xml:lang=\"fr\"><seg>caf\xE9</seg></tuv></tu></body></tmx>",
                 "en", "fr"),
            (Pairs{{"caf\u00e9", "caf\u00e9"}}));
}

// Fed a byte at a time, a document gives the same pairs.
TEST(TranslationMemoryTest, ReadsTheSameStreamed) {
  for (const auto& [format, document] :
       {std::pair{Format::kXliff, std::string_view(kXliff2)},
        std::pair{Format::kXliff, std::string_view(kXliff12)},
        std::pair{Format::kTmx, std::string_view(kTmx)}}) {
    TranslationMemoryReader reader(format, "en", "zh");
    std::vector<MemoryPair> found;
    for (std::size_t i = 0; i < document.size(); ++i) {
      reader.Feed(document.substr(i, 1), false, &found);
    }
    reader.Feed({}, true, &found);
    Pairs pairs;
    for (const MemoryPair& pair : found) {
      pairs.emplace_back(pair.source, pair.target);
    }
    EXPECT_EQ(pairs, Read(format, document));
  }
}

void ExpectRefused(Format format, const std::string& document,
                   const std::string& message) {
  try {
    Read(format, document);
    ADD_FAILURE() << "accepted " << document.substr(0, 80);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
        << e.what();
  }
}

TEST(TranslationMemoryTest, RefusesHostileDocuments) {
  ExpectRefused(Format::kTmx,
                "<!DOCTYPE tmx [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b "
                "\"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><tmx>&b;</tmx>",
                "internal subset");
  ExpectRefused(Format::kTmx, testing_util::Repeat("<a>", 100000),
                "nested more than 64");
  ExpectRefused(Format::kXliff, "<xliff>\n<file>\n</xliff>",
                "mismatched tag at line 3");
  // A tag larger than Expat's budget is refused, not held.
  ExpectRefused(Format::kTmx,
                "<tmx a=\"" + std::string(std::size_t{80} << 20, 'a') + "\"/>",
                "more memory");
  // A segment over 64 KiB is left out; the next is read.
  const std::string tmx =
      "<tmx><body><tu><tuv xml:lang=\"en\"><seg>" + std::string(70000, 'a') +
      "</seg></tuv><tuv xml:lang=\"zh\"><seg>x</seg></tuv></tu><tu><tuv "
      "xml:lang=\"en\"><seg>b</seg></tuv><tuv xml:lang=\"zh\"><seg>y</seg>"
      "</tuv></tu></body></tmx>";
  EXPECT_EQ(Read(Format::kTmx, tmx), (Pairs{{"b", "y"}}));
}

TEST(TranslationMemoryTest, LanguageTagsMatchByTheirLanguage) {
  EXPECT_TRUE(LanguageTagIs("zh_CN", "zh"));
  EXPECT_TRUE(LanguageTagIs("ZH-Hant-TW", "zh"));
  EXPECT_TRUE(LanguageTagIs("en", "en-US"));
  EXPECT_FALSE(LanguageTagIs("eng", "en"));
  EXPECT_FALSE(LanguageTagIs("", "en"));
}

}  // namespace
}  // namespace fanyi
