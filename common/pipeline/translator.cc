#include "common/pipeline/translator.h"

#include <malloc.h>
#include <torch/utils.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/decoding/continuous_decoder.h"
#include "common/decoding/decoder_selection.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/checkpoint.h"
#include "common/model/device.h"
#include "common/text/vocabulary.h"

namespace fanyi {

struct Translator::Impl {
  Checkpoint checkpoint;
  DecodingOptions decoding;
  double length_penalty;
  torch::Device device;
};

std::unique_ptr<Translator> Translator::Load(const std::string& model_dir,
                                             const TranslatorOptions& options) {
  if (options.threads > 0) torch::set_num_threads(options.threads);
  Checkpoint checkpoint =
      LoadCheckpoint(model_dir, ResolveDevice(options.device));
  // A freshly loaded model is never trained, so its weights can be packed,
  // and then the kernel's copy is the only one kept.
  SelectDecoder(*checkpoint.model, options.cpu_decoder, options.compute_type);
  if (checkpoint.model->inference_kernel() != nullptr) {
    checkpoint.model->ReleaseWeights();
    // Loading freed as much as the model weighs, much of it inside the
    // heap, which glibc keeps unless asked to give its free pages back.
    malloc_trim(0);
  }
  return FromCheckpoint(checkpoint, options);
}

std::unique_ptr<Translator> Translator::FromCheckpoint(
    const Checkpoint& checkpoint, const TranslatorOptions& options) {
  const double length_penalty =
      options.length_penalty.value_or(checkpoint.length_penalty);
  if (!(length_penalty >= 0)) {
    throw std::invalid_argument("length_penalty must not be negative");
  }
  if (options.min_decode_length < 0 ||
      options.min_decode_length > options.max_decode_length) {
    throw std::invalid_argument("min_decode_length " +
                                std::to_string(options.min_decode_length) +
                                " must be from 0 to max_decode_length " +
                                std::to_string(options.max_decode_length));
  }
  DecodingOptions decoding;
  decoding.length_ratio = options.length_ratio;
  decoding.length_offset = options.length_offset;
  decoding.min_length = options.min_decode_length;
  // A model from CTranslate2 decodes as its translate_batch does by default,
  // which never ends a translation before its first token
  // (min_decoding_length 1): </s> is left out of the first step's softmax.
  if (checkpoint.length_normalization == LengthNormalization::kCtranslate2) {
    decoding.min_length = std::max<int64_t>(decoding.min_length, 1);
  }
  decoding.beam_stops_early = options.beam_stops_early;
  decoding.length_normalization = checkpoint.length_normalization;
  decoding.cuda_graphs = options.cuda_graphs;
  const torch::Device device = checkpoint.model->parameters().front().device();
  if (!device.is_cpu()) decoding.device_steps = options.device_steps;
  // The position table bounds how far the decoder can go.
  decoding.max_length = std::min<int64_t>(
      options.max_decode_length, checkpoint.model->config().max_positions - 1);
  auto pipeline = std::make_unique<TextPipeline>(
      checkpoint, decoding, options.max_sentence_tokens, options.limits,
      options.output_guard);
  auto impl = std::unique_ptr<Impl>(
      new Impl{checkpoint, decoding, length_penalty, device});
  auto translator =
      std::unique_ptr<Translator>(new Translator(std::move(impl)));
  translator->pipeline_ = std::move(pipeline);
  return translator;
}

Translator::Translator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Translator::~Translator() = default;

std::vector<TextTranslation> Translator::TranslateTexts(
    const std::vector<std::string>& texts, const TextOptions& options) const {
  std::vector<PreparedText> prepared;
  std::vector<EncodedSource> parts;
  for (const std::string& text : texts) {
    prepared.push_back(pipeline_->PrepareText(text, options));
    parts.insert(parts.end(), prepared.back().parts.begin(),
                 prepared.back().parts.end());
  }
  std::vector<GuardVerdict> verdicts;
  const std::vector<DecodedPart> decoded = DecodeGuarded(parts, &verdicts);
  std::vector<TextTranslation> translations;
  std::size_t first = 0;
  for (const PreparedText& text : prepared) {
    const std::size_t end = first + text.parts.size();
    const auto begin = decoded.begin();
    translations.push_back(pipeline_->assembler().Assemble(
        text, {begin + static_cast<std::ptrdiff_t>(first),
               begin + static_cast<std::ptrdiff_t>(end)}));
    for (std::size_t part = first; part < end; ++part) {
      CountVerdict(verdicts[part], &translations.back());
    }
    first = end;
  }
  return translations;
}

std::vector<DecodedPart> Translator::DecodeParts(
    const std::vector<EncodedSource>& sources) const {
  const int64_t max_source =
      impl_->checkpoint.model->config().MaxSourceTokens();
  for (const EncodedSource& source : sources) {
    if (static_cast<int64_t>(source.ids.size()) > max_source) {
      throw std::invalid_argument(
          "source has " + std::to_string(source.ids.size()) +
          " tokens; the model takes at most " + std::to_string(max_source));
    }
  }
  return NewContinuousDecoder()->DecodeAll(sources);
}

std::vector<std::vector<std::string>> Translator::TranslateTokens(
    const std::vector<std::vector<std::string>>& sources, int beam_size,
    const std::vector<std::string>& target_prefix,
    bool replace_unknowns) const {
  const Checkpoint& checkpoint = impl_->checkpoint;
  std::vector<int64_t> prefix_ids;
  for (const std::string& piece : target_prefix) {
    const int64_t id = checkpoint.target_vocabulary.Id(piece);
    if (checkpoint.target_vocabulary.Token(id) != piece) {
      throw std::invalid_argument("target prefix \"" + piece +
                                  "\" is not in the target vocabulary");
    }
    prefix_ids.push_back(id);
  }
  // An empty source has an empty translation, as in CTranslate2.
  std::vector<EncodedSource> encoded;
  for (const std::vector<std::string>& source : sources) {
    if (source.empty()) continue;
    EncodedSource& added = encoded.emplace_back();
    added.ids = checkpoint.source_vocabulary.Encode(source);
    added.beam_size = beam_size;
    added.target_prefix = prefix_ids;
    added.align = replace_unknowns;
  }
  const std::vector<DecodedPart> decoded = DecodeParts(encoded);
  std::vector<std::vector<std::string>> targets(sources.size());
  size_t next = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i].empty()) continue;
    targets[i] = target_prefix;
    const DecodedPart& part = decoded[next++];
    for (size_t t = 0; t < part.target_ids.size(); ++t) {
      const int64_t id = part.target_ids[t];
      targets[i].push_back(replace_unknowns && id == Vocabulary::kUnkId
                               ? sources[i].at(part.source_positions.at(t))
                               : checkpoint.target_vocabulary.Token(id));
    }
  }
  return targets;
}

