#include "trainer/prepared_corpus.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "trainer/token_shard.h"

namespace fanyi {

namespace fs = std::filesystem;

namespace {

std::shared_ptr<const SubwordModel> ReadSubwordModel(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  try {
    return std::make_shared<const SubwordModel>(
        SubwordModel::FromSerialized(std::move(bytes)));
  } catch (const std::exception& error) {
    throw std::runtime_error(path.string() + ": " + error.what());
  }
}

bool SameModel(const std::shared_ptr<const SubwordModel>& a,
               const std::shared_ptr<const SubwordModel>& b) {
  if (!a || !b) return !a && !b;
  return a->serialized() == b->serialized();
}

}  // namespace

bool CorpusVocabularies::operator==(const CorpusVocabularies& other) const {
  auto same_tokens = [](const Vocabulary& a, const Vocabulary& b) {
    if (a.size() != b.size()) return false;
    for (int64_t id = 0; id < a.size(); ++id) {
      if (a.Token(id) != b.Token(id)) return false;
    }
    return true;
  };
  return same_tokens(source, other.source) &&
         same_tokens(target, other.target) &&
         SameModel(source_subwords, other.source_subwords) &&
         SameModel(target_subwords, other.target_subwords);
}

PreparedCorpus PreparedCorpus::Open(const std::string& directory) {
  const fs::path root(directory);
  const fs::path manifest_path = root / kManifestFile;
  std::ifstream in(manifest_path);
  if (!in) {
    throw std::runtime_error(
        manifest_path.string() + " is missing: " + directory +
        " is not a complete prepared corpus (fanyi-prepare writes one)");
  }
  PreparedCorpus corpus;
  corpus.directory_ = directory;
  try {
    corpus.manifest_ = nlohmann::json::parse(in);
    const nlohmann::json& manifest = corpus.manifest_;
    if (manifest.at("format").get<std::string>() != "fanyi-prepared-corpus") {
      throw std::runtime_error("not a fanyi prepared corpus");
    }
    const int version = manifest.at("format_version").get<int>();
    if (version != kFormatVersion) {
      throw std::runtime_error(
          "format version " + std::to_string(version) + ", this build reads " +
          std::to_string(kFormatVersion) + " (prepare the corpus again)");
    }
    for (const nlohmann::json& shard : manifest.at("shards")) {
      corpus.shard_paths_.push_back(
          (root / shard.at("file").get<std::string>()).string());
    }
    corpus.source_case();  // Throw here, with the file named, if invalid.
    corpus.target_case();
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(manifest_path.string() + ": " + error.what());
  } catch (const std::invalid_argument& error) {
    throw std::runtime_error(manifest_path.string() + ": " + error.what());
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(manifest_path.string() + ": " + error.what());
  }
  for (const std::string& shard : corpus.shard_paths_) {
    if (!fs::is_regular_file(shard)) {
      throw std::runtime_error("token shard " + shard +
                               " is missing (listed in " +
                               manifest_path.string() + ")");
    }
  }
  CorpusVocabularies& vocabularies = corpus.vocabularies_;
  vocabularies.source =
      Vocabulary::Load((root / "source_vocabulary.json").string());
  vocabularies.target =
      Vocabulary::Load((root / "target_vocabulary.json").string());
  if (corpus.manifest_.value("source_subwords", false)) {
    vocabularies.source_subwords =
        ReadSubwordModel(root / "source_subwords.model");
  }
  if (corpus.manifest_.value("target_subwords", false)) {
    vocabularies.target_subwords =
        ReadSubwordModel(root / "target_subwords.model");
  }
  return corpus;
}

std::string PreparedCorpus::source_language() const {
  return manifest_.at("source_language").get<std::string>();
}

std::string PreparedCorpus::target_language() const {
  return manifest_.at("target_language").get<std::string>();
}

std::string PreparedCorpus::source_script() const {
  return manifest_.value("source_script", std::string());
}

std::string PreparedCorpus::target_script() const {
  return manifest_.at("target_script").get<std::string>();
}

WordCase PreparedCorpus::source_case() const {
  return ParseWordCase(manifest_.value("source_case", std::string("lower")));
}

WordCase PreparedCorpus::target_case() const {
  return ParseWordCase(manifest_.value("target_case", std::string("lower")));
}

int64_t PreparedCorpus::train_pairs() const {
  return manifest_.at("train_pairs").get<int64_t>();
}

int64_t PreparedCorpus::longest_source_tokens() const {
  return manifest_.at("longest_source_tokens").get<int64_t>();
}

std::pair<double, double> PreparedCorpus::target_length_ratio() const {
  if (!manifest_.contains("target_length_ratio")) return {0, 0};
  const nlohmann::json& ratio = manifest_.at("target_length_ratio");
  return {ratio.at(0).get<double>(), ratio.at(1).get<double>()};
}

int64_t PreparedCorpus::max_tokens() const {
  return manifest_.at("max_tokens").get<int64_t>();
}

DevSet PreparedCorpus::ReadDev() const {
  const fs::path root(directory_);
  const TokenShard shard = TokenShard::Read((root / "dev.shard").string());
  DevSet dev;
  for (int64_t i = 0; i < shard.size(); ++i) {
    const IdSpan source = shard.source(i);
    const IdSpan target = shard.target(i);
    dev.sources.emplace_back(source.data, source.data + source.size);
    dev.targets.emplace_back(target.data, target.data + target.size);
  }
  const std::string texts_path = (root / "dev.tsv").string();
  std::ifstream texts(texts_path, std::ios::binary);
  if (!texts) throw std::runtime_error("cannot open " + texts_path);
  std::string line;
  while (std::getline(texts, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) {
      throw std::runtime_error(texts_path + ": line " +
                               std::to_string(dev.texts.size() + 1) +
                               " has no tab");
    }
    dev.texts.push_back(line.substr(0, tab));
    dev.references.push_back(line.substr(tab + 1));
  }
  if (dev.texts.size() != dev.sources.size()) {
    throw std::runtime_error(
        texts_path + " holds " + std::to_string(dev.texts.size()) +
        " pairs, dev.shard " + std::to_string(dev.sources.size()));
  }
  return dev;
}

}  // namespace fanyi
