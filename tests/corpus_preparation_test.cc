// Corpus preparation (trainer/corpus_preparation.h), its shards and the
// batches streamed from them: every usable pair lands in a shard once, as
// the ids its tokens map to, the same on any thread count; bad and long
// lines are left out and counted; damaged files are refused naming them; an
// epoch's batches hold every pair once, the same for the same seed, across
// shuffling windows smaller than the corpus.
#include "trainer/corpus_preparation.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/text/parallel_corpus.h"
#include "common/text/script_converter.h"
#include "common/text/tokenizer.h"
#include "tests/test_util.h"
#include "trainer/token_shard.h"
#include "trainer/training_batches.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

using IdPair = std::pair<std::vector<int64_t>, std::vector<int64_t>>;

// Every pair of the corpus's shards, in the order they were written.
std::vector<IdPair> ShardPairs(const PreparedCorpus& corpus) {
  std::vector<IdPair> pairs;
  for (const std::string& path : corpus.shard_paths()) {
    const TokenShard shard = TokenShard::Read(path);
    for (int64_t i = 0; i < shard.size(); ++i) {
      const IdSpan source = shard.source(i);
      const IdSpan target = shard.target(i);
      pairs.emplace_back(
          std::vector<int64_t>(source.data, source.data + source.size),
          std::vector<int64_t>(target.data, target.data + target.size));
    }
  }
  return pairs;
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// dev_mini.tsv as it is (no script conversion, no placeholders), so that
// the test can tokenize it the plain way and compare.
PreparationOptions PlainOptions() {
  PreparationOptions options;
  options.train_path = testing_util::SharedDataPath("en-zh/dev_mini.tsv");
  options.dev_path = options.train_path;
  options.target_script = "keep";
  options.placeholders = false;
  options.vocab_min_count = 1;
  options.shard_pairs = 45;
  options.threads = 1;
  return options;
}

TEST(CorpusPreparationTest, ShardsHoldEveryPairAsItsTokensIdsOnAnyThreadCount) {
  const std::string directory = testing_util::MakeTempDir("prepare_plain");
  PreparationOptions options = PlainOptions();
  std::ostringstream log;
  const PreparedCorpus one = PrepareCorpus(options, directory + "/one", log);
  options.threads = 2;
  const PreparedCorpus two = PrepareCorpus(options, directory + "/two", log);

  // The plain way: tokenize every pair, build the vocabularies from all of
  // them, map each pair to ids.
  const ParallelCorpus corpus = ReadParallelTsv(options.train_path);
  const Tokenizer source_tokenizer("en"), target_tokenizer("zh");
  std::vector<std::vector<std::string>> sources, targets;
  for (const SentencePair& pair : corpus.pairs) {
    sources.push_back(source_tokenizer.Tokenize(pair.source));
    targets.push_back(target_tokenizer.Tokenize(pair.target));
  }
  CorpusVocabularies expected;
  expected.source = Vocabulary::Build(sources, 1, 0);
  expected.target = Vocabulary::Build(targets, 1, 0);
  EXPECT_TRUE(one.vocabularies() == expected);
  std::vector<IdPair> expected_pairs;
  for (size_t i = 0; i < sources.size(); ++i) {
    expected_pairs.emplace_back(expected.source.Encode(sources[i]),
                                expected.target.Encode(targets[i]));
  }
  EXPECT_EQ(ShardPairs(one), expected_pairs);
  EXPECT_EQ(one.train_pairs(), static_cast<int64_t>(corpus.pairs.size()));
  // 200 pairs, 45 a shard.
  EXPECT_EQ(one.shard_paths().size(), 5u);

  // Two threads write the same bytes.
  ASSERT_EQ(two.shard_paths().size(), one.shard_paths().size());
  for (size_t i = 0; i < one.shard_paths().size(); ++i) {
    EXPECT_EQ(FileBytes(one.shard_paths()[i]), FileBytes(two.shard_paths()[i]))
        << one.shard_paths()[i];
  }
  EXPECT_TRUE(two.vocabularies() == one.vocabularies());

  // The dev set: the same pairs, with their texts.
  const DevSet dev = one.ReadDev();
  ASSERT_EQ(dev.sources.size(), corpus.pairs.size());
  EXPECT_EQ(dev.sources[7], expected_pairs[7].first);
  EXPECT_EQ(dev.texts[7], corpus.pairs[7].source);
  EXPECT_EQ(dev.references[7], corpus.pairs[7].target);
}

// A TSV corpus and gettext catalogs (.po, and the .mo msgfmt compiles from
// it, in a directory) prepare as one corpus: the catalogs' translated
// messages are pairs, fuzzy and untranslated ones are not; swapped columns
// swap the catalogs' sides too.
TEST(CorpusPreparationTest, CatalogsAreReadBesideTsv) {
  const std::string directory = testing_util::MakeTempDir("prepare_catalogs");
  fs::create_directories(directory + "/catalogs");
  const std::string po = directory + "/catalogs/demo.po";
  std::ofstream(po, std::ios::binary)
      << "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=UTF-8\\n\"\n"
         "\nmsgid \"Open the file.\"\nmsgstr \"打开文件。\"\n"
         "\n#, fuzzy\nmsgid \"Close\"\nmsgstr \"关闭\"\n"
         "\nmsgid \"Save\"\nmsgstr \"\"\n"
         "\nmsgid \"One file\"\nmsgid_plural \"%d files\"\n"
         "msgstr[0] \"%d 个文件\"\n";
  ASSERT_EQ(std::system(
                ("msgfmt -o " + directory + "/catalogs/demo.mo " + po).c_str()),
            0);
  PreparationOptions options = PlainOptions();
  const std::string tsv = options.train_path;
  options.train_path = tsv + "," + directory + "/catalogs";
  std::ostringstream log;
  const PreparedCorpus corpus =
      PrepareCorpus(options, directory + "/prepared", log);
  const int64_t tsv_pairs =
      static_cast<int64_t>(ReadParallelTsv(tsv).pairs.size());
  // Three pairs from each catalog: the sentence, and the plural message's
  // two forms.
  EXPECT_EQ(corpus.train_pairs(), tsv_pairs + 6) << log.str();

  options.columns = {1, 0};
  options.train_path = po;
  options.dev_path = po;
  const PreparedCorpus reversed =
      PrepareCorpus(options, directory + "/reversed", log);
  EXPECT_EQ(reversed.train_pairs(), 3);
  EXPECT_EQ(reversed.ReadDev().texts.at(0), "打开文件。");

  options.train_path = directory + "/catalogs/missing.po";
  EXPECT_THROW(PrepareCorpus(options, directory + "/missing", log),
               std::runtime_error);
  // A catalog into another language than the target's.
  std::ofstream(directory + "/fr.po")
      << "msgid \"\"\nmsgstr \"Language: fr\\n\"\n\nmsgid \"Open\"\n"
         "msgstr \"Ouvrir\"\n";
  options.columns = {0, 1};
  options.train_path = directory + "/fr.po";
  try {
    PrepareCorpus(options, directory + "/fr", log);
    ADD_FAILURE() << "trained a French catalog as Chinese";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"fr\""), std::string::npos)
        << e.what();
  }
  std::ofstream(directory + "/bad.po") << "msgid \"a\"\nmsgstr \"b\" x\n";
  options.train_path = directory + "/bad.po";
  try {
    PrepareCorpus(options, directory + "/bad", log);
    ADD_FAILURE() << "accepted a damaged catalog";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.po: line 2"), std::string::npos)
        << e.what();
  }
}

