#ifndef FANYI_TESTS_SERVER_PROCESS_H_
#define FANYI_TESTS_SERVER_PROCESS_H_

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

namespace fanyi::testing_util {

// A real fanyi-server process on 127.0.0.1 with ports picked by the kernel,
// for tests of the binary itself (signals, exit codes). Killed with SIGKILL
// by the destructor if it is still running.
class ServerProcess {
 public:
  // Starts fanyi-server with `flags` added to --listen, --metrics_listen and
  // --http_listen on 127.0.0.1:0, one thread and the CPU (a --device in
  // `flags` wins), and waits for the lines that name its ports. Throws
  // std::runtime_error with that line when the server exits or prints something
  // else instead.
  explicit ServerProcess(const std::vector<std::string>& flags);
  ~ServerProcess();

  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  int http_port() const { return http_port_; }  // LibreTranslate's API.
  pid_t pid() const { return pid_; }
  // "127.0.0.1:<grpc port>".
  std::string address() const;

  void Signal(int signal_number) const;
  // Waits for the process to end and returns its waitpid() status. Kills it
  // with SIGKILL first if it has not ended after `limit_s` (a guard against
  // hanging the test run; the status then says it was killed).
  int Wait(int limit_s = 120);
  // Everything the server printed on stdout after the lines naming its
  // ports; blocks until the server closes its stdout (exits).
  std::string RemainingOutput();

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;  // The server's stdout, read end.
  int grpc_port_ = 0;
  int metrics_port_ = 0;
  int http_port_ = 0;
};

}  // namespace fanyi::testing_util

#endif  // FANYI_TESTS_SERVER_PROCESS_H_
