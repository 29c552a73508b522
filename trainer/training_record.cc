#include "trainer/training_record.h"

#include <stdexcept>

namespace fanyi {

nlohmann::json TrainingRecord(const TrainingPosition& position,
                              const EpochReport& report,
                              const TrainingOptions& options,
                              const PreparedCorpus& corpus, int world_size) {
  const nlohmann::json& manifest = corpus.manifest();
  return {
      // What the corpus was prepared from: the files this run trained and
      // validated on, with --train or --data alike.
      {"train", manifest.value("train", "")},
      {"dev", manifest.value("dev", "")},
      {"data", corpus.directory()},
      {"bidirectional", manifest.value("bidirectional", false)},
      {"epoch", position.epoch},
      {"epoch_complete", position.epoch_complete},
      {"epoch_batches", position.epoch_batches},
      {"step", position.step},
      {"dev_bleu", report.dev_bleu},
      {"dev_loss", report.dev_loss},
      {"training_seconds", report.elapsed_seconds},
      {"batch_tokens", options.batch_tokens},
      {"accumulate_batches", options.accumulate_batches},
      {"world_size", world_size},
      {"precision", options.precision},
      {"shuffle_window", options.shuffle_window},
      {"warmup_steps", options.warmup_steps},
      {"lr_factor", options.lr_factor},
      {"label_smoothing", options.label_smoothing},
      {"word_dropout", options.word_dropout},
      {"rdrop_weight", options.rdrop_weight},
      {"seed", options.seed},
      {"init_from", options.init_from},
  };
}

TrainingPosition ReadTrainingPosition(const nlohmann::json& record,
                                      const std::string& checkpoint_dir) {
  for (const char* field : {"epoch", "step"}) {
    if (!record.contains(field) || !record[field].is_number_integer()) {
      throw std::runtime_error(checkpoint_dir +
                               ": its training record has no integer \"" +
                               field + "\" (not a checkpoint a run saved)");
    }
  }
  TrainingPosition position;
  position.epoch = record["epoch"].get<int64_t>();
  position.step = record["step"].get<int64_t>();
  position.epoch_complete = record.value("epoch_complete", true);
  position.epoch_batches = record.value("epoch_batches", int64_t{0});
  return position;
}

}  // namespace fanyi
