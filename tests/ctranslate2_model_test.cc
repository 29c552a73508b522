// Reads CTranslate2 model directories: model.bin files that CTranslate2's
// own Python specs write (tests/ctranslate2_models.py: float32, float16,
// int8 and int16, aliases, the options converters set), files of the older
// binary versions and of the item types the specs here cannot write
// (bfloat16, int32, strings), written by hand, and broken ones; the
// Transformer options fanyi serves and refuses; config.json and the
// vocabularies.
#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/tensor.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/model/ctranslate2_directory.h"
#include "common/model/ctranslate2_file.h"
#include "common/model/ctranslate2_transformer.h"
#include "common/model/ctranslate2_variable.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using testing_util::MakeTempDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The models of tests/ctranslate2_models.py, written once per test program
// by the python3 on PATH (scripts/test.sh installs ctranslate2 for it).
struct SpecModels {
  std::string dir;
  nlohmann::json expected;
};

const SpecModels& Models() {
  static const SpecModels* models = [] {
    auto* made = new SpecModels{MakeTempDir("ctranslate2-models"), {}};
    const std::string log = made->dir + "/python.log";
    const std::string command = std::string("python3 '") + FANYI_SOURCE_DIR +
                                "/tests/ctranslate2_models.py' '" + made->dir +
                                "' >'" + log + "' 2>&1";
    if (std::system(command.c_str()) != 0) {
      throw std::runtime_error(
          "tests/ctranslate2_models.py failed (python3 needs the ctranslate2 "
          "package: pip install ctranslate2): " +
          ReadFile(log));
    }
    made->expected =
        nlohmann::json::parse(ReadFile(made->dir + "/expected.json"));
    return made;
  }();
  return *models;
}

// The largest |value| of each row of `values` [rows, ...], or of all.
double LargestMagnitude(const torch::Tensor& values) {
  return values.abs().max().item<double>();
}

struct SpecCase {
  std::string variant;       // "separate" or "shared".
  std::string quantization;  // As ModelSpec.optimize takes it.
};

void PrintTo(const SpecCase& param, std::ostream* out) {
  *out << param.variant << " " << param.quantization;
}

class SpecModelTest : public ::testing::TestWithParam<SpecCase> {};

// Every weight reads back as the specs were given it, within what the
// file's item type keeps; the flags and aliases are there.
TEST_P(SpecModelTest, ReadsWhatTheSpecsWrote) {
  const SpecCase& param = GetParam();
  const nlohmann::json& expected = Models().expected.at(param.variant);
  const Ct2ModelFile file =
      Ct2ModelFile::Open(Models().dir + "/" + param.variant + "/" +
                         param.quantization + "/model.bin");
  EXPECT_EQ(file.binary_version(), 6);
  EXPECT_EQ(file.spec(), "TransformerSpec");
  EXPECT_GE(file.spec_revision(), 1);
  for (const auto& [name, weight] : expected.at("weights").items()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(file.Has(name));
    const std::vector<int64_t> shape =
        weight.at("shape").get<std::vector<int64_t>>();
    EXPECT_EQ(file.Get(name).shape, shape);
    const torch::Tensor want =
        at::tensor(weight.at("values").get<std::vector<float>>())
            .reshape(shape);
    const torch::Tensor got = file.Float(name);
    ASSERT_EQ(got.sizes(), want.sizes());
    switch (file.Get(name).type) {
      case Ct2Type::kFloat32:
        EXPECT_TRUE(at::equal(got, want));
        break;
      case Ct2Type::kFloat16:
        EXPECT_TRUE(at::allclose(got, want, 1e-3, 1e-6));
        break;
      case Ct2Type::kInt8:
        // Rounded to the nearest of 127 steps of the row's largest |value|.
        for (int64_t row = 0; row < want.size(0); ++row) {
          const double step = LargestMagnitude(want[row]) / 127;
          EXPECT_LE(LargestMagnitude(got[row] - want[row]), 0.5 * step + 1e-6)
              << "row " << row;
        }
        break;
      case Ct2Type::kInt16:
        EXPECT_LE(LargestMagnitude(got - want),
                  0.5 * LargestMagnitude(want) / 1024 + 1e-6);
        break;
      default:
        ADD_FAILURE() << "stored as " << Ct2TypeName(file.Get(name).type);
    }
  }
  // The quantized files hold the feed-forward weights as the specs
  // quantized them, so that the paths above were taken.
  const Ct2Type stored = file.Get("decoder/layer_0/ffn/linear_0/weight").type;
  const Ct2Type want_stored =
      param.quantization == "float16" ? Ct2Type::kFloat16
      : param.quantization == "int8"  ? Ct2Type::kInt8
      : param.quantization == "int16" ? Ct2Type::kInt16
                                      : Ct2Type::kFloat32;
  EXPECT_EQ(stored, want_stored) << Ct2TypeName(stored);
  for (const auto& [name, value] : expected.at("flags").items()) {
    EXPECT_EQ(file.Integer(name), value.get<int64_t>()) << name;
  }
  EXPECT_EQ(file.Integer("decoder/no_such_flag"), std::nullopt);
  // An alias reads as its variable, and stands for its variable's scale.
  for (const auto& [alias, variable] : expected.at("aliases").items()) {
    SCOPED_TRACE(alias);
    const std::string target = variable.get<std::string>();
    ASSERT_TRUE(file.Has(alias));
    EXPECT_TRUE(at::equal(file.Float(alias), file.Float(target)));
    EXPECT_EQ(file.Has(alias + "_scale"), file.Has(target + "_scale"));
  }
  const std::vector<std::string> names = file.VariableNames();
  EXPECT_EQ(param.variant == "shared",
            std::find(names.begin(), names.end(),
                      "encoder/embeddings_0/weight") == names.end())
      << "the shared matrix is stored once";
}

