// fanyi-train: trains a Transformer translation model on a parallel TSV (or
// a corpus fanyi-prepare wrote) and writes checkpoints (best/ and last/) to
// --out.
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "common/model/cpu_threading.h"
#include "trainer/local_ranks.h"
#include "trainer/preparation_flags.h"
#include "trainer/trainer.h"

// Flags live here, away from torch headers, whose glog/gflags globals clash.
ABSL_FLAG(std::string, data, "",
          "A corpus prepared by fanyi-prepare, instead of --train and --dev "
          "(its languages, script, placeholders and vocabularies apply).");
ABSL_FLAG(std::string, out, "",
          "Output directory (best/, last/, train_log.jsonl).");
ABSL_FLAG(int64_t, layers, 3, "Encoder and decoder layers each.");
ABSL_FLAG(int64_t, d_model, 128, "Model width.");
ABSL_FLAG(int64_t, d_ff, 512, "Feed-forward inner width.");
ABSL_FLAG(int64_t, heads, 4, "Attention heads.");
ABSL_FLAG(double, dropout, 0.1, "Dropout probability.");
ABSL_FLAG(int64_t, max_positions, 256, "Longest sequence the model handles.");
ABSL_FLAG(bool, tie_embeddings, true, "Share target embedding and generator.");
ABSL_FLAG(int64_t, epochs, 100, "Maximum passes over the training data.");
ABSL_FLAG(int64_t, max_steps, 0, "Maximum optimizer steps (0: no limit).");
ABSL_FLAG(double, max_minutes, 0,
          "Stop cleanly after this many minutes (0: no limit).");
ABSL_FLAG(int64_t, batch_tokens, 2048,
          "Tokens per optimizer step, in length-bucketed batches: split "
          "evenly among the --ranks this command starts. A rank that "
          "WORLD_SIZE names trains this many a batch.");
ABSL_FLAG(int64_t, shuffle_window, 1000000,
          "Pairs batched and shuffled together: shards are read in a "
          "shuffled order, this many pairs at a time.");
ABSL_FLAG(int64_t, accumulate_batches, 1,
          "Batches per rank summed into one optimizer step (a step takes this "
          "many times WORLD_SIZE batches).");
ABSL_FLAG(double, collective_timeout_minutes, 30,
          "Data-parallel runs (WORLD_SIZE > 1, with MASTER_ADDR, MASTER_PORT "
          "and RANK): how long a rank waits for the others before failing.");
ABSL_FLAG(int64_t, warmup, 800, "Learning-rate warm-up steps.");
ABSL_FLAG(double, lr_factor, 2.0,
          "Factor on the paper's learning-rate schedule.");
ABSL_FLAG(double, label_smoothing, 0.1, "Label smoothing.");
ABSL_FLAG(double, word_dropout, 0,
          "Share of training words (sources and target inputs) replaced by "
          "<unk> in each batch; 0 = off.");
ABSL_FLAG(double, rdrop_weight, 0,
          "R-Drop: run each batch twice and add this weight times the "
          "symmetric KL divergence of the two predictions; 0 = off (a step "
          "costs about twice as much when on).");
ABSL_FLAG(int64_t, validate_every, 1, "Validate and save every N epochs.");
ABSL_FLAG(int64_t, validate_every_steps, 0,
          "Also validate and save every N optimizer steps (0: at epoch ends "
          "only).");
ABSL_FLAG(int64_t, average_last, 5,
          "Keep the last N saves in --out/epochs/ and, at the end, write their "
          "average to --out/averaged/ (and best/ if it scores higher on dev); "
          "0 = off.");
ABSL_FLAG(std::vector<std::string>, length_penalties,
          std::vector<std::string>({"0.6", "0.8", "1.0", "1.2", "1.4", "1.6",
                                    "1.8", "2.0"}),
          "GNMT length penalties α tried on dev when training ends, with beam "
          "4; best/ keeps the one of the highest BLEU, which the server and "
          "fanyi-eval use (each can override it). Empty: 1.0.");
ABSL_FLAG(int, threads, 0,
          "CPU cores in all (0: those this process is given: its affinity, "
          "lowered to its cgroup's CPU limit), shared among --ranks.");
ABSL_FLAG(int, ranks, 0,
          "Data-parallel ranks to start on this machine, as torchrun "
          "--nproc_per_node does: child processes on 127.0.0.1 with one log, "
          "one --out and one exit status. 0: one rank of one thread per core "
          "on the CPU, one process on a GPU. 1: this process alone, with "
          "--threads threads. Not read by a rank that WORLD_SIZE names "
          "(started by torchrun, a PyTorchJob or an Indexed Job).");
ABSL_FLAG(std::string, device, "auto", "auto, cpu or cuda.");
ABSL_FLAG(std::string, precision, "fp32",
          "fp32, or bf16: the forward pass in bfloat16 autocast (mixed "
          "precision: float32 weights, optimizer and validation).");
