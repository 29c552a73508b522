#ifndef FANYI_TESTS_CONTROLLED_ENGINE_H_
#define FANYI_TESTS_CONTROLLED_ENGINE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "common/pipeline/translator.h"
#include "server/decode_engine.h"
#include "server/translator_decode_engine.h"

namespace fanyi::testing_util {

// What a test does to a server's decode engines (ControlledEngine), which
// decode with the real model underneath: it makes them refuse sentences, or
// holds their steps at a gate, and sees which engine was given what.
// Thread-safe.
class EngineControl {
 public:
  // Whether an engine of `translator` refuses `source`: the Add holding it
  // throws, adding nothing.
  using Refusal = std::function<bool(const Translator& translator,
                                     const EncodedSource& source)>;

  // An engine decoding with `translator` under this control, for
  // ServerOptions::engine_factory. The control must outlive it.
  std::unique_ptr<DecodeEngine> NewEngine(const Translator& translator);

  // From now on engines refuse what `refusal` says (empty: nothing).
  void SetRefusal(Refusal refusal);
  // Engines built from now on have their steps held while the gate is
  // closed (true), or not (false).
  void GateNewEngines(bool gated);
  // Closes or opens the gate; opening lets the held steps run.
  void SetGateOpen(bool open);
  // Waits until `steps` steps are held at the gate; false after 60 s.
  bool WaitForHeldSteps(int steps);
  // The sources each engine was given so far, by engine in the order they
  // were built.
  std::vector<std::vector<EncodedSource>> AddedByEngine();

 private:
  friend class ControlledEngine;

  std::mutex mutex_;
  std::condition_variable changed_;  // Signalled on any change below.
  // Guarded by mutex_.
  Refusal refusal_;
  bool gate_new_engines_ = false;
  bool gate_open_ = true;
  int held_steps_ = 0;  // Steps waiting at the closed gate.
  std::vector<std::vector<EncodedSource>> added_;  // By engine.
};

// A TranslatorDecodeEngine that an EngineControl can make refuse sentences
// and hold steps. Driven by one thread, as every engine is.
class ControlledEngine final : public DecodeEngine {
 public:
  ControlledEngine(const Translator& translator, EngineControl& control);

  std::vector<int64_t> Add(const std::vector<EncodedSource>& sources) override;
  std::vector<Finished> Step() override;
  void Remove(const std::vector<int64_t>& handles) override;

 private:
  TranslatorDecodeEngine engine_;
  const Translator& translator_;
  EngineControl& control_;
  bool gated_ = false;
  size_t index_ = 0;  // In control_.added_.
};

}  // namespace fanyi::testing_util

#endif  // FANYI_TESTS_CONTROLLED_ENGINE_H_
