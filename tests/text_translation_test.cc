// Whole texts through a real server on 127.0.0.1 with a really trained tiny
// model: documents cut into sentences and joined back in their layout,
// spans that pass through verbatim, glossaries, scripts, long sentences and
// the character limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/formats/marked_document.h"
#include "common/pipeline/translator.h"
#include "common/text/parallel_corpus.h"
#include "common/text/script_converter.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/translation_server.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxInputChars = 2000;

// True when `text` holds an ASCII digit.
bool HasDigit(const std::string& text) {
  return text.find_first_of("0123456789") != std::string::npos;
}

// The tiny model's corpus: 40 pairs of the mini corpus and the first 60
// training pairs whose both sides hold a number, so that the model learns
// to carry placeholders.
std::string WriteCorpus(const fs::path& directory) {
  const fs::path path = directory / "pairs.tsv";
  std::ofstream out(path);
  const ParallelCorpus mini =
      ReadParallelTsv(testing_util::SharedDataPath("en-zh/train_mini.tsv"));
  for (int i = 0; i < 40; ++i) {
    out << mini.pairs[i].source << "\t" << mini.pairs[i].target << "\n";
  }
  const ParallelCorpus train =
      ReadParallelTsv(testing_util::SharedDataPath("en-zh/train.tsv"));
  int numbers = 0;
  for (const SentencePair& pair : train.pairs) {
    if (numbers == 60) break;
    if (HasDigit(pair.source) && HasDigit(pair.target)) {
      out << pair.source << "\t" << pair.target << "\n";
      ++numbers;
    }
  }
  return path.string();
}

// Occurrences of `part` in `text`.
int Count(const std::string& text, const std::string& part) {
  int count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + part.size())) {
    ++count;
  }
  return count;
}

class TextTranslationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (model_dir_ == nullptr) {
      const fs::path directory =
          testing_util::MakeTempDir("text_translation_test_model");
      model_dir_ = new std::string(testing_util::TrainTinyModelOn(
          WriteCorpus(directory), (directory / "run").string()));
    }
    ServerOptions options;
    options.model_dir = *model_dir_;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.max_input_chars = kMaxInputChars;
    options.threads = 1;
    options.device = "cpu";
    server_ = TranslationServer::Start(options).release();
    stub_ = v1::Translator::NewStub(
                grpc::CreateChannel(
                    "127.0.0.1:" + std::to_string(server_->grpc_port()),
                    grpc::InsecureChannelCredentials()))
                .release();
  }
  static void TearDownTestSuite() {
    delete stub_;
    stub_ = nullptr;
    delete server_;
    server_ = nullptr;
  }

  // Translates `request` greedily with a 60 s deadline.
  static grpc::Status Translate(v1::TranslateRequest request,
                                v1::TranslateResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(60));
    if (request.beam_size() == 0) request.set_beam_size(1);
    return stub_->Translate(&context, request, response);
  }

  static v1::Translation TranslateOk(const std::string& text) {
    v1::TranslateRequest request;
    request.set_text(text);
    v1::TranslateResponse response;
    const grpc::Status status = Translate(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.translation();
  }

  static std::string* model_dir_;
  static TranslationServer* server_;
  static v1::Translator::Stub* stub_;
};

std::string* TextTranslationTest::model_dir_ = nullptr;
TranslationServer* TextTranslationTest::server_ = nullptr;
v1::Translator::Stub* TextTranslationTest::stub_ = nullptr;

TEST_F(TextTranslationTest, ADocumentComesBackSentenceBySentenceInItsLayout) {
  const ParallelCorpus mini =
      ReadParallelTsv(testing_util::SharedDataPath("en-zh/train_mini.tsv"));
  // 20 sentences: paragraphs of 4, a line break inside the second, blank
  // lines (one with CRLF) between them.
  const std::vector<std::string> breaks = {" ",  " ", " ", "\n\n",    " ",
                                           "\n", " ", " ", "\r\n\r\n"};
  std::string document;
  std::string expected;
  int expected_sentences = 0;
  for (int i = 0; i < 20; ++i) {
    const std::string& sentence = mini.pairs[i].source;
    const v1::Translation alone = TranslateOk(sentence);
    expected_sentences += alone.sentence_count();
    if (i > 0) {
      const std::string& gap = breaks[(i - 1) % breaks.size()];
      document += gap;
      expected += gap == " " ? "" : gap;  // Chinese: no space between.
    }
    document += sentence;
    expected += alone.text();
  }
  const v1::Translation translation = TranslateOk(document);
  EXPECT_EQ(translation.text(), expected);
  EXPECT_EQ(translation.sentence_count(), expected_sentences);
  EXPECT_GE(translation.sentence_count(), 20);
  EXPECT_EQ(translation.split_sentence_count(), 0);
}

