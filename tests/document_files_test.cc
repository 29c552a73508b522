// Office documents and PDFs made by their real producers (odfpy,
// python-pptx, LibreOffice from an .odt), translated by a real server's
// /translate_file (127.0.0.1, a really trained tiny model), then read back
// by the same producers and opened by LibreOffice: their structure is kept
// and their words are the ones the same server gives for each text.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/formats/pdf_text.h"
#include "common/formats/zip_package.h"
#include "server/translation_server.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using testing_util::HttpAnswer;

// The sentences tests/office_documents.py puts in paragraphs of their own.
const char* const kPlain[] = {"I love you.", "I like tea.",
                              "The weather is lovely today."};

class DocumentFilesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing_util::MakeTempDir("document_files_test"));
    model_dir_ = new std::string(testing_util::TrainTinyModel(*dir_));
    server_ = TranslationServer::Start(Options()).release();
  }

  // The suite's server: .pdf files read by fanyi-pdf-text, as
  // fanyi-server reads them.
  static ServerOptions Options() {
    ServerOptions options;
    options.model_dir = *model_dir_;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.http_listen = "127.0.0.1:0";
    options.http_max_body_bytes = 1 << 20;
    options.threads = 1;
    options.device = "cpu";
    options.pdf_reader = FANYI_BINARY_DIR "/bin/fanyi-pdf-text";
    return options;
  }
  static void TearDownTestSuite() {
    delete server_;
    delete model_dir_;
    delete dir_;
  }

  // Runs tests/office_documents.py with `arguments`; its output.
  static std::string Script(const std::string& arguments) {
    const testing_util::CommandResult result = testing_util::RunCommand(
        "python3 " FANYI_SOURCE_DIR "/tests/office_documents.py " + arguments +
        " 2>&1");
    EXPECT_EQ(result.exit_code, 0)
        << result.output
        << "\n(scripts/test.sh installs odfpy and python-pptx for python3, "
           "and install-deps.sh --tests LibreOffice and poppler-utils)";
    return result.output;
  }

  // A document of `kind` its producer made, as `name` in the suite's folder.
  static std::string Make(const std::string& kind, const std::string& name) {
    Script("make " + kind + " " + *dir_ + "/" + name);
    return ReadFile(*dir_ + "/" + name);
  }

  // What the producer reads of `content`, a document of `kind`.
  static nlohmann::json Read(const std::string& kind,
                             const std::string& content) {
    const std::string path = *dir_ + "/read." + kind;
    std::ofstream(path, std::ios::binary) << content;
    return nlohmann::json::parse(Script("read " + kind + " " + path));
  }

  // The text LibreOffice lays out of `content`, saved as `name`.
  static std::string Render(const std::string& name,
                            const std::string& content) {
    const std::string path = *dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return Script("render " + path + " " + *dir_ + "/rendered");
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in),
                       std::istreambuf_iterator<char>());
  }

  // POST /translate_file of `content` as `filename` from `source` into
  // Chinese, then GET of the file it names.
  static HttpAnswer TranslateFile(const std::string& filename,
                                  const std::string& content,
                                  const std::string& source = "en",
                                  TranslationServer* server = server_) {
    const std::string boundary = "fanyi-document-boundary";
    std::string body;
    for (const auto& [name, value] :
         std::vector<std::pair<std::string, std::string>>{{"source", source},
                                                          {"target", "zh"}}) {
      body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" +
              name + "\"\r\n\r\n" + value + "\r\n";
    }
    body += "--" + boundary +
            "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" +
            filename + "\"\r\n\r\n" + content + "\r\n--" + boundary + "--\r\n";
    const HttpAnswer answer = Exchange(
        server,
        "POST /translate_file HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Connection: close\r\nContent-Type: multipart/form-data; boundary=" +
            boundary + "\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\n\r\n" + body);
    if (answer.status != 200) return answer;
    const std::string url =
        nlohmann::json::parse(answer.body).at("translatedFileUrl");
    return Exchange(
        server,
        "GET " + url.substr(url.find("/download_file/")) +
            " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  }

  // What the same server's /translate gives for `text`, plain.
  static std::string Translation(const std::string& text) {
    const HttpAnswer answer = testing_util::HttpPostJson(
        server_->http_port(), "/translate",
        nlohmann::json{{"q", text}, {"source", "en"}, {"target", "zh"}}.dump());
    EXPECT_EQ(answer.status, 200) << answer.body;
    return nlohmann::json::parse(answer.body).at("translatedText");
  }

  // `translated` has as many paragraphs as `original`: each of kPlain as
  // the same server translates it alone, every other one changed.
  static void ExpectTranslated(const nlohmann::json& original,
                               const nlohmann::json& translated) {
    ASSERT_EQ(translated.size(), original.size()) << translated;
    for (std::size_t i = 0; i < original.size(); ++i) {
      const std::string paragraph = original[i];
      if (std::find(std::begin(kPlain), std::end(kPlain), paragraph) !=
          std::end(kPlain)) {
        EXPECT_EQ(translated[i], Translation(paragraph)) << paragraph;
      } else {
        EXPECT_NE(translated[i], paragraph);
      }
    }
  }

  static HttpAnswer Exchange(TranslationServer* server,
                             const std::string& request) {
    return testing_util::HttpExchange(server->http_port(), request);
  }

  static std::string* dir_;
  static std::string* model_dir_;
  static TranslationServer* server_;
};

std::string* DocumentFilesTest::dir_ = nullptr;
std::string* DocumentFilesTest::model_dir_ = nullptr;
TranslationServer* DocumentFilesTest::server_ = nullptr;

TEST_F(DocumentFilesTest, AnOdtKeepsItsStructureAndOpensInLibreOffice) {
  const std::string odt = Make("odt", "walk.odt");
  const HttpAnswer answer = TranslateFile("walk.odt", odt);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.headers.at("content-type"),
            "application/vnd.oasis.opendocument.text");
  const nlohmann::json original = Read("odt", odt);
  const nlohmann::json translated = Read("odt", answer.body);
  for (const char* kept : {"mimetype", "span_styles", "links"}) {
    EXPECT_EQ(translated[kept], original[kept]) << kept;
  }
  ExpectTranslated(original["paragraphs"], translated["paragraphs"]);
  ExpectTranslated(original["cells"], translated["cells"]);
  // The bold word, in its span; the header, in styles.xml.
  ASSERT_EQ(translated["bold"].size(), 1u);
  EXPECT_NE(translated["bold"][0], "walk");
  ASSERT_EQ(translated["header"].size(), 1u);
  EXPECT_NE(translated["header"][0], "Monthly report");
  // LibreOffice opens it and shows the translation, not the original.
  const std::string shown = Render("walk.zh.odt", answer.body);
  EXPECT_NE(shown.find(Translation("I like tea.")), std::string::npos) << shown;
  EXPECT_EQ(shown.find("lovely"), std::string::npos) << shown;
  // Its language found from its words, as a text's is.
  const HttpAnswer detected = TranslateFile("walk.odt", odt, "auto");
  ASSERT_EQ(detected.status, 200) << detected.body;
  EXPECT_EQ(Read("odt", detected.body), translated);
}

