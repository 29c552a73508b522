// TextPipeline on a real checkpoint (a tiny model trained for a moment, on
// the shared corpus's first pairs): what Prepare counts and Assemble shows,
// with target ids chosen by the test.
#include "common/pipeline/text_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/pipeline/translator.h"
#include "common/text/vocabulary.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

// A model trained without placeholders, so that an unknown word reaches
// the model as <unk>.
const Translator& ModelWithoutPlaceholders() {
  static const Translator* const translator = [] {
    const std::string dir = testing_util::MakeTempDir("text_pipeline_test");
    const std::string pairs = dir + "/pairs.tsv";
    std::ifstream in(testing_util::SharedDataPath("en-zh/train_mini.tsv"));
    std::ofstream out(pairs);
    std::string line;
    for (int i = 0; i < 30 && std::getline(in, line); ++i) out << line << "\n";
    out.close();
    const std::string checkpoint = testing_util::TrainTinyModelOn(
        pairs, dir + "/run", [](TrainingOptions& options) {
          options.corpus.placeholders = false;
          options.epochs = 1;
          options.validate_every_epochs = 1;
        });
    TranslatorOptions options;
    options.device = "cpu";
    return Translator::Load(checkpoint, options).release();
  }();
  return *translator;
}

TEST(TextPipelineTest, AnUnknownWordLeftAsUnkIsCountedOnce) {
  const TextPipeline& pipeline = ModelWithoutPlaceholders().pipeline();
  ASSERT_EQ(pipeline.max_placeholders(), 0);
  TextRequest request;
  request.texts = {"Anyone can do zyzzyva."};
  const std::vector<PreparedText> prepared = pipeline.Prepare(request);
  ASSERT_EQ(prepared.size(), 1u);
  const std::vector<std::string>& unknown = prepared[0].unknown_words;
  EXPECT_EQ(std::count(unknown.begin(), unknown.end(), "zyzzyva"), 1)
      << ::testing::PrintToString(unknown);
  // It reached the model as <unk>: nothing carried it past.
  const std::vector<int64_t>& ids = prepared[0].parts.at(0).ids;
  EXPECT_EQ(std::count(ids.begin(), ids.end(), Vocabulary::kUnkId), 1);
}

// A model without placeholders aligns its parts: a generated <unk> becomes
// the source word it attended to most, and a template token, taken out of
// the source, goes back before the word aligned to what followed it.
TEST(TextPipelineTest, AlignedPartsReplaceUnknownsAndPutSpansBack) {
  const TextPipeline& pipeline = ModelWithoutPlaceholders().pipeline();
  TextRequest request;
  request.texts = {"Anyone can do 3 things for {name}."};
  const std::vector<PreparedText> prepared = pipeline.Prepare(request);
  ASSERT_EQ(prepared[0].parts.size(), 1u);
  const EncodedSource& part = prepared[0].parts[0];
  EXPECT_TRUE(part.align);
  ASSERT_EQ(prepared[0].source_pieces.at(0),
            (std::vector<std::string>{"anyone", "can", "do", "3", "things",
                                      "for", "."}));
  EXPECT_EQ(part.ids.size(), 7u);
  // The source's own ids stand in for a translation (as target ids they
  // are other words), each aligned to its own source word, with an <unk>
  // aligned to "things".
  DecodedPart decoded{0, part.ids};
  decoded.target_ids[4] = Vocabulary::kUnkId;
  decoded.source_positions = {0, 1, 2, 3, 4, 5, 6};
  const TextTranslation translation =
      pipeline.assembler().Assemble(prepared[0], {decoded});
  EXPECT_EQ(translation.dropped_unknown_count, 0);
  // The target is Chinese: no spaces, and no word but the one replaced.
  const std::string& text = translation.text;
  const std::size_t things = text.find("things");
  ASSERT_NE(things, std::string::npos) << text;
  const std::size_t name = text.find("{name}");
  ASSERT_NE(name, std::string::npos) << text;
  EXPECT_LT(things, name) << text;
  EXPECT_GT(text.size(), name + 6) << text;  // Before the full stop's token.
  EXPECT_EQ(translation.unplaced_span_count, 0);
}

TEST(TextPipelineTest, AGeneratedUnkIsDroppedAndCounted) {
  const TextPipeline& pipeline = ModelWithoutPlaceholders().pipeline();
  TextRequest request;
  request.texts = {"Anyone can do that."};
  const std::vector<PreparedText> prepared = pipeline.Prepare(request);
  // The source's own ids stand in for a translation (a Chinese target's
  // vocabulary has other tokens, but any known ids do), with <unk> among
  // them.
  const TextTranslation clean =
      pipeline.assembler().Assemble(prepared[0], {{0, {5, 6, 7}}});
  const TextTranslation with_unknown = pipeline.assembler().Assemble(
      prepared[0], {{0, {5, Vocabulary::kUnkId, 6, Vocabulary::kUnkId, 7}}});
  EXPECT_EQ(with_unknown.text, clean.text);
  EXPECT_EQ(with_unknown.text.find("<unk>"), std::string::npos);
  EXPECT_EQ(with_unknown.dropped_unknown_count, 2);
  EXPECT_EQ(clean.dropped_unknown_count, 0);
}

// A text's confidence is e^(mean log-probability per token) over all its
// parts, weighted by their tokens; a text with nothing decoded has 1.
TEST(TextPipelineTest, ConfidenceIsTheTokenWeightedMeanOverParts) {
  const TextPipeline& pipeline = ModelWithoutPlaceholders().pipeline();
  TextRequest request;
  request.texts = {"Anyone can do that. Tom can do that too.", "42"};
  const std::vector<PreparedText> prepared = pipeline.Prepare(request);
  ASSERT_EQ(prepared[0].parts.size(), 2u);
  DecodedPart first{0, {5, 6}};
  first.log_probability = -0.5;
  first.scored_tokens = 3;
  DecodedPart second{1, {7}};
  second.log_probability = -3.5;
  second.scored_tokens = 1;
  const TextTranslation both =
      pipeline.assembler().Assemble(prepared[0], {first, second});
  EXPECT_NEAR(both.confidence, std::exp(-4.0 / 4), 1e-12);
  ASSERT_TRUE(prepared[1].parts.empty());
  EXPECT_EQ(pipeline.assembler().Assemble(prepared[1], {}).confidence, 1.0);
}

}  // namespace
}  // namespace fanyi
