#ifndef FANYI_SERVER_HTTP_REQUEST_FIELDS_H_
#define FANYI_SERVER_HTTP_REQUEST_FIELDS_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "server/http/http_server.h"

namespace fanyi {

// A file sent in a multipart form.
struct UploadedFile {
  std::string filename;      // As the client named it; may be empty.
  std::string content_type;  // The part's Content-Type; may be empty.
  std::string content;
};

// A request's fields, wherever its client put them, as LibreTranslate's
// clients do: a JSON object body (Mastodon), an url-encoded form
// (libretranslatepy), a multipart form (browsers), or the query string
// with an empty body (deep-translator); on any method, so a GET with a
// form body counts too. Query fields come first; body fields of the same
// name replace them.
class RequestFields {
 public:
  // How deep a JSON body may nest: LibreTranslate's fields go two levels
  // deep (the body, then q's array or glossary's object); a few more are
  // left for fields this server ignores.
  static constexpr int kMaxJsonDepth = 8;

  // Reads the fields of `request`. The body is read by its Content-Type;
  // a body without one is read as JSON when it starts with '{', else as
  // an url-encoded form. Throws std::invalid_argument saying what is
  // wrong with a body that cannot be read.
  static RequestFields Read(const HttpRequest& request);

  // Field `name`: a JSON value as sent, or a form's value as a string (an
  // array of strings when its name repeats); null when absent.
  const nlohmann::json& Get(const std::string& name) const;
  // The file uploaded as field `name`, or null.
  const UploadedFile* File(const std::string& name) const;

 private:
  // Adds the fields of an url-encoded form or query string.
  void AddForm(std::string_view form);
  // Adds a form field; a repeated name becomes an array of its values.
  void AddFormValue(const std::string& name, std::string value);
  void AddMultipart(std::string_view body, std::string_view content_type);
  void AddJson(std::string_view body);

  std::map<std::string, nlohmann::json> fields_;
  std::map<std::string, UploadedFile> files_;
};

// Throws std::invalid_argument, naming `what` ("the JSON body") and the
// limit, when the arrays and objects of `json` nest more than `max_depth`
// deep. One pass, counting brackets outside strings: the cheap check
// before a parser, a copy or a dump whose recursion the depth would drive.
// Says nothing of whether `json` is valid.
void CheckJsonDepth(std::string_view json, int max_depth,
                    const std::string& what);

// `text` with %XX escapes decoded, and '+' as a space when `plus_is_space`
// (forms and query strings). A '%' not followed by two hex digits stays.
std::string DecodePercent(std::string_view text, bool plus_is_space);

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_REQUEST_FIELDS_H_
