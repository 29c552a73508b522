#ifndef FANYI_SERVER_TLS_FILES_H_
#define FANYI_SERVER_TLS_FILES_H_

#include <memory>
#include <string>

#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace fanyi {

// PEM files that set up TLS on one end of a gRPC connection. Paths; an empty
// path means the file is not used.
struct TlsFiles {
  std::string cert;  // This end's certificate chain. A server needs it (with
                     // `key`) to speak TLS; a client presents it when the
                     // server verifies client certificates.
  std::string key;   // The private key of `cert`.
  std::string ca;    // Server: the CA that must have signed every client's
                     // certificate (clients without one are refused).
                     // Client: the CA that signed the server's certificate;
                     // empty uses the system's root certificates.
};

// Credentials for a gRPC server: plaintext when `files` is all empty, TLS
// with `cert` and `key` otherwise, and with `ca` also requiring and verifying
// a client certificate. Reads and checks every file first: throws
// std::invalid_argument for an incomplete set (a key without a certificate)
// and std::runtime_error naming the file that is unreadable, holds no PEM
// certificate or key, or whose key does not match the certificate.
std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(
    const TlsFiles& files);

// Credentials for a gRPC channel: plaintext unless `use_tls` is true or a
// file is given; with `cert` and `key` the client presents a certificate.
// Throws like MakeServerCredentials.
std::shared_ptr<grpc::ChannelCredentials> MakeChannelCredentials(
    const TlsFiles& files, bool use_tls);

}  // namespace fanyi

#endif  // FANYI_SERVER_TLS_FILES_H_
