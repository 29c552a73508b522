#include "server/served_model.h"

#include <exception>
#include <stdexcept>
#include <utility>

#include "server/decode_engine.h"
#include "server/translator_decode_engine.h"

namespace fanyi {

std::shared_ptr<ServedModel> ServedModel::Load(
    const std::string& name, int64_t version, const std::string& directory,
    const ModelSettings& settings, ServerMetrics& metrics,
    std::function<void()> on_worker_stopped) {
  std::shared_ptr<ServedModel> model(new ServedModel());
  model->version_ = version;
  try {
    model->translator_ = Translator::Load(directory, settings.translator);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot load model from " + directory + ": " +
                             e.what());
  }
  model->name_ = name.empty() ? model->translator_->source_language() + "-" +
                                    model->translator_->target_language()
                              : name;
  model->metrics_ = metrics.ForModel(model->name_, version,
                                     model->translator_->model_version(),
                                     model->translator_->device_name());
  // One engine per worker: each has its own rows and cache, all read the
  // one model.
  std::vector<DecodeEngine*> engines;
  for (int i = 0; i < settings.workers; ++i) {
    model->engines_.push_back(
        settings.engine_factory
            ? settings.engine_factory(*model->translator_)
            : std::make_unique<TranslatorDecodeEngine>(*model->translator_));
    engines.push_back(model->engines_.back().get());
  }
  model->batcher_ = std::make_unique<RequestBatcher>(
      settings.batcher, engines, model->metrics_.get(),
      std::move(on_worker_stopped));
  return model;
}

ServedModel::~ServedModel() { Stop(); }

void ServedModel::Stop() {
  if (batcher_ != nullptr) batcher_->Stop();
}

}  // namespace fanyi
