#ifndef FANYI_SERVER_TRANSLATOR_DECODE_ENGINE_H_
#define FANYI_SERVER_TRANSLATOR_DECODE_ENGINE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "common/decoding/translator.h"
#include "server/decode_engine.h"

namespace fanyi {

// The served DecodeEngine: greedy rows on the Translator's ContinuousDecoder,
// beam search batches through Translator::TranslateIds.
class TranslatorDecodeEngine final : public DecodeEngine {
 public:
  // `translator` must outlive the engine, and nothing else may decode with
  // it meanwhile (it is thread-compatible).
  explicit TranslatorDecodeEngine(Translator& translator);
  ~TranslatorDecodeEngine() override;

  std::vector<int64_t> Add(const std::vector<EncodedSource>& sources) override;
  std::vector<Finished> Step() override;
  void Remove(const std::vector<int64_t>& handles) override;
  void Reset() override;
  int64_t active() const override;
  std::vector<std::vector<int64_t>> DecodeBatch(
      const std::vector<EncodedSource>& sources) override;

 private:
  Translator& translator_;
  std::unique_ptr<ContinuousDecoder> decoder_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_TRANSLATOR_DECODE_ENGINE_H_
