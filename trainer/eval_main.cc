// fanyi-eval: translates a test set with a checkpoint and scores it with
// sacreBLEU's BLEU and chrF2 definitions; for Chinese, against references
// converted to the translations' script and as written, and counts
// translations that mix scripts.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/eval/corpus_evaluation.h"
#include "common/eval/script_purity.h"
#include "common/model/cpu_threading.h"
#include "common/model/process_memory.h"
#include "common/pipeline/translator.h"
#include "common/text/parallel_corpus.h"
#include "common/text/script_converter.h"

// Flags live here, away from torch headers, whose glog/gflags globals clash.
ABSL_FLAG(std::string, model_dir, "",
          "Checkpoint (or training output) directory, or a CTranslate2 "
          "model directory.");
ABSL_FLAG(std::string, input, "",
          "TSV of source<TAB>reference (or the columns given), or a file of "
          "source lines.");
ABSL_FLAG(std::string, references, "",
          "Reference lines, when --input holds only sources.");
ABSL_FLAG(int, source_column, 1,
          "A TSV --input's source column (from 1), as fanyi-train's.");
ABSL_FLAG(int, target_column, 2, "A TSV --input's reference column.");
ABSL_FLAG(std::string, output, "", "Write the translations here, one a line.");
ABSL_FLAG(int, beam_size, 1, "1 = greedy; more = beam search.");
ABSL_FLAG(double, length_penalty, -1,
          "GNMT length penalty α for beam search; negative: the model's own "
          "(chosen on dev by fanyi-train, 1.0 for older models).");
ABSL_FLAG(int, batch_size, 64, "Sentences decoded together.");
ABSL_FLAG(int, threads, 0, "CPU threads (0: all cores).");
ABSL_FLAG(std::string, device, "auto", "auto, cpu or cuda.");
ABSL_FLAG(bool, beam_stops_early, false,
          "Beam search: end a sentence once beam_size hypotheses ended (as "
          "CTranslate2 and fairseq), not once no live beam can beat them.");
ABSL_FLAG(bool, output_guard, true,
          "Decode again each sentence whose translation is broken (a loop, "
          "a length far outside the training pairs', the source copied), "
          "keeping the better; off, broken ones are still counted.");
ABSL_FLAG(bool, tokens, false,
          "--input holds source pieces separated by spaces, one sentence a "
          "line, and --output gets target pieces the same way: the text "
          "pipeline is bypassed (as CTranslate2's translate_batch).");
ABSL_FLAG(std::string, target_prefix, "",
          "With --tokens: target pieces, separated by spaces, that every "
          "translation starts with, forced (CTranslate2's target_prefix: a "
          "multilingual model's language token, such as __de__); written "
          "out with the translation, as CTranslate2 returns it.");
ABSL_FLAG(bool, replace_unknowns, false,
          "With --tokens: each unknown target piece becomes the source piece "
          "its step attended to most, as CTranslate2's replace_unknowns (and "
          "argos-translate) does.");
ABSL_FLAG(int, min_decoding_length, 0,
          "No translation ends before this many tokens (CTranslate2's "
          "min_decoding_length).");
ABSL_FLAG(int, max_decoding_length, 0,
          "When above 0: at most this many tokens a translation, whatever "
          "the source's length (CTranslate2's max_decoding_length); 0: up "
          "to 2 x the source + 10, at most 256.");
ABSL_FLAG(std::string, cpu_decoder, "packed",
          "The decoding step on the CPU: packed or libtorch.");
ABSL_FLAG(std::string, compute_type, "int8",
          "The decoding step's arithmetic: on the CPU, int8 (weights per "
          "output feature, inputs per row; as good on dev, docs/quality.md) "
          "or float32 in the packed step, float32 or bfloat16 in "
          "--cpu_decoder libtorch; on a GPU float32 (int8 too), float16 or "
          "bfloat16 (half-precision weights, caches and activations).");

namespace {

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

bool LooksLikeTsv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  return std::getline(in, line) && line.find('\t') != std::string::npos;
}