std::vector<SpecCase> SpecCases() {
  std::vector<SpecCase> cases;
  for (const char* variant : {"separate", "shared"}) {
    for (const char* quantization : {"float32", "float16", "int8", "int16"}) {
      cases.push_back({variant, quantization});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Specs, SpecModelTest, ::testing::ValuesIn(SpecCases()),
                         [](const ::testing::TestParamInfo<SpecCase>& info) {
                           return info.param.variant + "_" +
                                  info.param.quantization;
                         });

// Writes model.bin files by hand: the older binary versions and the item
// types the specs here do not write.
class FileWriter {
 public:
  explicit FileWriter(uint32_t version) : version_(version) {}

  FileWriter& Add(const std::string& name, std::vector<uint32_t> shape,
                  Ct2Type type, std::string items) {
    ++variables_;
    String(body_, name);
    Put(body_, static_cast<uint8_t>(shape.size()));
    for (uint32_t size : shape) Put(body_, size);
    const uint32_t item_size =
        type == Ct2Type::kInt8                                 ? 1
        : type == Ct2Type::kFloat32 || type == Ct2Type::kInt32 ? 4
                                                               : 2;
    if (version_ >= 4) {
      Put(body_, static_cast<uint8_t>(type));
      Put(body_, static_cast<uint32_t>(items.size()));
    } else {
      Put(body_, static_cast<uint8_t>(item_size));
      Put(body_, static_cast<uint32_t>(items.size() / item_size));
    }
    body_ += items;
    return *this;
  }

  FileWriter& Alias(const std::string& alias, const std::string& variable) {
    ++aliases_;
    String(alias_body_, alias);
    String(alias_body_, variable);
    return *this;
  }

  std::string Bytes() const {
    std::string bytes;
    Put(bytes, version_);
    if (version_ >= 2) {
      String(bytes, "TransformerSpec");
      Put(bytes, uint32_t{3});
    }
    Put(bytes, variables_);
    bytes += body_;
    if (version_ >= 3) {
      Put(bytes, aliases_);
      bytes += alias_body_;
    }
    return bytes;
  }

  template <typename T>
  static void Put(std::string& out, T value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof(value));
  }

 private:
  static void String(std::string& out, const std::string& text) {
    Put(out, static_cast<uint16_t>(text.size() + 1));
    out += text;
    out += '\0';
  }

  uint32_t version_;
  uint32_t variables_ = 0;
  uint32_t aliases_ = 0;
  std::string body_;
  std::string alias_body_;
};

template <typename T>
std::string Items(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()),
                     values.size() * sizeof(T));
}

