#include "server/pdf_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

extern char** environ;

namespace fanyi {
namespace {

// The largest .docx accepted back: far above what kMaxTextBytes of text
// makes.
constexpr std::size_t kMaxOutputBytes = 64 << 20;
// What is kept of the program's stderr: its one-line reason.
constexpr std::size_t kMaxReasonBytes = 4096;

// A file descriptor, closed when it goes.
class Descriptor {
 public:
  explicit Descriptor(int fd = -1) : fd_(fd) {}
  ~Descriptor() { Close(); }
  Descriptor(Descriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Descriptor& operator=(Descriptor&&) = delete;
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// A pipe whose ends close on exec (the child gets its end by dup2).
std::pair<Descriptor, Descriptor> Pipe() {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  return {Descriptor(ends[0]), Descriptor(ends[1])};
}

// Blocks SIGPIPE in this thread while it lives, so that writing to a child
// that has exited fails with EPIPE instead of ending the process; takes
// back a SIGPIPE raised meanwhile.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    const timespec now{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &now) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_;
  sigset_t old_;
};

// What the child's wait status says, for a refusal.
std::string Failure(int status, const std::string& reason, int cpu_seconds,
                    int memory_mb) {
  if (WIFSIGNALED(status) &&
      (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL)) {
    return "reading the .pdf takes more than " + std::to_string(cpu_seconds) +
           " s of CPU, the limit";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2 && !reason.empty()) {
    return reason;
  }
  if (WIFSIGNALED(status)) {
    return "the .pdf could not be read (its reader stopped on signal " +
           std::to_string(WTERMSIG(status)) + "; memory limit " +
           std::to_string(memory_mb) + " MiB)";
  }
  return "the .pdf could not be read" +
         (reason.empty() ? std::string() : ": " + reason);
}

}  // namespace

PdfReader::PdfReader(PdfReaderOptions options) : options_(std::move(options)) {}

std::string PdfReader::WordDocument(const std::string& pdf) const {
  auto [stdin_read, stdin_write] = Pipe();
  auto [stdout_read, stdout_write] = Pipe();
  auto [stderr_read, stderr_write] = Pipe();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stdin_read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, stdout_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, stderr_write.get(), 2);
  // None of the server's other descriptors (sockets, files) go with it.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  std::string cpu = "--cpu_seconds=" + std::to_string(options_.cpu_seconds);
  std::string memory = "--memory_mb=" + std::to_string(options_.memory_mb);
  std::string program = options_.program;
  char* argv[] = {program.data(), cpu.data(), memory.data(), nullptr};
  // The server blocks signals its own threads wait for: the child starts
  // with none blocked, and SIGPIPE and SIGXCPU as the system has them.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGXCPU);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, program.c_str(), &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    throw std::runtime_error("cannot run " + program + ": " +
                             std::strerror(spawned));
  }
  stdin_read.Close();
  stdout_write.Close();
  stderr_write.Close();
  for (const Descriptor* end : {&stdin_write, &stdout_read, &stderr_read}) {
    fcntl(end->get(), F_SETFL, fcntl(end->get(), F_GETFL) | O_NONBLOCK);
  }

  // Feeds the PDF and takes the answer as each is ready, until both
  // outputs end or the time the limits allow (CPU time, with room for a
  // busy machine) is up.
  const SigpipeBlock sigpipe;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(2 * options_.cpu_seconds + 10);
  std::string docx;
  std::string reason;
  std::size_t written = 0;
  bool overflow = false;
  bool timed_out = false;
  while (stdout_read.get() >= 0 || stderr_read.get() >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[3] = {{stdin_write.get(), POLLOUT, 0},
                     {stdout_read.get(), POLLIN, 0},
                     {stderr_read.get(), POLLIN, 0}};
    if (poll(fds, 3, static_cast<int>(left.count())) < 0 && errno != EINTR) {
      break;
    }
    if (fds[0].revents != 0) {
      const ssize_t n =
          write(stdin_write.get(), pdf.data() + written, pdf.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = pdf.size();
      if (written == pdf.size()) stdin_write.Close();
    }
    for (int i = 1; i < 3; ++i) {
      if (fds[i].revents == 0) continue;
      Descriptor& end = i == 1 ? stdout_read : stderr_read;
      char buffer[65536];
      const ssize_t n = read(end.get(), buffer, sizeof buffer);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        end.Close();
      } else if (n > 0 && i == 1) {
        docx.append(buffer, static_cast<std::size_t>(n));
        overflow = docx.size() > kMaxOutputBytes;
      } else if (n > 0 && reason.size() < kMaxReasonBytes) {
        reason.append(buffer, static_cast<std::size_t>(n));
      }
    }
    if (overflow) break;
  }
  if (timed_out || overflow) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  while (!reason.empty() && (reason.back() == '\n' || reason.back() == '\r')) {
    reason.pop_back();
  }
  if (overflow) {
    throw std::invalid_argument("the .pdf's text makes a .docx over " +
                                std::to_string(kMaxOutputBytes >> 20) + " MiB");
  }
  if (timed_out) {
    throw std::invalid_argument("reading the .pdf takes more than " +
                                std::to_string(2 * options_.cpu_seconds + 10) +
                                " s, the limit");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::invalid_argument(
        Failure(status, reason, options_.cpu_seconds, options_.memory_mb));
  }
  return docx;
}

}  // namespace fanyi
