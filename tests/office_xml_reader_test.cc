// Office documents end to end without the model: ZipPackage reads a
// .docx's, .pptx's or OpenDocument's text parts, ReadOfficeXml cuts each
// paragraph (Word's, DrawingML's, OpenDocument's) into one text with its
// differently formatted runs as markers, and the package written back
// keeps every other entry byte for byte and parses.
#include "common/formats/office_xml_reader.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/formats/xml_tree.h"
#include "common/formats/zip_package.h"
#include "gtest/gtest.h"
#include "tests/marked_text.h"
#include "tests/test_util.h"
#include "tests/zip_files.h"

namespace fanyi {
namespace {

using testing_util::RenderRewritten;
using testing_util::Repeat;
using testing_util::ShownTexts;
using testing_util::UpperCase;

constexpr char kHead[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n"
    "<w:document xmlns:w=\"http://schemas.openxmlformats.org/"
    "wordprocessingml/2006/main\" xmlns:r=\"http://schemas.openxmlformats.org/"
    "officeDocument/2006/relationships\"><w:body>";
constexpr char kTail[] = "<w:sectPr/></w:body></w:document>";

std::string WordXml(const std::string& body) { return kHead + body + kTail; }

TEST(WordReaderTest, AParagraphIsOneTextWithOtherFormattingAsMarkers) {
  const std::string xml = WordXml(
      "<w:p><w:pPr><w:pStyle w:val=\"Title\"/></w:pPr>"
      "<w:r><w:t xml:space=\"preserve\">This is </w:t></w:r>"
      "<w:proofErr w:type=\"spellStart\"/>"
      "<w:r><w:rPr><w:b/></w:rPr><w:t>very</w:t></w:r>"
      "<w:r><w:t xml:space=\"preserve\"> good &amp; </w:t></w:r>"
      "<w:hyperlink r:id=\"rId4\"><w:r><w:rPr><w:rStyle w:val=\"Link\"/>"
      "</w:rPr><w:t>a link</w:t></w:r></w:hyperlink>"
      "<w:r><w:t>.</w:t></w:r></w:p>");
  const MarkedDocument document = ReadOfficeXml(xml);
  EXPECT_EQ(
      ShownTexts(document),
      (std::vector<std::string>{"This is [0] good & [1].", "very", "a link"}));
  // The words go into runs of the paragraph's formatting, the bold run
  // and the link where the translation puts their markers.
  EXPECT_EQ(
      RenderRewritten(document,
                      [](std::u32string text) {
                        return text.size() > 10
                                   ? U"Good: " + text.substr(8, 1) + U" and " +
                                         text.substr(17, 1) + U"!"
                                   : UpperCase(text);
                      }),
      WordXml("<w:p><w:pPr><w:pStyle w:val=\"Title\"/></w:pPr>"
              "<w:r><w:t xml:space=\"preserve\">Good: </w:t></w:r>"
              "<w:r><w:rPr><w:b/></w:rPr><w:t>VERY</w:t></w:r>"
              "<w:r><w:t xml:space=\"preserve\"> and </w:t></w:r>"
              "<w:hyperlink r:id=\"rId4\"><w:r><w:rPr><w:rStyle "
              "w:val=\"Link\"/></w:rPr><w:t xml:space=\"preserve\">A LINK</w:t>"
              "</w:r></w:hyperlink>"
              "<w:r><w:t xml:space=\"preserve\">!</w:t></w:r></w:p>"));
}

TEST(WordReaderTest, RunsThatDifferOnlyInProofingAreOneFormatting) {
  // Word splits a sentence into runs by the language the spell checker
  // saw: they look alike, so the sentence stays one text with no markers.
  const std::string xml = WordXml(
      "<w:p><w:r><w:rPr><w:i/><w:lang w:val=\"en-US\"/></w:rPr>"
      "<w:t xml:space=\"preserve\">Good </w:t></w:r>"
      "<w:r><w:rPr><w:i/><w:noProof/></w:rPr><w:t>morning</w:t></w:r>"
      "<w:r><w:rPr><w:i/></w:rPr><w:t>.</w:t></w:r></w:p>");
  const MarkedDocument document = ReadOfficeXml(xml);
  EXPECT_EQ(ShownTexts(document), (std::vector<std::string>{"Good morning."}));
  EXPECT_EQ(RenderRewritten(document, UpperCase),
            WordXml("<w:p><w:r><w:rPr><w:i/><w:lang w:val=\"en-US\"/></w:rPr>"
                    "<w:t xml:space=\"preserve\">GOOD MORNING.</w:t></w:r>"
                    "</w:p>"));
}

TEST(WordReaderTest, TablesAndTextBoxesAreReadAndTabsKept) {
  const std::string xml = WordXml(
      "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>In a cell</w:t></w:r></w:p></w:tc>"
      "</w:tr></w:tbl>"
      "<w:p><w:r><w:tab/></w:r><w:r><w:t>After a tab</w:t></w:r></w:p>"
      "<w:p><w:r><w:t>12.5</w:t></w:r></w:p>");
  const MarkedDocument document = ReadOfficeXml(xml);
  // The tab before the words stays outside the text; digits alone are no
  // words to translate.
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"In a cell", "After a tab"}));
  const std::string written = RenderRewritten(document, UpperCase);
  EXPECT_NE(written.find("<w:r><w:tab/></w:r><w:r><w:t xml:space=\"preserve\">"
                         "AFTER A TAB</w:t></w:r>"),
            std::string::npos)
      << written;
  EXPECT_NE(written.find("<w:t>12.5</w:t>"), std::string::npos);
  EXPECT_NO_THROW(XmlTree{written});
}

