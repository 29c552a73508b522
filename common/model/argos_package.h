#ifndef FANYI_COMMON_MODEL_ARGOS_PACKAGE_H_
#define FANYI_COMMON_MODEL_ARGOS_PACKAGE_H_

#include <string>

#include "common/model/checkpoint.h"

namespace fanyi {

// Whether `path` is an Argos Translate package, LibreTranslate's model
// format: a directory holding metadata.json and model/ (as argospm installs
// packages), or an .argosmodel file (the same directory in a zip).
bool IsArgosPackage(const std::string& path);

// LibreTranslate's code for an Argos language code: "zt" (Traditional
// Chinese) is "zh-Hant", "pb" (Brazilian Portuguese) "pt-BR"; others are
// kept.
std::string LibreTranslateLanguageCode(const std::string& argos_code);

// The package at `path` as a fanyi checkpoint on the CPU: model/ imported
// as a CTranslate2 directory (ImportCt2Model), sentencepiece.model as both
// sides' subword model (with its own normalization map, as argos-translate
// tokenizes), the languages metadata.json's from_code and to_code in
// LibreTranslate's codes, and the version the package's name and its
// package_version. An .argosmodel file is read with libzip into a temporary
// directory, which is removed again: at most kMaxArgosEntries entries and
// kMaxArgosBytes uncompressed, no entry outside the package's one folder.
// Throws std::runtime_error naming the file and what is wrong, among it a
// package with Moses tokenization and subword-nmt (bpe.model), and one that
// needs a target prefix (a multilingual model's language token).
Checkpoint ImportArgosPackage(const std::string& path);

inline constexpr long long kMaxArgosEntries = 10000;
inline constexpr long long kMaxArgosBytes = 2LL << 30;

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_ARGOS_PACKAGE_H_