TEST_F(DocumentFilesTest, AnOdpKeepsItsSlidesAndNotes) {
  const std::string odp = Make("odp", "walk.odp");
  const HttpAnswer answer = TranslateFile("walk.odp", odp);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.headers.at("content-type"),
            "application/vnd.oasis.opendocument.presentation");
  const nlohmann::json original = Read("odp", odp);
  const nlohmann::json translated = Read("odp", answer.body);
  EXPECT_EQ(translated["mimetype"], original["mimetype"]);
  EXPECT_EQ(translated["span_styles"], original["span_styles"]);
  // The notes ("Speak slowly.") among the paragraphs, translated too.
  ExpectTranslated(original["paragraphs"], translated["paragraphs"]);
  const std::string shown = Render("walk.zh.odp", answer.body);
  EXPECT_NE(shown.find(Translation("I love you.")), std::string::npos) << shown;
  EXPECT_EQ(shown.find("Walk"), std::string::npos) << shown;
}

TEST_F(DocumentFilesTest, APptxKeepsItsSlidesTablesAndNotes) {
  const std::string pptx = Make("pptx", "walk.pptx");
  const HttpAnswer answer = TranslateFile("walk.pptx", pptx);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.headers.at("content-type"),
            "application/"
            "vnd.openxmlformats-officedocument.presentationml.presentation");
  const nlohmann::json original = Read("pptx", pptx)["slides"];
  const nlohmann::json translated = Read("pptx", answer.body)["slides"];
  ASSERT_EQ(translated.size(), original.size());
  for (std::size_t i = 0; i < original.size(); ++i) {
    SCOPED_TRACE("slide " + std::to_string(i));
    EXPECT_EQ(translated[i]["layout"], original[i]["layout"]);
    EXPECT_EQ(translated[i]["bold"].size(), original[i]["bold"].size());
    ExpectTranslated(original[i]["paragraphs"], translated[i]["paragraphs"]);
    ExpectTranslated(original[i]["cells"], translated[i]["cells"]);
  }
  EXPECT_EQ(translated[1]["notes"], Translation("Speak slowly."));
  EXPECT_NE(translated[1]["bold"][0], "walk");
  const std::string shown = Render("walk.zh.pptx", answer.body);
  EXPECT_NE(shown.find(Translation("I like tea.")), std::string::npos) << shown;
  EXPECT_EQ(shown.find("Morning"), std::string::npos) << shown;
}