TEST(WordReaderTest, MalformedXmlAndDoctypesAreRefused) {
  EXPECT_THROW(ReadOfficeXml(WordXml("<w:p><w:r>")), std::invalid_argument);
  EXPECT_THROW(ReadOfficeXml("<!DOCTYPE d [<!ENTITY e \"x\">]><d>&e;</d>"),
               std::invalid_argument);
}

// The message ReadOfficeXml throws for `xml`, or "" when it reads it.
std::string Refusal(const std::string& xml, int max_depth) {
  try {
    ReadOfficeXml(xml, max_depth);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// XML is held to its depth (w:document and w:body are two levels), to
// XmlTree::kMaxNodes nodes and to names of kMaxNameBytes: a few kilobytes
// of zip could otherwise make gigabytes of tree.
TEST(WordReaderTest, XmlBeyondItsBoundsIsRefused) {
  const std::string paragraph = "<w:p><w:r><w:t>Deep words</w:t></w:r></w:p>";
  const auto nested = [&](int tables) {
    return WordXml(Repeat("<w:tbl>", tables) + paragraph +
                   Repeat("</w:tbl>", tables));
  };
  // w:document, w:body, the tables, then w:p, w:r and w:t.
  EXPECT_EQ(Refusal(nested(5), 10), "");
  EXPECT_EQ(Refusal(nested(6), 10),
            "XML nests elements more than 10 deep; the limit is 10");
  EXPECT_NE(Refusal(nested(100000), kDefaultMaxDocumentDepth)
                .find("more than 256 deep"),
            std::string::npos);
  EXPECT_NE(Refusal(WordXml(Repeat("<w:e/>", XmlTree::kMaxNodes)),
                    kDefaultMaxDocumentDepth)
                .find("more than " + std::to_string(XmlTree::kMaxNodes) +
                      " elements and stretches of text"),
            std::string::npos);
  EXPECT_EQ(Refusal(WordXml(Repeat("<w:e/>", XmlTree::kMaxNodes - 10)),
                    kDefaultMaxDocumentDepth),
            "");
  const std::string uri = "http://" + std::string(2000, 'n');
  EXPECT_EQ(Refusal(WordXml("<x:e xmlns:x=\"" + uri + "\"/>"),
                    kDefaultMaxDocumentDepth),
            "XML element name of 2009 bytes, namespace included; the limit "
            "is 1024");
}

// Expat writes a prefixed attribute's namespace URI into its name: 4,000
// attributes of one tag in a 1 MB namespace would take it 4 GB. Its memory
// has a budget, and the document is refused at it.
TEST(WordReaderTest, ExpatIsHeldToAMemoryBudget) {
  std::string attributes;
  for (int i = 0; i < 4000; ++i) {
    attributes += " a:x" + std::to_string(i) + "=\"\"";
  }
  const std::string xml =
      WordXml("<w:p xmlns:a=\"urn:" + std::string(1 << 20, 'n') + "\"" +
              attributes + "/>");
  EXPECT_NE(Refusal(xml, kDefaultMaxDocumentDepth)
                .find("XML: parsing it would take more than 18 MiB"),
            std::string::npos);
}

// Each element's name is held once, however many elements share it.
TEST(WordReaderTest, ElementsShareTheirNames) {
  const std::string xml = WordXml(Repeat("<w:e/>", 100));
  const XmlTree tree(xml);
  const XmlTree::Node& body = tree.node(tree.node(tree.root()).children[0]);
  ASSERT_EQ(body.children.size(), 101u);  // And w:sectPr.
  EXPECT_EQ(tree.node(body.children[0]).name.data(),
            tree.node(body.children[99]).name.data());
}

TEST(ZipPackageTest, RewritesTheTextPartsAndKeepsEveryOtherEntry) {
  const std::string styles = "<w:styles>unchanged</w:styles>";
  const std::string image(3000, '\x89');
  const std::string docx = testing_util::ZipOf(
      {{"[Content_Types].xml", "<Types/>"},
       {"word/header1.xml",
        "<w:hdr xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/"
        "2006/main\"><w:p><w:r><w:t>A header</w:t></w:r></w:p></w:hdr>"},
       {"word/document.xml",
        WordXml("<w:p><w:r><w:t>Hello world.</w:t></w:r></w:p>")},
       {"word/styles.xml", styles},
       {"word/media/image1.png", image}});
  const ZipPackage package(docx, ZipKind::kDocx);
  ASSERT_EQ(
      package.part_names(),
      (std::vector<std::string>{"word/document.xml", "word/header1.xml"}));
  std::vector<std::string> translated;
  for (const std::string& part : package.parts()) {
    translated.push_back(RenderRewritten(ReadOfficeXml(part), UpperCase));
  }
  const ZipPackage written(package.Write(translated), ZipKind::kDocx);
  EXPECT_EQ(written.parts(), translated);
  EXPECT_NE(written.parts()[0].find(">HELLO WORLD.<"), std::string::npos);
  EXPECT_NE(written.parts()[1].find(">A HEADER<"), std::string::npos);
  // The other entries, byte for byte.
  const std::string bytes = package.Write(translated);
  EXPECT_EQ(testing_util::ZipEntryCount(bytes), 5);
  EXPECT_EQ(testing_util::ZipEntry(bytes, "word/styles.xml"), styles);
  EXPECT_EQ(testing_util::ZipEntry(bytes, "word/media/image1.png"), image);
}

// A slide's paragraph (DrawingML): runs alike but for their proofing marks
// (language, spell-check, edit marks) are one formatting, a bold run and a
// line break are markers, and the words are written back in runs of the
// paragraph's formatting, without xml:space, which a:t lacks.
TEST(OfficeXmlReaderTest, ASlidesParagraphKeepsItsBoldRunAndBreak) {
  const std::string xml =
      "<p:sld xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/"
      "main\" xmlns:p=\"http://schemas.openxmlformats.org/presentationml/"
      "2006/main\"><p:cSld><p:spTree><p:sp><p:txBody><a:bodyPr/><a:p>"
      "<a:pPr algn=\"ctr\"/>"
      "<a:r><a:rPr lang=\"en-US\" dirty=\"0\"/><a:t>We go for a </a:t></a:r>"
      "<a:r><a:rPr lang=\"en-US\" b=\"1\" dirty=\"0\"/><a:t>walk</a:t></a:r>"
      "<a:r><a:rPr lang=\"en-GB\" err=\"1\"/><a:t> today.</a:t></a:r>"
      "<a:br><a:rPr lang=\"en-US\"/></a:br>"
      "<a:r><a:rPr lang=\"en-US\"/><a:t>And tea.</a:t></a:r>"
      "<a:endParaRPr lang=\"en-US\"/></a:p></p:txBody></p:sp></p:spTree>"
      "</p:cSld></p:sld>";
  const MarkedDocument document = ReadOfficeXml(xml);
  EXPECT_EQ(
      ShownTexts(document),
      (std::vector<std::string>{"We go for a [0] today.[1]And tea.", "walk"}));
  const std::string rendered = RenderRewritten(document, UpperCase);
  EXPECT_NO_THROW(XmlTree{rendered});
  EXPECT_NE(rendered.find("<a:pPr algn=\"ctr\"/><a:r><a:rPr lang=\"en-US\" "
                          "dirty=\"0\"/><a:t>WE GO FOR A </a:t></a:r><a:r>"
                          "<a:rPr lang=\"en-US\" b=\"1\" dirty=\"0\"/><a:t>"
                          "WALK</a:t></a:r><a:r><a:rPr lang=\"en-US\" "
                          "dirty=\"0\"/><a:t> TODAY.</a:t></a:r><a:br>"),
            std::string::npos)
      << rendered;
  EXPECT_NE(rendered.find("AND TEA.</a:t></a:r><a:endParaRPr lang=\"en-US\"/>"
                          "</a:p>"),
            std::string::npos)
      << rendered;
  EXPECT_EQ(rendered.find("xml:space"), std::string::npos);
}

// OpenDocument's paragraphs and headings: words in the paragraph itself,
// a span of another style and a link as markers, a paragraph all in one
// span written back in that span, text:s as a space; a page-break hint and
// a note at a paragraph's end stay there, and list items and notes are
// read where they stand.
TEST(OfficeXmlReaderTest, OpenDocumentParagraphsKeepTheirSpansAndLinks) {
  const std::string xml =
      "<office:document-content xmlns:office=\"urn:oasis:names:tc:"
      "opendocument:xmlns:office:1.0\" xmlns:text=\"urn:oasis:names:tc:"
      "opendocument:xmlns:text:1.0\" xmlns:xlink=\"http://www.w3.org/1999/"
      "xlink\"><office:body><office:text>"
      "<text:h text:outline-level=\"1\">A walk</text:h>"
      "<text:p text:style-name=\"P1\">We go for a <text:span "
      "text:style-name=\"T1\">walk</text:span> in the<text:s/>park."
      "<text:soft-page-break/></text:p>"
      "<text:p><text:span text:style-name=\"T2\">All in one.</text:span>"
      "</text:p>"
      "<text:list><text:list-item><text:p>See <text:a xlink:href=\"x\">"
      "this</text:a>.<text:note><text:note-body><text:p>A note.</text:p>"
      "</text:note-body></text:note></text:p></text:list-item></text:list>"
      "</office:text></office:body></office:document-content>";
  const MarkedDocument document = ReadOfficeXml(xml);
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"A walk", "We go for a [0] in the park.",
                                      "walk", "All in one.", "See [0].", "this",
                                      "A note."}));
  const std::string rendered = RenderRewritten(document, UpperCase);
  EXPECT_NO_THROW(XmlTree{rendered});
  for (const char* expected :
       {"<text:h text:outline-level=\"1\">A WALK</text:h>",
        "<text:p text:style-name=\"P1\">WE GO FOR A <text:span "
        "text:style-name=\"T1\">WALK</text:span> IN THE "
        "PARK.<text:soft-page-break/>"
        "</text:p>",
        "<text:p><text:span text:style-name=\"T2\">ALL IN ONE.</text:span>"
        "</text:p>",
        "<text:p>SEE <text:a xlink:href=\"x\">THIS</text:a>.<text:note>"
        "<text:note-body><text:p>A NOTE.</text:p>"}) {
    EXPECT_NE(rendered.find(expected), std::string::npos)
        << expected << "\nin\n"
        << rendered;
  }
}

