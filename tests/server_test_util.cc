#include "tests/server_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace fanyi::testing_util {

std::string BinaryPath(const std::string& name) {
  return std::string(FANYI_BINARY_DIR) + "/bin/" + name;
}

CommandResult RunCommand(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::string output;
  char buffer[4096];
  size_t read;
  while ((read = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    output.append(buffer, read);
  }
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

int ConnectToLocalPort(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    close(fd);
    throw std::runtime_error("cannot connect to port " + std::to_string(port));
  }
  return fd;
}

HttpAnswer HttpPostJson(int port, const std::string& path,
                        const std::string& json) {
  return HttpExchange(port, "POST " + path +
                                " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                "Content-Type: application/json\r\n"
                                "Content-Length: " +
                                std::to_string(json.size()) + "\r\n\r\n" +
                                json);
}

HttpAnswer HttpExchange(int port, const std::string& request, int timeout_s) {
  const int fd = ConnectToLocalPort(port);
  timeval timeout{};
  timeout.tv_sec = timeout_s;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    throw std::runtime_error("send() failed");
  }
  std::string response;
  char buffer[4096];
  ssize_t received;
  while ((received = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    response.append(buffer, static_cast<size_t>(received));
  }
  const bool timed_out = received < 0 && response.empty();
  close(fd);
  if (timed_out) {
    throw std::runtime_error("no HTTP answer within " +
                             std::to_string(timeout_s) + " s");
  }
  const size_t head_end = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || head_end == std::string::npos) {
    throw std::runtime_error("not an HTTP answer: " + response.substr(0, 200));
  }
  HttpAnswer answer;
  answer.status = std::stoi(response.substr(9, 3));
  std::istringstream head(response.substr(0, head_end));
  std::string line;
  std::getline(head, line);  // The status line.
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    answer.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
  }
  answer.body = response.substr(head_end + 4);
  return answer;
}

std::string HttpGet(int port, const std::string& path, int timeout_s) {
  HttpAnswer answer;
  try {
    answer = HttpExchange(port,
                          "GET " + path +
                              " HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                              "Connection: close\r\n\r\n",
                          timeout_s);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("HTTP GET " + path + ": " + e.what());
  }
  if (answer.status != 200) {
    throw std::runtime_error("HTTP GET " + path + " failed: status " +
                             std::to_string(answer.status));
  }
  return answer.body;
}

double MetricValue(const std::string& metrics, const std::string& series) {
  size_t line_start = 0;
  while (line_start < metrics.size()) {
    size_t line_end = metrics.find('\n', line_start);
    if (line_end == std::string::npos) line_end = metrics.size();
    const std::string line = metrics.substr(line_start, line_end - line_start);
    if (line.rfind(series + " ", 0) == 0) {
      return std::stod(line.substr(series.size() + 1));
    }
    line_start = line_end + 1;
  }
  return -1;
}

std::string WaitForMetric(int port, const std::string& series, double at_least,
                          std::chrono::seconds patience) {
  const auto give_up = std::chrono::steady_clock::now() + patience;
  std::string metrics = HttpGet(port, "/metrics");
  while (MetricValue(metrics, series) < at_least &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    metrics = HttpGet(port, "/metrics");
  }
  return metrics;
}

std::string StatusCodeName(grpc::StatusCode code) {
  // gRPC's codes are numbered like absl's.
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

grpc::Status TranslateAt(const std::string& address, const std::string& text,
                         v1::TranslateResponse* response) {
  auto stub = v1::Translator::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(60));
  v1::TranslateRequest request;
  request.set_text(text);
  return stub->Translate(&context, request, response);
}

}  // namespace fanyi::testing_util
