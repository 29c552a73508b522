#ifndef FANYI_SERVER_REQUEST_VALIDATOR_H_
#define FANYI_SERVER_REQUEST_VALIDATOR_H_

#include <string>
#include <vector>

#include "common/decoding/translator.h"
#include "fanyi/v1/translator.pb.h"
#include "google/protobuf/repeated_field.h"
#include "grpcpp/support/status.h"

namespace fanyi {

// Limits the service enforces on requests; see ServerOptions.
struct ServiceOptions {
  // Longer texts get INVALID_ARGUMENT, checked before anything else reads
  // them.
  int max_input_chars = 20000;
  // Sentences (and clauses) of all the texts of one request, at most: each
  // takes a place in the queue.
  int max_request_sentences = 512;
  int max_glossary_entries = 256;  // Glossary and do-not-translate terms.
  int max_batch_texts = 256;       // TranslateBatch texts per RPC, at most.
  int default_beam_size = 4;       // Used when a request says 0.
  int max_beam_size = 8;           // Larger requested beams are capped to this.
};

// Checks translation requests against the service's limits and prepares
// their texts (Translator::Prepare: sentences, placeholders, encoding) for
// the batcher. Every problem with a request becomes INVALID_ARGUMENT naming
// the field; only an unexpected failure is INTERNAL. Thread-safe: it only
// reads the options and the translator's const methods.
class RequestValidator {
 public:
  // `translator` must outlive the validator.
  RequestValidator(const ServiceOptions& options, const Translator& translator);

  // INVALID_ARGUMENT when a TranslateBatch request has no texts or more than
  // max_batch_texts of them.
  grpc::Status CheckTextCount(int text_count) const;

  // Validates a Translate request; on OK `texts` holds its one prepared
  // text.
  grpc::Status Validate(const v1::TranslateRequest& request,
                        std::vector<PreparedText>* texts) const;

  // Validates a TranslateBatch request (its text count included); on OK
  // `texts` holds one prepared text per request text, in order. Fails with
  // the lowest-numbered bad text.
  grpc::Status Validate(const v1::TranslateBatchRequest& request,
                        std::vector<PreparedText>* texts) const;

 private:
  // The options every text of a request shares, from its fields.
  grpc::Status ReadTextOptions(
      int beam_size, int script,
      const google::protobuf::RepeatedPtrField<v1::GlossaryEntry>& glossary,
      const google::protobuf::RepeatedPtrField<std::string>& do_not_translate,
      TextOptions* options) const;
  // Checks `text`'s length and prepares it into `prepared`;
  // INVALID_ARGUMENT naming `field` ("text", "texts[3]") and the reason
  // when it is unusable.
  grpc::Status PrepareText(const std::string& text, const std::string& field,
                           const TextOptions& options,
                           PreparedText* prepared) const;
  // INVALID_ARGUMENT when `texts` hold more sentences than a request may.
  grpc::Status CheckSentenceCount(const std::vector<PreparedText>& texts) const;

  const ServiceOptions options_;
  const Translator& translator_;
};

// The proto value of `script`.
v1::Script ScriptToProto(ChineseScript script);

}  // namespace fanyi

#endif  // FANYI_SERVER_REQUEST_VALIDATOR_H_