// Found by the hostile review: a CDATA section's markers are part of its
// text (an edit once replaced its inside and left "]]>" behind), and a
// prefix a run declares itself stays declared in the runs written like it.
TEST(OfficeXmlReaderTest, CdataAndPrefixesDeclaredOnARunSurviveRendering) {
  const std::string open =
      "<o xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\">";
  for (const auto& [paragraph, expected] :
       std::vector<std::pair<std::string, std::string>>{
           {"<text:p>Hello <![CDATA[world & co]]></text:p>",
            "<text:p>HELLO WORLD &amp; CO</text:p>"},
           {"<text:p><![CDATA[Hello]]> world</text:p>",
            "<text:p>HELLO WORLD</text:p>"},
           {"<text:p>A <text:span text:style-name=\"T\"><![CDATA[b]]>"
            "</text:span> c<![CDATA[]]></text:p>",
            "<text:p>A <text:span text:style-name=\"T\">B</text:span> C"
            "</text:p>"}}) {
    const std::string rendered =
        RenderRewritten(ReadOfficeXml(open + paragraph + "</o>"), UpperCase);
    EXPECT_EQ(rendered, open + expected + "</o>");
    EXPECT_NO_THROW(XmlTree{rendered});
  }
  const std::string slide =
      "<p:sld xmlns:p=\"p\"><a:p xmlns:a=\"http://schemas.openxmlformats.org/"
      "drawingml/2006/main\"><b:r xmlns:b=\"http://schemas.openxmlformats.org/"
      "drawingml/2006/main\"><b:t>Hello </b:t></b:r><a:r><a:rPr b=\"1\"/>"
      "<a:t>world</a:t></a:r></a:p></p:sld>";
  const std::string rendered = RenderRewritten(ReadOfficeXml(slide), UpperCase);
  EXPECT_NO_THROW(XmlTree{rendered}) << rendered;
  EXPECT_NE(rendered.find("<b:r xmlns:b=\"http://schemas.openxmlformats.org/"
                          "drawingml/2006/main\"><b:t>HELLO </b:t></b:r>"),
            std::string::npos)
      << rendered;
}