// bfloat16 items: the high halves of float32 values (exact for these).
std::string Bfloat16Items(const std::vector<float>& values) {
  std::string items;
  for (float value : values) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    FileWriter::Put(items, static_cast<uint16_t>(bits >> 16));
  }
  return items;
}

TEST(Ct2ModelFileTest, ReadsEveryBinaryVersion) {
  for (uint32_t version = 1; version <= 6; ++version) {
    SCOPED_TRACE(version);
    FileWriter writer(version);
    writer.Add("w", {2, 3}, Ct2Type::kFloat32,
               Items<float>({1, 2, 3, 4, 5, 6}));
    writer.Add("q", {2, 2}, Ct2Type::kInt8, Items<int8_t>({127, -127, 1, 2}));
    writer.Add("q_scale", {2}, Ct2Type::kFloat32, Items<float>({127, 2}));
    if (version >= 3) {
      writer.Alias("w_alias", "w");
      writer.Alias("w_alias_alias", "w_alias");  // As CTranslate2 takes it.
    }
    const Ct2ModelFile file = Ct2ModelFile::FromBytes(writer.Bytes(), "m");
    EXPECT_EQ(file.binary_version(), version);
    EXPECT_EQ(file.spec(), version >= 2 ? "TransformerSpec" : "");
    EXPECT_TRUE(
        at::equal(file.Float("w"),
                  at::tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}).reshape({2, 3})));
    EXPECT_TRUE(at::equal(file.Float("q"),
                          at::tensor({1.f, -1.f, 0.5f, 1.f}).reshape({2, 2})));
    EXPECT_EQ(file.Has("w_alias"), version >= 3);
    EXPECT_EQ(file.Has("w_alias_alias"), version >= 3);
  }
}

TEST(Ct2ModelFileTest, ReadsBfloat16Int32AndStrings) {
  FileWriter writer(6);
  writer.Add("b", {3}, Ct2Type::kBfloat16, Bfloat16Items({1.5f, -2.f, 0.25f}));
  writer.Add("n", {}, Ct2Type::kInt32, Items<int32_t>({-70000}));
  writer.Add("h", {}, Ct2Type::kInt16, Items<int16_t>({8}));
  writer.Add("s", {4}, Ct2Type::kInt8, "<2zh");
  writer.Add("empty", {0}, Ct2Type::kFloat32, "");
  const Ct2ModelFile file = Ct2ModelFile::FromBytes(writer.Bytes(), "m");
  EXPECT_TRUE(at::equal(file.Float("b"), at::tensor({1.5f, -2.f, 0.25f})));
  EXPECT_EQ(file.Integer("n"), -70000);
  EXPECT_EQ(file.Integer("h"), 8);
  EXPECT_EQ(file.Text("s"), "<2zh");
  EXPECT_EQ(file.Text("none"), std::nullopt);
  EXPECT_EQ(file.Float("empty").numel(), 0);
  // What a variable is not, said with its name.
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { file.Float("n"); }, [&] { file.Float("s"); },
           [&] { file.Integer("b"); }, [&] { file.Text("b"); },
           [&] { file.Get("missing"); }}) {
    EXPECT_THROW(call(), std::runtime_error);
  }
  try {
    file.Float("s");
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("\"s_scale\""), std::string::npos)
        << error.what();
  }
}

// The message a broken file gets, or "" when it reads.
std::string ErrorOf(const std::string& bytes) {
  try {
    Ct2ModelFile::FromBytes(bytes, "broken.bin");
    return "";
  } catch (const std::runtime_error& error) {
    return error.what();
  }
}

