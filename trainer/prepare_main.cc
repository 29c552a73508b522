// fanyi-prepare: reads a parallel TSV once per pass, tokenizes it on every
// core and writes it as id shards with its vocabularies, for fanyi-train
// --data (a corpus of millions of pairs in bounded memory).
#include <filesystem>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/model/cpu_threading.h"
#include "trainer/corpus_preparation.h"

ABSL_FLAG(std::string, train, "", "Training TSV: source<TAB>target per line.");
ABSL_FLAG(std::string, dev, "", "Validation TSV, same format.");
ABSL_FLAG(std::string, out, "", "Directory to write (must not exist yet).");
ABSL_FLAG(std::string, source_language, "en", "Source language code.");
ABSL_FLAG(std::string, target_language, "zh", "Target language code.");
ABSL_FLAG(std::string, target_script, "simplified",
          "Chinese targets: simplified (normalize with OpenCC) or keep.");
ABSL_FLAG(bool, placeholders, true,
          "Carry numbers, codes and URLs both sides share as placeholders.");
ABSL_FLAG(int, source_subwords, 0,
          "Source vocabulary as SentencePiece subwords: a unigram model of "
          "this many pieces (0: words).");
ABSL_FLAG(int, target_subwords, 0,
          "Target vocabulary as SentencePiece subwords (0: characters for "
          "Chinese, words otherwise).");
ABSL_FLAG(int64_t, vocab_min_count, 2,
          "Minimum count for a vocabulary entry (rarer tokens train <unk>).");
ABSL_FLAG(int64_t, vocab_max_size, 0,
          "Maximum vocabulary size (0: unlimited).");
ABSL_FLAG(int64_t, max_tokens, 255,
          "Leave out training pairs with more tokens on a side (a model "
          "trained on them needs --max_positions above this).");
ABSL_FLAG(int64_t, shard_pairs, 100000, "Training pairs per shard file.");
ABSL_FLAG(int, threads, 0, "Tokenizing threads (0: all cores).");

int main(int argc, char** argv) {
  fanyi::EnsureCpuThreadingEnvironment(argv);
  absl::SetProgramUsageMessage(
      "Prepares a parallel corpus for fanyi-train --data.\n"
      "  fanyi-prepare --train train.tsv --dev dev.tsv --out prepared/en-zh");
  absl::ParseCommandLine(argc, argv);

  fanyi::PreparationOptions options;
  options.train_path = absl::GetFlag(FLAGS_train);
  options.dev_path = absl::GetFlag(FLAGS_dev);
  options.source_language = absl::GetFlag(FLAGS_source_language);
  options.target_language = absl::GetFlag(FLAGS_target_language);
  options.target_script = absl::GetFlag(FLAGS_target_script);
  options.placeholders = absl::GetFlag(FLAGS_placeholders);
  options.source_subwords = absl::GetFlag(FLAGS_source_subwords);
  options.target_subwords = absl::GetFlag(FLAGS_target_subwords);
  options.vocab_min_count = absl::GetFlag(FLAGS_vocab_min_count);
  options.vocab_max_size = absl::GetFlag(FLAGS_vocab_max_size);
  options.max_tokens = absl::GetFlag(FLAGS_max_tokens);
  options.shard_pairs = absl::GetFlag(FLAGS_shard_pairs);
  options.threads = absl::GetFlag(FLAGS_threads);
  const std::string out = absl::GetFlag(FLAGS_out);

  try {
    if (out.empty()) throw std::invalid_argument("--out is required");
    if (std::filesystem::exists(out)) {
      throw std::invalid_argument("--out " + out +
                                  " already exists; remove it or give "
                                  "another (nothing was changed)");
    }
    const fanyi::PreparedCorpus corpus =
        fanyi::PrepareCorpus(options, out, std::cerr);
    std::cout << corpus.train_pairs() << " training pairs in "
              << corpus.shard_paths().size() << " shards: " << out << "\n";
  } catch (const std::exception& error) {
    std::cerr << "fanyi-prepare: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