TEST(ZipPackageTest, TextPartsThatExpandTooFarAreRefused) {
  // A few kilobytes of zip that would expand past the limit in memory.
  const std::string header(ZipPackage::kMaxTextBytes / 2 + 1, ' ');
  const std::string docx =
      testing_util::ZipOf({{"word/document.xml", WordXml("")},
                           {"word/header1.xml", header},
                           {"word/header2.xml", header}});
  ASSERT_LT(docx.size(), 1u << 20);
  try {
    ZipPackage package(docx, ZipKind::kDocx);
    FAIL() << "a package of " << 2 * header.size() << " bytes of text parts";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bytes uncompressed"),
              std::string::npos)
        << e.what();
  }
}

// Entry names are matched in one pass (std::regex once recursed per
// character and overflowed the stack on a name of 65,000): a long name is
// one more entry kept as it is, and only the text parts are read.
TEST(ZipPackageTest, TextPartsAreFoundByTheirNamesAlone) {
  const std::string long_name =
      "word/header" + std::string(65000, '1') + "x.xml";
  const std::string docx =
      testing_util::ZipOf({{"word/document.xml", WordXml("")},
                           {long_name, "<x/>"},
                           {"word/header.xml", "<x/>"},
                           {"word/footer12.xml", "<x/>"},
                           {"word/footnotes.xml", "<x/>"},
                           {"word/endnotes.xml", "<x/>"},
                           {"word/headers.xml", "<x/>"},
                           {"word/header1.xml.bak", "<x/>"},
                           {"Word/header2.xml", "<x/>"},
                           {"word/sub/header3.xml", "<x/>"}});
  EXPECT_EQ(ZipPackage(docx, ZipKind::kDocx).part_names(),
            (std::vector<std::string>{"word/document.xml", "word/header.xml",
                                      "word/footer12.xml", "word/footnotes.xml",
                                      "word/endnotes.xml"}));
}

