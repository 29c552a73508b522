// fanyi-kernels: times one linear layer, y = x·Wᵀ + b, at the shapes of a
// decoding step, in each implementation the CPU decoding path could use:
// LibTorch's (at::linear over OpenBLAS, and RowLinear's matrix-vector
// product for one row), PackedLinear's kernel variants in float32 and int8
// (int8 "avx512" is the AVX512_VNNI kernel where the CPU has it), and
// XNNPACK's fully-connected operator when the build found it. Prints ns per
// call (median of --repeats timings of --calls calls) and GFLOP/s (GOP/s
// for int8: multiply-adds counted as two operations either way).
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/decoding/cpu_isa.h"
#include "common/decoding/packed_linear.h"
#include "common/model/cpu_threading.h"
#include "common/model/row_linear.h"
#ifdef FANYI_HAVE_XNNPACK
#include <xnnpack.h>
#endif

ABSL_FLAG(std::string, rows, "1,4,32,128", "Input rows to time.");
ABSL_FLAG(std::string, shapes, "128x384,128x128,128x512,512x128,128x3261",
          "Layers as IN_FEATURESxOUT_FEATURES (default: the decoder of "
          "models/bench: d_model 128, d_ff 512, 3261 target words).");
ABSL_FLAG(int, calls, 200, "Calls per timing.");
ABSL_FLAG(int, repeats, 7, "Timings per case; the median is printed.");

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int64_t> ParseList(const std::string& text, char separator) {
  std::vector<int64_t> values;
  for (absl::string_view part : absl::StrSplit(text, separator)) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(part, &value) || value <= 0) {
      throw std::invalid_argument("not a positive number: " +
                                  std::string(part));
    }
    values.push_back(value);
  }
  return values;
}

// Median ns per call of `call`.
double TimeNs(const std::function<void()>& call) {
  const int calls = absl::GetFlag(FLAGS_calls);
  for (int i = 0; i < calls / 10 + 1; ++i) call();  // Warm the caches.
  std::vector<double> timings;
  for (int repeat = 0; repeat < absl::GetFlag(FLAGS_repeats); ++repeat) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < calls; ++i) call();
    timings.push_back(
        std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
        calls);
  }
  std::sort(timings.begin(), timings.end());
  return timings[timings.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Times linear layers at decoding-step shapes.\nUsage: fanyi-kernels "
      "[--rows 1,4,32] [--shapes 128x384,...]");
  fanyi::EnsureCpuThreadingEnvironment(argv);
  absl::ParseCommandLine(argc, argv);
  torch::set_num_threads(1);  // One decode worker per core.
  const std::vector<int64_t> row_counts =
      ParseList(absl::GetFlag(FLAGS_rows), ',');
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (absl::string_view shape :
       absl::StrSplit(absl::GetFlag(FLAGS_shapes), ',')) {
    const std::vector<int64_t> sizes = ParseList(std::string(shape), 'x');
    if (sizes.size() != 2) {
      std::fprintf(stderr, "fanyi-kernels: bad shape %s\n",
                   std::string(shape).c_str());
      return 2;
    }
    shapes.emplace_back(sizes[0], sizes[1]);
  }
#ifdef FANYI_HAVE_XNNPACK
  if (xnn_initialize(nullptr) != xnn_status_success) {
    std::fprintf(stderr, "fanyi-kernels: XNNPACK failed to initialize\n");
    return 1;
  }
#endif
  torch::manual_seed(1);
  std::printf("| in x out | rows | implementation | ns/call | GFLOP/s |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const auto& [in, out] : shapes) {
    const torch::Tensor weight = at::randn({out, in});
    const torch::Tensor bias = at::randn({out});
    for (int64_t rows : row_counts) {
      const torch::Tensor input = at::randn({rows, in});
      torch::Tensor output = at::empty({rows, out});
      std::vector<std::pair<std::string, std::function<void()>>> cases;
      cases.emplace_back("at::linear (OpenBLAS)",
                         [&] { output = at::linear(input, weight, bias); });
      if (rows == 1) {
        cases.emplace_back("RowLinear (gemv)", [&] {
          output = fanyi::RowLinear(input, weight, bias);
        });
      }
      std::vector<fanyi::PackedLinear> packed;
      for (fanyi::CpuIsa isa : {fanyi::CpuIsa::kPortable, fanyi::CpuIsa::kAvx2,
                                fanyi::CpuIsa::kAvx512}) {
        if (fanyi::CpuSupports(isa)) packed.emplace_back(weight, bias, isa);
      }
      // int8's plain loops are for correctness, not speed: not timed.
      for (fanyi::CpuIsa isa : {fanyi::CpuIsa::kAvx2, fanyi::CpuIsa::kAvx512}) {
        if (fanyi::CpuSupports(isa)) {
          packed.emplace_back(weight, bias, isa, fanyi::ComputeType::kInt8);
        }
      }
      torch::Tensor raw_output = at::empty({rows, out});
      for (const fanyi::PackedLinear& layer : packed) {
        const std::string type =
            layer.compute_type() == fanyi::ComputeType::kInt8 ? "int8 " : "";
        cases.emplace_back(
            "PackedLinear " + type + fanyi::CpuIsaName(layer.isa()),
            [&, layer_ptr = &layer] {
              layer_ptr->Apply(input.data_ptr<float>(), rows, in,
                               raw_output.data_ptr<float>(), out,
                               fanyi::LinearEpilogue::kBias);
            });
      }
#ifdef FANYI_HAVE_XNNPACK
      xnn_operator_t xnn = nullptr;
      if (xnn_create_fully_connected_nc_f32(
              in, out, in, out, weight.data_ptr<float>(),
              bias.data_ptr<float>(), -INFINITY, INFINITY, 0,
              &xnn) != xnn_status_success) {
        std::fprintf(stderr, "fanyi-kernels: XNNPACK operator failed\n");
        return 1;
      }
      cases.emplace_back("XNNPACK fully_connected", [&] {
        xnn_setup_fully_connected_nc_f32(xnn, rows, input.data_ptr<float>(),
                                         raw_output.data_ptr<float>(), nullptr);
        xnn_run_operator(xnn, nullptr);
      });
#endif
      for (const auto& [name, call] : cases) {
        const double ns = TimeNs(call);
        std::printf("| %lldx%lld | %lld | %s | %.0f | %.1f |\n",
                    static_cast<long long>(in), static_cast<long long>(out),
                    static_cast<long long>(rows), name.c_str(), ns,
                    2.0 * rows * in * out / ns);
      }
#ifdef FANYI_HAVE_XNNPACK
      xnn_delete_operator(xnn);
#endif
    }
  }
  return 0;
}
