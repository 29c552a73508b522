#ifndef FANYI_SERVER_TRANSLATOR_DECODE_ENGINE_H_
#define FANYI_SERVER_TRANSLATOR_DECODE_ENGINE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "common/pipeline/translator.h"
#include "server/decode_engine.h"

namespace fanyi {

// The served DecodeEngine: a ContinuousDecoder of the Translator's model,
// emptied when a step or removal fails so that it can go on decoding.
class TranslatorDecodeEngine final : public DecodeEngine {
 public:
  // `translator` must outlive the engine. Several engines may decode with
  // one translator at once, each driven by its own thread (the Translator's
  // contract: decoding only reads the model).
  explicit TranslatorDecodeEngine(const Translator& translator);
  ~TranslatorDecodeEngine() override;

  std::vector<int64_t> Add(const std::vector<EncodedSource>& sources) override;
  std::vector<Finished> Step() override;
  void Remove(const std::vector<int64_t>& handles) override;

 private:
  std::unique_ptr<ContinuousDecoder> decoder_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_TRANSLATOR_DECODE_ENGINE_H_