TEST(ZipPackageTest, WhatIsNoDocxIsRefused) {
  EXPECT_THROW(ZipPackage("not a zip at all", ZipKind::kDocx),
               std::invalid_argument);
  EXPECT_THROW(ZipPackage(testing_util::ZipOf({{"content.xml", "<office/>"}}),
                          ZipKind::kDocx),
               std::invalid_argument);
}

// An .epub's XHTML documents are its text parts, whatever their folder and
// letter case, but for an empty one; its mimetype must say it is one.
TEST(ZipPackageTest, AnEpubsTextPartsAreItsXhtmlDocuments) {
  const std::string epub =
      testing_util::ZipOf({{"mimetype", "application/epub+zip"},
                           {"META-INF/container.xml", "<container/>"},
                           {"OEBPS/content.opf", "<package/>"},
                           {"OEBPS/toc.ncx", "<ncx/>"},
                           {"OEBPS/chapter1.xhtml", "<html/>"},
                           {"OEBPS/Text/Chapter2.HTML", "<html/>"},
                           {"OEBPS/nav.xhtml", "<html/>"},
                           {"OEBPS/blank.xhtml", ""},
                           {"OEBPS/style.css", "p {}"},
                           {"OEBPS/xhtml", "<html/>"}});
  EXPECT_EQ(ZipPackage(epub, ZipKind::kEpub).part_names(),
            (std::vector<std::string>{"OEBPS/toc.ncx", "OEBPS/chapter1.xhtml",
                                      "OEBPS/Text/Chapter2.HTML",
                                      "OEBPS/nav.xhtml"}));
  for (const std::string& mimetype :
       {std::string("application/zip"), std::string(100, 'a')}) {
    EXPECT_THROW(
        ZipPackage(testing_util::ZipOf({{"mimetype", mimetype},
                                        {"OEBPS/chapter1.xhtml", "<html/>"}}),
                   ZipKind::kEpub),
        std::invalid_argument);
  }
  EXPECT_THROW(
      ZipPackage(testing_util::ZipOf({{"OEBPS/chapter1.xhtml", "<html/>"}}),
                 ZipKind::kEpub),
      std::invalid_argument);
}

