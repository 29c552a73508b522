// fanyi-import: writes a fanyi checkpoint from a model made elsewhere (a
// CTranslate2 model directory, or an Argos Translate package, folder or
// .argosmodel file), so that fanyi-train --init_from can
// fine-tune it and any fanyi program load it as its own.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/model/checkpoint.h"
#include "common/model/ctranslate2_import.h"
#include "common/model/language_tokens.h"

ABSL_FLAG(std::string, out, "", "Directory for the fanyi checkpoint.");
ABSL_FLAG(std::string, source_language, "",
          "The source side's language code (e.g. en), which picks its "
          "tokenizer; a CTranslate2 directory names none (an Argos "
          "package does). For a multilingual model (M2M-100, NLLB-200), "
          "the two codes pick its language tokens.");
ABSL_FLAG(std::string, target_language, "", "The target side's.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Writes a fanyi checkpoint from a CTranslate2 model directory or an "
      "Argos Translate package.\n"
      "Usage: fanyi-import --out DIR [--source_language en "
      "--target_language zh] SOURCE");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty() || positional.size() != 2) {
    std::cerr << "usage: fanyi-import --out DIR SOURCE\n";
    return 2;
  }
  try {
    // Saving replaces `out` whole: never the model being read.
    std::error_code error;
    if (std::filesystem::equivalent(out, positional[1], error)) {
      std::cerr << "fanyi-import: --out is the model being imported\n";
      return 2;
    }
    fanyi::Checkpoint checkpoint =
        fanyi::LoadCheckpoint(positional[1], torch::kCPU);
    if (!absl::GetFlag(FLAGS_source_language).empty()) {
      checkpoint.source_language = absl::GetFlag(FLAGS_source_language);
    }
    if (!absl::GetFlag(FLAGS_target_language).empty()) {
      checkpoint.target_language = absl::GetFlag(FLAGS_target_language);
    }
    // A multilingual model (M2M-100, NLLB-200) from a CTranslate2 directory,
    // or a checkpoint made from one, is told the pair by its language
    // tokens: the source's starts every source, the target's every
    // translation. (An Argos package names its own target prefix, and no
    // source token, as argos-translate calls it.)
    const bool pair_named = !checkpoint.source_language.empty() ||
                            !checkpoint.target_language.empty();
    const bool multilingual =
        fanyi::IsMultilingual(checkpoint.source_vocabulary) &&
        (fanyi::IsCt2ModelDirectory(positional[1]) ||
         !checkpoint.source_prefix.empty());
    if (multilingual && !pair_named) {
      std::cout << "a multilingual model: its pieces translate as given "
                   "(fanyi-eval --tokens); name a pair with --source_language "
                   "and --target_language to translate text\n";
    } else if (multilingual) {
      const auto source_token = fanyi::LanguageToken(
          checkpoint.source_vocabulary, checkpoint.source_language);
      const auto target_token = fanyi::LanguageToken(
          checkpoint.target_vocabulary, checkpoint.target_language);
      if (!source_token || !target_token) {
        std::cerr << "fanyi-import: " << positional[1]
                  << " is a multilingual model (its vocabulary holds language "
                     "tokens) with no token for \""
                  << (source_token ? checkpoint.target_language
                                   : checkpoint.source_language)
                  << "\": name the pair with --source_language and "
                     "--target_language (codes such as en, de, zh, zh-Hant)\n";
        return 2;
      }
      checkpoint.source_prefix = {*source_token};
      checkpoint.target_prefix = {*target_token};
      std::cout << "language tokens: " << *source_token << " starts every "
                << "source, " << *target_token << " every translation\n";
    }
    fanyi::SaveCheckpoint(checkpoint, out);
    const fanyi::ModelConfig& config = checkpoint.model->config();
    std::cout << "imported " << positional[1] << " into " << out << ": "
              << config.encoder_layers << "+" << config.decoder_layers
              << " layers, d_model " << config.d_model << ", "
              << checkpoint.source_vocabulary.size() << " source and "
              << checkpoint.target_vocabulary.size() << " target tokens\n";
  } catch (const std::exception& e) {
    std::cerr << "fanyi-import: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