std::vector<std::string> SplitPieces(const std::string& line) {
  std::vector<std::string> pieces;
  size_t start = 0;
  while (start < line.size()) {
    const size_t end = std::min(line.find(' ', start), line.size());
    if (end > start) pieces.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return pieces;
}

// --tokens: pieces in, pieces out, in batches of --batch_size.
int RunTokens(const fanyi::Translator& translator) {
  const std::vector<std::string> lines = ReadLines(absl::GetFlag(FLAGS_input));
  const auto batch_size =
      static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_batch_size)));
  const int beam_size = absl::GetFlag(FLAGS_beam_size);
  const std::vector<std::string> target_prefix =
      SplitPieces(absl::GetFlag(FLAGS_target_prefix));
  std::vector<std::string> outputs;
  int64_t target_tokens = 0;
  const auto start = std::chrono::steady_clock::now();
  for (size_t first = 0; first < lines.size(); first += batch_size) {
    std::vector<std::vector<std::string>> sources;
    for (size_t i = first; i < std::min(lines.size(), first + batch_size);
         ++i) {
      sources.push_back(SplitPieces(lines[i]));
    }
    for (const auto& target :
         translator.TranslateTokens(sources, beam_size, target_prefix,
                                    absl::GetFlag(FLAGS_replace_unknowns))) {
      std::string line;
      for (const std::string& piece : target) {
        line += (line.empty() ? "" : " ") + piece;
      }
      outputs.push_back(std::move(line));
      target_tokens += static_cast<int64_t>(target.size());
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!absl::GetFlag(FLAGS_output).empty()) {
    std::ofstream out(absl::GetFlag(FLAGS_output));
    for (const std::string& line : outputs) out << line << "\n";
    if (!out) {
      throw std::runtime_error("cannot write " + absl::GetFlag(FLAGS_output));
    }
  }
  std::cout << "model " << translator.model_version() << " on "
            << translator.device_name() << ": " << lines.size()
            << " sentences of pieces, "
            << (beam_size > 1 ? "beam " + std::to_string(beam_size)
                              : std::string("greedy"))
            << ", batch " << batch_size << ", " << seconds << " s, "
            << static_cast<double>(target_tokens) / seconds
            << " target tokens/s\n";
  return 0;
}

