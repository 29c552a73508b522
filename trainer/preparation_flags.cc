#include "trainer/preparation_flags.h"

#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, train, "",
          "Training corpus: comma-separated files, each TSV (source<TAB>"
          "target per line), a gettext catalog (.po, .mo: msgid to msgstr, "
          "fuzzy and untranslated messages left out) or a translation "
          "memory (.tmx, .xlf, .xliff: the pairs between --source_language "
          "and --target_language), users' suggestions (.db, .sqlite, "
          ".sqlite3: the SQLite file of fanyi-server --suggestions_db or "
          "LibreTranslate's suggestions.db, the pairs between the two "
          "languages), or directories of them.");
ABSL_FLAG(std::string, suggestions, "",
          "Users' suggestions to train on besides --train: the SQLite file "
          "of fanyi-server --suggestions_db (or LibreTranslate's "
          "suggestions.db), read --suggestion_repeats times. With "
          "--init_from the served model, a fine-tune on its users' "
          "corrections.");
ABSL_FLAG(int, suggestion_repeats, 10,
          "How many times each of --suggestions' pairs is trained on per "
          "epoch (1 to 1000): a few corrections among a large corpus weigh "
          "little otherwise.");
ABSL_FLAG(std::string, dev, "", "Validation corpus, in the same forms.");
ABSL_FLAG(int, source_column, 1,
          "The TSV column (from 1) holding the source, in both files.");
ABSL_FLAG(int, target_column, 2,
          "The TSV column holding the target: --source_column=2 "
          "--target_column=1 trains the other direction of a corpus (and of "
          "catalogs: msgstr to msgid).");
ABSL_FLAG(std::string, source_language, "en", "Source language code.");
ABSL_FLAG(std::string, target_language, "zh", "Target language code.");
ABSL_FLAG(bool, lowercase_source, true,
          "Lowercase a word-tokenized source (not characters or subwords).");
ABSL_FLAG(bool, lowercase_target, false,
          "Lowercase a word-tokenized target too; translations then come "
          "out in lower case.");
ABSL_FLAG(std::string, source_script, "simplified",
          "Chinese sources: simplified (normalize with OpenCC, in training "
          "and when translating) or keep.");
ABSL_FLAG(std::string, target_script, "simplified",
          "Chinese targets: simplified (normalize with OpenCC) or keep.");
ABSL_FLAG(bool, placeholders, true,
          "Carry numbers, codes and URLs both sides share as placeholders.");
ABSL_FLAG(int, source_subwords, 0,
          "Source vocabulary as SentencePiece subwords: a model of this "
          "many pieces (--subword_type) trained on the training sources with "
          "Debian's "
          "spm_train, stored in the checkpoint (0: words).");
ABSL_FLAG(int, target_subwords, 0,
          "Target vocabulary as SentencePiece subwords, likewise (0: "
          "characters for Chinese, words otherwise).");
ABSL_FLAG(std::string, subword_type, "unigram",
          "The subword models' kind: unigram or bpe.");
ABSL_FLAG(bool, bidirectional, false,
          "Train on both directions of every pair, with one vocabulary for "
          "both sides: the first stage of bidirectional training; fine-tune "
          "the result on one direction with --init_from.");
ABSL_FLAG(int64_t, vocab_min_count, 2,
          "Minimum count for a vocabulary entry (rarer tokens train <unk>).");
ABSL_FLAG(int64_t, vocab_max_size, 0,
          "Maximum vocabulary size (0: unlimited).");

namespace fanyi {

PreparationOptions PreparationOptionsFromFlags() {
  PreparationOptions options;
  options.train_path = absl::GetFlag(FLAGS_train);
  options.suggestions_path = absl::GetFlag(FLAGS_suggestions);
  options.suggestion_repeats = absl::GetFlag(FLAGS_suggestion_repeats);
  options.dev_path = absl::GetFlag(FLAGS_dev);
  options.columns.source = absl::GetFlag(FLAGS_source_column) - 1;
  options.columns.target = absl::GetFlag(FLAGS_target_column) - 1;
  options.source_language = absl::GetFlag(FLAGS_source_language);
  options.source_case = absl::GetFlag(FLAGS_lowercase_source) ? WordCase::kLower
                                                              : WordCase::kKeep;
  options.target_case = absl::GetFlag(FLAGS_lowercase_target) ? WordCase::kLower
                                                              : WordCase::kKeep;
  options.target_language = absl::GetFlag(FLAGS_target_language);
  options.source_script = absl::GetFlag(FLAGS_source_script);
  options.target_script = absl::GetFlag(FLAGS_target_script);
  options.placeholders = absl::GetFlag(FLAGS_placeholders);
  options.source_subwords = absl::GetFlag(FLAGS_source_subwords);
  options.target_subwords = absl::GetFlag(FLAGS_target_subwords);
  options.subword_type = absl::GetFlag(FLAGS_subword_type);
  options.bidirectional = absl::GetFlag(FLAGS_bidirectional);
  options.vocab_min_count = absl::GetFlag(FLAGS_vocab_min_count);
  options.vocab_max_size = absl::GetFlag(FLAGS_vocab_max_size);
  return options;
}

}  // namespace fanyi
