#include "client/client_tls_flags.h"

#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(bool, tls, false,
          "Connect over TLS (implied by the other --tls_* flags); without "
          "--tls_ca the system's root certificates verify the server.");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA certificate that signed the server's certificate.");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate, for servers that verify clients.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");

namespace fanyi {

ClientTls ClientTlsFromFlags() {
  ClientTls tls;
  tls.files.ca = absl::GetFlag(FLAGS_tls_ca);
  tls.files.cert = absl::GetFlag(FLAGS_tls_cert);
  tls.files.key = absl::GetFlag(FLAGS_tls_key);
  tls.use_tls = absl::GetFlag(FLAGS_tls);
  return tls;
}

}  // namespace fanyi
