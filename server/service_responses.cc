#include "server/service_responses.h"

#include <string>
#include <utility>

#include "common/pipeline/translator.h"
#include "server/request_preparation.h"

namespace fanyi {

template <typename Response>
void DescribeCall(const ModelRoute& route, int beam_size,
                  const TextRequest& request, Response* response) {
  const ServedModel& model = *route.back();
  response->set_model_version(model.translator().model_version());
  response->mutable_model()->set_name(model.name());
  response->mutable_model()->set_version(model.version());
  if (route.size() > 1) {
    response->mutable_pivot_model()->set_name(route.front()->name());
    response->mutable_pivot_model()->set_version(route.front()->version());
    response->set_pivot_language(kPivotLanguage);
  }
  response->set_beam_size(beam_size);
  if (model.translator().pipeline().writes_chinese()) {
    response->set_script(
        ScriptToProto(request.script.value_or(ChineseScript::kSimplified)));
  }
}

template void DescribeCall(const ModelRoute& route, int beam_size,
                           const TextRequest& request,
                           v1::TranslateResponse* response);
template void DescribeCall(const ModelRoute& route, int beam_size,
                           const TextRequest& request,
                           v1::TranslateBatchResponse* response);

void FillTranslation(TextTranslation assembled, v1::Translation* translation) {
  translation->set_text(std::move(assembled.text));
  translation->set_source_token_count(assembled.source_token_count);
  translation->set_generated_token_count(assembled.generated_token_count);
  translation->set_sentence_count(assembled.sentence_count);
  translation->set_split_sentence_count(assembled.split_sentence_count);
  translation->set_capped_count(assembled.capped_part_count);
  for (std::string& word : assembled.unknown_words) {
    translation->add_unknown_words(std::move(word));
  }
  translation->set_unplaced_span_count(assembled.unplaced_span_count);
  translation->set_confidence(assembled.confidence);
  translation->set_broken_count(assembled.broken_part_count);
  translation->set_repaired_count(assembled.repaired_part_count);
}

void DescribeModel(const ServedModel& model, v1::ModelInfo* info) {
  const Translator& translator = model.translator();
  const TextPipeline& pipeline = translator.pipeline();
  info->mutable_model()->set_name(model.name());
  info->mutable_model()->set_version(model.version());
  info->set_source_language(translator.source_language());
  info->set_target_language(translator.target_language());
  info->set_model_version(translator.model_version());
  if (pipeline.writes_chinese()) {
    for (v1::Script script :
         {v1::SCRIPT_SIMPLIFIED, v1::SCRIPT_TRADITIONAL_TAIWAN,
          v1::SCRIPT_TRADITIONAL_HONG_KONG}) {
      info->add_scripts(script);
    }
  }
  info->set_source_vocabulary_size(translator.source_vocabulary_size());
  info->set_target_vocabulary_size(translator.target_vocabulary_size());
  info->set_cased_output(pipeline.keeps_target_case());
  info->set_device(translator.device_name());
  info->set_source_script_normalized(pipeline.normalizes_source_script());
  info->set_length_penalty(translator.length_penalty());
}

}  // namespace fanyi
