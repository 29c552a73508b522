#include "trainer/training_log.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>

namespace fanyi {

double EtaSeconds(double elapsed_seconds, double max_minutes,
                  double epochs_done, int64_t epochs) {
  if (max_minutes > 0) {
    return std::max(0.0, max_minutes * 60.0 - elapsed_seconds);
  }
  if (epochs_done <= 0) return 0;
  return elapsed_seconds / epochs_done *
         (static_cast<double>(epochs) - epochs_done);
}

TrainingLog::TrainingLog(bool show_progress, std::ostream& log)
    : show_progress_(show_progress), log_(log) {}

void TrainingLog::OpenRecords(const std::string& out_dir) {
  records_.open(std::filesystem::path(out_dir) / "train_log.jsonl",
                std::ios::app);
}

bool TrainingLog::ProgressShown() const {
  return show_progress_ && isatty(fileno(stderr));
}

void TrainingLog::Progress(const StepProgress& progress, bool record) {
  if (record && records_.is_open()) {
    records_ << nlohmann::json{{"event", "progress"},
                               {"epoch", progress.epoch},
                               {"step", progress.step},
                               {"loss", progress.loss},
                               {"lr", progress.learning_rate},
                               {"tokens_per_second",
                                progress.tokens_per_second},
                               {"eta_seconds", progress.eta_seconds}}
                    .dump()
             << "\n";
    records_.flush();
  }
  if (ProgressShown()) {
    std::fprintf(stderr,
                 "\repoch %lld (%.1f%%) step %lld loss %.3f lr %.2e "
                 "%.0f tok/s ETA %.0fs   ",
                 static_cast<long long>(progress.epoch),
                 100.0 * progress.epoch_share,
                 static_cast<long long>(progress.step), progress.loss,
                 progress.learning_rate, progress.tokens_per_second,
                 progress.eta_seconds);
    std::fflush(stderr);
  }
}

void TrainingLog::EndProgressLine() {
  if (ProgressShown()) std::fputs("\n", stderr);
}

void TrainingLog::Report(const EpochReport& report, bool epoch_complete) {
  if (records_.is_open()) {
    records_ << nlohmann::json{{"event", "epoch"},
                               {"epoch", report.epoch},
                               {"epoch_complete", epoch_complete},
                               {"step", report.step},
                               {"train_loss", report.train_loss},
                               {"dev_loss", report.dev_loss},
                               {"dev_bleu", report.dev_bleu},
                               {"tokens_per_second", report.tokens_per_second},
                               {"elapsed_seconds", report.elapsed_seconds}}
                    .dump()
             << "\n";
    records_.flush();
  }
  log_ << std::fixed << std::setprecision(3) << "epoch " << report.epoch
       << (epoch_complete ? "" : " (in progress)") << " step " << report.step
       << " train_loss " << report.train_loss << " dev_loss " << report.dev_loss
       << std::setprecision(2) << " dev_bleu " << report.dev_bleu
       << std::setprecision(0) << " " << report.tokens_per_second << " tok/s "
       << report.elapsed_seconds << "s\n"
       << std::defaultfloat << std::setprecision(6);
}

}  // namespace fanyi
