// TLS on the gRPC port: a throwaway CA, server and client certificates made
// with the openssl command at test time; a real TranslationServer (and the
// real binaries) on 127.0.0.1 spoken to over gRPC with and without them.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "client/load_generator.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/tls_files.h"
#include "server/translation_server.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using testing_util::BinaryPath;
using testing_util::CommandResult;
using testing_util::RunCommand;

// Runs a shell command in `directory`; throws with its output on failure.
void RunOrThrow(const std::string& directory, const std::string& command) {
  const CommandResult result =
      RunCommand("cd '" + directory + "' && " + command + " 2>&1");
  if (result.exit_code != 0) {
    throw std::runtime_error(command + " failed: " + result.output);
  }
}

// A fresh CA ("<name>-ca.pem", "<name>-ca.key") in `directory`.
void MakeCa(const std::string& directory, const std::string& name) {
  RunOrThrow(directory,
             "openssl req -x509 -newkey ec -pkeyopt "
             "ec_paramgen_curve:prime256v1 -nodes -days 2 -subj '/CN=" +
                 name +
                 " test CA' -addext basicConstraints=critical,CA:TRUE "
                 "-addext keyUsage=critical,keyCertSign,cRLSign -keyout " +
                 name + "-ca.key -out " + name + "-ca.pem");
}

// A key and a certificate "<name>.key", "<name>.pem" signed by the CA
// `ca_name`, valid for 127.0.0.1 and localhost.
void MakeSignedCertificate(const std::string& directory,
                           const std::string& ca_name,
                           const std::string& name) {
  std::ofstream(directory + "/" + name + ".ext")
      << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
  RunOrThrow(directory,
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
             "-nodes -subj '/CN=" +
                 name + "' -keyout " + name + ".key -out " + name + ".csr");
  RunOrThrow(directory, "openssl x509 -req -days 2 -in " + name + ".csr -CA " +
                            ca_name + "-ca.pem -CAkey " + ca_name +
                            "-ca.key -CAcreateserial -extfile " + name +
                            ".ext -out " + name + ".pem");
}

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (model_dir_ != nullptr) return;  // Once per process (--gtest_repeat).
    model_dir_ = new std::string(testing_util::TrainTinyModel(
        testing_util::MakeTempDir("tls_test_model")));
    pki_ = new std::string(testing_util::MakeTempDir("tls_test_pki"));
    MakeCa(*pki_, "good");
    MakeCa(*pki_, "other");
    MakeSignedCertificate(*pki_, "good", "server");
    MakeSignedCertificate(*pki_, "good", "client");
    MakeSignedCertificate(*pki_, "other", "stranger");
  }

  static std::string Pki(const std::string& file) { return *pki_ + "/" + file; }

  // A TLS server; with `verify_clients` it requires client certificates
  // signed by the "good" CA.
  static ServerOptions Options(bool verify_clients) {
    ServerOptions options;
    options.model_dir = *model_dir_;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.threads = 1;
    options.device = "cpu";
    options.tls_cert = Pki("server.pem");
    options.tls_key = Pki("server.key");
    if (verify_clients) options.tls_client_ca = Pki("good-ca.pem");
    return options;
  }

  // Client TLS files: the "good" CA, and `client` (a name made by
  // MakeSignedCertificate, or "" for none) as the client certificate.
  static TlsFiles ClientFiles(const std::string& client) {
    TlsFiles files;
    files.ca = Pki("good-ca.pem");
    if (!client.empty()) {
      files.cert = Pki(client + ".pem");
      files.key = Pki(client + ".key");
    }
    return files;
  }

  // Translates "I like tea." over a fresh channel with `credentials`.
  static grpc::Status Translate(
      int port, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
      v1::TranslateResponse* response) {
    auto stub = v1::Translator::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port), credentials));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    v1::TranslateRequest request;
    request.set_text("I like tea.");
    return stub->Translate(&context, request, response);
  }

  static std::string* model_dir_;
  static std::string* pki_;
};

std::string* TlsTest::model_dir_ = nullptr;
std::string* TlsTest::pki_ = nullptr;

