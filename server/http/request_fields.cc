#include "server/http/request_fields.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>
#include <utility>

namespace fanyi {
namespace {

const nlohmann::json kAbsent;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Lowercase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return lower;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() &&
         (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// The media type of a Content-Type value, lowercased: "text/plain".
std::string MediaType(std::string_view content_type) {
  return Lowercase(Trim(content_type.substr(0, content_type.find(';'))));
}

// Parameter `name` of a header value such as `multipart/form-data;
// boundary=x` or `form-data; name="q"; filename="a.txt"`, unquoted; empty
// when absent.
std::string HeaderParameter(std::string_view value, std::string_view name) {
  std::size_t start = value.find(';');
  while (start != std::string_view::npos) {
    std::string_view rest = value.substr(start + 1);
    const std::size_t end = rest.find(';');
    std::string_view parameter = Trim(rest.substr(0, end));
    const std::size_t equals = parameter.find('=');
    if (equals != std::string_view::npos &&
        Lowercase(Trim(parameter.substr(0, equals))) == name) {
      std::string_view found = Trim(parameter.substr(equals + 1));
      if (found.size() >= 2 && found.front() == '"' && found.back() == '"') {
        found = found.substr(1, found.size() - 2);
      }
      return std::string(found);
    }
    start = end == std::string_view::npos ? end : start + 1 + end;
  }
  return "";
}

}  // namespace

void CheckJsonDepth(std::string_view json, int max_depth,
                    const std::string& what) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // The escaped character, whatever it is.
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        throw std::invalid_argument(
            what + " nests arrays and objects more than " +
            std::to_string(max_depth) + " deep; the limit is " +
            std::to_string(max_depth));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::string DecodePercent(std::string_view text, bool plus_is_space) {
  std::string decoded;
  decoded.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus_is_space) {
      decoded += ' ';
    } else if (c == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
               HexValue(text[i + 2]) >= 0) {
      decoded +=
          static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      decoded += c;
    }
  }
  return decoded;
}

RequestFields RequestFields::Read(const HttpRequest& request) {
  RequestFields fields;
  fields.AddForm(request.query);
  if (request.body.empty()) return fields;
  const std::string type = MediaType(request.content_type);
  if (type == "application/json" ||
      (type.empty() &&
       request.body.find_first_not_of(" \t\r\n") != std::string::npos &&
       request.body[request.body.find_first_not_of(" \t\r\n")] == '{')) {
    fields.AddJson(request.body);
  } else if (type == "multipart/form-data") {
    fields.AddMultipart(request.body, request.content_type);
  } else if (type == "application/x-www-form-urlencoded" || type.empty()) {
    fields.AddForm(request.body);
  } else {
    throw std::invalid_argument("a body of type " + type +
                                " cannot be read; send JSON or a form");
  }
  return fields;
}

const nlohmann::json& RequestFields::Get(const std::string& name) const {
  const auto found = fields_.find(name);
  return found == fields_.end() ? kAbsent : found->second;
}

const UploadedFile* RequestFields::File(const std::string& name) const {
  const auto found = files_.find(name);
  return found == files_.end() ? nullptr : &found->second;
}

void RequestFields::AddForm(std::string_view form) {
  std::set<std::string> seen;
  while (!form.empty()) {
    const std::size_t end = form.find('&');
    const std::string_view pair = form.substr(0, end);
    form = end == std::string_view::npos ? "" : form.substr(end + 1);
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    const std::string name = DecodePercent(pair.substr(0, equals), true);
    std::string value = equals == std::string_view::npos
                            ? ""
                            : DecodePercent(pair.substr(equals + 1), true);
    // A body's field replaces the query's of that name; within one form a
    // repeated name collects its values.
    if (seen.insert(name).second) fields_.erase(name);
    AddFormValue(name, std::move(value));
  }
}

void RequestFields::AddFormValue(const std::string& name, std::string value) {
  auto found = fields_.find(name);
  if (found == fields_.end()) {
    fields_.emplace(name, std::move(value));
  } else if (found->second.is_array()) {
    found->second.push_back(std::move(value));
  } else {
    found->second = nlohmann::json::array({found->second, std::move(value)});
  }
}

void RequestFields::AddJson(std::string_view body) {
  // Before nlohmann's parser, whose values copy and print recursively.
  CheckJsonDepth(body, kMaxJsonDepth, "the JSON body");
  nlohmann::json object = nlohmann::json::parse(body, nullptr, false);
  if (object.is_discarded()) {
    throw std::invalid_argument("the body is not valid JSON");
  }
  if (!object.is_object()) {
    throw std::invalid_argument("the JSON body must be an object");
  }
  for (auto& [name, value] : object.items()) fields_[name] = std::move(value);
}

void RequestFields::AddMultipart(std::string_view body,
                                 std::string_view content_type) {
  const std::string boundary = HeaderParameter(content_type, "boundary");
  if (boundary.empty()) {
    throw std::invalid_argument("the multipart body has no boundary");
  }
  const std::string delimiter = "--" + boundary;
  std::size_t position = body.find(delimiter);
  if (position == std::string_view::npos) {
    throw std::invalid_argument("the multipart body has no parts");
  }
  std::set<std::string> seen;
  while (true) {
    position += delimiter.size();
    if (body.substr(position, 2) == "--") return;  // The closing delimiter.
    if (body.substr(position, 2) != "\r\n") break;
    position += 2;
    const std::size_t head_end = body.find("\r\n\r\n", position);
    if (head_end == std::string_view::npos) break;
    const std::string_view head = body.substr(position, head_end - position);
    const std::size_t next = body.find("\r\n" + delimiter, head_end + 4);
    if (next == std::string_view::npos) break;
    std::string content(body.substr(head_end + 4, next - head_end - 4));
    std::string name;
    std::string filename;
    std::string part_type;
    bool is_file = false;
    for (std::string_view rest = head; !rest.empty();) {
      const std::size_t line_end = rest.find("\r\n");
      const std::string_view line = rest.substr(0, line_end);
      rest =
          line_end == std::string_view::npos ? "" : rest.substr(line_end + 2);
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const std::string header = Lowercase(Trim(line.substr(0, colon)));
      const std::string_view value = line.substr(colon + 1);
      if (header == "content-disposition") {
        name = HeaderParameter(value, "name");
        filename = HeaderParameter(value, "filename");
        is_file = value.find("filename=") != std::string_view::npos;
      } else if (header == "content-type") {
        part_type = std::string(Trim(value));
      }
    }
    if (is_file) {
      files_[name] = UploadedFile{filename, part_type, std::move(content)};
    } else {
      if (seen.insert(name).second) fields_.erase(name);
      AddFormValue(name, std::move(content));
    }
    position = next + 2;
  }
  throw std::invalid_argument("the multipart body is cut short or malformed");
}

}  // namespace fanyi