// A .pptx's text parts are its slides and notes; an OpenDocument's its
// content and styles, its mimetype, when it has one, saying which kind.
TEST(ZipPackageTest, PresentationsAndOpenDocumentsHaveTheirOwnParts) {
  const std::string pptx =
      testing_util::ZipOf({{"[Content_Types].xml", "<Types/>"},
                           {"ppt/presentation.xml", "<p:presentation/>"},
                           {"ppt/slides/slide1.xml", "<x/>"},
                           {"ppt/slides/slide10.xml", "<x/>"},
                           {"ppt/slideLayouts/slideLayout1.xml", "<x/>"},
                           {"ppt/notesSlides/notesSlide1.xml", "<x/>"},
                           {"ppt/slides/_rels/slide1.xml.rels", "<x/>"}});
  EXPECT_EQ(ZipPackage(pptx, ZipKind::kPptx).part_names(),
            (std::vector<std::string>{"ppt/slides/slide1.xml",
                                      "ppt/slides/slide10.xml",
                                      "ppt/notesSlides/notesSlide1.xml"}));
  const std::string odt = testing_util::ZipOf(
      {{"mimetype", "application/vnd.oasis.opendocument.text"},
       {"styles.xml", "<x/>"},
       {"content.xml", "<x/>"},
       {"meta.xml", "<x/>"}});
  EXPECT_EQ(ZipPackage(odt, ZipKind::kOdt).part_names(),
            (std::vector<std::string>{"content.xml", "styles.xml"}));
  EXPECT_THROW(ZipPackage(odt, ZipKind::kOdp), std::invalid_argument);
  EXPECT_EQ(
      ZipPackage(testing_util::ZipOf({{"content.xml", "<x/>"}}), ZipKind::kOdp)
          .part_names(),
      (std::vector<std::string>{"content.xml"}));
  EXPECT_THROW(
      ZipPackage(testing_util::ZipOf({{"styles.xml", "<x/>"}}), ZipKind::kOdt),
      std::invalid_argument);
  EXPECT_THROW(ZipPackage(testing_util::ZipOf(
                              {{"ppt/presentation.xml", "<p:presentation/>"}}),
                          ZipKind::kPptx),
               std::invalid_argument);
}

// libzip keeps an archive's unchanged start by sharing the old buffer with
// the new one, then frees it with the new one: a package whose first text
// part comes after a large unchanged entry is written from memory libzip
// owns (under AddressSanitizer this was a bad free of the caller's bytes).
TEST(ZipPackageTest, APartAfterALargeUnchangedEntryIsRewritten) {
  std::string image;
  for (int i = 0; i < 100000; ++i) image += static_cast<char>(i * 7919 >> 3);
  const std::string pptx =
      testing_util::ZipOf({{"ppt/media/image1.png", image},
                           {"ppt/presentation.xml", "<p:presentation/>"},
                           {"ppt/slides/slide1.xml", "<x>old</x>"}});
  const ZipPackage package(pptx, ZipKind::kPptx);
  const std::string written = package.Write({"<x>new</x>"});
  const std::string again = package.Write({"<x>again</x>"});
  EXPECT_EQ(testing_util::ZipEntry(written, "ppt/slides/slide1.xml"),
            "<x>new</x>");
  EXPECT_EQ(testing_util::ZipEntry(again, "ppt/slides/slide1.xml"),
            "<x>again</x>");
  EXPECT_EQ(testing_util::ZipEntry(written, "ppt/media/image1.png"), image);
}

}  // namespace
}  // namespace fanyi
