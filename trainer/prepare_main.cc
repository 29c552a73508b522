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
#include "trainer/preparation_flags.h"

ABSL_FLAG(std::string, out, "", "Directory to write (must not exist yet).");
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

  // --train, --dev and the text flags (trainer/preparation_flags.cc).
  fanyi::PreparationOptions options = fanyi::PreparationOptionsFromFlags();
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
