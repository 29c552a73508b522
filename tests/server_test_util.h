#ifndef FANYI_TESTS_SERVER_TEST_UTIL_H_
#define FANYI_TESTS_SERVER_TEST_UTIL_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace fanyi::testing_util {

// Path of one of the project's executables (fanyi-server, fanyi-train, ...)
// in the build tree.
std::string BinaryPath(const std::string& name);

// Runs `command` through the shell; its exit status (-1 when it did not exit
// normally) and its stdout.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};
CommandResult RunCommand(const std::string& command);

// A TCP connection to 127.0.0.1:`port`; throws std::runtime_error when it
// cannot be made. The caller closes the descriptor.
int ConnectToLocalPort(int port);

// GET http://127.0.0.1:port/path over a plain socket; returns the body.
// Throws std::runtime_error on a non-200 answer, or when no answer has come
// after `timeout_s` (a guard against hanging the test, not a measurement).
std::string HttpGet(int port, const std::string& path, int timeout_s = 60);

// An HTTP answer: status code, headers (names lowercased) and body.
struct HttpAnswer {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
};

// Sends `request` (a whole HTTP/1.1 request as written on the wire; it
// should say "Connection: close") to 127.0.0.1:`port` and reads the answer
// until the server closes. Throws std::runtime_error when no answer has come
// after `timeout_s` or it cannot be read.
HttpAnswer HttpExchange(int port, const std::string& request,
                        int timeout_s = 60);

// POSTs `json` (a JSON text) to `path` on 127.0.0.1:`port` (HttpExchange).
HttpAnswer HttpPostJson(int port, const std::string& path,
                        const std::string& json);

// The value of the sample line that starts with `series` (name and labels
// exactly as exposed) in Prometheus text format; -1 when absent.
double MetricValue(const std::string& metrics, const std::string& series);

// Scrapes /metrics on `port` until `series` reaches `at_least` or
// `patience` passes (polled, a state, not a delay); returns the last scrape.
std::string WaitForMetric(int port, const std::string& series, double at_least,
                          std::chrono::seconds patience);

// Translates `text` on the server at `address` ("127.0.0.1:PORT") over a
// new plaintext channel, with a 60 s deadline (a guard against hanging the
// test).
grpc::Status TranslateAt(const std::string& address, const std::string& text,
                         v1::TranslateResponse* response);

// The canonical name of a gRPC status code ("OK", "UNAVAILABLE").
std::string StatusCodeName(grpc::StatusCode code);

}  // namespace fanyi::testing_util

#endif  // FANYI_TESTS_SERVER_TEST_UTIL_H_
