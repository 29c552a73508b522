#include "tests/controlled_engine.h"

#include <stdexcept>
#include <utility>

namespace fanyi::testing_util {

std::unique_ptr<DecodeEngine> EngineControl::NewEngine(
    const Translator& translator) {
  return std::make_unique<ControlledEngine>(translator, *this);
}

void EngineControl::SetRefusal(Refusal refusal) {
  std::lock_guard<std::mutex> lock(mutex_);
  refusal_ = std::move(refusal);
}

void EngineControl::GateNewEngines(bool gated) {
  std::lock_guard<std::mutex> lock(mutex_);
  gate_new_engines_ = gated;
}

void EngineControl::SetGateOpen(bool open) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    gate_open_ = open;
  }
  changed_.notify_all();
}

bool EngineControl::WaitForHeldSteps(int steps) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, std::chrono::seconds(60),
                           [&] { return held_steps_ >= steps; });
}

std::vector<std::vector<EncodedSource>> EngineControl::AddedByEngine() {
  std::lock_guard<std::mutex> lock(mutex_);
  return added_;
}

ControlledEngine::ControlledEngine(const Translator& translator,
                                   EngineControl& control)
    : engine_(translator), translator_(translator), control_(control) {
  std::lock_guard<std::mutex> lock(control_.mutex_);
  gated_ = control_.gate_new_engines_;
  index_ = control_.added_.size();
  control_.added_.emplace_back();
}

std::vector<int64_t> ControlledEngine::Add(
    const std::vector<EncodedSource>& sources) {
  {
    std::lock_guard<std::mutex> lock(control_.mutex_);
    // Before the real engine adds anything, as Add's contract wants.
    for (const EncodedSource& source : sources) {
      if (control_.refusal_ && control_.refusal_(translator_, source)) {
        throw std::runtime_error("engine failure injected by the test");
      }
    }
    std::vector<EncodedSource>& added = control_.added_[index_];
    added.insert(added.end(), sources.begin(), sources.end());
  }
  return engine_.Add(sources);
}

std::vector<DecodeEngine::Finished> ControlledEngine::Step() {
  if (gated_) {
    std::unique_lock<std::mutex> lock(control_.mutex_);
    ++control_.held_steps_;
    control_.changed_.notify_all();
    control_.changed_.wait(lock, [this] { return control_.gate_open_; });
    --control_.held_steps_;
  }
  return engine_.Step();
}

void ControlledEngine::Remove(const std::vector<int64_t>& handles) {
  engine_.Remove(handles);
}

}  // namespace fanyi::testing_util
