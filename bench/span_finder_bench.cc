// fanyi-spans: times SpanFinder::Find on the shapes that made it slow when
// each word start rescanned what followed it (#28): long runs of address
// characters, and glossaries of many long terms sharing their beginnings.
// Each text is 20,000 characters, the server's default limit per text.
// Prints seconds per Find, the mean of three.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/text/span_finder.h"
#include "common/text/utf8.h"
int main() {
  using fanyi::AppendUtf8;
  using fanyi::DecodeUtf8;
  using fanyi::SpanFinder;
  std::vector<std::string> terms;
  std::string stem(254, 'a');
  for (int k = 0; k < 256; ++k) {
    std::string t = stem;
    AppendUtf8(0x4E00 + k, &t);
    terms.push_back(t);
  }
  SpanFinder plain, glossary(terms);
  std::vector<std::string> spaced;
  std::string spaced_stem;
  for (int i = 0; i < 127; ++i) spaced_stem += "a ";
  for (int k = 0; k < 256; ++k) {
    std::string t = spaced_stem;
    AppendUtf8(0x4E00 + k, &t);
    spaced.push_back(t);
  }
  SpanFinder spaced_glossary(spaced);
  std::string words;
  for (int i = 0; i < 10000; ++i) words += "a ";
  struct Case {
    const char* name;
    std::string text;
    const SpanFinder* finder;
  };
  std::string aa, at, gl, nodot;
  for (int i = 0; i < 10000; ++i) aa += "a.";
  for (int i = 0; i < 9990; ++i) nodot += "a.";
  nodot += "b@nodot";
  for (int i = 0; i < 80; ++i) gl += stem + " ";
  std::vector<Case> cases = {
      {"a.a.a... (20,000 chars)", aa, &plain},
      {"a.a...b@nodot (20,000 chars)", nodot, &plain},
      {"256 terms 'a a a ... X', text 'a a a ...' (20,000 chars)", words,
       &spaced_glossary},
      {"256 terms of 255 chars, text of 80 near-misses (20,400 chars)", gl,
       &glossary}};
  for (auto& c : cases) {
    std::u32string t = DecodeUtf8(c.text);
    auto start = std::chrono::steady_clock::now();
    size_t n = 0;
    for (int r = 0; r < 3; ++r) n += c.finder->Find(t).size();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count() /
        3;
    std::printf("%-62s %9.4f s per Find (%zu spans)\n", c.name, s, n / 3);
  }
}
