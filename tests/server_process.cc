#include "tests/server_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <stdexcept>
#include <thread>

#include "tests/server_test_util.h"

namespace fanyi::testing_util {

ServerProcess::ServerProcess(const std::vector<std::string>& flags) {
  // Everything the child needs is built before fork(): it only execs.
  const std::string binary = BinaryPath("fanyi-server");
  std::vector<std::string> arguments = {binary,
                                        "--listen=127.0.0.1:0",
                                        "--metrics_listen=127.0.0.1:0",
                                        "--http_listen=127.0.0.1:0",
                                        "--threads=1",
                                        "--device=cpu"};
  arguments.insert(arguments.end(), flags.begin(), flags.end());
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  int stdout_pipe[2];
  if (pipe(stdout_pipe) != 0) throw std::runtime_error("pipe() failed");
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork() failed");
  if (pid_ == 0) {
    dup2(stdout_pipe[1], STDOUT_FILENO);
    close(stdout_pipe[0]);
    close(stdout_pipe[1]);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(stdout_pipe[1]);
  stdout_ = fdopen(stdout_pipe[0], "r");
  char line[1024] = {};
  const std::string first_line =
      fgets(line, sizeof(line), stdout_) != nullptr ? line : "";
  std::smatch match;
  if (!std::regex_search(
          first_line, match,
          std::regex(R"(listening on 127\.0\.0\.1:(\d+), metrics on )"
                     R"(http://127\.0\.0\.1:(\d+)/)"))) {
    Wait();
    throw std::runtime_error("fanyi-server did not report its ports: " +
                             first_line);
  }
  grpc_port_ = std::stoi(match[1]);
  metrics_port_ = std::stoi(match[2]);
  const std::string http_line =
      fgets(line, sizeof(line), stdout_) != nullptr ? line : "";
  if (!std::regex_search(
          http_line, match,
          std::regex(R"(LibreTranslate API on http://127\.0\.0\.1:(\d+))"))) {
    Wait();
    throw std::runtime_error("fanyi-server did not report its HTTP port: " +
                             http_line);
  }
  http_port_ = std::stoi(match[1]);
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stdout_ != nullptr) fclose(stdout_);
}

std::string ServerProcess::address() const {
  return "127.0.0.1:" + std::to_string(grpc_port_);
}

void ServerProcess::Signal(int signal_number) const {
  if (pid_ > 0) kill(pid_, signal_number);
}

int ServerProcess::Wait(int limit_s) {
  if (pid_ <= 0) throw std::logic_error("ServerProcess::Wait called twice");
  int status = 0;
  const auto give_up_at =
      std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= give_up_at) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
  return status;
}

std::string ServerProcess::RemainingOutput() {
  std::string output;
  char buffer[4096];
  size_t read;
  while ((read = fread(buffer, 1, sizeof(buffer), stdout_)) > 0) {
    output.append(buffer, read);
  }
  return output;
}

}  // namespace fanyi::testing_util
