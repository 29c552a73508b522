#include "server/request_validator.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

namespace fanyi {

RequestValidator::RequestValidator(const ServiceOptions& options,
                                   const Translator& translator)
    : options_(options), translator_(translator) {}

grpc::Status RequestValidator::CheckTextCount(int text_count) const {
  if (text_count == 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "texts is empty; send at least one text");
  }
  if (text_count > options_.max_batch_texts) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "texts has " + std::to_string(text_count) +
                            " entries; the limit is " +
                            std::to_string(options_.max_batch_texts));
  }
  return grpc::Status::OK;
}

grpc::Status RequestValidator::Validate(const v1::TranslateRequest& request,
                                        EncodedSource* source) const {
  int beam_size = 1;
  grpc::Status status = ChooseBeamSize(request.beam_size(), &beam_size);
  if (!status.ok()) return status;
  return EncodeText(request.text(), "text", beam_size, source);
}

grpc::Status RequestValidator::Validate(
    const v1::TranslateBatchRequest& request,
    std::vector<EncodedSource>* sources) const {
  const int text_count = request.texts_size();
  grpc::Status status = CheckTextCount(text_count);
  if (!status.ok()) return status;
  int beam_size = 1;
  status = ChooseBeamSize(request.beam_size(), &beam_size);
  if (!status.ok()) return status;
  sources->assign(text_count, EncodedSource());
  for (int i = 0; i < text_count; ++i) {
    status = EncodeText(request.texts(i), "texts[" + std::to_string(i) + "]",
                        beam_size, &(*sources)[i]);
    if (!status.ok()) return status;
  }
  return grpc::Status::OK;
}

grpc::Status RequestValidator::ChooseBeamSize(int requested,
                                              int* beam_size) const {
  if (requested < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "beam_size is " + std::to_string(requested) +
                            "; use 0 for the server default, 1 for greedy "
                            "or more for beam search");
  }
  *beam_size = requested == 0 ? options_.default_beam_size
                              : std::min(requested, options_.max_beam_size);
  return grpc::Status::OK;
}

grpc::Status RequestValidator::EncodeText(const std::string& text,
                                          const std::string& field,
                                          int beam_size,
                                          EncodedSource* source) const {
  if (text.empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        field + " is empty");
  }
  try {
    *source = translator_.EncodeSource(text);
  } catch (const std::invalid_argument& e) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        field + ": " + e.what());
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        field + ": encoding failed: " + e.what());
  }
  source->beam_size = beam_size;
  const int token_count = static_cast<int>(source->ids.size());
  if (token_count > options_.max_input_tokens) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        field + " has " + std::to_string(token_count) +
                            " tokens; the limit is " +
                            std::to_string(options_.max_input_tokens));
  }
  return grpc::Status::OK;
}

}  // namespace fanyi