TEST(Ct2ModelFileTest, RefusesBrokenFilesSayingWhatIsWrong) {
  const auto with = [](auto&& edit) {
    FileWriter writer(6);
    edit(writer);
    return writer.Bytes();
  };
  const std::string good = with([](FileWriter& w) {
    w.Add("w", {2}, Ct2Type::kFloat32, Items<float>({1, 2}));
  });
  ASSERT_EQ(ErrorOf(good), "");
  std::string version7 = good;
  version7[0] = 7;
  EXPECT_NE(ErrorOf(version7).find("binary version 7"), std::string::npos);
  std::string version0 = good;
  version0[0] = 0;
  EXPECT_NE(ErrorOf(version0).find("binary version 0"), std::string::npos);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good + "x", "1 bytes follow the last field"},
      {with([](FileWriter& w) {
         w.Add("w", {3}, Ct2Type::kFloat32, Items<float>({1, 2}));
       }),
       "has 8 bytes for its shape of 3 float32 items"},
      {with([](FileWriter& w) {
         w.Add("w", {1, 1, 1, 1, 1, 1, 1, 1, 1}, Ct2Type::kFloat32,
               Items<float>({1}));
       }),
       "has 9 dimensions"},
      {with([](FileWriter& w) {
         w.Add("w", {2}, Ct2Type::kFloat32, Items<float>({1, 2}));
         w.Add("w", {2}, Ct2Type::kFloat32, Items<float>({1, 2}));
       }),
       "variable \"w\" comes twice"},
      {with([](FileWriter& w) {
         w.Add("w", {2}, Ct2Type::kFloat32, Items<float>({1, 2}));
         w.Add("v", {2}, Ct2Type::kFloat32, Items<float>({1, 2}));
         w.Alias("v", "w");
       }),
       "alias \"v\" names a variable already"},
      {with([](FileWriter& w) {
         w.Add("w", {65536, 65536, 65536}, Ct2Type::kFloat32, "");
       }),
       "holds more elements than the file"},
      {with([](FileWriter& w) {
         w.Add("w", {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0}, Ct2Type::kFloat32,
               "");
       }),
       "holds more elements than the file"},
  };
  for (const auto& [bytes, message] : cases) {
    const std::string error = ErrorOf(bytes);
    EXPECT_NE(error.find(message), std::string::npos) << error;
    EXPECT_EQ(error.rfind("broken.bin: ", 0), 0u) << error;
  }
  // A type past bfloat16, a name without its NUL, a count of variables no
  // file could hold.
  std::string bad_type = good;
  // From the end: the alias count, the items, the size, the type.
  bad_type[bad_type.size() - 4 - 8 - 4 - 1] = 6;
  EXPECT_NE(ErrorOf(bad_type).find("has type 6"), std::string::npos);
  std::string no_nul = good;
  no_nul[4 + 2 + std::strlen("TransformerSpec")] = 'x';
  EXPECT_NE(ErrorOf(no_nul).find("does not end with a NUL"), std::string::npos);
  // Counts of variables past the cap, or past what the bytes left hold.
  for (const auto& [count, message] :
       std::vector<std::pair<uint32_t, std::string>>{
           {0xFFFFFFFF, "(at most 1048576)"},
           {1000000, "variables cannot fit"}}) {
    std::string many = good;
    std::memcpy(&many[4 + 2 + 16 + 4], &count, sizeof(count));
    EXPECT_NE(ErrorOf(many).find(message), std::string::npos) << ErrorOf(many);
  }
}

