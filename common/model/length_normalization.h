#ifndef FANYI_COMMON_MODEL_LENGTH_NORMALIZATION_H_
#define FANYI_COMMON_MODEL_LENGTH_NORMALIZATION_H_

namespace fanyi {

// How beam search ranks hypotheses of different lengths (α: the length
// penalty). A checkpoint carries it: the models imported from CTranslate2
// were tuned with CTranslate2's.
enum class LengthNormalization {
  // log P / ((5 + len) / 6)^α, len counting </s> (Wu et al., 2016).
  kGnmt,
  // log P / len^α, len counting </s> too, and a sentence ends once
  // beam_size hypotheses have (as beam_stops_early): CTranslate2's search
  // with its default patience of 1, for the models imported from it.
  kCtranslate2,
};

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_LENGTH_NORMALIZATION_H_
