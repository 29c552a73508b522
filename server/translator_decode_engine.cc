#include "server/translator_decode_engine.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "common/decoding/continuous_decoder.h"

namespace fanyi {

TranslatorDecodeEngine::TranslatorDecodeEngine(Translator& translator)
    : translator_(translator), decoder_(translator.NewContinuousDecoder()) {}

TranslatorDecodeEngine::~TranslatorDecodeEngine() = default;

std::vector<int64_t> TranslatorDecodeEngine::Add(
    const std::vector<EncodedSource>& sources) {
  std::vector<std::vector<int64_t>> source_ids;
  source_ids.reserve(sources.size());
  for (const EncodedSource& source : sources) {
    if (source.beam_size != 1) {
      throw std::invalid_argument(
          "continuous decoding is greedy; a source asks for beam size " +
          std::to_string(source.beam_size));
    }
    source_ids.push_back(source.ids);
  }
  return decoder_->Add(source_ids);
}

std::vector<DecodeEngine::Finished> TranslatorDecodeEngine::Step() {
  std::vector<Finished> finished;
  for (ContinuousDecoder::Finished& row : decoder_->Step()) {
    finished.push_back({row.handle, std::move(row.target_ids)});
  }
  return finished;
}

void TranslatorDecodeEngine::Remove(const std::vector<int64_t>& handles) {
  decoder_->Remove(handles);
}

void TranslatorDecodeEngine::Reset() {
  decoder_ = translator_.NewContinuousDecoder();
}

int64_t TranslatorDecodeEngine::active() const { return decoder_->active(); }

std::vector<std::vector<int64_t>> TranslatorDecodeEngine::DecodeBatch(
    const std::vector<EncodedSource>& sources) {
  return translator_.TranslateIds(sources);
}

}  // namespace fanyi
