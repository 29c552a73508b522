#include "server/model_repository.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace fanyi {
namespace {

namespace fs = std::filesystem;

// Whether `name` is a version number (digits only, not too long).
bool IsVersion(const std::string& name) {
  return !name.empty() && name.size() <= 18 &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// The newest modification time among `folder` and everything under it, as
// a string: a refused version is tried again once this changes.
std::string FolderState(const std::string& folder) {
  std::error_code error;
  fs::file_time_type newest = fs::last_write_time(folder, error);
  for (auto it = fs::recursive_directory_iterator(folder, error);
       !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    std::error_code time_error;
    const fs::file_time_type time = it->last_write_time(time_error);
    if (!time_error) newest = std::max(newest, time);
  }
  return std::to_string(newest.time_since_epoch().count());
}

}  // namespace

std::vector<RepositoryVersion> ModelRepository::Scan(
    const std::string& directory) {
  std::error_code error;
  std::vector<RepositoryVersion> latest;
  fs::directory_iterator models(directory, error);
  if (error) {
    throw std::runtime_error("cannot read model repository " + directory +
                             ": " + error.message());
  }
  for (const fs::directory_entry& model : models) {
    if (!model.is_directory(error)) continue;
    RepositoryVersion best;
    for (const fs::directory_entry& version :
         fs::directory_iterator(model.path(), error)) {
      const std::string number = version.path().filename().string();
      if (!IsVersion(number) || !version.is_directory(error)) continue;
      const int64_t value = std::stoll(number);
      if (best.path.empty() || value > best.version) {
        best = {model.path().filename().string(), value,
                version.path().string()};
      }
    }
    if (!best.path.empty()) latest.push_back(std::move(best));
  }
  std::sort(latest.begin(), latest.end(),
            [](const RepositoryVersion& a, const RepositoryVersion& b) {
              return a.name < b.name;
            });
  return latest;
}

ModelRepository::ModelRepository(std::string directory, ModelSettings settings,
                                 std::chrono::milliseconds poll_interval,
                                 ModelRegistry& registry,
                                 ServerMetrics& metrics,
                                 std::function<void()> on_engine_broken,
                                 Log log)
    : directory_(std::move(directory)),
      settings_(std::move(settings)),
      poll_interval_(poll_interval),
      registry_(registry),
      metrics_(metrics),
      on_engine_broken_(std::move(on_engine_broken)),
      log_(std::move(log)) {
  const std::vector<RepositoryVersion> versions = Scan(directory_);
  if (versions.empty()) {
    throw std::runtime_error("model repository " + directory_ +
                             " holds no model (expected " + directory_ +
                             "/NAME/VERSION/, such as en-zh/1/)");
  }
  // At start there is no older version to fall back on: a model that
  // cannot be loaded is an error.
  for (const RepositoryVersion& entry : versions) {
    registry_.Replace(ServedModel::Load(entry.name, entry.version, entry.path,
                                        settings_, metrics_,
                                        on_engine_broken_));
    log_("model " + entry.name + " version " + std::to_string(entry.version) +
         " serving (" + entry.path + ")");
  }
  if (poll_interval_.count() > 0) thread_ = std::thread([this] { Run(); });
}

ModelRepository::~ModelRepository() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Drained here, before the last reference goes: never on one of their
  // own workers.
  for (const std::shared_ptr<ServedModel>& model : retired_) model->Stop();
  retired_.clear();
}

void ModelRepository::Poll() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<RepositoryVersion> versions;
  try {
    versions = Scan(directory_);
  } catch (const std::exception& e) {
    // Nothing to compare with: the models keep serving, and the next poll
    // tries again.
    log_(e.what());
    UnloadIdleLocked();
    return;
  }
  for (auto it = refused_.begin(); it != refused_.end();) {
    std::error_code error;
    it = fs::exists(it->first, error) ? std::next(it) : refused_.erase(it);
  }
  for (const RepositoryVersion& entry : versions) {
    const std::shared_ptr<ServedModel> served = registry_.Find(entry.name);
    if (served != nullptr && served->version() == entry.version) continue;
    const auto refused = refused_.find(entry.path);
    if (refused != refused_.end() &&
        refused->second == FolderState(entry.path)) {
      continue;
    }
    Load(entry);
  }
  RemoveMissingLocked(versions);
  UnloadIdleLocked();
}

void ModelRepository::Load(const RepositoryVersion& entry) {
  const std::string label =
      "model " + entry.name + " version " + std::to_string(entry.version);
  const auto started = std::chrono::steady_clock::now();
  std::shared_ptr<ServedModel> loaded;
  try {
    loaded = ServedModel::Load(entry.name, entry.version, entry.path, settings_,
                               metrics_, on_engine_broken_);
  } catch (const std::exception& e) {
    refused_[entry.path] = FolderState(entry.path);
    const std::shared_ptr<ServedModel> served = registry_.Find(entry.name);
    log_(label + " refused: " + e.what() +
         (served == nullptr ? std::string()
                            : "; version " + std::to_string(served->version()) +
                                  " keeps serving"));
    return;
  }
  refused_.erase(entry.path);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  std::shared_ptr<ServedModel> old = registry_.Replace(std::move(loaded));
  std::string line = label + " serving (" + entry.path + ", loaded in " +
                     std::to_string(seconds) + " s)";
  if (old != nullptr) {
    line += "; version " + std::to_string(old->version()) +
            " finishes what it holds";
    retired_.push_back(std::move(old));
  }
  log_(line);
}

void ModelRepository::RemoveMissingLocked(
    const std::vector<RepositoryVersion>& versions) {
  std::set<std::string> present;
  for (const RepositoryVersion& entry : versions) present.insert(entry.name);
  for (const std::shared_ptr<ServedModel>& model : registry_.Models()) {
    const std::string& name = model->name();
    const std::string label =
        "model " + name + " version " + std::to_string(model->version());
    if (present.count(name) > 0) {
      kept_.erase(name);
    } else if (registry_.Models().size() == 1) {
      if (kept_.insert(name).second) {
        log_(label + " is no longer in " + directory_ +
             "; it keeps serving, as the only model");
      }
    } else {
      registry_.Remove(name);
      retired_.push_back(model);
      log_(label + " is no longer in " + directory_ +
           "; it finishes what it holds");
    }
  }
}

void ModelRepository::UnloadIdleLocked() {
  for (auto it = retired_.begin(); it != retired_.end();) {
    // Only this list holds it: every request that chose it is answered,
    // and no new one can choose it.
    if (it->use_count() == 1) {
      const std::string label = "model " + (*it)->name() + " version " +
                                std::to_string((*it)->version());
      it = retired_.erase(it);
      log_(label + " unloaded");
    } else {
      ++it;
    }
  }
}

void ModelRepository::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_.wait_for(lock, poll_interval_, [this] { return stopping_; })) {
    lock.unlock();
    Poll();
    lock.lock();
  }
}

}  // namespace fanyi
