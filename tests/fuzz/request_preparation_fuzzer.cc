// libFuzzer target: the server's request preparation (PrepareRequest: the
// request read, checked and prepared by the model's TextPipeline) on
// arbitrary requests, through the same path as the gRPC handlers.
//
// Input: the first byte picks the RPC (even: Translate, odd: TranslateBatch),
// the rest is the serialized request message, read as the service reads it
// (ReadMessage: INVALID_ARGUMENT for bytes that are not the message, or a
// string field with invalid UTF-8, which it names). Properties:
//   - the status is OK or INVALID_ARGUMENT, never INTERNAL, never a crash;
//   - on OK every text was prepared into parts of 1..max_sentence_tokens ids
//     within the source vocabulary, with a beam size in [1, max_beam_size],
//     at most max_request_sentences parts in all, and a batch has one
//     prepared text per text;
//   - a text that is empty or not UTF-8, or a negative beam size, is refused.
// The translator is a random tiny model (it is never run: validation only
// tokenizes and looks tokens up); the limits are small so they are reached.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/model/checkpoint.h"
#include "common/pipeline/translator.h"
#include "common/text/tokenizer.h"
#include "common/text/utf8.h"
#include "fanyi/v1/translator.pb.h"
#include "server/raw_messages.h"
#include "server/request_preparation.h"
#include "tests/fuzz/fuzz_check.h"