std::vector<DecodedPart> Translator::DecodeGuarded(
    const std::vector<EncodedSource>& sources,
    std::vector<GuardVerdict>* verdicts) const {
  std::vector<DecodedPart> decoded = DecodeParts(sources);
  const OutputGuard& guard = pipeline_->guard();
  if (verdicts != nullptr) verdicts->assign(sources.size(), GuardVerdict());
  const int max_beam = pipeline_->limits().text_limits().max_beam_size;
  std::vector<std::size_t> broken;
  std::vector<EncodedSource> retries;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const BrokenOutput found = guard.Inspect(sources[i], decoded[i]);
    if (verdicts != nullptr) (*verdicts)[i].broken = found;
    if (found == BrokenOutput::kNone || !guard.enabled()) continue;
    std::optional<EncodedSource> retry =
        OutputGuard::Retry(sources[i], found, max_beam);
    if (!retry) continue;
    broken.push_back(i);
    retries.push_back(std::move(*retry));
  }
  if (retries.empty()) return decoded;
  std::vector<DecodedPart> again = DecodeParts(retries);
  for (std::size_t k = 0; k < broken.size(); ++k) {
    const std::size_t i = broken[k];
    if (!guard.KeepsRetry(sources[i], decoded[i], again[k])) continue;
    decoded[i] = std::move(again[k]);
    decoded[i].handle = static_cast<int64_t>(i);
    if (verdicts != nullptr) (*verdicts)[i].kept_retry = true;
  }
  return decoded;
}

std::unique_ptr<ContinuousDecoder> Translator::NewContinuousDecoder() const {
  return std::make_unique<ContinuousDecoder>(
      *impl_->checkpoint.model, impl_->decoding, impl_->length_penalty);
}

std::vector<std::string> Translator::Translate(
    const std::vector<std::string>& texts, int beam_size) const {
  TextOptions options;
  options.beam_size = beam_size;
  std::vector<std::string> translations;
  for (TextTranslation& translation : TranslateTexts(texts, options)) {
    translations.push_back(std::move(translation.text));
  }
  return translations;
}

const std::string& Translator::model_version() const {
  return impl_->checkpoint.model_version;
}

double Translator::length_penalty() const { return impl_->length_penalty; }

std::string Translator::device_name() const { return impl_->device.str(); }

const std::string& Translator::source_language() const {
  return impl_->checkpoint.source_language;
}

const std::string& Translator::target_language() const {
  return impl_->checkpoint.target_language;
}

int64_t Translator::source_vocabulary_size() const {
  return impl_->checkpoint.source_vocabulary.size();
}

int64_t Translator::target_vocabulary_size() const {
  return impl_->checkpoint.target_vocabulary.size();
}

}  // namespace fanyi
