// fanyi-keys: manages the API keys of fanyi-server --api_keys_db (a SQLite
// file in LibreTranslate's layout) while the server runs.
//
//   fanyi-keys --db keys.db add [KEY] [--requests_per_minute N]
//       [--chars_per_day N] [--chars_per_request N]
//   fanyi-keys --db keys.db set-limits KEY [--requests_per_minute N|default]
//       [--chars_per_day N|default] [--chars_per_request N|default]
//   fanyi-keys --db keys.db remove KEY
//   fanyi-keys --db keys.db list
#include <cstdio>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "server/http/api_key_store.h"

ABSL_FLAG(std::string, db, "", "The API keys file (created when missing).");
ABSL_FLAG(std::string, requests_per_minute, "",
          "The key's requests a minute: a number (0: none, the key is "
          "suspended, as LibreTranslate reads its req_limit), or default "
          "(the server's --http_requests_per_minute).");
ABSL_FLAG(std::string, chars_per_day, "",
          "The key's characters a day: a number (0: no limit), or default "
          "(the server's --http_chars_per_day).");
ABSL_FLAG(std::string, chars_per_request, "",
          "The characters each text of the key's requests may hold "
          "(LibreTranslate's char_limit): a number (0: no limit), or default "
          "(the server's own limits only).");

namespace {

// A limit flag: nullopt when not given; `*reset` when it says "default".
std::optional<int64_t> LimitFlag(const std::string& value, const char* name,
                                 bool* reset) {
  *reset = value == "default";
  if (value.empty() || *reset) return std::nullopt;
  int64_t number = 0;
  if (!absl::SimpleAtoi(value, &number) || number < 0) {
    throw std::invalid_argument(std::string("--") + name +
                                " must be a whole number from 0, or default");
  }
  return number;
}

// A key as LibreTranslate's ltmanage makes one: a random UUID (version 4).
std::string RandomKey() {
  unsigned char bytes[16];
  std::ifstream random("/dev/urandom", std::ios::binary);
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof bytes)) {
    throw std::runtime_error("cannot read /dev/urandom");
  }
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0f) | 0x40);
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3f) | 0x80);
  std::string key;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) key += '-';
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
    key += hex;
  }
  return key;
}

// `key` as a terminal shows it safely: bytes outside printable ASCII (a
// file written by hand may hold any) as \xNN.
std::string Printable(const std::string& key) {
  std::string shown;
  for (const unsigned char c : key) {
    if (c >= 0x21 && c <= 0x7e && c != '\\') {
      shown += static_cast<char>(c);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      shown += escaped;
    }
  }
  return shown;
}

std::string Shown(const std::optional<int64_t>& limit) {
  return limit ? std::to_string(*limit) : "default";
}

int Run(const std::vector<char*>& arguments) {
  const std::string db = absl::GetFlag(FLAGS_db);
  if (db.empty() || arguments.size() < 2) {
    std::fprintf(stderr, "fanyi-keys: give --db and a command; see --help\n");
    return 2;
  }
  const std::string command = arguments[1];
  const std::vector<std::string> operands(arguments.begin() + 2,
                                          arguments.end());
  fanyi::ApiKeyStore store(db);
  if (command == "list" && operands.empty()) {
    for (const fanyi::ApiKeyEntry& entry : store.List()) {
      std::printf(
          "%s requests_per_minute=%s chars_per_day=%s "
          "chars_per_request=%s\n",
          entry.key.c_str(), Shown(entry.limits.requests_per_minute).c_str(),
          Shown(entry.limits.chars_per_day).c_str(),
          Shown(entry.limits.chars_per_request).c_str());
    }
    return 0;
  }
  if (command == "remove" && operands.size() == 1) {
    if (!store.Remove(operands[0])) {
      std::fprintf(stderr, "fanyi-keys: %s holds no such key\n", db.c_str());
      return 1;
    }
    return 0;
  }
  bool reset[3] = {};
  fanyi::ApiKeyLimits given;
  given.requests_per_minute =
      LimitFlag(absl::GetFlag(FLAGS_requests_per_minute), "requests_per_minute",
                &reset[0]);
  given.chars_per_day =
      LimitFlag(absl::GetFlag(FLAGS_chars_per_day), "chars_per_day", &reset[1]);
  given.chars_per_request = LimitFlag(absl::GetFlag(FLAGS_chars_per_request),
                                      "chars_per_request", &reset[2]);
  if (command == "add" && operands.size() <= 1) {
    const std::string key = operands.empty() ? RandomKey() : operands[0];
    store.Put(key, given);
    std::printf("%s\n", key.c_str());
    return 0;
  }
  if (command == "set-limits" && operands.size() == 1) {
    const bool changed = store.Update(
        operands[0], [&](std::optional<fanyi::ApiKeyLimits>* limits) {
          if (!*limits) return false;
          std::optional<int64_t>* fields[] = {&(*limits)->requests_per_minute,
                                              &(*limits)->chars_per_day,
                                              &(*limits)->chars_per_request};
          const std::optional<int64_t>* values[] = {&given.requests_per_minute,
                                                    &given.chars_per_day,
                                                    &given.chars_per_request};
          for (int i = 0; i < 3; ++i) {
            if (reset[i]) fields[i]->reset();
            if (*values[i]) *fields[i] = *values[i];
          }
          return true;
        });
    if (!changed) {
      std::fprintf(stderr, "fanyi-keys: %s holds no such key\n", db.c_str());
      return 1;
    }
    return 0;
  }
  std::fprintf(stderr, "fanyi-keys: unknown command or operands: %s\n",
               command.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Manages fanyi-server's API keys (--api_keys_db) while it runs.\n"
      "Usage: fanyi-keys --db FILE add [KEY] [--requests_per_minute N] "
      "[--chars_per_day N] [--chars_per_request N]\n"
      "       fanyi-keys --db FILE set-limits KEY [--requests_per_minute "
      "N|default] [--chars_per_day N|default] [--chars_per_request "
      "N|default]\n"
      "       fanyi-keys --db FILE remove KEY\n"
      "       fanyi-keys --db FILE list\n"
      "A key without a limit takes the server's default. 0 requests a "
      "minute suspends the key; 0 characters is no limit.");
  const std::vector<char*> arguments = absl::ParseCommandLine(argc, argv);
  try {
    return Run(arguments);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fanyi-keys: %s\n", e.what());
    return 1;
  }
}
