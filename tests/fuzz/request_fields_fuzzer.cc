// libFuzzer target: RequestFields::Read, the HTTP surface's reading of a
// request's fields, on arbitrary bodies and query strings under each
// Content-Type it reads.
//
// Input: the first byte picks the Content-Type (none, JSON, url-encoded,
// multipart with boundary "b", or another type); up to the first '\n' of
// the rest is the query string, the remainder the body. Properties:
//   - it returns or throws std::invalid_argument, never anything else, never
//     a crash;
//   - what it read, through LibreTranslate's field readers (q, glossary,
//     do_not_translate, beam_size, alternatives, format), gives values or
//     HttpError 400, nothing else;
//   - an url-encoded body of plain `name=value` pairs (no '%', '+', '&' or
//     '=' in them) reads back each value.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "server/http/libretranslate_fields.h"
#include "server/http/request_fields.h"
#include "tests/fuzz/fuzz_check.h"

namespace fanyi::fuzzing {
namespace {

const char* const kContentTypes[] = {
    "", "application/json", "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=b", "text/plain"};

void CheckPlainForm(const std::string& name, const std::string& value) {
  HttpRequest request;
  request.content_type = "application/x-www-form-urlencoded";
  request.body = name + "=" + value;
  const RequestFields fields = RequestFields::Read(request);
  FuzzCheck(fields.Get(name) == value,
            "the form field " + name + " does not read back as " + value);
}

// Each field reader of /translate on `fields`: a value or a 400.
void ReadLibreTranslateFields(const RequestFields& fields) {
  const std::function<void()> readers[] = {
      [&] { ReadTexts(fields, nullptr); },
      [&] { ReadGlossary(fields); },
      [&] { StringList(fields, "do_not_translate"); },
      [&] { IntegerField(fields, "beam_size", 0, 0, kMaxRequestedBeam); },
      [&] { IntegerField(fields, "alternatives", 0, 0, kMaxRequestedBeam); },
      [&] { StringField(fields, "format"); }};
  for (const auto& read : readers) {
    try {
      read();
    } catch (const HttpError& e) {
      FuzzCheck(e.status == 400,
                "a field reader answered " + std::to_string(e.status));
    }
  }
}

}  // namespace
}  // namespace fanyi::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fanyi::fuzzing::FuzzCheck;
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  fanyi::HttpRequest request;
  request.content_type = fanyi::fuzzing::kContentTypes[data[0] % 5];
  const std::size_t newline = input.find('\n');
  request.query = input.substr(0, newline);
  request.body = newline == std::string::npos ? "" : input.substr(newline + 1);
  try {
    const fanyi::RequestFields fields = fanyi::RequestFields::Read(request);
    fanyi::fuzzing::ReadLibreTranslateFields(fields);
  } catch (const std::invalid_argument&) {
    // A body it cannot read, said so.
  }
  const std::size_t cut = input.size() / 2;
  const std::string name = input.substr(0, cut);
  const std::string value = input.substr(cut);
  if (!name.empty() && name.find_first_of("%+&=") == std::string::npos &&
      value.find_first_of("%+&=") == std::string::npos) {
    fanyi::fuzzing::CheckPlainForm(name, value);
  }
  return 0;
}
