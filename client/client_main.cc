// fanyi-client: translates its arguments (or stdin lines) with a
// fanyi-server, one translation per line on stdout; with --po, fills in a
// gettext catalog; with --health, asks the server's health service instead
// (the images' health check).

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "client/client_tls_flags.h"
#include "client/health_check.h"
#include "common/formats/po_document.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/tls_files.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "Server address.");
ABSL_FLAG(int, timeout_ms, 10000, "Deadline per request in milliseconds.");
ABSL_FLAG(int, beam_size, 0,
          "Beam size (0: the server's default, 1: greedy, more: beam).");
ABSL_FLAG(std::string, source_language, "",
          "The served model's source language, for a server with several "
          "models (with --target_language; --list_models lists them).");
ABSL_FLAG(std::string, target_language, "",
          "The served model's target language.");
ABSL_FLAG(std::string, po, "",
          "A gettext .po file to fill in: its untranslated messages are "
          "translated (in batches of 32) and marked fuzzy, the rest kept "
          "as it is; written to --out, or stdout.");
ABSL_FLAG(std::string, out, "", "With --po: where the filled-in file goes.");
ABSL_FLAG(bool, list_models, false,
          "Instead of translating, list the server's models, one a line.");
ABSL_FLAG(bool, health, false,
          "Instead of translating, ask the server's health service "
          "(grpc.health.v1) and print its status; exit 0 only when SERVING.");
ABSL_FLAG(std::string, health_service, "",
          "With --health: the service asked about; empty for the whole "
          "server (serving while one model does), a model's name (en-zh) "
          "for that model.");

