#include "trainer/subword_training.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace fanyi {
namespace {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `arguments` (the program first, found on PATH) with stdout and
// stderr to `log_path`; returns its exit status, or -1 if it could not run.
int Run(const std::vector<std::string>& arguments,
        const std::string& log_path) {
  std::vector<char*> argv;
  for (const std::string& argument : arguments) {
    argv.push_back(const_cast<char*>(argument.c_str()));
  }
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int error =
      posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

SubwordModel TrainSubwordModel(const std::vector<std::string>& sentences,
                               const SubwordTrainingOptions& options,
                               const std::string& work_dir) {
  if (options.vocab_size < 8) {
    throw std::invalid_argument(
        "subword vocabulary size must be at least 8, got " +
        std::to_string(options.vocab_size));
  }
  if (!(options.character_coverage > 0 && options.character_coverage <= 1)) {
    throw std::invalid_argument("character coverage must be in (0, 1], got " +
                                std::to_string(options.character_coverage));
  }
  if (options.model_type != "unigram" && options.model_type != "bpe") {
    throw std::invalid_argument(
        "subword model type must be unigram or bpe, "
        "got '" +
        options.model_type + "'");
  }
  if (options.max_sentences < 0) {
    throw std::invalid_argument("max_sentences must not be negative");
  }
  if (sentences.empty()) {
    throw std::invalid_argument("no sentences to train a subword model on");
  }
  namespace fs = std::filesystem;
  const std::string prefix = (fs::path(work_dir) / "subword").string();
  const std::string input = prefix + ".input.txt";
  const std::string log = prefix + ".log";
  {
    std::ofstream out(input, std::ios::binary);
    for (std::string line : sentences) {
      for (char& c : line) {
        if (c == '\n' || c == '\r') c = ' ';
      }
      out << line << '\n';
    }
    if (!out) throw std::runtime_error("cannot write " + input);
  }
  // Fanyi's Vocabulary adds <pad>, <s> and </s> itself; SentencePiece keeps
  // only its <unk>. "identity": no normalization inside SentencePiece
  // (SubwordModel applies none). hard_vocab_limit off: a small corpus gets
  // the pieces it has instead of an error.
  const std::vector<std::string> arguments = {
      options.spm_train,
      "--input=" + input,
      "--model_prefix=" + prefix,
      "--model_type=" + options.model_type,
      "--vocab_size=" + std::to_string(options.vocab_size),
      "--character_coverage=" + std::to_string(options.character_coverage),
      "--input_sentence_size=" + std::to_string(options.max_sentences),
      "--shuffle_input_sentence=true",
      "--normalization_rule_name=identity",
      "--bos_id=-1",
      "--eos_id=-1",
      "--pad_id=-1",
      "--unk_id=0",
      "--hard_vocab_limit=false",
  };
  const int status = Run(arguments, log);
  const std::string model_bytes = ReadWholeFile(prefix + ".model");
  const std::string log_text = ReadWholeFile(log);
  std::error_code ignored;
  for (const char* suffix : {".input.txt", ".log", ".model", ".vocab"}) {
    fs::remove(prefix + suffix, ignored);
  }
  if (status != 0) {
    throw std::runtime_error(
        status < 0
            ? "cannot run " + options.spm_train +
                  " (install Debian's sentencepiece package)"
            : options.spm_train + " failed (exit " + std::to_string(status) +
                  "): " +
                  log_text.substr(log_text.size() > 600 ? log_text.size() - 600
                                                        : 0));
  }
  return SubwordModel::FromSerialized(model_bytes);
}

}  // namespace fanyi
