#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/text/subword_model.h"
#include "common/text/vocabulary.h"
#include "trainer/preparation_passes.h"
#include "trainer/subword_training.h"

namespace fanyi {

void PreparationPasses::TrainSubwords(const std::string& work_dir,
                                      CorpusVocabularies* vocabularies) {
  if (options_.source_subwords == 0 && options_.target_subwords == 0) return;
  const auto started = Clock::now();
  // A uniform sample of each side (reservoir sampling), as large as
  // SentencePiece's trainer takes: its memory grows with its input.
  SubwordTrainingOptions subword_options;
  subword_options.model_type = options_.subword_type;
  const size_t sample_size = static_cast<size_t>(subword_options.max_sentences);
  std::vector<std::string> samples[2];
  std::mt19937_64 rng(1);
  int64_t seen = 0;
  ForEachChunk([&](std::vector<SentencePair>& pairs) {
    ParallelFor(threads(), static_cast<int64_t>(pairs.size()),
                [&](int w, int64_t begin, int64_t end) {
                  Worker& worker = workers_[static_cast<size_t>(w)];
                  for (int64_t i = begin; i < end; ++i) {
                    NormalizeScript(worker, &pairs[i]);
                    MaskPlaceholders(worker, &pairs[i]);
                  }
                });
    for (SentencePair& pair : pairs) {
      ++seen;
      size_t slot = samples[0].size();
      if (slot >= sample_size) {
        slot = static_cast<size_t>(rng() % static_cast<uint64_t>(seen));
        if (slot >= sample_size) continue;
      }
      for (int side = 0; side < 2; ++side) {
        std::string& text = side == 0 ? pair.source : pair.target;
        if (slot == samples[side].size()) {
          samples[side].push_back(std::move(text));
        } else {
          samples[side][slot] = std::move(text);
        }
      }
    }
  });
  for (int side = 0; side < 2; ++side) {
    const int pieces =
        side == 0 ? options_.source_subwords : options_.target_subwords;
    if (pieces == 0) continue;
    subword_options.vocab_size = pieces;
    auto model = std::make_shared<const SubwordModel>(
        TrainSubwordModel(samples[side], subword_options, work_dir));
    log_ << "prepare: " << (side == 0 ? "source" : "target") << " "
         << options_.subword_type << " subword model of " << model->size()
         << " pieces from " << samples[side].size() << " sentences\n";
    (side == 0 ? vocabularies->source_subwords
               : vocabularies->target_subwords) = std::move(model);
  }
  log_ << "prepare: subword models trained in " << SecondsSince(started)
       << " s\n";
}

void PreparationPasses::BuildVocabularies(CorpusVocabularies* vocabularies) {
  const auto started = Clock::now();
  SetTokenizers(*vocabularies);
  int64_t pairs_seen = 0;
  ForEachChunk([&](std::vector<SentencePair>& pairs) {
    pairs_seen += static_cast<int64_t>(pairs.size());
    ParallelFor(threads(), static_cast<int64_t>(pairs.size()),
                [&](int w, int64_t begin, int64_t end) {
                  Worker& worker = workers_[static_cast<size_t>(w)];
                  std::vector<std::string> source, target;
                  bool masked = false;
                  for (int64_t i = begin; i < end; ++i) {
                    Tokenize(worker, &pairs[i], &source, &target, &masked);
                    for (const std::string& token : source) {
                      ++worker.source_counts[token];
                    }
                    for (const std::string& token : target) {
                      ++worker.target_counts[token];
                    }
                  }
                });
  });
  TokenCounts source_counts, target_counts;
  for (Worker& worker : workers_) {
    for (auto& [token, count] : worker.source_counts) {
      source_counts[token] += count;
    }
    for (auto& [token, count] : worker.target_counts) {
      target_counts[token] += count;
    }
    worker.source_counts.clear();
    worker.target_counts.clear();
  }
  // Bidirectional: one vocabulary for both sides, since each side's tokens
  // stand on either.
  if (options_.bidirectional) {
    for (auto& [token, count] : target_counts) source_counts[token] += count;
  }
  vocabularies->source =
      Vocabulary::FromCounts(std::move(source_counts), options_.vocab_min_count,
                             options_.vocab_max_size);
  vocabularies->target = options_.bidirectional
                             ? vocabularies->source
                             : Vocabulary::FromCounts(std::move(target_counts),
                                                      options_.vocab_min_count,
                                                      options_.vocab_max_size);
  log_ << "prepare: vocabularies of " << vocabularies->source.size()
       << " source and " << vocabularies->target.size()
       << " target tokens from " << pairs_seen << " pairs in "
       << SecondsSince(started) << " s\n";
}

}  // namespace fanyi
