#include "trainer/corpus_preparation.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/model/cpu_threading.h"
#include "common/pipeline/output_guard.h"
#include "common/text/pair_masker.h"
#include "common/text/parallel_corpus.h"
#include "common/text/script_converter.h"
#include "common/text/tokenizer.h"
#include "trainer/corpus_sources.h"
#include "trainer/length_ratio_histogram.h"
#include "trainer/output_directory.h"
#include "trainer/subword_training.h"
#include "trainer/token_shard.h"

namespace fanyi {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
using TokenCounts = std::unordered_map<std::string, int64_t>;

// Placeholders a training sentence may hold (｟1｠ ... ｟8｠).
constexpr int kMaxPlaceholders = 8;
// Lines read, then tokenized in parallel, at a time: enough work to share
// out, little memory.
constexpr int64_t kChunkLines = 20000;
// Bad lines logged one by one; the rest are only counted.
constexpr int64_t kLoggedBadLines = 100;
// Training pairs of OutputGuard::kShortestRatioChecked source tokens or
// more needed to record their length ratio.
constexpr int64_t kFewestRatioPairs = 1000;

// The script a side in `language` is written in for training, given its
// --*_script flag: "simplified" when it is Chinese and converted to it, else
// "" (as the corpus has it).
std::string TrainingScript(const std::string& language,
                           const std::string& script) {
  return IsChineseLanguage(language) && script == "simplified" ? "simplified"
                                                               : "";
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `work(worker, begin, end)` over [0, count) cut into one contiguous
// part per worker, each on its own thread; rethrows the first error.
void ParallelFor(int workers, int64_t count,
                 const std::function<void(int, int64_t, int64_t)>& work) {
  const int64_t per_worker = (count + workers - 1) / workers;
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    const int64_t begin = std::min(count, w * per_worker);
    const int64_t end = std::min(count, begin + per_worker);
    if (begin >= end) break;
    threads.emplace_back([&work, &errors, w, begin, end] {
      try {
        work(w, begin, end);
      } catch (...) {
        errors[static_cast<size_t>(w)] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

// One thread's tools: each thread converts and tokenizes with its own.
struct Worker {
  std::optional<ScriptConverter> source_to_simplified;
  std::optional<ScriptConverter> target_to_simplified;
  PairMasker masker{kMaxPlaceholders};
  std::optional<Tokenizer> source_tokenizer;
  std::optional<Tokenizer> target_tokenizer;
  TokenCounts source_counts;
  TokenCounts target_counts;
};

// A training pair as ids, or left out for its length.
struct EncodedPair {
  std::vector<int64_t> source;
  std::vector<int64_t> target;
  bool too_long = false;
  bool masked = false;  // Carries placeholders.
};

// The passes over one corpus and what they found.
class Preparation {
 public:
  Preparation(const PreparationOptions& options, std::ostream& log)
      : options_(options), log_(log) {
    const int threads = options.threads > 0 ? options.threads : CoresGiven();
    workers_.resize(static_cast<size_t>(std::max(threads, 1)));
    for (Worker& worker : workers_) {
      if (TrainingScript(options.source_language, options.source_script) ==
          "simplified") {
        worker.source_to_simplified.emplace(ChineseScript::kSimplified);
      }
      if (TrainingScript(options.target_language, options.target_script) ==
          "simplified") {
        worker.target_to_simplified.emplace(ChineseScript::kSimplified);
      }
    }
  }

  // Trains the subword models the options ask for on a sample of the
  // normalized training text.
  void TrainSubwords(const std::string& work_dir,
                     CorpusVocabularies* vocabularies);
  // Counts the tokens of the training text and builds the vocabularies.
  void BuildVocabularies(CorpusVocabularies* vocabularies);
  // Tokenizes the training pairs again, maps them to ids and writes the
  // shards into `directory`; fills the manifest's training figures.
  void WriteShards(const std::string& directory, nlohmann::json* manifest);
  // Writes dev.shard and dev.tsv; fills the manifest's dev figures.
  void WriteDev(const std::string& directory, nlohmann::json* manifest);

  void SetTokenizers(const CorpusVocabularies& vocabularies) {
    vocabularies_ = &vocabularies;
    for (Worker& worker : workers_) {
      worker.source_tokenizer.emplace(options_.source_language,
                                      vocabularies.source_subwords,
                                      options_.source_case);
      worker.target_tokenizer.emplace(options_.target_language,
                                      vocabularies.target_subwords,
                                      options_.target_case);
    }
  }
  int threads() const { return static_cast<int>(workers_.size()); }

 private:
  // Calls `each` with every chunk of the training file's usable pairs; the
  // first pass logs and counts the bad lines.
  void ForEachChunk(
      const std::function<void(std::vector<SentencePair>&)>& each);
  // Converts a Chinese side to the model's script (dev pairs too).
  void NormalizeScript(Worker& worker, SentencePair* pair) const {
    if (worker.source_to_simplified) {
      pair->source = worker.source_to_simplified->Convert(pair->source);
    }
    if (worker.target_to_simplified) {
      pair->target = worker.target_to_simplified->Convert(pair->target);
    }
  }
  // Puts placeholders in place of the spans both sides share; returns
  // whether there were any.
  bool MaskPlaceholders(Worker& worker, SentencePair* pair) const;
  // Normalizes and tokenizes `pair` for training.
  void Tokenize(Worker& worker, SentencePair* pair,
                std::vector<std::string>* source,
                std::vector<std::string>* target, bool* masked) const;

  const PreparationOptions& options_;
  std::ostream& log_;
  std::vector<Worker> workers_;
  const CorpusVocabularies* vocabularies_ = nullptr;
  bool first_pass_done_ = false;
  int64_t bad_lines_ = 0;
};

void Preparation::ForEachChunk(
    const std::function<void(std::vector<SentencePair>&)>& each) {
  CorpusReader reader(options_.TrainingFiles(), options_.columns,
                      options_.source_language, options_.target_language);
  ParallelCorpus chunk;
  int64_t usable = 0;
  while (reader.Read(kChunkLines, &chunk)) {
    if (!first_pass_done_) {
      for (const BadLine& bad : chunk.bad_lines) {
        if (bad_lines_++ < kLoggedBadLines) {
          log_ << reader.path() << ":" << bad.line_number
               << ": skipped: " << bad.reason << "\n";
        }
      }
    }
    usable += static_cast<int64_t>(chunk.pairs.size());
    each(chunk.pairs);
    chunk.pairs.clear();
    chunk.bad_lines.clear();
  }
  if (!first_pass_done_ && bad_lines_ > 0) {
    log_ << options_.train_path << ": skipped " << bad_lines_ << " bad lines\n";
  }
  first_pass_done_ = true;
  if (usable == 0) {
    throw std::runtime_error(options_.train_path +
                             ": no usable sentence pairs");
  }
}

bool Preparation::MaskPlaceholders(Worker& worker, SentencePair* pair) const {
  if (!options_.placeholders) return false;
  MaskedPair masked = worker.masker.Mask(pair->source, pair->target);
  if (masked.spans == 0) return false;
  // Numbered from a first index that the line picks, so that every index up
  // to kMaxPlaceholders is trained, not only ｟1｠ and ｟2｠: a sentence with
  // many numbers uses them all.
  const int first_index = static_cast<int>(
      std::hash<std::string>()(pair->source) %
      static_cast<size_t>(kMaxPlaceholders - masked.spans + 1));
  if (first_index > 0) {
    masked = worker.masker.Mask(pair->source, pair->target, first_index);
  }
  pair->source = std::move(masked.source);
  pair->target = std::move(masked.target);
  return true;
}

void Preparation::Tokenize(Worker& worker, SentencePair* pair,
                           std::vector<std::string>* source,
                           std::vector<std::string>* target,
                           bool* masked) const {
  NormalizeScript(worker, pair);
  *masked = MaskPlaceholders(worker, pair);
  *source = worker.source_tokenizer->Tokenize(pair->source);
  *target = worker.target_tokenizer->Tokenize(pair->target);
}

void Preparation::TrainSubwords(const std::string& work_dir,
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

void Preparation::BuildVocabularies(CorpusVocabularies* vocabularies) {
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

void Preparation::WriteShards(const std::string& directory,
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

void Preparation::WriteDev(const std::string& directory,
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

void WriteSubwordModel(const SubwordModel& model, const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  out << model.serialized();
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// Writes the corpus of `options` into `staging`.
void WriteCorpus(const PreparationOptions& options, const fs::path& staging,
                 std::ostream& log, const CorpusVocabularies* fixed,
                 Clock::time_point started) {
  Preparation preparation(options, log);
  CorpusVocabularies vocabularies;
  if (fixed) {
    vocabularies = *fixed;
  } else {
    preparation.TrainSubwords(staging.string(), &vocabularies);
    preparation.BuildVocabularies(&vocabularies);
  }
  preparation.SetTokenizers(vocabularies);
  nlohmann::json manifest = {
      {"format", "fanyi-prepared-corpus"},
      {"format_version", PreparedCorpus::kFormatVersion},
      {"train", options.train_path},
      {"suggestions", options.suggestions_path},
      {"suggestion_repeats", options.suggestion_repeats},
      {"dev", options.dev_path},
      {"source_column", options.columns.source + 1},
      {"target_column", options.columns.target + 1},
      {"source_language", options.source_language},
      {"target_language", options.target_language},
      {"source_case", WordCaseName(options.source_case)},
      {"target_case", WordCaseName(options.target_case)},
      {"source_script",
       TrainingScript(options.source_language, options.source_script)},
      {"target_script",
       TrainingScript(options.target_language, options.target_script)},
      {"placeholders", options.placeholders},
      {"bidirectional", options.bidirectional},
      {"source_subwords", vocabularies.source_subwords != nullptr},
      {"target_subwords", vocabularies.target_subwords != nullptr},
      {"max_tokens", options.max_tokens},
      {"source_vocabulary_size", vocabularies.source.size()},
      {"target_vocabulary_size", vocabularies.target.size()},
  };
  preparation.WriteShards(staging.string(), &manifest);
  preparation.WriteDev(staging.string(), &manifest);
  vocabularies.source.Save((staging / "source_vocabulary.json").string());
  vocabularies.target.Save((staging / "target_vocabulary.json").string());
  if (vocabularies.source_subwords) {
    WriteSubwordModel(*vocabularies.source_subwords,
                      staging / "source_subwords.model");
  }
  if (vocabularies.target_subwords) {
    WriteSubwordModel(*vocabularies.target_subwords,
                      staging / "target_subwords.model");
  }
  manifest["preparation_seconds"] = SecondsSince(started);
  manifest["threads"] = preparation.threads();
  {
    std::ofstream out(staging / PreparedCorpus::kManifestFile);
    out << manifest.dump(2) << "\n";
    out.close();
    if (!out) {
      throw std::runtime_error(
          "cannot write " + (staging / PreparedCorpus::kManifestFile).string());
    }
  }
}

}  // namespace

void PreparationOptions::Validate() const {
  auto require = [](bool condition, const std::string& message) {
    if (!condition) throw std::invalid_argument(message);
  };
  require(!train_path.empty(), "--train is required");
  require(!dev_path.empty(), "--dev is required");
  require(suggestions_path.empty() || (KindOfCorpusFile(suggestions_path) ==
                                           CorpusFileKind::kSuggestions &&
                                       fs::is_regular_file(suggestions_path)),
          "--suggestions must name one suggestions file (.db, .sqlite or "
          ".sqlite3)");
  require(suggestion_repeats >= 1 && suggestion_repeats <= 1000,
          "--suggestion_repeats must be 1 to 1000");
  require(columns.source >= 0 && columns.target >= 0 &&
              columns.source != columns.target,
          "--source_column and --target_column must be two different "
          "columns, numbered from 1");
  require(vocab_min_count >= 1, "--vocab_min_count must be at least 1");
  require(vocab_max_size == 0 || vocab_max_size >= 4,
          "--vocab_max_size must be 0 (unlimited) or at least 4");
  require(source_subwords == 0 || source_subwords >= 8,
          "--source_subwords must be 0 (words) or at least 8");
  require(target_subwords == 0 || target_subwords >= 8,
          "--target_subwords must be 0 (characters or words) or at least 8");
  require(subword_type == "unigram" || subword_type == "bpe",
          "--subword_type must be unigram or bpe");
  require(!bidirectional || (source_subwords == 0 && target_subwords == 0),
          "--bidirectional takes words and characters, not "
          "--source_subwords or --target_subwords");
  require(source_script == "simplified" || source_script == "keep",
          "--source_script must be simplified or keep");
  require(target_script == "simplified" || target_script == "keep",
          "--target_script must be simplified or keep");
  require(max_tokens >= 1, "--max_tokens must be at least 1");
  require(shard_pairs >= 1, "--shard_pairs must be at least 1");
  require(threads >= 0, "--threads must not be negative");
}

std::string PreparationOptions::TrainingFiles() const {
  std::string files = train_path;
  if (suggestions_path.empty()) return files;
  for (int i = 0; i < suggestion_repeats; ++i) {
    files += (files.empty() ? "" : ",") + suggestions_path;
  }
  return files;
}

PreparedCorpus PrepareCorpus(const PreparationOptions& options,
                             const std::string& directory, std::ostream& log,
                             const CorpusVocabularies* fixed) {
  options.Validate();
  const auto started = Clock::now();
  const fs::path final_path(directory);
  const fs::path staging = final_path.string() + ".tmp";
  // The corpus is written beside its place, then renamed into it.
  CreateWritableDirectory(fs::absolute(final_path).parent_path().string());
  fs::remove_all(staging);
  fs::create_directories(staging);
  try {
    WriteCorpus(options, staging, log, fixed, started);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
  fs::remove_all(final_path);
  fs::rename(staging, final_path);
  log << "prepare: " << directory << " written in " << SecondsSince(started)
      << " s\n";
  return PreparedCorpus::Open(directory);
}

}  // namespace fanyi