// Every prefix of a real model.bin, and thousands of corrupted copies, give
// an error or a file; never a crash, a hang or an allocation the file does
// not justify.
TEST(Ct2ModelFileTest, SurvivesTruncatedAndCorruptedModels) {
  const std::string bytes = ReadFile(Models().dir + "/shared/int8/model.bin");
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_NE(ErrorOf(bytes.substr(0, size)), "") << size;
  }
  std::mt19937 random(11);
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string corrupted = bytes;
    const int flips = 1 + int(random() % 4);
    for (int f = 0; f < flips; ++f) {
      corrupted[random() % corrupted.size()] = static_cast<char>(random());
    }
    try {
      const Ct2ModelFile file = Ct2ModelFile::FromBytes(corrupted, "x");
      for (const std::string& name : file.VariableNames()) {
        try {
          file.Float(name);
        } catch (const std::runtime_error&) {
        }
      }
    } catch (const std::runtime_error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

TEST(Ct2ModelFileTest, OpenNamesTheFileItCannotRead) {
  const std::string dir = MakeTempDir("ctranslate2-open");
  std::ofstream(dir + "/empty.bin").close();
  ASSERT_EQ(::mkfifo((dir + "/fifo.bin").c_str(), 0600), 0);
  for (const std::string& path :
       {dir + "/missing.bin", dir, dir + "/empty.bin", dir + "/fifo.bin"}) {
    try {
      Ct2ModelFile::Open(path);
      ADD_FAILURE() << path << " opened";
    } catch (const std::runtime_error& error) {
      EXPECT_EQ(std::string(error.what()).rfind(path + ": ", 0), 0u)
          << error.what();
    }
  }
}

// The options of the models the specs wrote, whatever their quantization.
TEST_P(SpecModelTest, ReadsTheTransformersOptions) {
  const SpecCase& param = GetParam();
  const std::string dir =
      Models().dir + "/" + param.variant + "/" + param.quantization;
  const Ct2ModelFile file = Ct2ModelFile::Open(dir + "/model.bin");
  const Ct2TransformerOptions options = ReadCt2TransformerOptions(
      file, ReadFile(dir + "/config.json"), dir + "/config.json");
  const bool shared = param.variant == "shared";
  EXPECT_EQ(options.d_model, 8);
  EXPECT_EQ(options.d_ff, 16);
  EXPECT_EQ(options.encoder.layers, 2);
  EXPECT_EQ(options.decoder.layers, 1);
  for (const Ct2StackOptions* stack : {&options.encoder, &options.decoder}) {
    EXPECT_EQ(stack->heads, 4);
    EXPECT_TRUE(stack->pre_norm);
    EXPECT_EQ(stack->activation, Ct2Activation::kRelu);
    EXPECT_TRUE(stack->scale_embeddings);
    EXPECT_TRUE(stack->final_norm);
    EXPECT_FALSE(stack->layernorm_embedding);
  }
  EXPECT_EQ(options.encoder.stored_positions, shared ? 0 : 20);
  EXPECT_EQ(options.decoder.stored_positions, 0);
  EXPECT_EQ(options.source_vocabulary_size, 12);
  EXPECT_EQ(options.target_vocabulary_size, shared ? 12 : 14);
  EXPECT_EQ(options.shared_embeddings, shared);
  EXPECT_EQ(options.tied_projection, shared);
  EXPECT_EQ(options.projection_bias, !shared);
  EXPECT_EQ(options.unk_token, "<unk>");
  EXPECT_EQ(options.bos_token, "<s>");
  EXPECT_EQ(options.eos_token, "</s>");
  EXPECT_EQ(options.decoder_start_token, "<s>");
  EXPECT_FALSE(options.add_source_bos);
  EXPECT_FALSE(options.add_source_eos);
  EXPECT_EQ(options.layer_norm_epsilon, 1e-5);  // CTranslate2's default.
  const Ct2Vocabularies vocabularies = ReadCt2Vocabularies(dir);
  EXPECT_EQ(vocabularies.shared, shared);
  EXPECT_EQ(int64_t(vocabularies.source.size()),
            options.source_vocabulary_size);
  EXPECT_EQ(int64_t(vocabularies.target.size()),
            options.target_vocabulary_size);
  EXPECT_EQ(vocabularies.target[2], "</s>");
  const Ct2Directory directory = ReadCt2Directory(dir);
  EXPECT_EQ(directory.source_unk_id, 0);
  EXPECT_EQ(directory.target_unk_id, 0);
  EXPECT_EQ(directory.target_eos_id, 2);
  EXPECT_EQ(directory.decoder_start_id, 1);
  EXPECT_EQ(directory.source_bos_id, std::nullopt);
  EXPECT_EQ(directory.source_eos_id, std::nullopt);
  EXPECT_EQ(directory.options.d_model, 8);
}

// `name` of the options models: its options, or the error they get.
Ct2TransformerOptions OptionsModel(const std::string& name) {
  const std::string dir = Models().dir + "/options/" + name;
  return ReadCt2TransformerOptions(Ct2ModelFile::Open(dir + "/model.bin"),
                                   ReadFile(dir + "/config.json"),
                                   dir + "/config.json");
}

// Post-norm layers, GELU, layer norms after the embeddings and M2M-100's
// settings (the decoder starts from </s>, sources end with </s>).
TEST(Ct2TransformerTest, ReadsThePostNormVariant) {
  const Ct2TransformerOptions options = OptionsModel("postnorm_gelu");
  for (const Ct2StackOptions* stack : {&options.encoder, &options.decoder}) {
    EXPECT_FALSE(stack->pre_norm);
    EXPECT_EQ(stack->activation, Ct2Activation::kGelu);
    EXPECT_TRUE(stack->layernorm_embedding);
    EXPECT_FALSE(stack->final_norm);
  }
  EXPECT_EQ(options.decoder_start_token, "</s>");
  EXPECT_TRUE(options.add_source_eos);
  EXPECT_EQ(options.layer_norm_epsilon, 1e-5);
  const Ct2Directory directory =
      ReadCt2Directory(Models().dir + "/options/postnorm_gelu");
  EXPECT_EQ(directory.source_eos_id, 2);
  EXPECT_EQ(directory.decoder_start_id, 2);
}

// The position table CTranslate2 computes, as its own Encoder gave it.
TEST(Ct2TransformerTest, ComputesPositionsAsCTranslate2Does) {
  const auto rows = Models()
                        .expected.at("ct2_positions")
                        .get<std::vector<std::vector<float>>>();
  std::vector<float> flat;
  for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
  const torch::Tensor table =
      at::tensor(flat).reshape({int64_t(rows.size()), -1});
  ASSERT_EQ(table.sizes(), (std::vector<int64_t>{40, 16}));
  const torch::Tensor computed = Ct2SinusoidalPositions(40, 16);
  ASSERT_EQ(computed.sizes(), table.sizes());
  EXPECT_LT((computed - table).abs().max().item<double>(), 1e-5);
  EXPECT_THROW(Ct2SinusoidalPositions(4, 7), std::invalid_argument);
  EXPECT_THROW(Ct2SinusoidalPositions(4, 2), std::invalid_argument);
}

// A directory whose parts disagree is refused, naming the file.
TEST(Ct2TransformerTest, RefusesDirectoriesWhosePartsDisagree) {
  const std::string from = Models().dir + "/separate/float32";
  const auto copy = [&](const std::string& name) {
    const std::string dir = MakeTempDir(name);
    for (const char* file :
         {"model.bin", "config.json", "source_vocabulary.json",
          "target_vocabulary.json"}) {
      std::ofstream(dir + "/" + file, std::ios::binary)
          << ReadFile(from + "/" + file);
    }
    return dir;
  };
  const auto error_of = [](const std::string& dir) -> std::string {
    try {
      ReadCt2Directory(dir);
      return "";
    } catch (const std::runtime_error& error) {
      return error.what();
    }
  };
  const std::string renamed = copy("ctranslate2-eos");
  std::string config = ReadFile(renamed + "/config.json");
  config.replace(config.find("\"</s>\""), 6, "\"<eos>\"");
  std::ofstream(renamed + "/config.json") << config;
  EXPECT_NE(error_of(renamed).find("target_vocabulary: has no \"<eos>\""),
            std::string::npos)
      << error_of(renamed);
  const std::string short_vocabulary = copy("ctranslate2-short");
  std::ofstream(short_vocabulary + "/target_vocabulary.json")
      << R"(["<unk>", "<s>", "</s>"])";
  EXPECT_NE(error_of(short_vocabulary)
                .find("target_vocabulary: 3 tokens for the 14 rows"),
            std::string::npos)
      << error_of(short_vocabulary);
  const std::string no_config = copy("ctranslate2-no-config");
  std::remove((no_config + "/config.json").c_str());
  EXPECT_EQ(error_of(no_config), "");  // Older models have none.
}

// What fanyi does not serve is refused, naming the option and the file.
TEST(Ct2TransformerTest, RefusesOptionsItDoesNotServe) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"relative_positions", "relative positions"},
      {"t5_attention_bias", "relative attention bias (T5)"},
      {"gated_ffn", "ffn_glu"},
      {"rms_norm", "rms_norm"},
      {"multi_query", "multi-query"},
      {"two_source_embeddings", "several source embeddings"},
      {"tanh", "Tanh"},
      {"decoder_only", "\"TransformerDecoderSpec\""},
  };
  for (const auto& [name, option] : cases) {
    SCOPED_TRACE(name);
    try {
      OptionsModel(name);
      ADD_FAILURE() << "served";
    } catch (const std::runtime_error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(option), std::string::npos) << message;
      EXPECT_NE(message.find("/options/" + name + "/"), std::string::npos)
          << message;
    }
  }
  EXPECT_THROW(
      ReadCt2Vocabularies(Models().dir + "/options/two_source_embeddings"),
      std::runtime_error);
}

