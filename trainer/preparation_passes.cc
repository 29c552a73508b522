#include "trainer/preparation_passes.h"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <thread>
#include <utility>

#include "common/model/cpu_threading.h"
#include "trainer/corpus_sources.h"

namespace fanyi {

namespace {

// Lines read, then tokenized in parallel, at a time: enough work to share
// out, little memory.
constexpr int64_t kChunkLines = 20000;
// Bad lines logged one by one; the rest are only counted.
constexpr int64_t kLoggedBadLines = 100;

}  // namespace

std::string TrainingScript(const std::string& language,
                           const std::string& script) {
  return IsChineseLanguage(language) && script == "simplified" ? "simplified"
                                                               : "";
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

void PreparationPasses::ParallelFor(
    int workers, int64_t count,
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

PreparationPasses::PreparationPasses(const PreparationOptions& options,
                                     std::ostream& log)
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

void PreparationPasses::SetTokenizers(const CorpusVocabularies& vocabularies) {
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

void PreparationPasses::NormalizeScript(Worker& worker,
                                        SentencePair* pair) const {
  if (worker.source_to_simplified) {
    pair->source = worker.source_to_simplified->Convert(pair->source);
  }
  if (worker.target_to_simplified) {
    pair->target = worker.target_to_simplified->Convert(pair->target);
  }
}

void PreparationPasses::ForEachChunk(
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

bool PreparationPasses::MaskPlaceholders(Worker& worker,
                                         SentencePair* pair) const {
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

void PreparationPasses::Tokenize(Worker& worker, SentencePair* pair,
                                 std::vector<std::string>* source,
                                 std::vector<std::string>* target,
                                 bool* masked) const {
  NormalizeScript(worker, pair);
  *masked = MaskPlaceholders(worker, pair);
  *source = worker.source_tokenizer->Tokenize(pair->source);
  *target = worker.target_tokenizer->Tokenize(pair->target);
}

}  // namespace fanyi
