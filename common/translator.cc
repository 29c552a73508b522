#include "common/translator.h"

#include <torch/cuda.h>
#include <torch/utils.h>

#include <stdexcept>

#include "common/checkpoint.h"
#include "common/greedy_decoder.h"
#include "common/tokenizer.h"

namespace fanyi {

struct Translator::Impl {
  Checkpoint checkpoint;
  Tokenizer source_tokenizer;
  Tokenizer target_tokenizer;
  DecodingOptions decoding;
  torch::Device device;
};

namespace {

torch::Device ChooseDevice(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda") {
    if (!torch::cuda::is_available()) {
      throw std::runtime_error("--device cuda: no CUDA device is available");
    }
    return torch::Device(torch::kCUDA, 0);
  }
  if (name == "auto") {
    return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0)
                                       : torch::Device(torch::kCPU);
  }
  throw std::invalid_argument("device must be auto, cpu or cuda, not '" + name +
                              "'");
}

}  // namespace

std::unique_ptr<Translator> Translator::Load(const std::string& model_dir,
                                             const TranslatorOptions& options) {
  if (options.threads > 0) torch::set_num_threads(options.threads);
  const torch::Device device = ChooseDevice(options.device);
  Checkpoint checkpoint = LoadCheckpoint(model_dir, device);
  Tokenizer source_tokenizer(checkpoint.source_language);
  Tokenizer target_tokenizer(checkpoint.target_language);
  DecodingOptions decoding;
  decoding.max_length = options.max_decode_length;
  decoding.length_ratio = options.length_ratio;
  decoding.length_offset = options.length_offset;
  // The position table bounds how far the decoder can go.
  decoding.max_length = std::min<int64_t>(
      decoding.max_length, checkpoint.model->config().max_positions - 1);
  auto impl = std::unique_ptr<Impl>(
      new Impl{std::move(checkpoint), std::move(source_tokenizer),
               std::move(target_tokenizer), decoding, device});
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
  std::vector<std::vector<int64_t>> rows;
  rows.reserve(sources.size());
  const int64_t max_source =
      impl_->checkpoint.model->config().max_positions - 1;
  for (const EncodedSource& source : sources) {
    if (static_cast<int64_t>(source.ids.size()) > max_source) {
      throw std::invalid_argument(
          "source has " + std::to_string(source.ids.size()) +
          " tokens; the model takes at most " + std::to_string(max_source));
    }
    rows.push_back(source.ids);
  }
  return GreedyDecode(*impl_->checkpoint.model, rows, impl_->decoding);
}

std::string Translator::DecodeTarget(
    const std::vector<int64_t>& target_ids) const {
  return impl_->target_tokenizer.Detokenize(
      impl_->checkpoint.target_vocabulary.Decode(target_ids));
}

std::vector<std::string> Translator::Translate(
    const std::vector<std::string>& texts) {
  std::vector<EncodedSource> sources;
  sources.reserve(texts.size());
  for (const std::string& text : texts) sources.push_back(EncodeSource(text));
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

}  // namespace fanyi