TEST(Ct2TransformerTest, RefusesConfigurationsItDoesNotKnow) {
  const std::string dir = Models().dir + "/separate/float32";
  const Ct2ModelFile file = Ct2ModelFile::Open(dir + "/model.bin");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"sliding_window": 4})", "\"sliding_window\" is an option"},
      {R"({"layer_norm_epsilon": -1})", "\"layer_norm_epsilon\" is not"},
      {R"({"multi_query_attention": true})", "is on"},
      {R"({"unk_token": 3})", "\"unk_token\" is not a token"},
      {R"({"add_source_eos": "yes"})", "is not true or false"},
      {R"([1, 2])", "not a JSON object"},
      {R"({"unk_token": )", "not JSON"},
      {R"({"add_source_bos": 7, "add_source_bos": true})",
       "\"add_source_bos\" comes twice"},
  };
  for (const auto& [config, message] : cases) {
    try {
      ReadCt2TransformerOptions(file, config, "config.json");
      ADD_FAILURE() << config << " was taken";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos)
          << error.what();
      EXPECT_EQ(std::string(error.what()).rfind("config.json: ", 0), 0u)
          << error.what();
    }
  }
  const Ct2TransformerOptions options = ReadCt2TransformerOptions(
      file, R"({"decoder_start_token": null, "layer_norm_epsilon": 1e-6})",
      "config.json");
  EXPECT_EQ(options.decoder_start_token, std::nullopt);
  EXPECT_EQ(options.layer_norm_epsilon, 1e-6);
}

