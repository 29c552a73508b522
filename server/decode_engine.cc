#include "server/decode_engine.h"

namespace fanyi {

// Out of line so the vtable has one home.
DecodeEngine::~DecodeEngine() = default;

}  // namespace fanyi
