#ifndef FANYI_COMMON_MODEL_CTRANSLATE2_WEIGHTS_H_
#define FANYI_COMMON_MODEL_CTRANSLATE2_WEIGHTS_H_

#include <torch/types.h>

#include "common/model/ctranslate2_file.h"
#include "common/model/ctranslate2_transformer.h"
#include "common/model/ctranslate2_vocabulary_map.h"
#include "common/model/transformer.h"

namespace fanyi {

// Copies the weights of CTranslate2's `model` into `transformer`, built for
// them: `positions` as its position table, the embeddings and the generator
// in the order of `source` and `target` (the output bias of the rows fanyi
// adds is -10,000: never predicted), and every layer, fused projections
// split.
void CopyCt2Weights(const Ct2ModelFile& model,
                    const Ct2TransformerOptions& options,
                    const Ct2VocabularyMap& source,
                    const Ct2VocabularyMap& target,
                    const torch::Tensor& positions,
                    TransformerImpl& transformer);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CTRANSLATE2_WEIGHTS_H_
