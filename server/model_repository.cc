#include "server/model_repository.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "common/model/argos_package.h"

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

// `versions` (a scan) cut into one list per model, each highest first.
std::vector<std::vector<RepositoryVersion>> ByModel(
    const std::vector<RepositoryVersion>& versions) {
  std::vector<std::vector<RepositoryVersion>> models;
  for (const RepositoryVersion& version : versions) {
    if (models.empty() || models.back().front().name != version.name) {
      models.emplace_back();
    }
    models.back().push_back(version);
  }
  return models;
}

}  // namespace

std::vector<RepositoryVersion> ModelRepository::Scan(
    const std::string& directory) {
  std::error_code error;
  std::vector<RepositoryVersion> found;
  fs::directory_iterator models(directory, error);
  if (error) {
    throw std::runtime_error("cannot read model repository " + directory +
                             ": " + error.message());
  }
  for (const fs::directory_entry& model : models) {
    const fs::path& path = model.path();
    if (IsArgosPackage(path.string())) {
      // An Argos Translate package (as argospm's packages folder holds
      // them, or an .argosmodel file, named with its extension so that it
      // never shares a name with a folder): one model of one version.
      found.push_back({path.filename().string(), 1, path.string()});
      continue;
    }
    if (!model.is_directory(error)) continue;
    for (const fs::directory_entry& version :
         fs::directory_iterator(model.path(), error)) {
      const std::string number = version.path().filename().string();
      if (!IsVersion(number) || !version.is_directory(error)) continue;
      found.push_back({model.path().filename().string(), std::stoll(number),
                       version.path().string()});
    }
  }
  std::sort(found.begin(), found.end(),
            [](const RepositoryVersion& a, const RepositoryVersion& b) {
              return a.name != b.name ? a.name < b.name : a.version > b.version;
            });
  return found;
}

ModelRepository::ModelRepository(std::string directory, ModelSettings settings,
                                 std::chrono::milliseconds poll_interval,
                                 ModelRegistry& registry,
                                 ServerMetrics& metrics,
                                 std::function<void()> on_change, Log log)
    : directory_(std::move(directory)),
      settings_(std::move(settings)),
      poll_interval_(poll_interval),
      registry_(registry),
      metrics_(metrics),
      on_change_(std::move(on_change)),
      log_(std::move(log)) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::vector<RepositoryVersion> versions = Scan(directory_);
    if (versions.empty()) {
      throw std::runtime_error("model repository " + directory_ +
                               " holds no model (expected " + directory_ +
                               "/NAME/VERSION/, such as en-zh/1/, or Argos "
                               "Translate packages)");
    }
    std::string refusals;
    for (const std::vector<RepositoryVersion>& model : ByModel(versions)) {
      ServeHighestLoadableLocked(model, &refusals);
    }
    // Some model serves: the ones refused are logged, and tried again when
    // their folders change. With none, there is nothing to serve.
    if (registry_.Models().empty()) {
      throw std::runtime_error("no model in repository " + directory_ +
                               " could be loaded: " + refusals);
    }
  }
  if (on_change_) on_change_();
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
  bool changed = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    changed = PollLocked();
    UnloadIdleLocked();
  }
  // Outside the lock: whoever listens may look at the registry.
  if (changed && on_change_) on_change_();
}

bool ModelRepository::PollLocked() {
  std::vector<RepositoryVersion> versions;
  try {
    versions = Scan(directory_);
  } catch (const std::exception& e) {
    // Nothing to compare with: the models keep serving, and the next poll
    // tries again.
    log_(e.what());
    return false;
  }
  for (auto it = refused_.begin(); it != refused_.end();) {
    std::error_code error;
    it = fs::exists(it->first, error) ? std::next(it) : refused_.erase(it);
  }
  bool changed = false;
  for (const std::vector<RepositoryVersion>& model : ByModel(versions)) {
    changed |= ServeHighestLoadableLocked(model);
  }
  changed |= RemoveMissingLocked(versions);
  return changed;
}

bool ModelRepository::ServeHighestLoadableLocked(
    const std::vector<RepositoryVersion>& versions, std::string* refusals) {
  const std::shared_ptr<ServedModel> served =
      registry_.Find(versions.front().name);
  for (const RepositoryVersion& entry : versions) {
    if (served != nullptr && served->version() == entry.version) return false;
    const auto refused = refused_.find(entry.path);
    if (refused != refused_.end() &&
        refused->second == FolderState(entry.path)) {
      continue;
    }
    const std::string refusal = LoadLocked(entry);
    if (refusal.empty()) return true;
    if (refusals != nullptr) {
      *refusals += (refusals->empty() ? "" : "; ") + refusal;
    }
  }
  return false;
}

std::string ModelRepository::LoadLocked(const RepositoryVersion& entry) {
  const std::string label =
      "model " + entry.name + " version " + std::to_string(entry.version);
  const auto started = std::chrono::steady_clock::now();
  std::shared_ptr<ServedModel> loaded;
  try {
    loaded = ServedModel::Load(entry.name, entry.version, entry.path, settings_,
                               metrics_, on_change_);
  } catch (const std::exception& e) {
    refused_[entry.path] = FolderState(entry.path);
    const std::shared_ptr<ServedModel> served = registry_.Find(entry.name);
    const std::string refusal = label + " refused: " + e.what();
    log_(refusal + (served == nullptr
                        ? std::string()
                        : "; version " + std::to_string(served->version()) +
                              " keeps serving"));
    return refusal;
  }
  refused_.erase(entry.path);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  std::ostringstream description;
  description << label << " serving (" << entry.path << ", loaded in "
              << seconds << " s, beam length penalty "
              << loaded->translator().length_penalty() << ")";
  std::string line = description.str();
  std::shared_ptr<ServedModel> old = registry_.Replace(std::move(loaded));
  if (old != nullptr) {
    line += "; version " + std::to_string(old->version()) +
            " finishes what it holds";
    retired_.push_back(std::move(old));
  }
  log_(line);
  return "";
}

bool ModelRepository::RemoveMissingLocked(
    const std::vector<RepositoryVersion>& versions) {
  bool changed = false;
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
      changed = true;
      log_(label + " is no longer in " + directory_ +
           "; it finishes what it holds");
    }
  }
  return changed;
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
