#include "server/server_options.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "server/http/client_address.h"
#include "server/http/redis_counters.h"
#include "server/served_model.h"

namespace fanyi {

void ServerOptions::Validate() const {
  if (model_dir.empty() == model_repository.empty()) {
    throw std::invalid_argument("give one of model_dir and model_repository");
  }
  if (repository_poll_ms < 0) {
    throw std::invalid_argument("repository_poll_ms must not be negative");
  }
  if (listen.empty()) {
    throw std::invalid_argument("listen address is empty");
  }
  if (metrics_listen.empty()) {
    throw std::invalid_argument("metrics_listen address is empty");
  }
  if (max_batch_delay_ms < 0) {
    throw std::invalid_argument("max_batch_delay_ms must not be negative");
  }
  if (max_input_chars < 1) {
    throw std::invalid_argument("max_input_chars must be at least 1");
  }
  if (max_request_sentences < 1) {
    throw std::invalid_argument("max_request_sentences must be at least 1");
  }
  if (max_document_depth < 1) {
    throw std::invalid_argument("max_document_depth must be at least 1");
  }
  if (max_glossary_entries < 0) {
    throw std::invalid_argument("max_glossary_entries must not be negative");
  }
  if (beam_size < 1 || max_beam_size < beam_size) {
    throw std::invalid_argument(
        "beam_size must be at least 1 and at most max_beam_size");
  }
  if (max_beam_size > max_batch_size) {
    throw std::invalid_argument(
        "max_beam_size must be at most max_batch_size (a beam search text "
        "takes beam_size rows of a batch)");
  }
  if (max_batch_texts < 1) {
    throw std::invalid_argument("max_batch_texts must be at least 1");
  }
  if (threads < 0) {
    throw std::invalid_argument("threads must not be negative");
  }
  if (device_steps < 0 || device_steps > 64) {
    throw std::invalid_argument(
        "device_steps must be between 0 and 64 (a window holds every "
        "sentence in it until its end)");
  }
  if (workers < 0) {
    throw std::invalid_argument("workers must not be negative");
  }
  if (max_message_bytes < 1) {
    throw std::invalid_argument("max_message_bytes must be at least 1");
  }
  if (http_max_body_bytes < 1) {
    throw std::invalid_argument("http_max_body_bytes must be at least 1");
  }
  if (http_requests_per_minute < 0 || http_chars_per_day < 0 ||
      http_requests_per_hour < 0 || http_requests_per_day < 0 ||
      http_ban_after < 0) {
    throw std::invalid_argument(
        "http_requests_per_minute, http_requests_per_hour, "
        "http_requests_per_day, http_chars_per_day and http_ban_after must "
        "not be negative (0: no limit)");
  }
  AddressRanges::Parse(trusted_proxies);  // Throws when bad.
  if (forwarded_header != "x-forwarded-for" &&
      forwarded_header != "forwarded") {
    throw std::invalid_argument(
        "forwarded_header must be x-forwarded-for or forwarded, not \"" +
        forwarded_header + "\"");
  }
  if (!redis_url.empty()) RedisAddress::Parse(redis_url);
  if (!url_prefix.empty() &&
      (url_prefix.front() != '/' || url_prefix.back() == '/' ||
       url_prefix.find_first_of("?#% \t") != std::string::npos)) {
    throw std::invalid_argument(
        "url_prefix must start with / and not end with one (\"/fanyi\"), "
        "without ?, #, % or spaces, not \"" +
        url_prefix + "\"");
  }
  if (http_frontend_timeout_ms < 0) {
    throw std::invalid_argument("frontend_timeout_ms must not be negative");
  }
  if (cache_bytes < 0) {
    throw std::invalid_argument("cache_bytes must not be negative (0: none)");
  }
  if (require_api_key && api_keys_db.empty()) {
    throw std::invalid_argument("require_api_key needs api_keys_db");
  }
  if (http_parsing_threads < 1) {
    throw std::invalid_argument("http_parsing_threads must be at least 1");
  }
  if (http_file_store_bytes < 0 || http_file_store_client_bytes < 0) {
    throw std::invalid_argument(
        "http_file_store_bytes and http_file_store_client_bytes must not be "
        "negative");
  }
  if (http_file_ttl_s < 1) {
    throw std::invalid_argument("http_file_ttl_s must be at least 1");
  }
  if (max_suggestions < 0 || max_suggestions_bytes < 0) {
    throw std::invalid_argument(
        "max_suggestions and max_suggestions_bytes must not be negative");
  }
  if (pdf_cpu_seconds < 1 || pdf_memory_mb < 64) {
    throw std::invalid_argument(
        "pdf_cpu_seconds must be at least 1 and pdf_memory_mb at least 64");
  }
}

ModelSettings ServedModelSettings(const ServerOptions& options, int workers,
                                  int threads_per_worker) {
  ModelSettings settings;
  settings.translator.device = options.device;
  settings.workers = workers;
  settings.translator.threads = threads_per_worker;
  settings.translator.max_sentence_tokens = options.max_sentence_tokens;
  settings.translator.cpu_decoder = options.cpu_decoder;
  settings.translator.compute_type = options.compute_type;
  settings.translator.beam_stops_early = options.beam_stops_early;
  settings.translator.output_guard = options.output_guard;
  settings.translator.length_penalty = options.length_penalty;
  settings.translator.cuda_graphs = options.cuda_graphs;
  settings.translator.device_steps = options.device_steps;
  settings.batcher.max_batch_size = options.max_batch_size;
  settings.batcher.max_batch_delay =
      std::chrono::milliseconds(options.max_batch_delay_ms);
  settings.batcher.max_queue = options.max_queue;
  TextLimits& limits = settings.translator.limits;
  limits.max_input_chars = options.max_input_chars;
  limits.max_glossary_terms = options.max_glossary_entries;
  limits.max_document_depth = options.max_document_depth;
  // A request's sentences are queued whole, so more than the queue holds
  // could never be: they are refused as too many instead.
  limits.max_request_parts =
      std::min(options.max_request_sentences, options.max_queue);
  limits.max_texts =
      std::min(options.max_batch_texts, limits.max_request_parts);
  limits.default_beam_size = options.beam_size;
  limits.max_beam_size = options.max_beam_size;

  return settings;
}

}  // namespace fanyi
