#include "server/tls_files.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fanyi {
namespace {

// Owning pointers for the OpenSSL objects the checks create.
struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;

// The whole of `path`; `role` (the flag's name) prefixes errors.
std::string ReadFile(const std::string& path, const std::string& role) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(role + " file " + path + ": cannot open");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) {
    throw std::runtime_error(role + " file " + path + ": cannot read");
  }
  return contents.str();
}

BioPtr MemoryBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// The first certificate of a PEM file's contents; throws when there is none.
// gRPC would only log a failed parse and refuse connections later, so
// problems are found here, where the file can be named.
X509Ptr FirstCertificate(const std::string& pem, const std::string& path,
                         const std::string& role) {
  BioPtr bio = MemoryBio(pem);
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    throw std::runtime_error(role + " file " + path +
                             ": no PEM certificate in it");
  }
  return cert;
}

// Reads a certificate and its key and checks that they belong together.
void ReadCertificateAndKey(const TlsFiles& files, std::string* cert_pem,
                           std::string* key_pem) {
  *cert_pem = ReadFile(files.cert, "tls_cert");
  *key_pem = ReadFile(files.key, "tls_key");
  X509Ptr cert = FirstCertificate(*cert_pem, files.cert, "tls_cert");
  BioPtr bio = MemoryBio(*key_pem);
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    throw std::runtime_error("tls_key file " + files.key +
                             ": no unencrypted PEM private key in it");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    throw std::runtime_error("tls_key file " + files.key +
                             ": does not match the certificate in " +
                             files.cert);
  }
}

// A CA file's contents, checked to hold a certificate.
std::string ReadCaFile(const std::string& path, const std::string& role) {
  std::string pem = ReadFile(path, role);
  FirstCertificate(pem, path, role);
  return pem;
}

}  // namespace

std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(
    const TlsFiles& files) {
  if (files.cert.empty() && files.key.empty() && files.ca.empty()) {
    return grpc::InsecureServerCredentials();
  }
  if (files.cert.empty() || files.key.empty()) {
    throw std::invalid_argument(
        "TLS needs both tls_cert and tls_key (tls_client_ca only adds "
        "client-certificate verification to them)");
  }
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ReadCertificateAndKey(files, &pair.cert_chain, &pair.private_key);
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(pair);
  if (!files.ca.empty()) {
    options.pem_root_certs = ReadCaFile(files.ca, "tls_client_ca");
    options.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> MakeChannelCredentials(
    const TlsFiles& files, bool use_tls) {
  if (!use_tls && files.cert.empty() && files.key.empty() && files.ca.empty()) {
    return grpc::InsecureChannelCredentials();
  }
  if (files.cert.empty() != files.key.empty()) {
    throw std::invalid_argument(
        "a client certificate needs both tls_cert and tls_key");
  }
  grpc::SslCredentialsOptions options;
  if (!files.ca.empty()) {
    options.pem_root_certs = ReadCaFile(files.ca, "tls_ca");
  }
  if (!files.cert.empty()) {
    ReadCertificateAndKey(files, &options.pem_cert_chain,
                          &options.pem_private_key);
  }
  return grpc::SslCredentials(options);
}

}  // namespace fanyi
