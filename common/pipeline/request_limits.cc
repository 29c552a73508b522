#include "common/pipeline/request_limits.h"

#include <algorithm>
#include <stdexcept>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr std::size_t kMaxTermBytes = 256;

// Checks one glossary term: UTF-8, not blank, not too long.
void CheckTerm(const std::string& term, const std::string& field,
               bool may_be_empty) {
  if (term.size() > kMaxTermBytes) {
    throw std::invalid_argument(field + " has " + std::to_string(term.size()) +
                                " bytes; the limit is " +
                                std::to_string(kMaxTermBytes));
  }
  std::u32string decoded;
  try {
    decoded = DecodeUtf8(term);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(field + ": " + e.what());
  }
  if (!may_be_empty && std::all_of(decoded.begin(), decoded.end(), IsSpace)) {
    throw std::invalid_argument(field + " is empty");
  }
}

}  // namespace

RequestLimits::RequestLimits(const TextLimits& limits) : limits_(limits) {}

void RequestLimits::CheckTextCount(std::size_t count,
                                   const std::string& field) const {
  if (count == 0) {
    throw std::invalid_argument(field + " is empty; send at least one text");
  }
  if (count > static_cast<std::size_t>(limits_.max_texts)) {
    throw std::invalid_argument(field + " has " + std::to_string(count) +
                                " entries; the limit is " +
                                std::to_string(limits_.max_texts));
  }
}

TextOptions RequestLimits::ReadOptions(const TextRequest& request) const {
  if (request.beam_size < 0) {
    throw std::invalid_argument(
        "beam_size is " + std::to_string(request.beam_size) +
        "; use 0 for the server default, 1 for greedy or more for beam "
        "search");
  }
  if (request.alternatives < 0) {
    throw std::invalid_argument("alternatives is " +
                                std::to_string(request.alternatives) +
                                "; ask for 0 or more");
  }
  TextOptions options;
  options.beam_size = request.beam_size == 0
                          ? limits_.default_beam_size
                          : std::min(request.beam_size, limits_.max_beam_size);
  // Alternatives are the beam's other hypotheses: the beam holds them.
  options.alternatives =
      std::min(request.alternatives, limits_.max_beam_size - 1);
  options.beam_size = std::max(options.beam_size, options.alternatives + 1);
  options.script = request.script;
  options.format = request.format;
  options.template_tokens = request.template_tokens;
  const std::size_t terms =
      request.glossary.size() + request.do_not_translate.size();
  if (terms > static_cast<std::size_t>(limits_.max_glossary_terms)) {
    throw std::invalid_argument(
        "glossary and do_not_translate have " + std::to_string(terms) +
        " terms; the limit is " + std::to_string(limits_.max_glossary_terms));
  }
  for (std::size_t i = 0; i < request.glossary.size(); ++i) {
    const std::string field = "glossary[" + std::to_string(i) + "]";
    CheckTerm(request.glossary[i].source, field + ".source",
              /*may_be_empty=*/false);
    CheckTerm(request.glossary[i].target, field + ".target",
              /*may_be_empty=*/true);
    options.glossary.push_back(request.glossary[i]);
  }
  for (std::size_t i = 0; i < request.do_not_translate.size(); ++i) {
    CheckTerm(request.do_not_translate[i],
              "do_not_translate[" + std::to_string(i) + "]",
              /*may_be_empty=*/false);
    options.glossary.push_back({request.do_not_translate[i], ""});
  }
  return options;
}

void RequestLimits::CheckText(std::string_view text,
                              const std::string& field) const {
  if (text.empty()) throw std::invalid_argument(field + " is empty");
  // A character takes at most 4 bytes: a longer text is refused on its size
  // alone, and a shorter one on a count that reads each byte once.
  const std::size_t limit = static_cast<std::size_t>(limits_.max_input_chars);
  if (text.size() > 4 * limit) {
    throw std::invalid_argument(field + " has " + std::to_string(text.size()) +
                                " bytes, more than " + std::to_string(limit) +
                                " characters; the limit is " +
                                std::to_string(limit) + " characters");
  }
  if (const std::size_t characters = CountUtf8Characters(text);
      characters > limit) {
    throw std::invalid_argument(field + " has " + std::to_string(characters) +
                                " characters; the limit is " +
                                std::to_string(limit));
  }
}

void RequestLimits::CheckPartCount(std::size_t parts) const {
  if (parts > static_cast<std::size_t>(limits_.max_request_parts)) {
    throw std::invalid_argument(
        "the request has " + std::to_string(parts) +
        " sentences and clauses to translate; the limit is " +
        std::to_string(limits_.max_request_parts) +
        "; send the text in several requests");
  }
}

}  // namespace fanyi
