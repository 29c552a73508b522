#include "server/translator_decode_engine.h"

#include "common/decoding/continuous_decoder.h"

namespace fanyi {

TranslatorDecodeEngine::TranslatorDecodeEngine(const Translator& translator)
    : decoder_(translator.NewContinuousDecoder()) {}

TranslatorDecodeEngine::~TranslatorDecodeEngine() = default;

std::vector<int64_t> TranslatorDecodeEngine::Add(
    const std::vector<EncodedSource>& sources) {
  return decoder_->Add(sources);  // Leaves the batch as it was on failure.
}

std::vector<DecodeEngine::Finished> TranslatorDecodeEngine::Step() {
  try {
    return decoder_->Step();
  } catch (...) {
    decoder_->Clear();  // A step that failed half-way left the state unknown.
    throw;
  }
}

void TranslatorDecodeEngine::Remove(const std::vector<int64_t>& handles) {
  try {
    decoder_->Remove(handles);
  } catch (...) {
    decoder_->Clear();
    throw;
  }
}

}  // namespace fanyi
