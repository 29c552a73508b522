#include "trainer/run_directory.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace fanyi {

namespace fs = std::filesystem;

RunDirectory::RunDirectory(std::string out_dir, int64_t kept_saves)
    : out_(std::move(out_dir)), kept_saves_(kept_saves) {}

bool RunDirectory::HoldsRunToResume(bool resume, std::ostream& log) const {
  std::vector<std::string> saves;
  for (const char* name : {"last", "best", "averaged", "epochs"}) {
    if (fs::exists(out_ / name)) saves.push_back(std::string(name) + "/");
  }
  if (saves.empty()) {
    if (resume) {
      log << "no run in " << out_.string() << " yet; starting one\n";
    }
    return false;
  }
  std::string listed;
  for (const std::string& save : saves) {
    listed += (listed.empty() ? "" : ", ") + save;
  }
  if (!resume) {
    throw std::runtime_error(
        "--out " + out_.string() + " already holds a training run (" + listed +
        "); pass --resume to continue it, or give another --out (nothing "
        "was changed)");
  }
  if (!fs::exists(out_ / "last")) {
    throw std::runtime_error("--out " + out_.string() + " holds " + listed +
                             " but no last/ to resume from; give another "
                             "--out (nothing was changed)");
  }
  return true;
}

std::vector<std::string> RunDirectory::KeptSaves() const {
  const fs::path directory = out_ / "epochs";
  std::vector<std::string> saves;
  if (!fs::is_directory(directory)) return saves;
  for (const auto& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if ((name.rfind("step-", 0) == 0 || name.rfind("epoch-", 0) == 0) &&
        entry.path().extension().empty()) {
      saves.push_back(entry.path().string());
    }
  }
  std::sort(saves.begin(), saves.end());  // "epoch-" < "step-".
  return saves;
}

void RunDirectory::Keep(const Checkpoint& checkpoint, int64_t step) const {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%010lld",
                static_cast<long long>(step));
  SaveCheckpoint(checkpoint, (out_ / "epochs" / name).string());
  // Drop all but the newest kept_saves.
  const std::vector<std::string> saves = KeptSaves();
  const size_t keep = static_cast<size_t>(kept_saves_);
  for (size_t i = 0; i + keep < saves.size(); ++i) fs::remove_all(saves[i]);
}

}  // namespace fanyi
