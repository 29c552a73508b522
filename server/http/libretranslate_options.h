#ifndef FANYI_SERVER_HTTP_LIBRETRANSLATE_OPTIONS_H_
#define FANYI_SERVER_HTTP_LIBRETRANSLATE_OPTIONS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/http/api_access.h"
#include "server/http/client_address.h"
#include "server/pdf_reader.h"
#include "server/translation_cache.h"

namespace fanyi {

// Settings of the LibreTranslate API.
struct LibreTranslateOptions {
  // API keys and the limits of each key or address.
  ApiAccessOptions access;
  // Translations kept to answer the same text asked the same way again;
  // null: none. Not owned: it must outlive the API.
  TranslationCache* cache = nullptr;
  // /frontend/settings' frontendTimeout: how long the page waits after
  // typing before it translates.
  int frontend_timeout_ms = 500;
  // The path a proxy serves the API under ("/fanyi"; empty: the root):
  // requests may come with it or without (a proxy that strips it), and
  // download addresses start with it. The page's own addresses are
  // relative, so it works under any prefix.
  std::string url_prefix;
  // Take each client's address from X-Forwarded-For or Forwarded when its
  // connection comes from one of trusted_proxies (CIDR ranges, commas
  // between), so that clients behind an ingress are told apart for the
  // limits, the file store and the parsing turns (ClientAddress).
  bool trust_forwarded_for = false;
  std::string trusted_proxies = "127.0.0.0/8,::1";
  // The header those proxies write the address into; the other is never
  // read.
  ForwardedHeader forwarded_header = ForwardedHeader::kXForwardedFor;
  // How long a /translate request may take before it fails with 504.
  std::chrono::milliseconds translate_timeout{60000};
  // How long a translated file waits for its download.
  std::chrono::seconds file_time_to_live{600};
  // What the translated files waiting for their download may take in all;
  // /translate_file answers 503 when they would take more.
  std::size_t max_stored_file_bytes = 256 << 20;
  // What one client's (API key's, else address's) may take; it gets 429
  // when they would take more.
  std::size_t max_client_stored_file_bytes = 32 << 20;
  // How uploaded .pdf files are read: in a process of their own when
  // pdf_reader.program is set, else in this one.
  PdfReaderOptions pdf_reader;
  // Threads that read the bodies of /translate, /detect and /translate_file
  // (and their documents), off the connection threads, taking the clients
  // (addresses) in turns, each on one thread at a time (FairPool). More
  // threads than cores: a client's cheap request need not wait for another
  // client's slow one to end, the cores are shared.
  int parsing_threads = 4;
  // Such requests waiting for a parsing thread, at most; more get 429 (or
  // push out the newest of the longest queue's).
  int max_waiting_requests = 64;
  // Of those, one client's at most; its next ones get 429.
  int max_client_waiting_requests = 16;
  // Large reads (a query and body over large_body_bytes, or a file to
  // translate) run this many at a time, in the clients' turns, and may take
  // half the waiting places: a hostile document may take a core and its
  // parse budget's memory (about 16 MiB + 48 B a byte of HTML) before it is
  // refused, and clients on many addresses would otherwise take that many
  // times over. Below 16 KiB, markup that Gumbo reads slowly (elements
  // nested in ways the pass before the parse misses) costs little.
  int max_large_reads = 1;
  std::size_t large_body_bytes = 16 << 10;
  // The SQLite file POST /suggest adds users' suggestions to (created when
  // missing; LibreTranslate's own suggestions.db will do); empty: /suggest
  // answers 403, as LibreTranslate does without --suggestions.
  std::string suggestions_db;
  // Suggestions the file may hold, and bytes it may take; /suggest answers
  // 507 beyond.
  int64_t max_suggestions = 1000000;
  int64_t max_suggestions_bytes = int64_t{1} << 30;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_LIBRETRANSLATE_OPTIONS_H_
