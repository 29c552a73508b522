// fanyi-tokens-kept: how many of a catalog's template tokens a translation
// kept, per kind of token (common/text/template_tokens.h).
//   fanyi-tokens-kept --select < strings.jsonl > with_tokens.jsonl
//   fanyi-tokens-kept --field translation < translated.jsonl
// Reads JSON lines, each an object with a "source" string. --select writes
// back the lines whose source holds a template token. Otherwise it counts,
// for each kind, the tokens of the sources and those kept: a token that a
// source holds n times is kept as often as the string in `--field` holds
// it, up to n. It prints a Markdown table: tokens, kept and their share per
// kind, and the strings that kept every token.
#include <absl/flags/flag.h>
#include <absl/flags/parse.h>
#include <absl/flags/usage.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "common/text/span_finder.h"
#include "common/text/utf8.h"

ABSL_FLAG(bool, select, false,
          "Write back the lines whose source holds a template token.");
ABSL_FLAG(std::string, field, "translation",
          "The member holding the translation to count kept tokens in.");

namespace fanyi {
namespace {

// The source's template tokens: their text, each with its kind and how
// often the source holds it.
std::map<std::string, std::pair<TemplateTokenKind, int>> TokensOf(
    const SpanFinder& finder, const std::string& source) {
  const std::u32string text = DecodeUtf8(source);
  std::map<std::string, std::pair<TemplateTokenKind, int>> tokens;
  for (const Span& span : finder.Find(text)) {
    if (span.kind != SpanKind::kTemplate) continue;
    auto& [kind, count] = tokens[SpanText(text, span)];
    kind = span.token;
    ++count;
  }
  return tokens;
}

// Non-overlapping occurrences of `part` in `text`.
int Occurrences(const std::string& text, const std::string& part) {
  int count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + part.size())) {
    ++count;
  }
  return count;
}

struct Tally {
  int tokens = 0;
  int kept = 0;
};

std::string Share(int part, int whole) {
  if (whole == 0) return "-";
  char share[32];
  std::snprintf(share, sizeof share, "%.1f%%", 100.0 * part / whole);
  return share;
}

int Run() {
  const SpanFinder finder;
  const bool select = absl::GetFlag(FLAGS_select);
  const std::string field = absl::GetFlag(FLAGS_field);
  std::map<std::string, Tally> by_kind;
  Tally all;
  int strings = 0;
  int strings_intact = 0;
  std::string line;
  int line_number = 0;
  while (std::getline(std::cin, line)) {
    ++line_number;
    const nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
    if (!entry.is_object() || !entry.contains("source") ||
        !entry["source"].is_string() ||
        (!select && (!entry.contains(field) || !entry[field].is_string()))) {
      std::cerr << "fanyi-tokens-kept: line " << line_number
                << ": not an object with \"source\""
                << (select ? "" : " and \"" + field + "\"") << " strings\n";
      return 1;
    }
    const auto tokens = TokensOf(finder, entry["source"].get<std::string>());
    if (select) {
      if (!tokens.empty()) std::cout << line << '\n';
      continue;
    }
    if (tokens.empty()) continue;
    const std::string translation = entry[field].get<std::string>();
    ++strings;
    bool intact = true;
    for (const auto& [token, kind_count] : tokens) {
      const auto [kind, count] = kind_count;
      const int kept = std::min(count, Occurrences(translation, token));
      Tally& tally = by_kind[std::string(TemplateTokenKindName(kind))];
      tally.tokens += count;
      tally.kept += kept;
      all.tokens += count;
      all.kept += kept;
      intact = intact && kept == count;
    }
    if (intact) ++strings_intact;
  }
  if (select) return 0;
  std::cout << "| kind | tokens | kept | share kept |\n|---|---:|---:|---:|\n";
  for (const auto& [kind, tally] : by_kind) {
    std::cout << "| " << kind << " | " << tally.tokens << " | " << tally.kept
              << " | " << Share(tally.kept, tally.tokens) << " |\n";
  }
  std::cout << "| all | " << all.tokens << " | " << all.kept << " | "
            << Share(all.kept, all.tokens) << " |\n"
            << "| strings with every token kept | " << strings << " | "
            << strings_intact << " | " << Share(strings_intact, strings)
            << " |\n";
  return 0;
}

}  // namespace
}  // namespace fanyi

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Counts the template tokens a translation kept, per kind.\n"
      "Usage: fanyi-tokens-kept [--select | --field NAME] < lines.jsonl");
  absl::ParseCommandLine(argc, argv);
  return fanyi::Run();
}
