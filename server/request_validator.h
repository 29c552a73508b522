#ifndef FANYI_SERVER_REQUEST_VALIDATOR_H_
#define FANYI_SERVER_REQUEST_VALIDATOR_H_

#include <string>
#include <vector>

#include "common/decoding/translator.h"
#include "fanyi/v1/translator.pb.h"
#include "grpcpp/support/status.h"

namespace fanyi {

// Limits the service enforces on requests; see ServerOptions.
struct ServiceOptions {
  int max_input_tokens = 256;  // Longer texts get INVALID_ARGUMENT.
  int max_batch_texts = 256;   // TranslateBatch texts per RPC, at most.
  int default_beam_size = 4;   // Used when a request says 0.
  int max_beam_size = 8;       // Larger requested beams are capped to this.
};

// Checks translation requests against the service's limits and encodes their
// texts (tokenizer and source vocabulary) into what the batcher decodes.
// Every problem with a request becomes INVALID_ARGUMENT naming the field;
// only an unexpected encoder failure is INTERNAL. Thread-safe: it only reads
// the options and the translator's const methods.
class RequestValidator {
 public:
  // `translator` must outlive the validator.
  RequestValidator(const ServiceOptions& options, const Translator& translator);

  // INVALID_ARGUMENT when a TranslateBatch request has no texts or more than
  // max_batch_texts of them.
  grpc::Status CheckTextCount(int text_count) const;

  // Validates a Translate request; on OK `source` holds its encoded text and
  // the beam size to decode it with.
  grpc::Status Validate(const v1::TranslateRequest& request,
                        EncodedSource* source) const;

  // Validates a TranslateBatch request (its text count included); on OK
  // `sources` holds one encoded text per request text, in order, each with
  // the request's beam size. Fails with the lowest-numbered bad text.
  grpc::Status Validate(const v1::TranslateBatchRequest& request,
                        std::vector<EncodedSource>* sources) const;

 private:
  // The beam size to use for a request asking for `requested`, or
  // INVALID_ARGUMENT for a negative request.
  grpc::Status ChooseBeamSize(int requested, int* beam_size) const;
  // Validates `text` and encodes it into `source`; returns INVALID_ARGUMENT
  // naming `field` ("text", "texts[3]") and the reason when it is unusable.
  grpc::Status EncodeText(const std::string& text, const std::string& field,
                          int beam_size, EncodedSource* source) const;

  const ServiceOptions options_;
  const Translator& translator_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_REQUEST_VALIDATOR_H_
