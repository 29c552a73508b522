// Enforces a minimum stack size for threads created with an explicit one.
//
// Why: prometheus-cpp's Exposer runs on civetweb, and Debian's libcivetweb
// sets a 100 KiB stack on each of its threads with
// pthread_attr_setstacksize(). glibc carves a thread's static TLS out of its
// stack, and once LibTorch, glog and OpenBLAS are loaded their static TLS
// alone is about 108 KiB, so pthread_create() fails with EINVAL and civetweb
// gives up with an error that reads like a port-binding failure
// ("null context when constructing CivetServer").
//
// How: this file defines pthread_attr_setstacksize in the executable, which
// the dynamic linker then prefers over glibc's for every shared library
// (symbol interposition, as with LD_PRELOAD). It forwards to the real
// function with the size raised to at least kMinThreadStackBytes. Threads
// that never set a size (std::thread, gRPC) are unaffected: they get the
// default of 8 MiB. The symbol must land in the executable and be exported
// (see thread_stack_floor in server/CMakeLists.txt); a static library would
// drop this object file since nothing references it. ld already exports it
// because linked shared libraries reference it; the explicit
// --export-dynamic-symbol keeps that true under --as-needed and link order.
//
// Measured on Debian 12 (LibTorch 1.13, civetweb 1.15): fanyi-server linked
// without this file exits with "cannot serve metrics on 127.0.0.1:0: null
// context when constructing CivetServer. Possible problem binding to port.";
// with it the exposer starts. A program linking only prometheus-cpp (no
// LibTorch) starts the exposer either way.

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

namespace {

constexpr size_t kMinThreadStackBytes = size_t{1} << 20;  // 1 MiB.

using SetStackSizeFunction = int (*)(pthread_attr_t*, size_t);

SetStackSizeFunction RealSetStackSize() {
  // Thread-safe one-time lookup of the next definition (glibc's).
  static const auto real = reinterpret_cast<SetStackSizeFunction>(
      dlsym(RTLD_NEXT, "pthread_attr_setstacksize"));
  return real;
}

}  // namespace

extern "C" int pthread_attr_setstacksize(pthread_attr_t* attr,
                                         size_t stack_size) {
  const SetStackSizeFunction real = RealSetStackSize();
  if (real == nullptr) return ENOSYS;
  return real(attr, std::max(stack_size, kMinThreadStackBytes));
}
