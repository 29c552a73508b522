#ifndef FANYI_SERVER_MODEL_REPOSITORY_H_
#define FANYI_SERVER_MODEL_REPOSITORY_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/model_registry.h"
#include "server/served_model.h"
#include "server/server_metrics.h"

namespace fanyi {

// One version folder of a model repository.
struct RepositoryVersion {
  std::string name;  // The model's folder: "en-zh".
  int64_t version = 0;
  std::string path;  // DIR/en-zh/3: a checkpoint or training output.
};

// A model repository on disk (after Triton's): DIR/NAME/VERSION/, one folder
// per model (named for its pair by convention: en-zh, zh-en), holding
// numbered version folders, each a checkpoint directory (or a training
// output directory whose best/ is served). The highest version of each model
// that loads is served: a version that fails to load is logged, naming the
// file, and left alone until its folder changes, and the one below it is
// tried (at start-up too, so a broken new version never keeps a restarted
// server down). The repository is polled: a model's new highest version is
// loaded beside the one serving, takes new requests once it has loaded, and
// the old one is unloaded when the requests it holds are answered. A version
// folder removed brings back the highest one left that loads; a model folder
// removed (or left with no version) is unloaded the same way, except that
// the last model served is kept: a server never stops serving because of its
// repository. An Argos Translate package in DIR (a folder, as argospm
// installs them, or an .argosmodel file) is a model of its own, named as
// the folder or file, with one version (a package replaced in place is not
// loaded again): DIR may be argos-translate's packages folder, fanyi models
// beside them. Thread-safe.
class ModelRepository {
 public:
  using Log = std::function<void(const std::string& line)>;

  // Every version of every model in `directory`: by name, the highest
  // version first. Folders whose names are not numbers are ignored (copy a
  // version in under another name and rename it, as the trainer writes
  // checkpoints). Throws std::runtime_error naming the directory when it
  // cannot be read.
  static std::vector<RepositoryVersion> Scan(const std::string& directory);

  // Loads every model's highest loadable version into `registry` and polls
  // every `poll_interval` (0: never; Poll() by hand). `on_change` (may be
  // empty) is called after the registry changed, and is passed on to the
  // models' workers (ServedModel::Load's `on_change`). `registry`,
  // `metrics` and `log` must outlive this. Throws std::runtime_error,
  // naming the directory or the files, when the repository holds no model
  // or no version of any model loads.
  ModelRepository(std::string directory, ModelSettings settings,
                  std::chrono::milliseconds poll_interval,
                  ModelRegistry& registry, ServerMetrics& metrics,
                  std::function<void()> on_change, Log log);
  // Stops polling and unloads the retired versions, waiting for the
  // requests they hold.
  ~ModelRepository();

  ModelRepository(const ModelRepository&) = delete;
  ModelRepository& operator=(const ModelRepository&) = delete;

  // Loads what changed since the last poll, and unloads retired versions
  // that no request holds any more.
  void Poll();

 private:
  // Serves the highest version among `versions` (one model's, highest
  // first) that loads, unless the one served comes first; says whether the
  // registry changed. Adds each refusal to `refusals` (may be null), "; "
  // between them. Needs mutex_ held.
  bool ServeHighestLoadableLocked(
      const std::vector<RepositoryVersion>& versions,
      std::string* refusals = nullptr);
  // Loads `entry` and serves it in place of its model's current version;
  // logs and remembers a failure, and returns its message (empty when
  // loaded). Needs mutex_ held.
  std::string LoadLocked(const RepositoryVersion& entry);
  // Loads what changed since the last poll; says whether the registry
  // changed. Needs mutex_ held.
  bool PollLocked();
  // Retires the models `versions` (a scan) no longer holds, but the last
  // one served; says whether the registry changed. Needs mutex_ held.
  bool RemoveMissingLocked(const std::vector<RepositoryVersion>& versions);
  // Unloads the retired versions no request holds; needs mutex_ held.
  void UnloadIdleLocked();
  // Thread body: Poll() every poll_interval_ until stopping_.
  void Run();

  const std::string directory_;
  const ModelSettings settings_;
  const std::chrono::milliseconds poll_interval_;
  ModelRegistry& registry_;
  ServerMetrics& metrics_;
  const std::function<void()> on_change_;
  const Log log_;

  std::mutex mutex_;  // Serializes Poll(); guards the members below.
  // Versions that failed to load: path -> the folder's state then.
  std::map<std::string, std::string> refused_;
  // Versions replaced or removed and not yet unloaded.
  std::vector<std::shared_ptr<ServedModel>> retired_;
  // Models kept as the last one served after their folder went: logged once.
  std::set<std::string> kept_;
  std::condition_variable stop_;  // Signalled when stopping_ is set.
  bool stopping_ = false;
  std::thread thread_;  // Started last.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_MODEL_REPOSITORY_H_
