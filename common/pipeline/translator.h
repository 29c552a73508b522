#ifndef FANYI_COMMON_PIPELINE_TRANSLATOR_H_
#define FANYI_COMMON_PIPELINE_TRANSLATOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "common/pipeline/text_pipeline.h"
#include "common/pipeline/text_translation.h"

namespace fanyi {

// Settings for a Translator, validated by Translator::Load.
struct TranslatorOptions {
  std::string device = "auto";  // "auto" (cuda when available), "cpu", "cuda".
  int threads = 0;              // Intra-op threads; 0 keeps LibTorch's setting.
  int max_decode_length = 256;  // Hard cap on generated tokens per sentence.
  // DecodingOptions::min_length; at least 1 for a model imported from
  // CTranslate2 (its translate_batch's default).
  int min_decode_length = 0;
  double length_ratio = 2.0;  // Per-row cap: length_ratio * source_len + ...
  int length_offset = 10;     // ... + length_offset, never above the hard cap.
  // GNMT α for beam search (docs/quality.md); unset: the checkpoint's own.
  std::optional<double> length_penalty;
  // Longer sentences are translated in clauses (SplitIntoClauses). 0 = the
  // longest the model does well: its longest training sentence, and no
  // longer than its length caps let a translation grow.
  int max_sentence_tokens = 0;
  // The decoding step on the CPU: "packed" (PackedTransformer: packed weights,
  // fused kernels) or "libtorch" (the model's own step, the reference). Only
  // Load installs the packed step; FromCheckpoint leaves the model as it is.
  std::string cpu_decoder = "packed";
  // The step's arithmetic (SelectDecoder): "int8" or "float32" in the
  // packed CPU step, where int8 is as good on dev (docs/quality.md) and
  // about twice as fast; "float32" or "bfloat16" in the libtorch CPU step;
  // on a GPU "float32" (for "int8" too), "float16" or "bfloat16".
  std::string compute_type = "int8";
  bool beam_stops_early = false;  // DecodingOptions::beam_stops_early.
  bool cuda_graphs = false;       // DecodingOptions::cuda_graphs.
  // DecodingOptions::device_steps, on a GPU; the CPU chooses on the host.
  int64_t device_steps = 0;
  // Decode again each sentence whose translation OutputGuard finds broken
  // (a loop, a length far outside the training pairs', the source copied),
  // keeping the better of the two.
  bool output_guard = true;
  TextLimits limits;  // What one request may ask (TextPipeline::Prepare).
};

struct Checkpoint;

// A loaded model with its text pipeline: text in, text out. Loads the
// checkpoint, picks the decoding step, and hands out decoders of the model.
// Keeps torch types out of its header so callers (the server) compile fast.
// Thread-safe for its const methods and for decoders used each by one
// thread: the model's weights are only read while decoding, so any number
// of ContinuousDecoders (NewContinuousDecoder) may decode at once, each
// driven by its own thread. DecodeParts and TranslateTexts decode on a
// decoder of their own, so they are safe alongside them too.
class Translator {
 public:
  // Loads the checkpoint in `model_dir`; throws std::runtime_error naming the
  // file and the problem when anything is missing or malformed.
  static std::unique_ptr<Translator> Load(const std::string& model_dir,
                                          const TranslatorOptions& options);
  // Wraps an in-memory checkpoint; shares its model (so a trainer can
  // translate with the weights it is training).
  static std::unique_ptr<Translator> FromCheckpoint(
      const Checkpoint& checkpoint, const TranslatorOptions& options);
  ~Translator();

  // How texts are prepared for this model and put back together.
  const TextPipeline& pipeline() const { return *pipeline_; }

  // Decodes a batch of sources of any lengths, each with its own beam size,
  // all on one ContinuousDecoder; returns the translation of each source,
  // in the order given.
  std::vector<DecodedPart> DecodeParts(
      const std::vector<EncodedSource>& sources) const;

  // DecodeParts under the pipeline's OutputGuard: each source whose
  // translation it finds broken is decoded again (OutputGuard::Retry, all
  // in one more batch) and the better translation kept, unless the guard is
  // off. `verdicts`, when given, gets what the guard found of each source,
  // on or off.
  std::vector<DecodedPart> DecodeGuarded(
      const std::vector<EncodedSource>& sources,
      std::vector<GuardVerdict>* verdicts = nullptr) const;

  // A step-by-step decoder (continuous batching) on this translator's model,
  // decoding limits and length penalty; it must not outlive the translator,
  // and one thread at a time drives it.
  std::unique_ptr<ContinuousDecoder> NewContinuousDecoder() const;

  // Translates whole texts end to end (TextPipeline::PrepareText, one batch
  // of every part, Assemble).
  std::vector<TextTranslation> TranslateTexts(
      const std::vector<std::string>& texts, const TextOptions& options) const;

  // Source pieces in, target pieces out, a list per sentence, bypassing
  // the text pipeline, as CTranslate2's translate_batch takes and gives
  // them (fanyi-eval --tokens): a piece outside the source vocabulary is
  // its unk; </s> is left out; an empty source gets an empty translation.
  // Each translation starts with `target_prefix`, forced as CTranslate2's
  // target_prefix is (EncodedSource::target_prefix); std::invalid_argument
  // when one of its pieces is not in the target vocabulary. With
  // `replace_unknowns`, each generated unk becomes the source piece its
  // step attended to most (CTranslate2's replace_unknowns, which
  // argos-translate asks for).
  std::vector<std::vector<std::string>> TranslateTokens(
      const std::vector<std::vector<std::string>>& sources, int beam_size,
      const std::vector<std::string>& target_prefix = {},
      bool replace_unknowns = false) const;

  // The translations alone, in Simplified script for a Chinese target.
  std::vector<std::string> Translate(const std::vector<std::string>& texts,
                                     int beam_size = 1) const;

  // A short identifier of the loaded model (from its config).
  const std::string& model_version() const;
  // The length penalty α its beam search decodes with.
  double length_penalty() const;
  // "cpu" or "cuda:N".
  std::string device_name() const;
  // Language codes of the model's sides (the target's picks the BLEU
  // tokenization).
  const std::string& source_language() const;
  const std::string& target_language() const;
  // Entries of each side's vocabulary.
  int64_t source_vocabulary_size() const;
  int64_t target_vocabulary_size() const;

 private:
  struct Impl;
  explicit Translator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<TextPipeline> pipeline_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_TRANSLATOR_H_