TEST_F(TlsTest, ClientTrustingTheCaTranslatesAndPlaintextClientFails) {
  auto server = TranslationServer::Start(Options(/*verify_clients=*/false));
  v1::TranslateResponse response;
  const grpc::Status tls_status =
      Translate(server->grpc_port(),
                MakeChannelCredentials(ClientFiles(""), false), &response);
  ASSERT_TRUE(tls_status.ok()) << tls_status.error_message();
  EXPECT_FALSE(response.translation().text().empty());

  const grpc::Status plaintext_status = Translate(
      server->grpc_port(), grpc::InsecureChannelCredentials(), &response);
  EXPECT_EQ(plaintext_status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << plaintext_status.error_message();

  // A client that does not trust the server's CA (the other one) refuses
  // the server.
  TlsFiles wrong_ca;
  wrong_ca.ca = Pki("other-ca.pem");
  const grpc::Status untrusted_status = Translate(
      server->grpc_port(), MakeChannelCredentials(wrong_ca, false), &response);
  EXPECT_EQ(untrusted_status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << untrusted_status.error_message();
}

TEST_F(TlsTest, ClientCertificatesAreRequiredAndVerified) {
  auto server = TranslationServer::Start(Options(/*verify_clients=*/true));
  const int port = server->grpc_port();
  v1::TranslateResponse response;
  const grpc::Status with_cert = Translate(
      port, MakeChannelCredentials(ClientFiles("client"), false), &response);
  ASSERT_TRUE(with_cert.ok()) << with_cert.error_message();
  EXPECT_FALSE(response.translation().text().empty());

  const grpc::Status without_cert = Translate(
      port, MakeChannelCredentials(ClientFiles(""), false), &response);
  EXPECT_EQ(without_cert.error_code(), grpc::StatusCode::UNAVAILABLE)
      << without_cert.error_message();

  const grpc::Status other_ca_cert = Translate(
      port, MakeChannelCredentials(ClientFiles("stranger"), false), &response);
  EXPECT_EQ(other_ca_cert.error_code(), grpc::StatusCode::UNAVAILABLE)
      << other_ca_cert.error_message();

  const grpc::Status plaintext =
      Translate(port, grpc::InsecureChannelCredentials(), &response);
  EXPECT_EQ(plaintext.error_code(), grpc::StatusCode::UNAVAILABLE);

  // The refusals did not disturb the server.
  const grpc::Status again = Translate(
      port, MakeChannelCredentials(ClientFiles("client"), false), &response);
  EXPECT_TRUE(again.ok()) << again.error_message();
}

TEST_F(TlsTest, UnusableTlsFilesAreStartupErrorsNamingTheFile) {
  const std::string not_pem = Pki("not-pem.txt");
  std::ofstream(not_pem) << "this is not a certificate\n";
  struct Case {
    std::string name;
    std::string cert, key, client_ca;
    std::string named_file;  // Must appear in the error message.
  };
  const std::vector<Case> cases = {
      {"missing cert", Pki("absent.pem"), Pki("server.key"), "",
       Pki("absent.pem")},
      {"missing key", Pki("server.pem"), Pki("absent.key"), "",
       Pki("absent.key")},
      {"cert not PEM", not_pem, Pki("server.key"), "", not_pem},
      {"key not PEM", Pki("server.pem"), not_pem, "", not_pem},
      {"key of another certificate", Pki("server.pem"), Pki("client.key"), "",
       Pki("client.key")},
      {"missing client CA", Pki("server.pem"), Pki("server.key"),
       Pki("absent-ca.pem"), Pki("absent-ca.pem")},
      {"client CA not PEM", Pki("server.pem"), Pki("server.key"), not_pem,
       not_pem},
  };
  for (const Case& test_case : cases) {
    ServerOptions options = Options(false);
    options.tls_cert = test_case.cert;
    options.tls_key = test_case.key;
    options.tls_client_ca = test_case.client_ca;
    try {
      TranslationServer::Start(options);
      ADD_FAILURE() << test_case.name << ": the server started";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(test_case.named_file),
                std::string::npos)
          << test_case.name << ": " << e.what();
    }
  }

  ServerOptions key_only = Options(false);
  key_only.tls_cert.clear();
  EXPECT_THROW(TranslationServer::Start(key_only), std::invalid_argument);

  // The binary: a clear message naming the file, non-zero exit.
  const CommandResult result = RunCommand(
      BinaryPath("fanyi-server") + " --model_dir=" + *model_dir_ +
      " --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0"
      " --http_listen=127.0.0.1:0 --tls_cert=" +
      Pki("absent.pem") + " --tls_key=" + Pki("server.key") + " 2>&1");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find(Pki("absent.pem")), std::string::npos)
      << result.output;
}

// fanyi-client and fanyi-loadgen speak TLS with their --tls_* flags.
TEST_F(TlsTest, ClientAndLoadgenBinariesUseTlsFlags) {
  auto server = TranslationServer::Start(Options(/*verify_clients=*/true));
  const std::string server_flag =
      " --server=127.0.0.1:" + std::to_string(server->grpc_port());
  const std::string client_flags = " --tls_ca=" + Pki("good-ca.pem") +
                                   " --tls_cert=" + Pki("client.pem") +
                                   " --tls_key=" + Pki("client.key");

  const CommandResult client = RunCommand(
      BinaryPath("fanyi-client") + server_flag + client_flags + " hello 2>&1");
  EXPECT_EQ(client.exit_code, 0) << client.output;
  EXPECT_FALSE(client.output.empty());

  const CommandResult no_client_cert =
      RunCommand(BinaryPath("fanyi-client") + server_flag + " --tls_ca=" +
                 Pki("good-ca.pem") + " --timeout_ms=5000 hello 2>&1");
  EXPECT_NE(no_client_cert.exit_code, 0);
  EXPECT_NE(no_client_cert.output.find("UNAVAILABLE"), std::string::npos)
      << no_client_cert.output;

  const CommandResult bad_file =
      RunCommand(BinaryPath("fanyi-client") + server_flag +
                 " --tls_ca=" + Pki("absent-ca.pem") + " hello 2>&1");
  EXPECT_NE(bad_file.exit_code, 0);
  EXPECT_NE(bad_file.output.find(Pki("absent-ca.pem")), std::string::npos)
      << bad_file.output;

  const std::string texts = Pki("texts.txt");
  std::ofstream(texts) << "hello\nI like tea.\n";
  const CommandResult loadgen =
      RunCommand(BinaryPath("fanyi-loadgen") + server_flag + client_flags +
                 " --input=" + texts + " --requests=20 --concurrency=4 2>&1");
  EXPECT_EQ(loadgen.exit_code, 0) << loadgen.output;
  EXPECT_NE(loadgen.output.find("OK 20"), std::string::npos) << loadgen.output;
}

}  // namespace
}  // namespace fanyi
