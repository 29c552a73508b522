#ifndef FANYI_TRAINER_TRAINING_LOG_H_
#define FANYI_TRAINER_TRAINING_LOG_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace fanyi {

// Figures of one validation pass (at an epoch's end, every
// validate_every_steps steps, or when training stops).
struct EpochReport {
  int64_t epoch = 0;  // The epoch in progress or just ended.
  int64_t step = 0;
  double train_loss = 0;         // Mean per target token since the last report,
                                 // label-smoothed.
  double dev_loss = 0;           // Mean per target token, no smoothing.
  double dev_bleu = 0;           // Corpus BLEU of greedy translations.
  double tokens_per_second = 0;  // Target tokens trained per second since
                                 // the last report, every rank's.
  double elapsed_seconds = 0;
};

// What a run produced.
struct TrainingResult {
  std::vector<EpochReport> epochs;
  double best_dev_bleu = 0;
  std::string best_checkpoint;      // Directory of the best checkpoint.
  std::string last_checkpoint;      // Directory of the last checkpoint.
  double length_penalty = 1.0;      // The α best/ decodes beam search with.
  int64_t skipped_train_lines = 0;  // Bad input lines that were skipped.
};

// Where a training step stands, for the progress line and record.
struct StepProgress {
  int64_t epoch = 0;
  double epoch_share = 0;  // Of this epoch's pairs read, 0 to 1.
  int64_t step = 0;
  double loss = 0;  // Mean per target token since the last report.
  double learning_rate = 0;
  double tokens_per_second = 0;
  double eta_seconds = 0;  // Until the budget or the last epoch ends.
};

// Seconds a run has left after `elapsed_seconds`: until `max_minutes` when
// that is set, else until the last of `epochs` ends at the pace of the
// `epochs_done` (a fraction) so far; 0 before anything is done.
double EtaSeconds(double elapsed_seconds, double max_minutes,
                  double epochs_done, int64_t epochs);

// What was trained since the last report: this rank's label-smoothed loss
// summed over its target tokens, every rank's target tokens, and when the
// window opened. The figures of a report and of the progress line.
struct ReportWindow {
  using Clock = std::chrono::steady_clock;

  double loss_sum = 0;
  int64_t loss_tokens = 0;     // This rank's.
  int64_t trained_tokens = 0;  // Every rank's.
  Clock::time_point start = Clock::now();

  double MeanLoss() const { return loss_tokens ? loss_sum / loss_tokens : 0; }
  double TokensPerSecond() const {
    const double seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    return trained_tokens / std::max(seconds, 1e-9);
  }
};

// How a run tells how it goes: JSON records appended to train_log.jsonl in
// its output directory (on rank 0), a progress line rewritten in place on a
// terminal, and a line per report in the run's log.
class TrainingLog {
 public:
  // `show_progress`: draw the progress line when stderr is a terminal.
  TrainingLog(bool show_progress, std::ostream& log);

  // Appends the JSON records to `out_dir`/train_log.jsonl from now on
  // (only the rank that leads calls it).
  void OpenRecords(const std::string& out_dir);

  // Redraws the progress line; with `record`, also appends a progress
  // record.
  void Progress(const StepProgress& progress, bool record);
  // Ends the progress line, at an epoch's end.
  void EndProgressLine();
  // Appends an epoch record and logs the report's line.
  void Report(const EpochReport& report, bool epoch_complete);

 private:
  bool ProgressShown() const;

  bool show_progress_;
  std::ostream& log_;
  std::ofstream records_;  // Closed: no records (ranks other than 0).
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_TRAINING_LOG_H_
