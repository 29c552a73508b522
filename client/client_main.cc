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
ABSL_FLAG(bool, health, false,
          "Instead of translating, ask the server's health service "
          "(grpc.health.v1) and print its status; exit 0 only when SERVING.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Translates English to Chinese with a fanyi-server.\n"
      "Usage: fanyi-client [--server HOST:PORT] [--timeout_ms N] "
      "[--beam_size N] [--tls_ca FILE] [text ...]\n"
      "Without texts, translates each line of stdin.\n"
      "       fanyi-client --health [--server HOST:PORT] [--timeout_ms N]");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  const bool health = absl::GetFlag(FLAGS_health);

  std::vector<std::string> texts(positional.begin() + 1, positional.end());
  if (health && !texts.empty()) {
    std::cerr << "fanyi-client: --health takes no texts" << std::endl;
    return 1;
  }
  if (texts.empty() && !health) {
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
        channel, std::chrono::milliseconds(absl::GetFlag(FLAGS_timeout_ms)));
    std::cout << status << std::endl;
    return status == "SERVING" ? 0 : 1;
  }
  auto stub = fanyi::v1::Translator::NewStub(channel);
  for (const std::string& text : texts) {
    grpc::ClientContext context;
    context.set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::milliseconds(absl::GetFlag(FLAGS_timeout_ms)));
    fanyi::v1::TranslateRequest request;
    request.set_text(text);
    request.set_beam_size(absl::GetFlag(FLAGS_beam_size));
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