ABSL_FLAG(uint64_t, seed, 1, "Random seed.");
ABSL_FLAG(bool, resume, false,
          "Continue the run in --out from its last/ (start one when --out "
          "holds none). Without it, an --out that holds a run is refused.");
ABSL_FLAG(std::string, init_from, "",
          "Start a new run from this checkpoint's weights and shape "
          "(fine-tuning; the second stage of --bidirectional training): "
          "embedding rows are matched token by token, so its vocabularies "
          "may differ.");

int main(int argc, char** argv) {
  fanyi::EnsureCpuThreadingEnvironment(argv);
  absl::SetProgramUsageMessage(
      "Trains a translation model.\n"
      "  fanyi-train --train train.tsv --dev dev.tsv --out models/en-zh\n"
      "  fanyi-train --data prepared/en-zh --out models/en-zh");
  absl::ParseCommandLine(argc, argv);

  fanyi::TrainingOptions options;
  // --train, --dev and the text flags (trainer/preparation_flags.cc).
  options.corpus = fanyi::PreparationOptionsFromFlags();
  options.data_dir = absl::GetFlag(FLAGS_data);
  options.out_dir = absl::GetFlag(FLAGS_out);
  options.model.encoder_layers = absl::GetFlag(FLAGS_layers);
  options.model.decoder_layers = absl::GetFlag(FLAGS_layers);
  options.model.d_model = absl::GetFlag(FLAGS_d_model);
  options.model.d_ff = absl::GetFlag(FLAGS_d_ff);
  options.model.heads = absl::GetFlag(FLAGS_heads);
  options.model.dropout = absl::GetFlag(FLAGS_dropout);
  options.model.max_positions = absl::GetFlag(FLAGS_max_positions);
  options.model.tie_target_embeddings = absl::GetFlag(FLAGS_tie_embeddings);
  options.epochs = absl::GetFlag(FLAGS_epochs);
  options.max_steps = absl::GetFlag(FLAGS_max_steps);
  options.max_minutes = absl::GetFlag(FLAGS_max_minutes);
  options.batch_tokens = absl::GetFlag(FLAGS_batch_tokens);
  options.shuffle_window = absl::GetFlag(FLAGS_shuffle_window);
  options.accumulate_batches = absl::GetFlag(FLAGS_accumulate_batches);
  options.collective_timeout_minutes =
      absl::GetFlag(FLAGS_collective_timeout_minutes);
  options.warmup_steps = absl::GetFlag(FLAGS_warmup);
  options.lr_factor = absl::GetFlag(FLAGS_lr_factor);
  options.label_smoothing = absl::GetFlag(FLAGS_label_smoothing);
  options.word_dropout = absl::GetFlag(FLAGS_word_dropout);
  options.rdrop_weight = absl::GetFlag(FLAGS_rdrop_weight);
  options.validate_every_epochs = absl::GetFlag(FLAGS_validate_every);
  options.validate_every_steps = absl::GetFlag(FLAGS_validate_every_steps);
  options.average_last = absl::GetFlag(FLAGS_average_last);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.device = absl::GetFlag(FLAGS_device);
  options.precision = absl::GetFlag(FLAGS_precision);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.resume = absl::GetFlag(FLAGS_resume);
  options.init_from = absl::GetFlag(FLAGS_init_from);

  try {
    options.length_penalties.clear();
    for (const std::string& value : absl::GetFlag(FLAGS_length_penalties)) {
      double length_penalty = 0;
      if (!absl::SimpleAtod(value, &length_penalty)) {
        throw std::invalid_argument("--length_penalties: \"" + value +
                                    "\" is not a number");
      }
      options.length_penalties.push_back(length_penalty);
    }
    if (std::getenv("WORLD_SIZE") == nullptr) {
      const fanyi::LocalRankPlan plan =
          fanyi::PlanLocalRanks(absl::GetFlag(FLAGS_ranks), options.threads,
                                options.batch_tokens, options.device);
      if (plan.ranks > 1) {
        std::cerr << "fanyi-train: " << plan.ranks << " ranks of "
                  << plan.threads << " thread(s), " << plan.batch_tokens
                  << " tokens a batch each" << std::endl;
        return fanyi::RunLocalRanks(
            plan.ranks, std::vector<std::string>(argv + 1, argv + argc),
            {"--threads=" + std::to_string(plan.threads),
             "--batch_tokens=" + std::to_string(plan.batch_tokens)});
      }
      options.threads = plan.threads;
    }
    options.rendezvous = fanyi::RendezvousEnvironment::FromEnvironment();
    fanyi::Trainer trainer(options);
    const fanyi::TrainingResult result = trainer.Run(std::cerr);
    if (options.rendezvous.rank == 0) {
      std::cout << "best dev BLEU " << result.best_dev_bleu << ": "
                << result.best_checkpoint << " (beam length penalty "
                << result.length_penalty << ")\n";
    }
  } catch (const std::exception& error) {
    std::cerr << "fanyi-train: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