// The other direction of the same file: Chinese sources in Simplified
// whatever script the file has, English targets that keep their case, the
// columns, cases and scripts recorded for the trainer.
TEST(CorpusPreparationTest, SwappedColumnsTrainTheOtherDirectionCased) {
  const std::string directory = testing_util::MakeTempDir("prepare_zh_en");
  PreparationOptions options = PlainOptions();
  options.columns = TsvColumns{1, 0};
  options.source_language = "zh";
  options.target_language = "en";
  std::ostringstream log;
  const PreparedCorpus corpus =
      PrepareCorpus(options, directory + "/prepared", log);

  const ParallelCorpus text = ReadParallelTsv(options.train_path);
  const ScriptConverter to_simplified(ChineseScript::kSimplified);
  const Tokenizer source_tokenizer("zh");
  const Tokenizer target_tokenizer("en", nullptr, WordCase::kKeep);
  const std::vector<IdPair> shards = ShardPairs(corpus);
  ASSERT_EQ(shards.size(), text.pairs.size());
  int traditional = 0;
  for (size_t i = 0; i < text.pairs.size(); ++i) {
    const std::string simplified = to_simplified.Convert(text.pairs[i].target);
    traditional += simplified != text.pairs[i].target;
    const std::vector<int64_t> source_ids = corpus.vocabularies().source.Encode(
        source_tokenizer.Tokenize(simplified));
    const std::vector<int64_t> target_ids = corpus.vocabularies().target.Encode(
        target_tokenizer.Tokenize(text.pairs[i].source));
    EXPECT_EQ(shards[i], IdPair(source_ids, target_ids)) << i;
  }
  EXPECT_GT(traditional, 0) << "the file has no Traditional sentence to test";
  // The dev texts stay as written: the translator converts them.
  const DevSet dev = corpus.ReadDev();
  EXPECT_EQ(dev.texts[7], text.pairs[7].target);
  EXPECT_EQ(dev.references[7], text.pairs[7].source);

  // Capitalized sentence starts are their own target tokens.
  const Vocabulary& target = corpus.vocabularies().target;
  EXPECT_NE(target.Id("I"), target.Id("i"));
  EXPECT_NE(target.Id("I"), Vocabulary::kUnkId);
  EXPECT_EQ(corpus.source_case(), WordCase::kLower);
  EXPECT_EQ(corpus.target_case(), WordCase::kKeep);
  EXPECT_EQ(corpus.manifest().at("source_column"), 2);
  EXPECT_EQ(corpus.manifest().at("target_column"), 1);
  EXPECT_EQ(corpus.source_script(), "simplified");
  EXPECT_EQ(corpus.target_script(), "");
}

