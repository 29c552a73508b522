// fanyi-client: translates its arguments (or stdin lines) with a
// fanyi-server, one translation per line on stdout; with --health, asks the
// server's health service instead (the images' health check).

#include <chrono>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "client/client_tls_flags.h"
#include "client/health_check.h"
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
ABSL_FLAG(bool, list_models, false,
          "Instead of translating, list the server's models, one a line.");
ABSL_FLAG(bool, health, false,
          "Instead of translating, ask the server's health service "
          "(grpc.health.v1) and print its status; exit 0 only when SERVING.");
ABSL_FLAG(std::string, health_service, "",
          "With --health: the service asked about; empty for the whole "
          "server (serving while one model does), a model's name (en-zh) "
          "for that model.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Translates text with a fanyi-server's models.\n"
      "Usage: fanyi-client [--server HOST:PORT] [--timeout_ms N] "
      "[--beam_size N] [--source_language L --target_language L] "
      "[--tls_ca FILE] [text ...]\n"
      "Without texts, translates each line of stdin (blank lines come back "
      "blank).\n"
      "       fanyi-client --list_models [--server HOST:PORT]\n"
      "       fanyi-client --health [--health_service MODEL] "
      "[--server HOST:PORT] [--timeout_ms N]");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  const bool health = absl::GetFlag(FLAGS_health);

  std::vector<std::string> texts(positional.begin() + 1, positional.end());
  const bool list_models = absl::GetFlag(FLAGS_list_models);
  if ((health || list_models) && !texts.empty()) {
    std::cerr << "fanyi-client: --health and --list_models take no texts"
              << std::endl;
    return 1;
  }
  // Lines of stdin, when no texts are given: a blank one comes back blank,
  // as a document's blank lines should (an empty argument is an error).
  const bool from_stdin = texts.empty() && !health && !list_models;
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