TEST(Ct2TransformerTest, ReadsVocabularyFilesAsCTranslate2Does) {
  const std::string dir = MakeTempDir("ctranslate2-vocabularies");
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name, std::ios::binary) << text;
    return dir + "/" + name;
  };
  // A text file: one token a line, a '\r' kept, no token after the last
  // newline.
  EXPECT_EQ(ReadCt2Vocabulary(write("v.txt", "<unk>\n<s>\r\n\xe4\xbd\xa0\n")),
            (std::vector<std::string>{"<unk>", "<s>\r", "\xe4\xbd\xa0"}));
  EXPECT_EQ(ReadCt2Vocabulary(write("v.json", R"(["a", "b\u00e9"])")),
            (std::vector<std::string>{"a", "b\xc3\xa9"}));
  for (const auto& [name, text] :
       std::vector<std::pair<std::string, std::string>>{
           {"empty.txt", ""},
           {"object.json", R"({"a": 1})"},
           {"number.json", R"(["a", 2])"},
           {"broken.json", R"(["a")"},
           {"nested.json", R"([["a"]])"},
           {"two.json", R"(["a"] ["b"])"}}) {
    EXPECT_THROW(ReadCt2Vocabulary(write(name, text)), std::runtime_error)
        << name;
  }
  EXPECT_THROW(ReadCt2Vocabulary(dir + "/missing.txt"), std::runtime_error);
  // A FIFO is refused at once, not waited on.
  ASSERT_EQ(::mkfifo((dir + "/fifo.txt").c_str(), 0600), 0);
  EXPECT_THROW(ReadCt2Vocabulary(dir + "/fifo.txt"), std::runtime_error);
  EXPECT_THROW(ReadCt2Vocabularies(dir), std::runtime_error);
}

}  // namespace
}  // namespace fanyi