namespace fanyi::fuzzing {
namespace {

constexpr int kMaxInputChars = 64;
constexpr int kMaxRequestSentences = 6;
constexpr int kMaxBatchTexts = 4;
constexpr int kMaxBeamSize = 3;

struct Fixture {
  std::unique_ptr<Translator> translator;
  int64_t source_vocab_size = 0;
};

Fixture* MakeFixture() {
  Checkpoint checkpoint;
  checkpoint.model_version = "fuzz";
  checkpoint.source_language = "en";
  checkpoint.target_language = "zh";
  const Tokenizer english("en");
  checkpoint.source_vocabulary = Vocabulary::Build(
      {english.Tokenize("The cat doesn't sit on the mat."),
       english.Tokenize("It's 3.5 km to the station, isn't it?")},
      1, 0);
  checkpoint.target_vocabulary =
      Vocabulary::Build({{"猫", "坐", "在", "垫子", "上", "。"}}, 1, 0);
  ModelConfig config;
  config.source_vocab_size = checkpoint.source_vocabulary.size();
  config.target_vocab_size = checkpoint.target_vocabulary.size();
  config.encoder_layers = 1;
  config.decoder_layers = 1;
  config.d_model = 8;
  config.d_ff = 8;
  config.heads = 2;
  config.max_positions = 10;  // Below the token limit: both limits are hit.
  checkpoint.model = Transformer(config);
  checkpoint.model->eval();

  auto* fixture = new Fixture;
  TranslatorOptions options;
  options.limits.max_input_chars = kMaxInputChars;
  options.limits.max_request_parts = kMaxRequestSentences;
  options.limits.max_texts = kMaxBatchTexts;
  options.limits.default_beam_size = 2;
  options.limits.max_beam_size = kMaxBeamSize;
  fixture->translator = Translator::FromCheckpoint(checkpoint, options);
  fixture->source_vocab_size = checkpoint.source_vocabulary.size();
  return fixture;
}

bool IsUtf8(const std::string& text) {
  try {
    DecodeUtf8(text);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

void CheckStatusCode(const grpc::Status& status) {
  FuzzCheck(
      status.ok() || status.error_code() == grpc::StatusCode::INVALID_ARGUMENT,
      "unexpected status " + std::to_string(status.error_code()) + ": " +
          status.error_message());
}

void CheckSource(const Fixture& fixture, const EncodedSource& source) {
  FuzzCheck(!source.ids.empty(), "accepted a text with no tokens");
  FuzzCheck(static_cast<int>(source.ids.size()) <=
                fixture.translator->pipeline().max_sentence_tokens(),
            "a part longer than the model takes");
  for (int64_t id : source.ids) {
    FuzzCheck(id >= 0 && id < fixture.source_vocab_size,
              "source id " + std::to_string(id) + " outside the vocabulary");
  }
  FuzzCheck(source.beam_size >= 1 && source.beam_size <= kMaxBeamSize,
            "beam size " + std::to_string(source.beam_size) + " out of range");
}

// A prepared text: at least one part (an HTML document may have none),
// each valid, and a gap around each sentence of each run.
void CheckText(const Fixture& fixture, const PreparedText& text) {
  FuzzCheck(!text.parts.empty() || text.document != nullptr,
            "accepted a text with nothing to translate");
  FuzzCheck(text.parts.size() <= kMaxRequestSentences,
            "accepted too many sentences");
  for (const SplitText& run : text.runs) {
    FuzzCheck(run.gaps.size() == run.sentences.size() + 1,
              "a layout without a gap around each sentence");
  }
  for (const EncodedSource& part : text.parts) CheckSource(fixture, part);
}

// True when preparation must refuse `text` whatever the limits.
bool TextIsUnusable(const std::string& text) {
  return text.empty() || !IsUtf8(text);
}

// Parses `request` from the input and prepares it as the handlers do;
// true when it was accepted, with its texts in `texts`.
template <typename Request>
bool Accepted(const Fixture& fixture, const uint8_t* data, size_t size,
              Request* request, std::vector<PreparedText>* texts) {
  grpc::Slice slice(data, size);
  const grpc::ByteBuffer buffer(&slice, 1);
  if (const grpc::Status read = ReadMessage(buffer, request); !read.ok()) {
    CheckStatusCode(read);
    return false;
  }
  TextRequest text_request;
  grpc::Status status = ReadRequest(*request, &text_request);
  if (status.ok()) {
    status =
        PrepareRequest(fixture.translator->pipeline(), text_request, texts);
  }
  CheckStatusCode(status);
  return status.ok();
}

void CheckTranslate(const Fixture& fixture, const uint8_t* data, size_t size) {
  v1::TranslateRequest request;
  std::vector<PreparedText> texts;
  if (!Accepted(fixture, data, size, &request, &texts)) return;
  FuzzCheck(texts.size() == 1, "one prepared text expected");
  CheckText(fixture, texts.front());
  FuzzCheck(request.beam_size() >= 0, "accepted a negative beam size");
  FuzzCheck(!TextIsUnusable(request.text()),
            "accepted an empty or non-UTF-8 text");
}

void CheckTranslateBatch(const Fixture& fixture, const uint8_t* data,
                         size_t size) {
  v1::TranslateBatchRequest request;
  std::vector<PreparedText> texts;
  if (!Accepted(fixture, data, size, &request, &texts)) return;
  FuzzCheck(request.texts_size() >= 1 && request.texts_size() <= kMaxBatchTexts,
            "accepted a batch of " + std::to_string(request.texts_size()));
  FuzzCheck(static_cast<int>(texts.size()) == request.texts_size(),
            "one prepared text per text expected");
  FuzzCheck(request.beam_size() >= 0, "accepted a negative beam size");
  std::size_t parts = 0;
  for (int i = 0; i < request.texts_size(); ++i) {
    CheckText(fixture, texts[i]);
    parts += texts[i].parts.size();
    FuzzCheck(texts[i].beam_size == texts[0].beam_size,
              "texts of one request got different beam sizes");
    FuzzCheck(!TextIsUnusable(request.texts(i)),
              "accepted an empty or non-UTF-8 text");
  }
  FuzzCheck(parts <= kMaxRequestSentences, "accepted too many sentences");
}

}  // namespace
}  // namespace fanyi::fuzzing

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // Parse failures of malformed messages are expected; keep stderr quiet.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fanyi::fuzzing::Fixture* const fixture =
      fanyi::fuzzing::MakeFixture();
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    fanyi::fuzzing::CheckTranslate(*fixture, data + 1, size - 1);
  } else {
    fanyi::fuzzing::CheckTranslateBatch(*fixture, data + 1, size - 1);
  }
  return 0;
}
