#include "trainer/rendezvous.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace fanyi {
namespace {

// The integer in environment variable `name`, within [low, high]; `fallback`
// when it is unset.
int IntegerVariable(const char* name, int fallback, int low, int high) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < low || value > high) {
    throw std::invalid_argument(
        std::string(name) + "=" + text + " is not an integer in [" +
        std::to_string(low) + ", " + std::to_string(high) + "]");
  }
  return static_cast<int>(value);
}

}  // namespace

RendezvousEnvironment RendezvousEnvironment::FromEnvironment() {
  RendezvousEnvironment environment;
  environment.world_size = IntegerVariable("WORLD_SIZE", 1, 1, 1 << 16);
  environment.rank = IntegerVariable("RANK", 0, 0, environment.world_size - 1);
  environment.master_port = IntegerVariable("MASTER_PORT", 29500, 1, 65535);
  const char* address = std::getenv("MASTER_ADDR");
  if (address != nullptr && *address != '\0') {
    environment.master_address = address;
  } else if (environment.world_size > 1) {
    throw std::invalid_argument("MASTER_ADDR is not set, and WORLD_SIZE is " +
                                std::to_string(environment.world_size));
  }
  return environment;
}

}  // namespace fanyi
