#include "common/pipeline/documents.h"

#include <stdexcept>
#include <utility>
#include <vector>

#include "common/formats/html_reader.h"
#include "common/formats/markdown_reader.h"
#include "common/formats/office_xml_reader.h"
#include "common/formats/srt_reader.h"
#include "common/text/utf8.h"

namespace fanyi {

MarkedDocument ReadDocument(std::string_view text, TextFormat format,
                            int max_depth) {
  std::string source(text);
  switch (format) {
    case TextFormat::kHtml:
      DecodeUtf8(source);  // Throws for invalid UTF-8, as the splitter does.
      return ReadHtml(std::move(source), max_depth);
    case TextFormat::kSrt:
      return ReadSrt(std::move(source));
    case TextFormat::kMarkdown:
      return ReadMarkdown(std::move(source));
    case TextFormat::kOfficeXml:
      return ReadOfficeXml(std::move(source), max_depth);
    case TextFormat::kText:
      break;
  }
  throw std::logic_error("ReadDocument: plain text is no document");
}

std::string ConvertScript(const ScriptConverter& converter,
                          std::string_view text, TextFormat format,
                          int max_depth) {
  if (format == TextFormat::kText) return converter.Convert(text);
  const MarkedDocument document = ReadDocument(text, format, max_depth);
  // Markers are noncharacters, which OpenCC passes through as it does any
  // character outside its dictionaries.
  std::vector<std::string> converted;
  for (const std::string& words : document.texts()) {
    converted.push_back(converter.Convert(words));
  }
  return document.Render(converted);
}

}  // namespace fanyi