// Bidirectional: every pair as it is, then reversed, each language
// tokenized its own way wherever it stands, in one vocabulary that both
// sides share; the dev set in the one direction.
TEST(CorpusPreparationTest, BidirectionalWritesBothDirectionsInOneVocabulary) {
  const std::string directory = testing_util::MakeTempDir("prepare_both");
  PreparationOptions options = PlainOptions();
  options.bidirectional = true;
  std::ostringstream log;
  const PreparedCorpus corpus =
      PrepareCorpus(options, directory + "/prepared", log);

  const ParallelCorpus text = ReadParallelTsv(options.train_path);
  const Tokenizer english("en"), chinese("zh");
  std::vector<std::vector<std::string>> tokens;
  for (const SentencePair& pair : text.pairs) {
    tokens.push_back(english.Tokenize(pair.source));
    tokens.push_back(chinese.Tokenize(pair.target));
  }
  const Vocabulary joint = Vocabulary::Build(tokens, 1, 0);
  const CorpusVocabularies& vocabularies = corpus.vocabularies();
  EXPECT_EQ(vocabularies.source.size(), joint.size());
  for (int64_t id = 0; id < joint.size(); ++id) {
    EXPECT_EQ(vocabularies.source.Id(joint.Token(id)), id) << joint.Token(id);
    EXPECT_EQ(vocabularies.target.Token(id), vocabularies.source.Token(id));
  }
  const std::vector<IdPair> shards = ShardPairs(corpus);
  ASSERT_EQ(shards.size(), 2 * text.pairs.size());
  EXPECT_EQ(corpus.train_pairs(), 2 * static_cast<int64_t>(text.pairs.size()));
  for (size_t i = 0; i < text.pairs.size(); ++i) {
    const std::vector<int64_t> en = joint.Encode(tokens[2 * i]);
    const std::vector<int64_t> zh = joint.Encode(tokens[2 * i + 1]);
    EXPECT_EQ(shards[2 * i], IdPair(en, zh)) << i;
    EXPECT_EQ(shards[2 * i + 1], IdPair(zh, en)) << i;
  }
  EXPECT_TRUE(corpus.manifest().at("bidirectional").get<bool>());
  const DevSet dev = corpus.ReadDev();
  ASSERT_EQ(dev.sources.size(), text.pairs.size());
  EXPECT_EQ(dev.sources[7], joint.Encode(tokens[14]));
  EXPECT_EQ(dev.targets[7], joint.Encode(tokens[15]));

  options.source_subwords = 100;
  EXPECT_THROW(PrepareCorpus(options, directory + "/subwords", log),
               std::invalid_argument);
}