TEST_F(TextTranslationTest, RepeatedSentencesEachGetTheirTranslation) {
  const std::string sentence = "I owe him 1,000 dollars.";
  const std::string alone = TranslateOk(sentence).text();
  std::string repeated;
  std::string expected;
  for (int i = 0; i < 8; ++i) {
    repeated += (i > 0 ? " " : "") + sentence;
    expected += alone;
  }
  const v1::Translation translation = TranslateOk(repeated);
  EXPECT_EQ(translation.sentence_count(), 8);
  EXPECT_EQ(translation.text(), expected);
  EXPECT_EQ(Count(translation.text(), "1,000"), 8);
}

TEST_F(TextTranslationTest, NumbersCodesAndGlossaryTermsComeThroughExactly) {
  v1::TranslateRequest request;
  // Spans beyond the placeholders a model knows stay text: the sentences
  // hold no more than the tiny model learned.
  ASSERT_GE(Translator::Load(*model_dir_, TranslatorOptions{"cpu", 1})
                ->pipeline()
                .max_placeholders(),
            3);
  request.set_text(
      "I paid $2.50 at 3:30 for flight BA2490. Zelensky wrote from "
      "https://example.com/x?y=1 to tom@example.org. Tom owes him 1,000 "
      "dollars.");
  v1::GlossaryEntry* entry = request.add_glossary();
  entry->set_source("dollars");
  entry->set_target("美金");
  request.add_do_not_translate("Tom");
  v1::TranslateResponse response;
  const grpc::Status status = Translate(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::string& text = response.translation().text();
  for (const char* span :
       {"$2.50", "3:30", "BA2490", "Zelensky", "https://example.com/x?y=1",
        "tom@example.org", "1,000", "美金", "Tom"}) {
    EXPECT_EQ(Count(text, span), 1) << span << " in " << text;
  }
  EXPECT_EQ(response.translation().sentence_count(), 3);
  // The tiny vocabulary lacks Zelensky (and more).
  const std::vector<std::string> unknown(
      response.translation().unknown_words().begin(),
      response.translation().unknown_words().end());
  EXPECT_NE(std::find(unknown.begin(), unknown.end(), "Zelensky"),
            unknown.end());
  // And counted where operators look.
  const std::string metrics =
      testing_util::HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_GE(testing_util::MetricValue(
                metrics, "fanyi_unknown_words_total{model=\"en-zh\"}"),
            static_cast<double>(unknown.size()))
      << metrics;
}

// A software string's template tokens come back exactly, once each, in plain
// text and in HTML: the tiny model never saw one (beyond its placeholders
// they are appended, never lost or translated).
TEST_F(TextTranslationTest, TemplateTokensComeThroughExactly) {
  const std::vector<std::string> tokens = {
      "%(name)s",   "%1$s", "{0}",  "{{count}}", "${user}",
      ":attribute", "<0>",  "</0>", "\\n",       "👍🏽"};
  v1::TranslateRequest request;
  request.set_text(
      "Tom is missing %(name)s and %1$s. I have {0} cats and "
      "{{count}} dogs. Hello ${user}, :attribute is <0>mine</0>."
      "\\nThank you 👍🏽");
  v1::TranslateResponse response;
  grpc::Status status = Translate(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  for (const std::string& token : tokens) {
    EXPECT_EQ(Count(response.translation().text(), token), 1)
        << token << " in " << response.translation().text();
  }
  // The & of an accelerator and an entity written as text, in HTML (where
  // the entity is the document's own &amp;amp;).
  request.set_format(v1::FORMAT_HTML);
  request.set_text("<p>Open the &amp;File of %s with <b>{name}</b>.</p>");
  status = Translate(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::string& html = response.translation().text();
  EXPECT_EQ(Count(html, "&amp;"), 1) << html;
  EXPECT_EQ(Count(html, "%s"), 1) << html;
  EXPECT_EQ(Count(html, "{name}"), 1) << html;
  EXPECT_EQ(Count(html, "<b>"), 1) << html;
  EXPECT_EQ(Count(html, "</b>"), 1) << html;
  EXPECT_EQ(html.rfind("<p>", 0), 0u) << html;
}

// A sentence with no word left once its template tokens, numbers and
// symbols are masked comes back as written, in plain text and in HTML, and
// a glossary term alone as its target: the model would only add words.
TEST_F(TextTranslationTest, SentencesWithNoWordsComeBackAsWritten) {
  for (const std::string text : {"{name}", "%(count)d / %(total)d", "{0}: {1}",
                                 "👍🏽", "12:30", "<0></0>", "<b>%s</b>"}) {
    const v1::Translation translation = TranslateOk(text);
    EXPECT_EQ(translation.text(), text);
    EXPECT_EQ(translation.sentence_count(), 1) << text;
  }
  // On a line of its own beside a sentence to translate.
  EXPECT_EQ(TranslateOk("I am happy.\n{count} / {total}").text(),
            TranslateOk("I am happy.").text() + "\n{count} / {total}");
  v1::TranslateRequest request;
  request.set_format(v1::FORMAT_HTML);
  request.set_text("<p><b>{name}</b>: %d</p>");
  v1::TranslateResponse response;
  grpc::Status status = Translate(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.translation().text(), "<p><b>{name}</b>: %d</p>");
  request.set_format(v1::FORMAT_TEXT);
  request.set_text("dollars");
  v1::GlossaryEntry* entry = request.add_glossary();
  entry->set_source("dollars");
  entry->set_target("美金");
  status = Translate(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.translation().text(), "美金");
}

// One-word sentences that CLDR lists as abbreviations ("Go.", "OK.") still
// end their sentence: each gets its translation.
TEST_F(TextTranslationTest, OneWordSentencesEachGetTheirTranslation) {
  const std::string go = TranslateOk("Go.").text();
  const v1::Translation translation = TranslateOk("Go. Go. Go. Go.");
  EXPECT_EQ(translation.sentence_count(), 4);
  EXPECT_EQ(translation.text(), go + go + go + go);
  EXPECT_EQ(TranslateOk("OK. Go. Stop.").sentence_count(), 3);
}

TEST_F(TextTranslationTest, EachScriptKeepsToItsOwnCharacters) {
  const ParallelCorpus mini =
      ReadParallelTsv(testing_util::SharedDataPath("en-zh/train_mini.tsv"));
  std::string document;
  for (int i = 0; i < 40; ++i) document += mini.pairs[i].source + "\n";
  const ScriptConverter to_simplified(ChineseScript::kSimplified);
  const ScriptConverter to_taiwan(ChineseScript::kTraditionalTaiwan);
  const ScriptConverter to_hong_kong(ChineseScript::kTraditionalHongKong);
  std::string texts[4];
  const v1::Script scripts[4] = {v1::SCRIPT_UNSPECIFIED, v1::SCRIPT_SIMPLIFIED,
                                 v1::SCRIPT_TRADITIONAL_TAIWAN,
                                 v1::SCRIPT_TRADITIONAL_HONG_KONG};
  for (int k = 0; k < 4; ++k) {
    v1::TranslateRequest request;
    request.set_text(document);
    request.set_script(scripts[k]);
    v1::TranslateResponse response;
    const grpc::Status status = Translate(request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.script(), k == 0 ? v1::SCRIPT_SIMPLIFIED : scripts[k]);
    texts[k] = response.translation().text();
  }
  EXPECT_EQ(texts[0], texts[1]);
  // No Traditional-only character in Simplified (converting changes
  // nothing), no Simplified-only one in Traditional.
  EXPECT_EQ(to_simplified.Convert(texts[1]), texts[1]);
  EXPECT_EQ(to_taiwan.Convert(texts[2]), texts[2]);
  EXPECT_EQ(to_hong_kong.Convert(texts[3]), texts[3]);
  // And the scripts do differ on these 40 sentences.
  EXPECT_NE(texts[1], texts[2]);
  EXPECT_NE(texts[2], texts[3]);
}

TEST_F(TextTranslationTest, AnOverlongSentenceIsTranslatedInClauses) {
  // Longer than any training sentence of the tiny model, without a full
  // stop inside.
  std::string sentence = "He can play both tennis and baseball";
  for (int i = 0; i < 6; ++i) {
    sentence += ", and she married him because anyone can do that";
  }
  sentence += ".";
  const v1::Translation translation = TranslateOk(sentence);
  EXPECT_EQ(translation.sentence_count(), 1);
  EXPECT_EQ(translation.split_sentence_count(), 1);
  EXPECT_FALSE(translation.text().empty());
}

TEST_F(TextTranslationTest, ATextOverTheCharacterLimitIsRefused) {
  v1::TranslateRequest request;
  request.set_text(std::string(kMaxInputChars + 1, 'a'));
  v1::TranslateResponse response;
  const grpc::Status status = Translate(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("characters"), std::string::npos)
      << status.error_message();
}

TEST_F(TextTranslationTest, BadGlossaryAndScriptValuesAreRefused) {
  v1::TranslateRequest request;
  request.set_text("I like tea.");
  request.add_glossary()->set_source("  ");
  v1::TranslateResponse response;
  grpc::Status status = Translate(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("glossary[0].source"),
            std::string::npos)
      << status.error_message();

  request.clear_glossary();
  request.set_script(static_cast<v1::Script>(42));
  status = Translate(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("script"), std::string::npos)
      << status.error_message();
}

TEST_F(TextTranslationTest, HtmlComesBackWithItsMarkupAndTagsAroundTheirWords) {
  const ParallelCorpus mini =
      ReadParallelTsv(testing_util::SharedDataPath("en-zh/train_mini.tsv"));
  const std::string& first = mini.pairs[0].source;
  const std::string& second = mini.pairs[1].source;
  const std::string& caption = mini.pairs[2].source;
  const std::string& code = mini.pairs[3].source;
  const std::string head =
      "<!-- intro -->\n<div class=\"post\" data-id=7>\n  <p>";
  const std::string html =
      head + first + "</p>\n  <p>" + second +
      "</p>\n  <p>I paid <b>$2.50</b> at 3:30 for <a href=\"/f\">"
      "the flight</a>.</p>\n  <img src=\"a.png\" alt=\"" +
      caption + "\">\n  <pre>" + code +
      "</pre>\n  <script>var s = \"I love you.\";</script>\n"
      "  <p>&copy; 2024</p>\n</div>\n";
  v1::TranslateRequest request;
  request.set_text(html);
  request.set_format(v1::FORMAT_HTML);
  v1::TranslateResponse response;
  const grpc::Status status = Translate(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::string& out = response.translation().text();

  // Same elements and attributes, the same nesting.
  EXPECT_EQ(testing_util::HtmlStructure(out),
            testing_util::HtmlStructure(html));
  // Each paragraph is translated as the same text alone would be; the
  // comment, the code, the script and the entity are untouched.
  EXPECT_EQ(out.substr(0, head.size()), head);
  EXPECT_EQ(Count(out, "<p>" + TranslateOk(first).text() + "</p>"), 1) << out;
  EXPECT_EQ(Count(out, "<p>" + TranslateOk(second).text() + "</p>"), 1) << out;
  EXPECT_EQ(Count(out, "alt=\"" +
                           EscapeText(TranslateOk(caption).text(),
                                      TextEscape::kMarkupAttribute) +
                           "\""),
            1)
      << out;
  EXPECT_EQ(Count(out, "<pre>" + code + "</pre>"), 1) << out;
  EXPECT_EQ(Count(out, "<script>var s = \"I love you.\";</script>"), 1);
  EXPECT_EQ(Count(out, "<p>&copy; 2024</p>"), 1) << out;
  // The inline tags come back once each, around their own words: the
  // price inside <b>, the link around the translation of its words (a
  // fragment: without the full stop the model gives a sentence).
  EXPECT_EQ(Count(out, "<b>$2.50</b>"), 1) << out;
  EXPECT_EQ(Count(out, "3:30"), 1) << out;
  std::string link = TranslateOk("the flight").text();
  const std::string stop = "\xE3\x80\x82";  // 。
  if (link.size() >= stop.size() &&
      link.compare(link.size() - stop.size(), stop.size(), stop) == 0) {
    link.resize(link.size() - stop.size());
  }
  EXPECT_EQ(Count(out, "<a href=\"/f\">" + link + "</a>"), 1) << out;
  EXPECT_EQ(Count(out, "I paid"), 0) << out;
  EXPECT_GE(response.translation().sentence_count(), 4);
}

TEST_F(TextTranslationTest, HtmlWithNothingToTranslateComesBackAsItIs) {
  for (const std::string html :
       {"<p>2024</p>", "<br>",
        "<p><a href=\"https://x.org\">https://x.org</a>"
        "</p>",
        "<script>let a = 'words';</script>"}) {
    v1::TranslateRequest request;
    request.set_text(html);
    request.set_format(v1::FORMAT_HTML);
    v1::TranslateResponse response;
    const grpc::Status status = Translate(request, &response);
    ASSERT_TRUE(status.ok()) << html << ": " << status.error_message();
    EXPECT_EQ(response.translation().text(), html);
    EXPECT_EQ(response.translation().sentence_count(), 0);
  }
}

}  // namespace
}  // namespace fanyi
