#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/pipeline/output_guard.h"
#include "common/text/vocabulary.h"
#include "trainer/corpus_sources.h"
#include "trainer/length_ratio_histogram.h"
#include "trainer/preparation_passes.h"
#include "trainer/token_shard.h"

namespace fanyi {

namespace fs = std::filesystem;

namespace {

// Training pairs of OutputGuard::kShortestRatioChecked source tokens or
// more needed to record their length ratio.
constexpr int64_t kFewestRatioPairs = 1000;

// A training pair as ids, or left out for its length.
struct EncodedPair {
  std::vector<int64_t> source;
  std::vector<int64_t> target;
  bool too_long = false;
  bool masked = false;  // Carries placeholders.
};

}  // namespace

void PreparationPasses::WriteShards(const std::string& directory,
                                    nlohmann::json* manifest) {
  const auto started = Clock::now();
  TokenShardWriter writer;
  nlohmann::json shards = nlohmann::json::array();
  auto flush = [&] {
    char name[32];
    std::snprintf(name, sizeof(name), "train-%05zu.shard", shards.size());
    const int64_t pairs = writer.pairs();
    writer.WriteTo((fs::path(directory) / name).string());
    shards.push_back({{"file", name}, {"pairs", pairs}});
  };
  int64_t kept = 0, too_long = 0, masked_pairs = 0, longest_source = 0;
  int64_t source_tokens = 0, target_tokens = 0;
  LengthRatioHistogram ratios(OutputGuard::kShortestRatioChecked);
  std::vector<EncodedPair> encoded;
  ForEachChunk([&](std::vector<SentencePair>& pairs) {
    encoded.assign(pairs.size(), EncodedPair());
    ParallelFor(threads(), static_cast<int64_t>(pairs.size()),
                [&](int w, int64_t begin, int64_t end) {
                  Worker& worker = workers_[static_cast<size_t>(w)];
                  std::vector<std::string> source, target;
                  for (int64_t i = begin; i < end; ++i) {
                    EncodedPair& pair = encoded[i];
                    Tokenize(worker, &pairs[i], &source, &target, &pair.masked);
                    pair.too_long = static_cast<int64_t>(source.size()) >
                                        options_.max_tokens ||
                                    static_cast<int64_t>(target.size()) >
                                        options_.max_tokens;
                    if (pair.too_long) continue;
                    pair.source = vocabularies_->source.Encode(source);
                    pair.target = vocabularies_->target.Encode(target);
                  }
                });
    // In file order, so that a preparation is the same on any core count.
    for (const EncodedPair& pair : encoded) {
      if (pair.too_long) {
        ++too_long;
        continue;
      }
      masked_pairs += pair.masked;
      // The pair as it is and, for bidirectional training, reversed.
      for (int direction = 0; direction < (options_.bidirectional ? 2 : 1);
           ++direction) {
        const std::vector<int64_t>& source =
            direction == 0 ? pair.source : pair.target;
        const std::vector<int64_t>& target =
            direction == 0 ? pair.target : pair.source;
        longest_source = std::max<int64_t>(longest_source,
                                           static_cast<int64_t>(source.size()));
        source_tokens += static_cast<int64_t>(source.size());
        target_tokens += static_cast<int64_t>(target.size());
        ratios.Add(static_cast<int64_t>(source.size()),
                   static_cast<int64_t>(target.size()));
        writer.Add(source, target);
        ++kept;
        if (writer.pairs() >= options_.shard_pairs) flush();
      }
    }
  });
  if (writer.pairs() > 0) flush();
  if (kept == 0) {
    throw std::runtime_error(options_.train_path +
                             ": no pair fits --max_tokens " +
                             std::to_string(options_.max_tokens));
  }
  if (too_long > 0) {
    log_ << options_.train_path << ": skipped " << too_long
         << " pairs longer than " << options_.max_tokens << " tokens\n";
  }
  const double seconds = SecondsSince(started);
  log_ << "prepare: " << kept << " training pairs"
       << (options_.bidirectional ? " (both directions)" : "") << " in "
       << shards.size() << " shards (" << source_tokens << " source and "
       << target_tokens << " target tokens; " << masked_pairs
       << " with placeholders) in " << seconds << " s, "
       << static_cast<int64_t>(kept / std::max(seconds, 1e-9)) << " pairs/s on "
       << threads() << " threads\n";
  (*manifest)["shards"] = std::move(shards);
  (*manifest)["train_pairs"] = kept;
  (*manifest)["skipped_lines"] = bad_lines_;
  (*manifest)["too_long_pairs"] = too_long;
  (*manifest)["placeholder_pairs"] = masked_pairs;
  (*manifest)["train_source_tokens"] = source_tokens;
  (*manifest)["train_target_tokens"] = target_tokens;
  (*manifest)["longest_source_tokens"] = longest_source;
  // The translations' usual length: none from fewer pairs, whose extremes
  // would be the bounds.
  if (const auto bounds = ratios.Percentiles(0.005, 0.995, kFewestRatioPairs)) {
    (*manifest)["target_length_ratio"] = {bounds->low, bounds->high};
  }
}

void PreparationPasses::WriteDev(const std::string& directory,
                                 nlohmann::json* manifest) {
  ReadCorpus corpus =
      ReadCorpusFiles(options_.dev_path, options_.columns,
                      options_.source_language, options_.target_language);
  for (const NamedBadLine& bad : corpus.bad_lines) {
    log_ << bad.path << ":" << bad.line.line_number
         << ": skipped: " << bad.line.reason << "\n";
  }
  if (corpus.pairs.empty()) {
    throw std::runtime_error(options_.dev_path + ": no usable sentence pairs");
  }
  Worker& worker = workers_.front();
  TokenShardWriter writer;
  std::ofstream texts(fs::path(directory) / "dev.tsv", std::ios::binary);
  int64_t unknown[2] = {0, 0};
  int64_t total[2] = {0, 0};
  for (SentencePair& pair : corpus.pairs) {
    const std::string raw_source = pair.source;
    NormalizeScript(worker, &pair);
    // BLEU translates the raw source as the server would, against the
    // reference in the script the model writes.
    texts << raw_source << "\t" << pair.target << "\n";
    MaskPlaceholders(worker, &pair);
    std::vector<int64_t> source = vocabularies_->source.Encode(
        worker.source_tokenizer->Tokenize(pair.source));
    std::vector<int64_t> target = vocabularies_->target.Encode(
        worker.target_tokenizer->Tokenize(pair.target));
    source.resize(std::min<size_t>(source.size(), options_.max_tokens));
    target.resize(std::min<size_t>(target.size(), options_.max_tokens));
    int side = 0;
    for (const std::vector<int64_t>* ids : {&source, &target}) {
      for (int64_t id : *ids) unknown[side] += id == Vocabulary::kUnkId;
      total[side] += static_cast<int64_t>(ids->size());
      ++side;
    }
    writer.Add(source, target);
  }
  texts.close();
  if (!texts) {
    throw std::runtime_error("cannot write " +
                             (fs::path(directory) / "dev.tsv").string());
  }
  const int64_t dev_pairs = writer.pairs();
  writer.WriteTo((fs::path(directory) / "dev.shard").string());
  auto percent = [](int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0.0;
  };
  (*manifest)["dev_pairs"] = dev_pairs;
  (*manifest)["dev_unknown_source_percent"] = percent(unknown[0], total[0]);
  (*manifest)["dev_unknown_target_percent"] = percent(unknown[1], total[1]);
  // How much of the dev text each side's vocabulary misses: the figure to
  // compare tokenizers by, beside BLEU.
  log_ << "prepare: " << dev_pairs
       << " dev pairs; dev tokens unknown to the vocabularies: "
       << percent(unknown[0], total[0]) << "% source, "
       << percent(unknown[1], total[1]) << "% target\n";
}

}  // namespace fanyi