TEST(CorpusPreparationTest, BpeSubwordsCutTheSourceSide) {
  const std::string directory = testing_util::MakeTempDir("prepare_bpe");
  PreparationOptions options = PlainOptions();
  options.source_subwords = 300;
  options.subword_type = "bpe";
  std::ostringstream log;
  const PreparedCorpus corpus =
      PrepareCorpus(options, directory + "/prepared", log);
  EXPECT_NE(log.str().find("source bpe subword model"), std::string::npos)
      << log.str();
  const auto& subwords = corpus.vocabularies().source_subwords;
  ASSERT_NE(subwords, nullptr);
  EXPECT_EQ(corpus.vocabularies().target_subwords, nullptr);
  // The shards hold the model's pieces as ids, case kept.
  const ParallelCorpus text = ReadParallelTsv(options.train_path);
  const Tokenizer tokenizer("en", subwords);
  const std::vector<IdPair> pairs = ShardPairs(corpus);
  ASSERT_EQ(pairs.size(), text.pairs.size());
  for (size_t i = 0; i < pairs.size(); i += 37) {
    EXPECT_EQ(pairs[i].first, corpus.vocabularies().source.Encode(
                                  tokenizer.Tokenize(text.pairs[i].source)));
  }
  // It reopens with the same model.
  EXPECT_TRUE(PreparedCorpus::Open(corpus.directory()).vocabularies() ==
              corpus.vocabularies());
  options.subword_type = "wordpiece";
  EXPECT_THROW(PrepareCorpus(options, directory + "/other", log),
               std::invalid_argument);
}

TEST(CorpusPreparationTest, BadAndLongLinesAreLeftOutAndCounted) {
  const std::string directory = testing_util::MakeTempDir("prepare_bad");
  const std::string train = directory + "/train.tsv";
  {
    std::ofstream out(train);
    out << "Hello.\t你好。\n"
        << "no tab here\n"
        << "Bad \xff bytes\t坏\n"
        << "one two three four five six seven\t一二三四五六七\n"
        << "Thank you.\t謝謝。\n";
  }
  PreparationOptions options;
  options.train_path = train;
  options.dev_path = train;
  options.vocab_min_count = 1;
  options.max_tokens = 5;
  std::ostringstream log;
  const PreparedCorpus corpus =
      PrepareCorpus(options, directory + "/prepared", log);
  EXPECT_EQ(corpus.train_pairs(), 2);
  EXPECT_EQ(corpus.manifest()["skipped_lines"], 2);
  EXPECT_EQ(corpus.manifest()["too_long_pairs"], 1);
  EXPECT_NE(log.str().find(":2: skipped: no tab"), std::string::npos)
      << log.str();
  // The Chinese side in Simplified script.
  EXPECT_EQ(corpus.target_script(), "simplified");
  EXPECT_GE(corpus.vocabularies().target.Id("谢"), 4);
  EXPECT_EQ(corpus.vocabularies().target.Id("謝"), Vocabulary::kUnkId);
  // Dev pairs are cut to max_tokens, not left out.
  const DevSet dev = corpus.ReadDev();
  ASSERT_EQ(dev.sources.size(), 3u);
  EXPECT_EQ(dev.sources[1].size(), 5u);
}

TEST(CorpusPreparationTest, GivenVocabulariesAreKept) {
  const std::string directory = testing_util::MakeTempDir("prepare_fixed");
  PreparationOptions options = PlainOptions();
  std::ostringstream log;
  const PreparedCorpus first = PrepareCorpus(options, directory + "/a", log);
  CorpusVocabularies small;
  small.source = Vocabulary({"<pad>", "<unk>", "<s>", "</s>", "the", "."});
  small.target = first.vocabularies().target;
  const PreparedCorpus kept =
      PrepareCorpus(options, directory + "/b", log, &small);
  EXPECT_TRUE(kept.vocabularies() == small);
  for (const IdPair& pair : ShardPairs(kept)) {
    for (int64_t id : pair.first) EXPECT_LT(id, 6);
  }
  // Preparing again replaces the directory.
  const PreparedCorpus again = PrepareCorpus(options, directory + "/b", log);
  EXPECT_TRUE(again.vocabularies() == first.vocabularies());
}

