#include "common/decoding/translator.h"

#include <torch/utils.h>

#include <stdexcept>

#include "common/decoding/continuous_decoder.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/checkpoint.h"
#include "common/model/device.h"
#include "common/text/tokenizer.h"

namespace fanyi {

struct Translator::Impl {
  Checkpoint checkpoint;
  Tokenizer source_tokenizer;
  Tokenizer target_tokenizer;
  DecodingOptions decoding;
  double length_penalty;
  torch::Device device;
};

std::unique_ptr<Translator> Translator::Load(const std::string& model_dir,
                                             const TranslatorOptions& options) {
  if (options.threads > 0) torch::set_num_threads(options.threads);
  return FromCheckpoint(
      LoadCheckpoint(model_dir, ResolveDevice(options.device)), options);
}

std::unique_ptr<Translator> Translator::FromCheckpoint(
    const Checkpoint& checkpoint, const TranslatorOptions& options) {
  if (options.length_penalty < 0) {
    throw std::invalid_argument("length_penalty must not be negative");
  }
  DecodingOptions decoding;
  decoding.length_ratio = options.length_ratio;
  decoding.length_offset = options.length_offset;
  // The position table bounds how far the decoder can go.
  decoding.max_length = std::min<int64_t>(
      options.max_decode_length, checkpoint.model->config().max_positions - 1);
  const torch::Device device = checkpoint.model->parameters().front().device();
  auto impl = std::unique_ptr<Impl>(
      new Impl{checkpoint, Tokenizer(checkpoint.source_language),
               Tokenizer(checkpoint.target_language), decoding,
               options.length_penalty, device});
  return std::unique_ptr<Translator>(new Translator(std::move(impl)));
}

Translator::Translator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Translator::~Translator() = default;

EncodedSource Translator::EncodeSource(std::string_view text) const {
  std::vector<std::string> tokens = impl_->source_tokenizer.Tokenize(text);
  if (tokens.empty()) {
    throw std::invalid_argument("text has no tokens to translate");
  }
  const int64_t max_source =
      impl_->checkpoint.model->config().max_positions - 1;
  if (static_cast<int64_t>(tokens.size()) > max_source) {
    throw std::invalid_argument("text has " + std::to_string(tokens.size()) +
                                " tokens; the model takes at most " +
                                std::to_string(max_source));
  }
  return {impl_->checkpoint.source_vocabulary.Encode(tokens)};
}

std::vector<std::vector<int64_t>> Translator::TranslateIds(
    const std::vector<EncodedSource>& sources) {
  const int64_t max_source =
      impl_->checkpoint.model->config().max_positions - 1;
  for (const EncodedSource& source : sources) {
    if (static_cast<int64_t>(source.ids.size()) > max_source) {
      throw std::invalid_argument(
          "source has " + std::to_string(source.ids.size()) +
          " tokens; the model takes at most " + std::to_string(max_source));
    }
  }
  return NewContinuousDecoder()->DecodeAll(sources);
}

std::unique_ptr<ContinuousDecoder> Translator::NewContinuousDecoder() {
  return std::make_unique<ContinuousDecoder>(
      *impl_->checkpoint.model, impl_->decoding, impl_->length_penalty);
}

std::string Translator::DecodeTarget(
    const std::vector<int64_t>& target_ids) const {
  return impl_->target_tokenizer.Detokenize(
      impl_->checkpoint.target_vocabulary.Decode(target_ids));
}

std::vector<std::string> Translator::Translate(
    const std::vector<std::string>& texts, int beam_size) {
  std::vector<EncodedSource> sources;
  sources.reserve(texts.size());
  for (const std::string& text : texts) {
    sources.push_back(EncodeSource(text));
    sources.back().beam_size = beam_size;
  }
  std::vector<std::string> translations;
  for (const auto& ids : TranslateIds(sources)) {
    translations.push_back(DecodeTarget(ids));
  }
  return translations;
}

const std::string& Translator::model_version() const {
  return impl_->checkpoint.model_version;
}

std::string Translator::device_name() const { return impl_->device.str(); }

const std::string& Translator::target_language() const {
  return impl_->checkpoint.target_language;
}

}  // namespace fanyi
