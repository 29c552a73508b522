#include "server/request_validator.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <stdexcept>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr std::size_t kMaxTermBytes = 256;

grpc::Status InvalidArgument(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

// Characters in valid or invalid UTF-8 alike: every byte that does not
// continue a sequence starts a character. No decoding, no allocation.
std::size_t CountCharacters(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(),
      [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// Checks one glossary term: UTF-8, not blank, not too long.
grpc::Status CheckTerm(const std::string& term, const std::string& field,
                       bool may_be_empty) {
  if (term.size() > kMaxTermBytes) {
    return InvalidArgument(field + " has " + std::to_string(term.size()) +
                           " bytes; the limit is " +
                           std::to_string(kMaxTermBytes));
  }
  std::u32string decoded;
  try {
    decoded = DecodeUtf8(term);
  } catch (const std::invalid_argument& e) {
    return InvalidArgument(field + ": " + e.what());
  }
  if (!may_be_empty && std::all_of(decoded.begin(), decoded.end(), IsSpace)) {
    return InvalidArgument(field + " is empty");
  }
  return grpc::Status::OK;
}

}  // namespace

v1::Script ScriptToProto(ChineseScript script) {
  switch (script) {
    case ChineseScript::kSimplified:
      return v1::SCRIPT_SIMPLIFIED;
    case ChineseScript::kTraditionalTaiwan:
      return v1::SCRIPT_TRADITIONAL_TAIWAN;
    case ChineseScript::kTraditionalHongKong:
      return v1::SCRIPT_TRADITIONAL_HONG_KONG;
  }
  return v1::SCRIPT_UNSPECIFIED;
}

RequestValidator::RequestValidator(const ServiceOptions& options,
                                   const Translator& translator)
    : options_(options), translator_(translator) {}

grpc::Status RequestValidator::CheckTextCount(int text_count) const {
  if (text_count == 0) {
    return InvalidArgument("texts is empty; send at least one text");
  }
  if (text_count > options_.max_batch_texts) {
    return InvalidArgument("texts has " + std::to_string(text_count) +
                           " entries; the limit is " +
                           std::to_string(options_.max_batch_texts));
  }
  return grpc::Status::OK;
}

grpc::Status RequestValidator::Validate(
    const v1::TranslateRequest& request,
    std::vector<PreparedText>* texts) const {
  TextOptions options;
  grpc::Status status =
      ReadTextOptions(request.beam_size(), request.script(), request.glossary(),
                      request.do_not_translate(), &options);
  if (!status.ok()) return status;
  texts->assign(1, PreparedText());
  status = PrepareText(request.text(), "text", options, &texts->front());
  if (!status.ok()) return status;
  return CheckSentenceCount(*texts);
}

grpc::Status RequestValidator::Validate(
    const v1::TranslateBatchRequest& request,
    std::vector<PreparedText>* texts) const {
  const int text_count = request.texts_size();
  grpc::Status status = CheckTextCount(text_count);
  if (!status.ok()) return status;
  TextOptions options;
  status =
      ReadTextOptions(request.beam_size(), request.script(), request.glossary(),
                      request.do_not_translate(), &options);
  if (!status.ok()) return status;
  texts->assign(text_count, PreparedText());
  for (int i = 0; i < text_count; ++i) {
    status = PrepareText(request.texts(i), "texts[" + std::to_string(i) + "]",
                         options, &(*texts)[i]);
    if (!status.ok()) return status;
  }
  return CheckSentenceCount(*texts);
}

grpc::Status RequestValidator::ReadTextOptions(
    int beam_size, int script,
    const google::protobuf::RepeatedPtrField<v1::GlossaryEntry>& glossary,
    const google::protobuf::RepeatedPtrField<std::string>& do_not_translate,
    TextOptions* options) const {
  if (beam_size < 0) {
    return InvalidArgument("beam_size is " + std::to_string(beam_size) +
                           "; use 0 for the server default, 1 for greedy or "
                           "more for beam search");
  }
  options->beam_size = beam_size == 0
                           ? options_.default_beam_size
                           : std::min(beam_size, options_.max_beam_size);
  switch (script) {
    case v1::SCRIPT_UNSPECIFIED:
      break;
    case v1::SCRIPT_SIMPLIFIED:
      options->script = ChineseScript::kSimplified;
      break;
    case v1::SCRIPT_TRADITIONAL_TAIWAN:
      options->script = ChineseScript::kTraditionalTaiwan;
      break;
    case v1::SCRIPT_TRADITIONAL_HONG_KONG:
      options->script = ChineseScript::kTraditionalHongKong;
      break;
    default:
      return InvalidArgument("script " + std::to_string(script) +
                             " is not a Script value");
  }
  if (options->script && !translator_.writes_chinese()) {
    return InvalidArgument(
        "script applies to Chinese only; this model "
        "translates into \"" +
        translator_.target_language() + "\"");
  }
  const int terms = glossary.size() + do_not_translate.size();
  if (terms > options_.max_glossary_entries) {
    return InvalidArgument("glossary and do_not_translate have " +
                           std::to_string(terms) + " terms; the limit is " +
                           std::to_string(options_.max_glossary_entries));
  }
  if (terms > 0 && translator_.max_placeholders() == 0) {
    return InvalidArgument(
        "glossary: this model was trained without placeholders, so it "
        "cannot keep glossary terms");
  }
  for (int i = 0; i < glossary.size(); ++i) {
    const std::string field = "glossary[" + std::to_string(i) + "]";
    grpc::Status status = CheckTerm(glossary[i].source(), field + ".source",
                                    /*may_be_empty=*/false);
    if (status.ok()) {
      status = CheckTerm(glossary[i].target(), field + ".target",
                         /*may_be_empty=*/true);
    }
    if (!status.ok()) return status;
    options->glossary.push_back({glossary[i].source(), glossary[i].target()});
  }
  for (int i = 0; i < do_not_translate.size(); ++i) {
    grpc::Status status = CheckTerm(
        do_not_translate[i], "do_not_translate[" + std::to_string(i) + "]",
        /*may_be_empty=*/false);
    if (!status.ok()) return status;
    options->glossary.push_back({do_not_translate[i], ""});
  }
  return grpc::Status::OK;
}

grpc::Status RequestValidator::PrepareText(const std::string& text,
                                           const std::string& field,
                                           const TextOptions& options,
                                           PreparedText* prepared) const {
  if (text.empty()) return InvalidArgument(field + " is empty");
  // A character takes at most 4 bytes: a longer text is refused on its size
  // alone, and a shorter one on a count that reads each byte once.
  const std::size_t limit = static_cast<std::size_t>(options_.max_input_chars);
  if (text.size() > 4 * limit) {
    return InvalidArgument(field + " has " + std::to_string(text.size()) +
                           " bytes, more than " + std::to_string(limit) +
                           " characters; the limit is " +
                           std::to_string(limit) + " characters");
  }
  if (const std::size_t characters = CountCharacters(text);
      characters > limit) {
    return InvalidArgument(field + " has " + std::to_string(characters) +
                           " characters; the limit is " +
                           std::to_string(limit));
  }
  try {
    *prepared = translator_.Prepare(text, options);
  } catch (const std::invalid_argument& e) {
    return InvalidArgument(field + ": " + e.what());
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        field + ": preparing the text failed: " + e.what());
  }
  return grpc::Status::OK;
}

grpc::Status RequestValidator::CheckSentenceCount(
    const std::vector<PreparedText>& texts) const {
  std::size_t parts = 0;
  for (const PreparedText& text : texts) parts += text.parts.size();
  if (parts > static_cast<std::size_t>(options_.max_request_sentences)) {
    return InvalidArgument(
        "the request has " + std::to_string(parts) +
        " sentences and clauses to translate; the limit is " +
        std::to_string(options_.max_request_sentences) +
        "; send the text in several requests");
  }
  return grpc::Status::OK;
}

}  // namespace fanyi
