#include "trainer/run_directory.h"

#include <torch/serialize.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <stdexcept>
#include <utility>

#include "common/model/checkpoint_averaging.h"
#include "trainer/dev_evaluation.h"

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

std::string RunDirectory::NewModelVersion() const {
  const std::time_t now = std::time(nullptr);
  char time[32];
  std::strftime(time, sizeof(time), "%Y%m%dT%H%M%S", std::gmtime(&now));
  return out_.filename().string() + "-" + time;
}

Checkpoint RunDirectory::LoadLast(torch::Device device) {
  Checkpoint saved = LoadCheckpoint(last(), device);
  best_dev_bleu_ = saved.training.value("best_dev_bleu", -1.0);
  return saved;
}

void RunDirectory::LoadOptimizer(torch::optim::Adam& optimizer,
                                 torch::Device device) const {
  torch::load(optimizer, (out_ / "last" / "optimizer.pt").string(), device);
}

bool RunDirectory::Save(Checkpoint& checkpoint, torch::optim::Adam& optimizer,
                        double dev_bleu, int64_t step) {
  const bool best = dev_bleu > best_dev_bleu_;
  if (best) best_dev_bleu_ = dev_bleu;
  checkpoint.training["best_dev_bleu"] = best_dev_bleu_;
  SaveCheckpoint(checkpoint, last(), [&](const std::string& directory) {
    torch::save(optimizer, (fs::path(directory) / "optimizer.pt").string());
  });
  if (best) SaveCheckpoint(checkpoint, this->best());
  if (kept_saves_ > 1) {
    char name[32];
    std::snprintf(name, sizeof(name), "step-%010lld",
                  static_cast<long long>(step));
    SaveCheckpoint(checkpoint, (out_ / "epochs" / name).string());
    // Drop all but the newest kept_saves.
    const std::vector<std::string> saves = KeptSaves();
    const size_t keep = static_cast<size_t>(kept_saves_);
    for (size_t i = 0; i + keep < saves.size(); ++i) fs::remove_all(saves[i]);
  }
  return best;
}

void RunDirectory::AverageKeptSaves(const DevSet& dev, torch::Device device,
                                    std::ostream& log) {
  const std::vector<std::string> saves = KeptSaves();
  if (saves.size() < 2) return;  // Nothing to average yet.
  Checkpoint average = AverageCheckpoints(saves);
  average.model->to(device);
  average.model->eval();
  const double bleu = DevBleu(average, dev);
  average.training["dev_bleu"] = bleu;
  average.training["best_single_dev_bleu"] = best_dev_bleu_;
  SaveCheckpoint(average, averaged());
  log << std::fixed << std::setprecision(2) << "averaged the last "
      << saves.size() << " saves into " << averaged() << ": dev_bleu " << bleu
      << " (best single save " << best_dev_bleu_ << ")\n";
  if (bleu > best_dev_bleu_) {
    SaveCheckpoint(average, best());
    best_dev_bleu_ = bleu;
    log << "best/ is now the average\n";
  }
}

}  // namespace fanyi
