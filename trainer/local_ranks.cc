#include "trainer/local_ranks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <system_error>

#include "common/model/cpu_threading.h"
#include "common/model/device.h"
#include "trainer/training_data.h"

namespace fanyi {
namespace {

// The ranks' process ids, for the signal handler (async-signal-safe reads).
constexpr int kMaxRanks = 1024;
pid_t rank_pids[kMaxRanks];
volatile sig_atomic_t rank_count = 0;
volatile sig_atomic_t stop_signal = 0;

void PassOnSignal(int signal_number) {
  stop_signal = signal_number;
  for (int r = 0; r < rank_count; ++r) {
    if (rank_pids[r] > 0) kill(rank_pids[r], signal_number);
  }
}

// A TCP port on 127.0.0.1 that nobody listens on now.
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("cannot open a socket for MASTER_PORT");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  const bool found =
      bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(fd);
  if (!found) throw std::runtime_error("cannot find a free MASTER_PORT");
  return ntohs(address.sin_port);
}

std::string DescribeStatus(int status) {
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status));
  }
  return "exit code " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

LocalRankPlan PlanLocalRanks(int ranks, int threads, int64_t batch_tokens,
                             const std::string& device) {
  const int cores = threads > 0 ? threads : CoresGiven();
  if (ranks == 0) {
    ranks = device != "cpu" && ResolveDevice(device).is_cuda() ? 1 : cores;
  }
  if (ranks > 1 && device == "cuda") {
    throw std::invalid_argument(
        "--ranks: data-parallel training runs on the CPU only, for now");
  }
  if (ranks < 1) throw std::invalid_argument("--ranks must be at least 0");
  LocalRankPlan plan;
  plan.ranks = ranks;
  plan.threads = std::max(1, cores / ranks);
  plan.batch_tokens = batch_tokens / ranks;
  if (plan.batch_tokens < 1) {
    throw std::invalid_argument(
        "--batch_tokens " + std::to_string(batch_tokens) +
        " leaves fewer than one token a batch for each of " +
        std::to_string(ranks) + " ranks");
  }
  return plan;
}

int RunLocalRanks(int ranks, const std::vector<std::string>& arguments,
                  const std::vector<std::string>& rank_arguments) {
  if (ranks < 1 || ranks > kMaxRanks) {
    throw std::invalid_argument("--ranks must be in [1, " +
                                std::to_string(kMaxRanks) + "]");
  }
  // Built before fork(): a child only sets its variables and execs.
  // This program by its path, so that each rank shows under its own name.
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) throw std::runtime_error("cannot find this program's path");
  std::vector<std::string> argv_strings = {std::string(path, length)};
  argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
  argv_strings.insert(argv_strings.end(), rank_arguments.begin(),
                      rank_arguments.end());
  std::vector<char*> child_argv;
  for (std::string& argument : argv_strings) {
    child_argv.push_back(argument.data());
  }
  child_argv.push_back(nullptr);
  const std::string port = std::to_string(FreeLoopbackPort());
  const std::string world_size = std::to_string(ranks);
  std::vector<std::string> logs(ranks);  // Ranks 1..: their output.

  struct sigaction action {};
  action.sa_handler = PassOnSignal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_term {};
  struct sigaction old_int {};
  sigaction(SIGTERM, &action, &old_term);
  sigaction(SIGINT, &action, &old_int);
  for (int r = 0; r < ranks; ++r) {
    int log_fd = -1;
    if (r > 0) {
      std::string path =
          "/tmp/fanyi-train-rank" + std::to_string(r) + "-XXXXXX";
      log_fd = mkstemp(path.data());
      if (log_fd < 0) {
        PassOnSignal(SIGTERM);  // The ranks started would wait for this one.
        throw std::runtime_error("cannot create " + path);
      }
      logs[r] = path;
    }
    const std::string rank = std::to_string(r);
    const pid_t pid = fork();
    if (pid < 0) {
      PassOnSignal(SIGTERM);
      throw std::runtime_error("cannot start rank " + rank + ": fork failed");
    }
    if (pid == 0) {
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", port.c_str(), 1);
      setenv("WORLD_SIZE", world_size.c_str(), 1);
      setenv("RANK", rank.c_str(), 1);
      if (log_fd >= 0) {
        dup2(log_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        close(log_fd);
      }
      execv(child_argv[0], child_argv.data());
      std::fprintf(stderr, "fanyi-train: cannot run rank %d: %s\n", r,
                   std::strerror(errno));
      _exit(127);
    }
    if (log_fd >= 0) close(log_fd);
    rank_pids[r] = pid;
    rank_count = r + 1;
  }

  std::cerr << "fanyi-train: " << ranks << " ranks on 127.0.0.1:" << port
            << ", process ids";
  for (int r = 0; r < ranks; ++r) std::cerr << " " << rank_pids[r];
  std::cerr << std::endl;

  int failed_rank = -1;
  int failed_status = 0;
  for (int left = ranks; left > 0;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    --left;
    int r = 0;
    while (r < ranks && rank_pids[r] != pid) ++r;
    if (r == ranks) continue;
    rank_pids[r] = 0;
    // A rank stopped by a signal (SIGTERM passed on, SIGKILL) left its
    // copy of the corpus behind. Removing it never stops the wait for the
    // others (temp_directory_path throws on a TMPDIR that is no folder).
    try {
      std::error_code ignored;
      std::filesystem::remove_all(RankScratchDirectory(r, pid), ignored);
    } catch (const std::exception&) {
    }
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && failed_rank < 0) {
      failed_rank = r;
      failed_status = status;
      // The others would wait for it until the collective timeout.
      for (int other = 0; other < ranks; ++other) {
        if (rank_pids[other] > 0) kill(rank_pids[other], SIGTERM);
      }
    }
  }
  rank_count = 0;
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGINT, &old_int, nullptr);

  if (failed_rank >= 0 && stop_signal == 0) {
    std::cerr << "fanyi-train: rank " << failed_rank << " of " << ranks
              << " failed (" << DescribeStatus(failed_status) << ")\n";
    if (failed_rank > 0) {  // Rank 0's output is already on stderr.
      std::ifstream in(logs[failed_rank]);
      std::cerr << std::string(std::istreambuf_iterator<char>(in), {});
    }
  }
  for (const std::string& log : logs) {
    if (!log.empty()) std::remove(log.c_str());
  }
  if (stop_signal != 0) return 128 + stop_signal;
  return failed_rank < 0 ? 0 : 1;
}

}  // namespace fanyi
