#include "common/formats/translation_memory.h"

#include <expat.h>

#include <algorithm>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

#include "common/formats/expat_memory.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

// What Expat may hold at once, whatever the file's size: it keeps only the
// part of the document that is not yet parsed (at most a tag or a stretch
// of text) and its element stack.
constexpr std::size_t kExpatBudget = std::size_t{64} << 20;

// An element's name without its namespace prefix ("xliff:target").
std::string_view LocalName(const XML_Char* name) {
  std::string_view view(name);
  const std::size_t colon = view.rfind(':');
  return colon == std::string_view::npos ? view : view.substr(colon + 1);
}

const XML_Char* Attribute(const XML_Char** attributes, std::string_view name) {
  for (int i = 0; attributes[i] != nullptr; i += 2) {
    if (name == attributes[i]) return attributes[i + 1];
  }
  return nullptr;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Appends character data to `text`, whitespace runs as one space.
void AppendSqueezed(std::string_view data, std::string* text) {
  for (char c : data) {
    if (IsSpace(c)) {
      if (!text->empty() && text->back() != ' ') text->push_back(' ');
    } else {
      text->push_back(c);
    }
  }
}

std::string Trimmed(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// Elements whose content is never a segment's text: inline codes (native
// markup such as "<b>"), notes, alternatives and copies of the source.
bool IsSkipped(std::string_view name) {
  static constexpr std::string_view kSkipped[] = {
      "bpt",       "ept",   "ph",           "it",        "ut",
      "note",      "notes", "originalData", "alt-trans", "seg-source",
      "ignorable", "prop",  "header"};
  for (std::string_view skipped : kSkipped) {
    if (name == skipped) return true;
  }
  return false;
}

}  // namespace

bool LanguageTagIs(std::string_view tag, std::string_view code) {
  const std::size_t end = tag.find_first_of("-_");
  return !code.empty() &&
         AsciiLowercase(tag.substr(0, end)) ==
             AsciiLowercase(code.substr(0, code.find_first_of("-_")));
}

struct TranslationMemoryReader::State {
  Format format;
  std::string source_language;
  std::string target_language;
  ExpatMemory memory{kExpatBudget};
  XML_Parser parser = nullptr;
  std::vector<MemoryPair>* pairs = nullptr;  // Where Feed appends.
  std::string refusal;  // Why the parse was stopped, if a limit did.
  int depth = 0;
  int skipped_depth = 0;  // Open elements that are never text, at most 1+.

  // TMX: the open unit's variants in the two languages.
  std::string tuv_language;
  std::string source_text;
  std::string target_text;
  bool has_source = false;
  bool has_target = false;
  // Where character data goes: a <seg>, <source> or <target> being read.
  std::string* collecting = nullptr;
  bool too_long = false;  // The unit has a side over kMaxSegmentBytes.
  // XLIFF: whether the file's languages are the two, and which way round;
  // whether the open unit's target is usable.
  bool languages_match = false;
  bool swapped = false;
  bool target_usable = true;

  void Refuse(std::string why) {
    refusal = std::move(why);
    XML_StopParser(parser, XML_FALSE);
  }

  void OpenUnit() {
    source_text.clear();
    target_text.clear();
    has_source = has_target = too_long = false;
    target_usable = true;
  }

  void CloseUnit() {
    std::string source = Trimmed(std::move(source_text));
    std::string target = Trimmed(std::move(target_text));
    const bool usable = target_usable;
    OpenUnit();
    if (source.empty() || target.empty() || !usable) return;
    if (swapped) std::swap(source, target);
    pairs->push_back({std::move(source), std::move(target),
                      static_cast<int64_t>(XML_GetCurrentLineNumber(parser))});
  }

  // XLIFF's languages, from <file> (1.2) or <xliff> (2.0): an element that
  // names either decides for what it holds, and must name both.
  void Languages(const XML_Char* source, const XML_Char* target) {
    if (source == nullptr && target == nullptr) return;
    languages_match = false;
    swapped = false;
    if (source == nullptr || target == nullptr) return;
    if (LanguageTagIs(source, source_language) &&
        LanguageTagIs(target, target_language)) {
      languages_match = true;
    } else if (LanguageTagIs(source, target_language) &&
               LanguageTagIs(target, source_language)) {
      languages_match = swapped = true;
    }
  }

  void Start(std::string_view name, const XML_Char** attributes) {
    if (skipped_depth > 0 || IsSkipped(name)) {
      ++skipped_depth;
      return;
    }
    if (format == Format::kTmx) {
      if (name == "tu") {
        OpenUnit();
      } else if (name == "tuv") {
        const XML_Char* language = Attribute(attributes, "xml:lang");
        if (language == nullptr) language = Attribute(attributes, "lang");
        tuv_language = language != nullptr ? language : "";
      } else if (name == "seg") {
        if (LanguageTagIs(tuv_language, source_language) && !has_source) {
          has_source = true;
          collecting = &source_text;
        } else if (LanguageTagIs(tuv_language, target_language) &&
                   !has_target) {
          has_target = true;
          collecting = &target_text;
        }
      }
      return;
    }
    if (name == "xliff") {
      Languages(Attribute(attributes, "srcLang"),
                Attribute(attributes, "trgLang"));
    } else if (name == "file") {
      Languages(Attribute(attributes, "source-language"),
                Attribute(attributes, "target-language"));
    } else if (name == "trans-unit" || name == "segment") {
      OpenUnit();
      if (const XML_Char* type = Attribute(attributes, "restype");
          type != nullptr &&
          std::string_view(type) == "x-gettext-domain-header") {
        target_usable = false;  // A catalog's header, as po2xliff writes.
      }
      if (const XML_Char* state = Attribute(attributes, "state");
          state != nullptr && std::string_view(state) == "initial") {
        target_usable = false;  // XLIFF 2.0: not translated yet.
      }
    } else if (name == "source" && languages_match && !has_source) {
      has_source = true;
      collecting = &source_text;
    } else if (name == "target" && languages_match && !has_target) {
      has_target = true;
      collecting = &target_text;
      if (const XML_Char* state = Attribute(attributes, "state")) {
        const std::string_view value(state);
        if (value == "new" || value.substr(0, 6) == "needs-") {
          target_usable = false;  // XLIFF 1.2: not translated, or unsure.
        }
      }
    }
  }

  void End(std::string_view name) {
    if (skipped_depth > 0) {
      --skipped_depth;
      return;
    }
    if (name == "seg" || name == "source" || name == "target") {
      collecting = nullptr;
    } else if ((format == Format::kTmx && name == "tu") ||
               (format == Format::kXliff &&
                (name == "trans-unit" || name == "segment"))) {
      CloseUnit();
    }
  }

  void Text(std::string_view data) {
    if (collecting == nullptr || skipped_depth > 0 || too_long) return;
    AppendSqueezed(data, collecting);
    if (collecting->size() > TranslationMemoryReader::kMaxSegmentBytes) {
      too_long = true;
      source_text.clear();
      target_text.clear();
      target_usable = false;
    }
  }

  static void OnStart(void* data, const XML_Char* name,
                      const XML_Char** attributes) {
    auto* self = static_cast<State*>(data);
    if (!self->refusal.empty()) return;
    if (++self->depth > kMaxDepth) {
      self->Refuse("elements nested more than " + std::to_string(kMaxDepth) +
                   " deep; the limit is " + std::to_string(kMaxDepth));
      return;
    }
    self->Start(LocalName(name), attributes);
  }

  static void OnEnd(void* data, const XML_Char* name) {
    auto* self = static_cast<State*>(data);
    if (!self->refusal.empty()) return;
    --self->depth;
    self->End(LocalName(name));
  }

  static void OnText(void* data, const XML_Char* text, int length) {
    auto* self = static_cast<State*>(data);
    if (!self->refusal.empty()) return;
    self->Text(std::string_view(text, static_cast<std::size_t>(length)));
  }

  // <!DOCTYPE tmx SYSTEM "tmx14.dtd"> is how tools begin a TMX file (the
  // DTD is never loaded); an internal subset could declare entities.
  static void OnDoctype(void* data, const XML_Char*, const XML_Char*,
                        const XML_Char*, int has_internal_subset) {
    if (has_internal_subset == 0) return;
    static_cast<State*>(data)->Refuse(
        "a document type declaration with an internal subset, which a "
        "translation memory has no use for");
  }
};

TranslationMemoryReader::TranslationMemoryReader(Format format,
                                                 std::string source_language,
                                                 std::string target_language)
    : state_(std::make_unique<State>()) {
  state_->format = format;
  state_->source_language = std::move(source_language);
  state_->target_language = std::move(target_language);
  const ExpatMemoryScope scope(&state_->memory);
  // No forced encoding: Expat reads the XML declaration's (UTF-8, UTF-16,
  // ISO-8859-1, US-ASCII; another is refused as unknown).
  state_->parser = XML_ParserCreate_MM(nullptr, &kBudgetedExpatMemory, nullptr);
  if (state_->parser == nullptr) throw std::bad_alloc();
  XML_SetUserData(state_->parser, state_.get());
  XML_SetElementHandler(state_->parser, State::OnStart, State::OnEnd);
  XML_SetCharacterDataHandler(state_->parser, State::OnText);
  XML_SetStartDoctypeDeclHandler(state_->parser, State::OnDoctype);
}

TranslationMemoryReader::~TranslationMemoryReader() {
  const ExpatMemoryScope scope(&state_->memory);
  XML_ParserFree(state_->parser);
}

void TranslationMemoryReader::Feed(std::string_view bytes, bool last,
                                   std::vector<MemoryPair>* pairs) {
  State& state = *state_;
  if (!state.refusal.empty()) throw std::invalid_argument(state.refusal);
  const ExpatMemoryScope scope(&state.memory);
  state.pairs = pairs;
  // Expat copies what it is given into its own buffer: large buffers go in
  // parts of 1 MiB, so that what it holds stays within its budget.
  constexpr std::size_t kPart = std::size_t{1} << 20;
  XML_Status status = XML_STATUS_OK;
  do {
    const std::size_t part = std::min(bytes.size(), kPart);
    const bool final = last && part == bytes.size();
    status = XML_Parse(state.parser, bytes.data(), static_cast<int>(part),
                       final ? XML_TRUE : XML_FALSE);
    bytes.remove_prefix(part);
  } while (status == XML_STATUS_OK && !bytes.empty());
  state.pairs = nullptr;
  if (!state.refusal.empty()) {
    throw std::invalid_argument(
        state.refusal + " (line " +
        std::to_string(XML_GetCurrentLineNumber(state.parser)) + ")");
  }
  if (status != XML_STATUS_OK) {
    state.refusal =
        std::string(state.memory.exhausted
                        ? "XML that would take more memory than a "
                          "translation memory's budget"
                        : XML_ErrorString(XML_GetErrorCode(state.parser))) +
        " at line " + std::to_string(XML_GetCurrentLineNumber(state.parser));
    throw std::invalid_argument(state.refusal);
  }
}

}  // namespace fanyi
