#ifndef FANYI_CLIENT_CLIENT_TLS_FLAGS_H_
#define FANYI_CLIENT_CLIENT_TLS_FLAGS_H_

#include "server/tls_files.h"

namespace fanyi {

// What the command-line clients' TLS flags (--tls, --tls_ca, --tls_cert,
// --tls_key; defined once, in client_tls_flags.cc, for fanyi-client and
// fanyi-loadgen) asked for.
struct ClientTls {
  TlsFiles files;        // All empty: plaintext unless use_tls.
  bool use_tls = false;  // TLS even without files (system roots).
};

// The flags' values; call after absl::ParseCommandLine.
ClientTls ClientTlsFromFlags();

}  // namespace fanyi

#endif  // FANYI_CLIENT_CLIENT_TLS_FLAGS_H_