namespace {

// The script a Chinese catalog's Language asks for ("zh_TW" is Traditional,
// Taiwan); unspecified for any other.
fanyi::v1::Script ScriptOf(std::string language) {
  for (char& c : language) {
    c = c == '-'
            ? '_'
            : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (language == "zh_tw" || language == "zh_hant") {
    return fanyi::v1::SCRIPT_TRADITIONAL_TAIWAN;
  }
  if (language == "zh_hk" || language == "zh_mo") {
    return fanyi::v1::SCRIPT_TRADITIONAL_HONG_KONG;
  }
  if (language.rfind("zh", 0) == 0) return fanyi::v1::SCRIPT_SIMPLIFIED;
  return fanyi::v1::SCRIPT_UNSPECIFIED;
}

// Fills in the .po file at `path` through TranslateBatch, 32 texts a call;
// writes it to `out` (stdout when empty). Returns the exit status.
int FillPo(fanyi::v1::Translator::Stub& stub, const std::string& path,
           const std::string& out) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::cerr << "fanyi-client: cannot open " << path << std::endl;
    return 1;
  }
  std::string content((std::istreambuf_iterator<char>(file)),
                      std::istreambuf_iterator<char>());
  std::optional<fanyi::PoDocument> po;
  try {
    po.emplace(std::move(content));
  } catch (const std::invalid_argument& e) {
    std::cerr << "fanyi-client: " << path << ": " << e.what() << std::endl;
    return 1;
  }
  constexpr std::size_t kBatch = 32;
  std::vector<std::string> translations;
  for (std::size_t begin = 0; begin < po->texts().size(); begin += kBatch) {
    fanyi::v1::TranslateBatchRequest request;
    const std::size_t end = std::min(po->texts().size(), begin + kBatch);
    for (std::size_t k = begin; k < end; ++k) {
      request.add_texts(po->texts()[k]);
    }
    request.set_beam_size(absl::GetFlag(FLAGS_beam_size));
    request.set_script(ScriptOf(po->language()));
    request.mutable_model()->set_source_language(
        absl::GetFlag(FLAGS_source_language));
    request.mutable_model()->set_target_language(
        absl::GetFlag(FLAGS_target_language));
    grpc::ClientContext context;
    context.set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::milliseconds(absl::GetFlag(FLAGS_timeout_ms)));
    fanyi::v1::TranslateBatchResponse response;
    const grpc::Status status =
        stub.TranslateBatch(&context, request, &response);
    if (!status.ok()) {
      std::cerr << "fanyi-client: " << path << ": "
                << absl::StatusCodeToString(
                       static_cast<absl::StatusCode>(status.error_code()))
                << ": " << status.error_message() << std::endl;
      return 1;
    }
    for (const fanyi::v1::Translation& translation : response.translations()) {
      translations.push_back(translation.text());
    }
  }
  const std::string written = po->Write(translations);
  if (out.empty()) {
    std::cout << written;
    return std::cout ? 0 : 1;
  }
  std::ofstream target(out, std::ios::binary);
  target << written;
  if (!target.flush()) {
    std::cerr << "fanyi-client: writing " << out << " failed" << std::endl;
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Translates text with a fanyi-server's models.\n"
      "Usage: fanyi-client [--server HOST:PORT] [--timeout_ms N] "
      "[--beam_size N] [--source_language L --target_language L] "
      "[--tls_ca FILE] [text ...]\n"
      "Without texts, translates each line of stdin (blank lines come back "
      "blank).\n"
      "       fanyi-client --po FILE.po [--out FILLED.po] [--server "
      "HOST:PORT]\n"
      "       fanyi-client --list_models [--server HOST:PORT]\n"
      "       fanyi-client --health [--health_service MODEL] "
      "[--server HOST:PORT] [--timeout_ms N]");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  const bool health = absl::GetFlag(FLAGS_health);

  std::vector<std::string> texts(positional.begin() + 1, positional.end());
  const bool list_models = absl::GetFlag(FLAGS_list_models);
  const std::string po = absl::GetFlag(FLAGS_po);
  if ((health || list_models || !po.empty()) && !texts.empty()) {
    std::cerr << "fanyi-client: --health, --list_models and --po take no texts"
              << std::endl;
    return 1;
  }
  // Lines of stdin, when no texts are given: a blank one comes back blank,
  // as a document's blank lines should (an empty argument is an error).
  const bool from_stdin =
      texts.empty() && !health && !list_models && po.empty();
  if (from_stdin) {
    for (std::string line; std::getline(std::cin, line);) {
      texts.push_back(line);
    }
  }

  const fanyi::ClientTls tls = fanyi::ClientTlsFromFlags();
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  try {
    credentials = fanyi::MakeChannelCredentials(tls.files, tls.use_tls);
  } catch (const std::exception& e) {
    std::cerr << "fanyi-client: " << e.what() << std::endl;
    return 1;
  }
  auto channel = grpc::CreateChannel(absl::GetFlag(FLAGS_server), credentials);
  if (health) {
    const std::string status = fanyi::HealthStatus(
        channel, std::chrono::milliseconds(absl::GetFlag(FLAGS_timeout_ms)),
        absl::GetFlag(FLAGS_health_service));
    std::cout << status << std::endl;
    return status == "SERVING" ? 0 : 1;
  }
  auto stub = fanyi::v1::Translator::NewStub(channel);
  if (!po.empty()) return FillPo(*stub, po, absl::GetFlag(FLAGS_out));
  if (list_models) {
    grpc::ClientContext context;
    context.set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::milliseconds(absl::GetFlag(FLAGS_timeout_ms)));
    fanyi::v1::ListModelsResponse response;
    const grpc::Status status =
        stub->ListModels(&context, fanyi::v1::ListModelsRequest(), &response);
    if (!status.ok()) {
      std::cerr << "fanyi-client: " << status.error_message() << std::endl;
      return 1;
    }
    for (const fanyi::v1::ModelInfo& model : response.models()) {
      std::cout << model.model().name() << " version "
                << model.model().version() << ": " << model.source_language()
                << " -> " << model.target_language() << ", "
                << model.model_version() << " on " << model.device()
                << std::endl;
    }
    return 0;
  }
  for (const std::string& text : texts) {
    if (from_stdin && text.find_first_not_of(" \t\r") == std::string::npos) {
      std::cout << text << std::endl;
      continue;
    }
    grpc::ClientContext context;
    context.set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::milliseconds(absl::GetFlag(FLAGS_timeout_ms)));
    fanyi::v1::TranslateRequest request;
    request.set_text(text);
    request.set_beam_size(absl::GetFlag(FLAGS_beam_size));
    request.mutable_model()->set_source_language(
        absl::GetFlag(FLAGS_source_language));
    request.mutable_model()->set_target_language(
        absl::GetFlag(FLAGS_target_language));
    fanyi::v1::TranslateResponse response;
    const grpc::Status status = stub->Translate(&context, request, &response);
    if (!status.ok()) {
      // gRPC's status codes are numbered like absl's.
      std::cerr << "fanyi-client: "
                << absl::StatusCodeToString(
                       static_cast<absl::StatusCode>(status.error_code()))
                << ": " << status.error_message() << " (text: " << text << ")"
                << std::endl;
      return 1;
    }
    std::cout << response.translation().text() << std::endl;
  }
  return 0;
}