// LibreOffice's PDF of an .odt: poppler's words come back as the
// paragraphs the .odt had (a long one wrapped over three lines is one), the
// heading in its size, and the page break before the second page.
TEST_F(DocumentFilesTest, APdfIsReadAsItsParagraphs) {
  const PdfText pdf(Make("pdf", "walk.pdf"));
  std::vector<std::string> texts;
  for (const PdfParagraph& paragraph : pdf.paragraphs()) {
    texts.push_back(paragraph.text);
  }
  const nlohmann::json odt = Read("odt", ReadFile(*dir_ + "/pdf_source.odt"));
  for (const auto& paragraph : odt["paragraphs"]) {
    EXPECT_NE(std::find(texts.begin(), texts.end(), paragraph), texts.end())
        << paragraph << " in\n"
        << nlohmann::json(texts).dump(1);
  }
  const auto heading =
      std::find(texts.begin(), texts.end(), "A Walk in the Park");
  ASSERT_NE(heading, texts.end());
  const PdfParagraph& title = pdf.paragraphs()[heading - texts.begin()];
  EXPECT_GT(title.font_size, 1.5 * pdf.paragraphs().back().font_size);
  // Each page starts with its header.
  int pages = 0;
  for (const PdfParagraph& paragraph : pdf.paragraphs()) {
    if (!paragraph.page_start) continue;
    ++pages;
    EXPECT_EQ(paragraph.text, "Monthly report");
  }
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(pdf.paragraphs().back().text, "I love you.");
}

// A .pdf comes back as a .docx that LibreOffice opens, with its
// paragraphs translated and none of the original words left.
TEST_F(DocumentFilesTest, APdfComesBackAsADocx) {
  const std::string pdf = Make("pdf", "report.pdf");
  const HttpAnswer answer = TranslateFile("report.pdf", pdf);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.headers.at("content-type"),
            "application/"
            "vnd.openxmlformats-officedocument.wordprocessingml.document");
  EXPECT_NE(answer.headers.at("content-disposition").find("report.zh.docx"),
            std::string::npos)
      << answer.headers.at("content-disposition");
  const ZipPackage docx(answer.body, ZipKind::kDocx);
  EXPECT_NE(docx.parts().at(0).find("<w:br w:type=\"page\"/>"),
            std::string::npos);
  const std::string shown = Render("report.zh.docx", answer.body);
  EXPECT_NE(shown.find(Translation("I like tea.")), std::string::npos) << shown;
  for (const char* original : kPlain) {
    EXPECT_EQ(shown.find(original), std::string::npos) << shown;
  }
}

// A PDF poppler cannot read, and a .pptx without slides, are refused with
// what is wrong.
TEST_F(DocumentFilesTest, BrokenDocumentsAreRefusedSayingWhy) {
  const std::string pdf = Make("pdf", "cut.pdf");
  for (const auto& [name, content, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"cut.pdf", pdf.substr(0, 64), "not a .pdf that can be read"},
           {"deck.pptx",
            WriteZip({{"ppt/presentation.xml", "<p:presentation/>"}}),
            "the .pptx holds no slides to translate"}}) {
    const HttpAnswer answer = TranslateFile(name, content);
    EXPECT_EQ(answer.status, 400) << answer.body;
    EXPECT_NE(answer.body.find(message), std::string::npos) << answer.body;
  }
}

// A PDF of a few KB whose pages take poppler minutes to lay out: its
// reader is stopped at its CPU limit, the upload refused saying so, and the
// server answers meanwhile and after.
TEST_F(DocumentFilesTest, AHostilePdfIsStoppedAtItsCpuLimit) {
  const std::string dense = Make("dense-pdf", "dense.pdf");
  ASSERT_LT(dense.size(), 64u << 10);
  ServerOptions options = Options();
  options.pdf_cpu_seconds = 1;
  const std::unique_ptr<TranslationServer> strict =
      TranslationServer::Start(options);
  const HttpAnswer answer =
      TranslateFile("dense.pdf", dense, "en", strict.get());
  EXPECT_EQ(answer.status, 400) << answer.body;
  EXPECT_NE(answer.body.find("takes more than 1 s of CPU"), std::string::npos)
      << answer.body;
  EXPECT_EQ(testing_util::HttpGet(strict->http_port(), "/health"),
            "{\"status\":\"ok\"}");
  // A PDF that reads within the limit still does.
  EXPECT_EQ(
      TranslateFile("walk.pdf", Make("pdf", "walk.pdf"), "en", strict.get())
          .status,
      200);
}

}  // namespace
}  // namespace fanyi