TEST(CorpusPreparationTest, DamagedFilesAreRefusedNamingThem) {
  const std::string directory = testing_util::MakeTempDir("prepare_damaged");
  std::ostringstream log;
  const PreparedCorpus corpus =
      PrepareCorpus(PlainOptions(), directory + "/prepared", log);
  const std::string shard = corpus.shard_paths().front();
  const std::string bytes = FileBytes(shard);
  auto refused = [](const std::function<void()>& open,
                    const std::string& name) {
    try {
      open();
      return std::string("accepted");
    } catch (const std::runtime_error& error) {
      const std::string message = error.what();
      return message.find(name) == std::string::npos ? message
                                                     : std::string("refused");
    }
  };
  auto read_shard = [&] { TokenShard::Read(shard); };
  std::ofstream(shard, std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  EXPECT_EQ(refused(read_shard, shard), "refused");
  std::ofstream(shard, std::ios::binary) << "FANYISHX" << bytes.substr(8);
  EXPECT_EQ(refused(read_shard, shard), "refused");
  fs::remove(shard);
  EXPECT_EQ(refused([&] { PreparedCorpus::Open(corpus.directory()); }, shard),
            "refused");
  const std::string manifest = corpus.directory() + "/corpus.json";
  fs::remove(manifest);
  EXPECT_EQ(
      refused([&] { PreparedCorpus::Open(corpus.directory()); }, manifest),
      "refused");
  PreparationOptions options = PlainOptions();
  options.train_path = directory + "/missing.tsv";
  EXPECT_THROW(PrepareCorpus(options, directory + "/other", log),
               std::runtime_error);
  // A failed preparation leaves nothing behind.
  EXPECT_FALSE(fs::exists(directory + "/other"));
  EXPECT_FALSE(fs::exists(directory + "/other.tmp"));
}

TEST(TrainingBatchesTest, AnEpochHoldsEveryPairOnceAcrossWindows) {
  const std::string directory = testing_util::MakeTempDir("batches_epoch");
  std::ostringstream log;
  const PreparedCorpus corpus =
      PrepareCorpus(PlainOptions(), directory + "/prepared", log);
  const std::vector<IdPair> all = ShardPairs(corpus);
  // Windows of 100 pairs over shards of 45: three windows an epoch.
  auto epoch = [&](uint64_t seed) {
    TrainingBatches batches(corpus.shard_paths(), 120, 100, seed);
    std::vector<IdPair> seen;
    TrainingBatch batch;
    while (batches.Next(&batch)) {
      int64_t longest = 0, target_tokens = 0;
      for (int64_t row = 0; row < batch.rows; ++row) {
        seen.emplace_back(batch.sources[row], batch.targets[row]);
        longest =
            std::max<int64_t>(longest, std::max(batch.sources[row].size() + 1,
                                                batch.targets[row].size() + 1));
        target_tokens += static_cast<int64_t>(batch.targets[row].size()) + 1;
      }
      EXPECT_TRUE(longest * batch.rows <= 120 || batch.rows == 1);
      EXPECT_EQ(batch.target_tokens, target_tokens);
    }
    EXPECT_EQ(batches.pairs_read(), static_cast<int64_t>(all.size()));
    return seen;
  };
  const std::vector<IdPair> first = epoch(7);
  EXPECT_EQ(std::multiset<IdPair>(first.begin(), first.end()),
            std::multiset<IdPair>(all.begin(), all.end()));
  EXPECT_EQ(epoch(7), first);
  EXPECT_NE(epoch(8), first);

  // Skipping batches without their ids lands where reading them would.
  TrainingBatches read(corpus.shard_paths(), 120, 100, 7);
  TrainingBatches skipped(corpus.shard_paths(), 120, 100, 7);
  TrainingBatch a, b;
  for (int i = 0; i < 9; ++i) {
    ASSERT_TRUE(read.Next(&a));
    ASSERT_TRUE(skipped.Next(&b, /*with_ids=*/false));
    EXPECT_EQ(a.target_tokens, b.target_tokens);
    EXPECT_TRUE(b.sources.empty());
  }
  ASSERT_TRUE(read.Next(&a));
  ASSERT_TRUE(skipped.Next(&b));
  EXPECT_EQ(a.sources, b.sources);
}

}  // namespace
}  // namespace fanyi
