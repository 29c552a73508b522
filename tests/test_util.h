#ifndef FANYI_TESTS_TEST_UTIL_H_
#define FANYI_TESTS_TEST_UTIL_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tests/html_structure.h"
#include "trainer/training_options.h"

namespace fanyi::testing_util {

// Path of a file in the shared corpus beside the project, e.g.
// SharedDataPath("en-zh/train_mini.tsv").
std::string SharedDataPath(const std::string& relative_path);

// Options for a tiny, fast training run on one CPU thread: 1+1 layers,
// d_model 16, no progress line.
TrainingOptions TinyTrainingOptions(const std::string& train_path,
                                    const std::string& out_dir);

// Trains a tiny real model (d_model 32) on the first `pairs` lines of
// en-zh/train_mini.tsv until it fits them (a few seconds on one core) and
// returns its checkpoint directory, created under `parent_dir`. Cached: the
// first call in a process trains, later calls with the same arguments reuse it.
std::string TrainTinyModel(const std::string& parent_dir, int pairs = 30);

// Writes the first `pairs` lines of en-zh/train_mini.tsv to `dir`/pairs.tsv
// (creating `dir`) and returns that file's path.
std::string WriteTinyPairs(const std::string& dir, int pairs = 30);

// Trains the same tiny model on the TSV `pairs_path` into `out_dir` and
// returns its checkpoint directory; `adjust` may change the options first
// (another direction, say). Not cached.
std::string TrainTinyModelOn(
    const std::string& pairs_path, const std::string& out_dir,
    const std::function<void(TrainingOptions&)>& adjust = nullptr);

// Trains the reverse of TrainTinyModel(parent_dir, 30): Chinese to English
// on the same thirty pairs, into `parent_dir`/zh_en. Not cached.
std::string TrainTinyReverseModel(const std::string& parent_dir);

// Copies checkpoint `from` into a model repository as `repository`/`name`/
// `version`, as an operator would: under a temporary name, renamed into
// place.
void AddModelVersion(const std::string& repository, const std::string& name,
                     int version, const std::string& from);

// A copy of checkpoint `from`, in a new folder, whose config says its
// training pairs had 0.01 to 0.02 target tokens per source token: the
// output guard then finds the translation of any sentence of five tokens
// or more too long.
std::string CopyFindingEverythingTooLong(const std::string& from);

// `piece` written `times` times: the deep and repeated inputs of the
// hostile-input tests.
std::string Repeat(const std::string& piece, std::size_t times);

// A fresh empty directory `name` in this process's own scratch folder
// (under TEST_TMPDIR, else /tmp; removed when the process exits).
std::string MakeTempDir(const std::string& name);

// A TCP port on 127.0.0.1 that nobody listens on right now (for servers
// that need their port before they start, such as a rendezvous store).
int FreePort();

// The devices a device-parameterized test runs on: "cpu", and "cuda" where
// one is available.
std::vector<std::string> TestDevices();

}  // namespace fanyi::testing_util

#endif  // FANYI_TESTS_TEST_UTIL_H_
