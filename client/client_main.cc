// fanyi-client: translates its arguments (or stdin lines) with a
// fanyi-server, one translation per line on stdout.

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
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/tls_files.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "Server address.");
ABSL_FLAG(int, timeout_ms, 10000, "Deadline per request in milliseconds.");
ABSL_FLAG(int, beam_size, 0,
          "Beam size (0: the server's default, 1: greedy, more: beam).");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Translates English to Chinese with a fanyi-server.\n"
      "Usage: fanyi-client [--server HOST:PORT] [--timeout_ms N] "
      "[--beam_size N] [--tls_ca FILE] [text ...]\n"
      "Without texts, translates each line of stdin.");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);

  std::vector<std::string> texts(positional.begin() + 1, positional.end());
  if (texts.empty()) {
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