int Run() {
  const std::string input = absl::GetFlag(FLAGS_input);
  std::vector<std::string> sources;
  std::vector<std::string> references;
  if (LooksLikeTsv(input)) {
    const fanyi::TsvColumns columns{absl::GetFlag(FLAGS_source_column) - 1,
                                    absl::GetFlag(FLAGS_target_column) - 1};
    fanyi::ParallelCorpus corpus = fanyi::ReadParallelTsv(input, columns);
    for (const fanyi::BadLine& bad : corpus.bad_lines) {
      std::cerr << input << ":" << bad.line_number
                << ": skipped: " << bad.reason << "\n";
    }
    for (const fanyi::SentencePair& pair : corpus.pairs) {
      sources.push_back(pair.source);
      references.push_back(pair.target);
    }
  } else {
    sources = ReadLines(input);
    if (!absl::GetFlag(FLAGS_references).empty()) {
      references = ReadLines(absl::GetFlag(FLAGS_references));
      if (references.size() != sources.size()) {
        throw std::runtime_error(
            "--references has " + std::to_string(references.size()) +
            " lines, --input " + std::to_string(sources.size()));
      }
    }
  }

  fanyi::TranslatorOptions options;
  options.device = absl::GetFlag(FLAGS_device);
  options.threads = absl::GetFlag(FLAGS_threads);
  if (options.threads <= 0) {
    options.threads = fanyi::CoresGiven();
  }
  if (absl::GetFlag(FLAGS_length_penalty) >= 0) {
    options.length_penalty = absl::GetFlag(FLAGS_length_penalty);
  }
  options.cpu_decoder = absl::GetFlag(FLAGS_cpu_decoder);
  options.compute_type = absl::GetFlag(FLAGS_compute_type);
  options.beam_stops_early = absl::GetFlag(FLAGS_beam_stops_early);
  options.output_guard = absl::GetFlag(FLAGS_output_guard);
  options.min_decode_length = absl::GetFlag(FLAGS_min_decoding_length);
  if (absl::GetFlag(FLAGS_max_decoding_length) > 0) {
    options.max_decode_length = absl::GetFlag(FLAGS_max_decoding_length);
    options.length_ratio = 0;
    options.length_offset = options.max_decode_length;
  }
  auto translator =
      fanyi::Translator::Load(absl::GetFlag(FLAGS_model_dir), options);
  if (absl::GetFlag(FLAGS_tokens)) return RunTokens(*translator);
  const int beam_size = absl::GetFlag(FLAGS_beam_size);
  const fanyi::CorpusTranslation translation = fanyi::TranslateCorpus(
      *translator, sources, absl::GetFlag(FLAGS_batch_size), beam_size);
  for (size_t i = 0; i < translation.errors.size(); ++i) {
    if (!translation.errors[i].empty()) {
      std::cerr << "sentence " << i + 1 << ": " << translation.errors[i]
                << "\n";
    }
  }

  if (!absl::GetFlag(FLAGS_output).empty()) {
    std::ofstream out(absl::GetFlag(FLAGS_output));
    for (const std::string& hypothesis : translation.hypotheses) {
      out << hypothesis << "\n";
    }
    if (!out)
      throw std::runtime_error("cannot write " + absl::GetFlag(FLAGS_output));
  }
  std::cout << "model " << translator->model_version() << " on "
            << translator->device_name() << ": " << sources.size()
            << " sentences, " << (beam_size > 1 ? "beam " : "greedy")
            << (beam_size > 1
                    ? std::to_string(beam_size) + " (length penalty " +
                          std::to_string(translator->length_penalty()) + ")"
                    : "")
            << ", batch " << absl::GetFlag(FLAGS_batch_size) << ", "
            << translation.seconds << " s, "
            << translation.generated_tokens / translation.seconds
            << " target tokens/s\n";
  std::cout << "spans: " << translation.spans << " carried by placeholders, "
            << translation.unplaced_spans
            << " of them left out by the model (appended); "
            << translation.unknown_words << " unknown source words\n";
  int64_t broken = 0;
  std::string kinds;
  for (const auto& [kind, count] : translation.broken_parts) {
    broken += count;
    kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(count);
  }
  std::cout << "guard" << (options.output_guard ? "" : " (off)") << ": "
            << broken << " of " << translation.parts
            << " sentences and clauses broken"
            << (kinds.empty() ? "" : " (" + kinds + ")") << ", "
            << translation.repaired_parts << " replaced by their retry\n";
  if (!references.empty()) {
    // Chinese translations come in Simplified script: the references are
    // scored converted to it, and as they are.
    std::vector<std::string> converted = references;
    if (translator->pipeline().writes_chinese()) {
      const fanyi::ScriptConverter to_simplified(
          fanyi::ChineseScript::kSimplified);
      for (std::string& reference : converted) {
        reference = to_simplified.Convert(reference);
      }
    }
    std::cout << fanyi::DescribeScore(fanyi::ScoreCorpus(
        translation.hypotheses, converted, translator->target_language()));
    const fanyi::ConfidenceAgreement agreement =
        fanyi::ScoreConfidence(translation, converted);
    char line[256];
    std::snprintf(line, sizeof(line),
                  "confidence: mean %.3f; with sentence chrF2, Pearson r = "
                  "%.3f, Spearman rho = %.3f over %lld translations\n",
                  agreement.mean_confidence, agreement.pearson,
                  agreement.spearman, static_cast<long long>(agreement.count));
    std::cout << line;
    if (translator->pipeline().writes_chinese()) {
      const fanyi::CorpusScore raw = fanyi::ScoreCorpus(
          translation.hypotheses, references, translator->target_language());
      std::cout << "raw references: BLEU = "
                << fanyi::FormatScore(raw.bleu.score)
                << ", chrF2 = " << fanyi::FormatScore(raw.chrf) << "\n";
      const fanyi::ScriptPurity purity;
      int mixed = 0;
      for (const std::string& hypothesis : translation.hypotheses) {
        mixed += purity.Mixes(hypothesis);
      }
      std::cout << "script: " << mixed << " of "
                << translation.hypotheses.size()
                << " translations mix Simplified and Traditional forms\n";
    }
  }
  return translation.failed > 0 ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  fanyi::EnsureCpuThreadingEnvironment(argv);
  fanyi::KeepFreedMemoryForReuse();
  absl::SetProgramUsageMessage(
      "Translates a test set and scores it (BLEU, chrF2).\n"
      "  fanyi-eval --model_dir models/en-zh --input dev.tsv --beam_size 4");
  absl::ParseCommandLine(argc, argv);
  try {
    return Run();
  } catch (const std::exception& error) {
    std::cerr << "fanyi-eval: " << error.what() << "\n";
    return 1;
  }
}
