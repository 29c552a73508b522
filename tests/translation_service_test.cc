// The gRPC service's own wiring, on a real server on 127.0.0.1 serving the
// tiny trained model: a call's texts are assembled and answered by the
// assembly pool, never by the decode worker that decoded them.

#include "server/translation_service.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/assembly_pool.h"
#include "server/model_registry.h"
#include "server/served_model.h"
#include "server/server_metrics.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

// Sentences the model has decoded, from the in-process registry.
uint64_t DecodedSentences(prometheus::Registry& registry) {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != "fanyi_decode_duration_seconds") continue;
    uint64_t count = 0;
    for (const prometheus::ClientMetric& metric : family.metric) {
      count += metric.histogram.sample_count;
    }
    return count;
  }
  return 0;
}

TEST(TranslationServiceTest, DecodeWorkersLeaveAssemblyToThePool) {
  const std::string model_dir = testing_util::TrainTinyModel(
      testing_util::MakeTempDir("translation_service_test_model"));
  prometheus::Registry registry;
  ServerMetrics metrics(registry);
  AssemblyPool assembly(1);
  ModelRegistry models;
  ModelSettings settings;
  settings.translator.device = "cpu";
  settings.translator.threads = 1;
  models.Replace(ServedModel::Load("", 0, model_dir, settings, metrics, {}));
  TranslationService service(models, metrics, assembly);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(port, 0);
  auto stub = v1::Translator::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));

  // The pool's one thread is held, so nothing can be assembled.
  std::promise<void> gate;
  assembly.Post([open = gate.get_future().share()] { open.wait(); });

  v1::TranslateResponse response;
  std::future<grpc::Status> answer = std::async(std::launch::async, [&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(60));
    v1::TranslateRequest request;
    request.set_text("I like tea. Where is the station?");
    return stub->Translate(&context, request, &response);
  });
  // Both sentences decode: the decode worker is done with them ...
  const auto patience =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (DecodedSentences(registry) < 2 &&
         std::chrono::steady_clock::now() < patience) {
    std::this_thread::yield();
  }
  ASSERT_EQ(DecodedSentences(registry), 2u);
  // ... yet the call is not answered while the pool cannot assemble it. (A
  // decode worker that assembled would answer it within milliseconds; this
  // waits far longer than that, and can only fail when it does.)
  EXPECT_EQ(answer.wait_for(std::chrono::seconds(2)),
            std::future_status::timeout);
  gate.set_value();
  const grpc::Status status = answer.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(response.translation().text().empty());
  EXPECT_EQ(response.translation().sentence_count(), 2);

  server->Shutdown();
  models.Models().front()->Stop();
  assembly.Drain();
}

}  // namespace
}  // namespace fanyi
