// API keys in a real SQLite file: the store on its own (fanyi's file and
// LibreTranslate's, hostile files), then a real server on 127.0.0.1 with a
// really trained tiny model, its keys managed by the real fanyi-keys while
// it runs: LibreTranslate's answers for unknown, missing and required
// keys, each key's own requests a minute and characters a day, and
// clients behind a trusted proxy told apart.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "server/http/api_access.h"
#include "server/http/api_key_store.h"
#include "server/translation_server.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using testing_util::HttpAnswer;

// Runs `sql` on the SQLite file `path` with SQLite's own library, as
// another program would.
void RunSql(const std::string& path, const std::string& sql) {
  sqlite3* database = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &database), SQLITE_OK);
  char* error = nullptr;
  const int status =
      sqlite3_exec(database, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(database);
  ASSERT_EQ(status, SQLITE_OK) << message;
}

std::string NewFile(const std::string& name) {
  return testing_util::MakeTempDir("api_keys_test") + "/" + name;
}

TEST(ApiKeyStoreTest, KeepsKeysWithTheirLimitsAndSeesOtherWritersAtOnce) {
  const std::string path = NewFile("keys.db");
  ApiKeyStore server(path);  // Creates the file.
  ApiKeyStore manager(path);
  EXPECT_FALSE(server.Find("alpha"));
  ApiKeyLimits limits;
  limits.requests_per_minute = 5;
  limits.chars_per_day = 1000;
  manager.Put("alpha", limits);
  manager.Put("beta", {});
  EXPECT_EQ(server.Find("alpha"), limits);
  EXPECT_EQ(server.Find("beta"), ApiKeyLimits{});  // All defaults.
  limits.chars_per_request = 0;
  limits.requests_per_minute.reset();
  manager.Put("alpha", limits);  // Replaced.
  EXPECT_EQ(server.Find("alpha"), limits);
  const std::vector<ApiKeyEntry> listed = server.List();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].key, "alpha");
  EXPECT_EQ(listed[1].key, "beta");
  EXPECT_TRUE(manager.Remove("alpha"));
  EXPECT_FALSE(manager.Remove("alpha"));
  EXPECT_FALSE(server.Find("alpha"));
  EXPECT_TRUE(server.Find("beta"));
}

TEST(ApiKeyStoreTest, ReadsLibreTranslatesOwnFileAndKeepsItsRules) {
  const std::string path = NewFile("api_keys.db");
  // The table as LibreTranslate's api_keys.py creates it, and keys as its
  // `ltmanage keys add` writes them (char_limit NULL for none).
  RunSql(path,
         "CREATE TABLE IF NOT EXISTS api_keys (\"api_key\" TEXT NOT NULL, "
         "\"req_limit\" INTEGER NOT NULL, \"char_limit\" INTEGER DEFAULT "
         "NULL, PRIMARY KEY(\"api_key\"));"
         "INSERT INTO api_keys VALUES ('lt-one', 120, NULL);"
         "INSERT INTO api_keys VALUES ('lt-two', 30, 500);");
  ApiKeyStore store(path);
  ApiKeyLimits one;
  one.requests_per_minute = 120;
  EXPECT_EQ(store.Find("lt-one"), one);
  ApiKeyLimits two;
  two.requests_per_minute = 30;
  two.chars_per_request = 500;
  EXPECT_EQ(store.Find("lt-two"), two);
  // Its request limit may not be NULL there: said, and nothing changes.
  try {
    store.Put("new", {});
    ADD_FAILURE() << "a key without a request limit was added";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("requests_per_minute"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(store.Find("new"));
  ApiKeyLimits daily;
  daily.requests_per_minute = 10;
  daily.chars_per_day = 2000;
  store.Put("new", daily);
  EXPECT_EQ(store.Find("new"), daily);
  // LibreTranslate's columns still read as it reads them.
  RunSql(path,
         "CREATE TABLE seen AS SELECT req_limit, char_limit FROM api_keys "
         "WHERE api_key = 'new'");
}

TEST(ApiKeyStoreTest, RefusesBadKeysLimitsAndFiles) {
  const std::string path = NewFile("keys.db");
  ApiKeyStore store(path);
  for (const std::string& key :
       {std::string(), std::string("with space"), std::string("tab\t"),
        std::string(kMaxApiKeyBytes + 1, 'k'), std::string("caf\xc3\xa9")}) {
    EXPECT_THROW(store.Put(key, {}), std::invalid_argument) << key;
  }
  ApiKeyLimits negative;
  negative.chars_per_day = -1;
  EXPECT_THROW(store.Put("key", negative), std::invalid_argument);
  EXPECT_FALSE(store.Find(std::string(1 << 20, 'k')));
  // Written by hand: a limit that is not a whole number from 0.
  RunSql(path,
         "INSERT INTO api_keys VALUES ('text', 'many', NULL, NULL);"
         "INSERT INTO api_keys VALUES ('below', -5, NULL, NULL);"
         "INSERT INTO api_keys VALUES ('real', 2.5, NULL, NULL);");
  for (const char* key : {"text", "below", "real"}) {
    try {
      store.Find(key);
      ADD_FAILURE() << key << " was read";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("req_limit"), std::string::npos);
    }
  }
  // Not a keys table: a view, a table without LibreTranslate's columns, a
  // file that is not SQLite.
  const std::string view = NewFile("view.db");
  RunSql(view, "CREATE VIEW api_keys AS SELECT 'k' AS api_key, 1 AS req_limit");
  EXPECT_THROW(ApiKeyStore{view}, std::runtime_error);
  const std::string columns = NewFile("columns.db");
  RunSql(columns, "CREATE TABLE api_keys (key TEXT)");
  EXPECT_THROW(ApiKeyStore{columns}, std::runtime_error);
  const std::string text = NewFile("text.db");
  { std::ofstream(text) << "not a database, though long enough to look at\n"; }
  EXPECT_THROW(ApiKeyStore{text}, std::runtime_error);
}

class ApiKeysServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (model_dir_ == nullptr) {
      model_dir_ = new std::string(testing_util::TrainTinyModel(
          testing_util::MakeTempDir("api_keys_test_model")));
    }
  }

  static ServerOptions Options(const std::string& keys_db) {
    ServerOptions options;
    options.model_dir = *model_dir_;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.http_listen = "127.0.0.1:0";
    options.threads = 1;
    options.device = "cpu";
    options.api_keys_db = keys_db;
    return options;
  }

  // fanyi-keys --db `db` `arguments`; its exit code and output.
  static testing_util::CommandResult Keys(const std::string& db,
                                          const std::string& arguments) {
    return testing_util::RunCommand(testing_util::BinaryPath("fanyi-keys") +
                                    " --db '" + db + "' " + arguments +
                                    " 2>&1");
  }

  // POST /translate of `text` with `key` (none when empty).
  static HttpAnswer Translate(int port, const std::string& key,
                              const std::string& text = "Hello.") {
    nlohmann::json body = {{"q", text}, {"source", "en"}, {"target", "zh"}};
    if (!key.empty()) body["api_key"] = key;
    return testing_util::HttpPostJson(port, "/translate", body.dump());
  }

  static std::string Error(const HttpAnswer& answer) {
    return nlohmann::json::parse(answer.body).value("error", "");
  }

  static std::string* model_dir_;
};

std::string* ApiKeysServerTest::model_dir_ = nullptr;

TEST_F(ApiKeysServerTest, KeysAsLibreTranslateHasThemManagedWhileServing) {
  const std::string db = NewFile("keys.db");
  ServerOptions options = Options(db);
  options.http_requests_per_minute = 5;  // The anonymous default.
  std::unique_ptr<TranslationServer> server = TranslationServer::Start(options);
  const int port = server->http_port();
  // The file exists now; keys are added while the server runs.
  const testing_util::CommandResult added =
      Keys(db, "add --requests_per_minute 2");
  ASSERT_EQ(added.exit_code, 0) << added.output;
  const std::string generated = added.output.substr(0, added.output.find('\n'));
  EXPECT_EQ(generated.size(), 36u) << generated;  // A UUID, as ltmanage's.
  ASSERT_EQ(Keys(db, "add team --chars_per_day 20 --requests_per_minute 10")
                .exit_code,
            0);
  ASSERT_EQ(Keys(db, "add short --chars_per_request 5").exit_code, 0);
  const testing_util::CommandResult listed = Keys(db, "list");
  EXPECT_NE(listed.output.find("team requests_per_minute=10 chars_per_day=20 "
                               "chars_per_request=default"),
            std::string::npos)
      << listed.output;

  // An unknown key: 403; no key: served at the defaults.
  EXPECT_EQ(Translate(port, "made-up").status, 403);
  EXPECT_EQ(Error(Translate(port, "made-up")), "Invalid API key");
  EXPECT_EQ(Translate(port, "").status, 200);
  const nlohmann::json settings =
      nlohmann::json::parse(testing_util::HttpGet(port, "/frontend/settings"));
  EXPECT_EQ(settings["apiKeys"], true);
  EXPECT_EQ(settings["keyRequired"], false);

  // The generated key: its own 2 a minute, not the default 5.
  EXPECT_EQ(Translate(port, generated).status, 200);
  EXPECT_EQ(Translate(port, generated).status, 200);
  const HttpAnswer slowed = Translate(port, generated);
  EXPECT_EQ(slowed.status, 429);
  EXPECT_EQ(Error(slowed), "Slowdown: 2 per 1 minute");
  // Raised while serving: the next request is counted under the new limit.
  ASSERT_EQ(Keys(db, "set-limits " + generated + " --requests_per_minute 50")
                .exit_code,
            0);
  EXPECT_EQ(Translate(port, generated).status, 200);

  // The anonymous default: 5 a minute per address, which the two made-up
  // keys and the key-less request above spent of too.
  EXPECT_EQ(Translate(port, "").status, 200);
  EXPECT_EQ(Translate(port, "").status, 200);
  EXPECT_EQ(Error(Translate(port, "")), "Slowdown: 5 per 1 minute");

  // "team": 20 characters a day, 10 requests a minute.
  EXPECT_EQ(Translate(port, "team", "Good morning.").status, 200);  // 13.
  const HttpAnswer spent = Translate(port, "team", "Thank you.");   // 10.
  EXPECT_EQ(spent.status, 429);
  EXPECT_EQ(Error(spent), "Slowdown: 20 characters per 1 day");
  EXPECT_EQ(Translate(port, "team", "Hi.").status, 200);   // 3 of 7 left.
  EXPECT_EQ(Translate(port, "team", "Yes.").status, 200);  // The last 4.
  EXPECT_EQ(Translate(port, "team", "No.").status, 429);

  // LibreTranslate's char_limit: characters a request.
  const HttpAnswer long_text = Translate(port, "short", "Hello.");
  EXPECT_EQ(long_text.status, 400);
  EXPECT_EQ(Error(long_text),
            "Invalid request: request (6) exceeds text limit (5)");
  EXPECT_EQ(Translate(port, "short", "Hi.").status, 200);

  // Removed while serving: refused from the next request on (by the
  // address's limit, which the key-less requests above spent: a key it
  // does not know counts against its sender's address).
  ASSERT_EQ(Keys(db, "remove team").exit_code, 0);
  EXPECT_EQ(Error(Translate(port, "team", "Hi.")), "Slowdown: 5 per 1 minute");
  EXPECT_NE(Keys(db, "remove team").exit_code, 0);
}

TEST_F(ApiKeysServerTest, ARequiredKeyRefusesKeylessRequestsAsLibreTranslate) {
  const std::string db = NewFile("keys.db");
  ASSERT_EQ(Keys(db, "add member").exit_code, 0);
  ServerOptions options = Options(db);
  options.require_api_key = true;
  std::unique_ptr<TranslationServer> server = TranslationServer::Start(options);
  const int port = server->http_port();
  const HttpAnswer keyless = Translate(port, "");
  EXPECT_EQ(keyless.status, 400);
  EXPECT_EQ(Error(keyless),
            "Please contact the server operator to get an API key");
  EXPECT_EQ(
      testing_util::HttpPostJson(port, "/detect", R"({"q": "Hello."})").status,
      400);
  EXPECT_EQ(Translate(port, "member").status, 200);
  EXPECT_EQ(Translate(port, "stranger").status, 403);
  EXPECT_EQ(nlohmann::json::parse(testing_util::HttpGet(
                port, "/frontend/settings"))["keyRequired"],
            true);
  // Bad flags and files are refused at start, naming what is wrong.
  EXPECT_NE(Keys(db, "add x --chars_per_day lots").output.find("chars_per_day"),
            std::string::npos);
  EXPECT_NE(Keys(db, "add 'two words'").exit_code, 0);
  ServerOptions no_db = Options("");
  no_db.require_api_key = true;
  EXPECT_THROW(TranslationServer::Start(no_db), std::invalid_argument);
}

TEST_F(ApiKeysServerTest, HourAndDayLimitsHoldAndRepeatedViolationsBan) {
  const std::string db = NewFile("keys.db");
  ASSERT_EQ(Keys(db, "add own --requests_per_minute 100").exit_code, 0);
  ServerOptions options = Options(db);
  options.http_requests_per_minute = 10;
  options.http_requests_per_hour = 3;
  options.http_requests_per_day = 50;
  options.http_ban_after = 2;
  std::unique_ptr<TranslationServer> server = TranslationServer::Start(options);
  const int port = server->http_port();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Translate(port, "").status, 200) << i;
  const HttpAnswer hourly = Translate(port, "");
  EXPECT_EQ(hourly.status, 429);
  EXPECT_EQ(Error(hourly), "Slowdown: 3 per 1 hour");
  // A key with its own requests a minute keeps to that alone.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Translate(port, "own").status, 200);
  // The second violation bans the address, whatever key it sends.
  EXPECT_EQ(Translate(port, "").status, 429);
  const HttpAnswer banned = Translate(port, "own");
  EXPECT_EQ(banned.status, 403);
  EXPECT_EQ(Error(banned), "Too many request limits violations");
  EXPECT_EQ(
      testing_util::HttpPostJson(port, "/detect", R"({"q": "Hello."})").status,
      403);
  // Routes without a body are not limited.
  EXPECT_NO_THROW(testing_util::HttpGet(port, "/languages"));
}

TEST_F(ApiKeysServerTest, LibreTranslatesRulesForGuessesLimitsAndBadFiles) {
  const std::string db = NewFile("api_keys.db");
  // LibreTranslate's own file: a suspended key (req_limit 0), one of 5
  // characters a text, and one whose limit is not a number.
  RunSql(db,
         "CREATE TABLE IF NOT EXISTS api_keys (\"api_key\" TEXT NOT NULL, "
         "\"req_limit\" INTEGER NOT NULL, \"char_limit\" INTEGER DEFAULT "
         "NULL, PRIMARY KEY(\"api_key\"));"
         "INSERT INTO api_keys VALUES ('suspended', 0, NULL);"
         "INSERT INTO api_keys VALUES ('short', 100, 5);"
         "INSERT INTO api_keys VALUES ('broken', 'lots', NULL);");
  ServerOptions options = Options(db);
  options.http_requests_per_minute = 3;
  std::unique_ptr<TranslationServer> server = TranslationServer::Start(options);
  const int port = server->http_port();
  const auto post = [port](const nlohmann::json& body) {
    return testing_util::HttpPostJson(port, "/translate", body.dump());
  };
  EXPECT_EQ(Error(Translate(port, "suspended")), "Slowdown: 0 per 1 minute");
  // char_limit holds for each text of a batch, as LibreTranslate's.
  EXPECT_EQ(post({{"q", {"Hi.", "Hey."}},
                  {"source", "en"},
                  {"target", "zh"},
                  {"api_key", "short"}})
                .status,
            200);
  EXPECT_EQ(Error(post({{"q", {"Hi.", "Hello."}},
                        {"source", "en"},
                        {"target", "zh"},
                        {"api_key", "short"}})),
            "Invalid request: request (6) exceeds text limit (5)");
  // A key the file cannot give: 503, the reason (and the file's path) for
  // the operator's log only.
  const HttpAnswer broken = Translate(port, "broken");
  EXPECT_EQ(broken.status, 503);
  EXPECT_EQ(broken.body.find(db), std::string::npos) << broken.body;
  // A key that is not a string is no key: 403, as LibreTranslate.
  EXPECT_EQ(post({{"q", "Hi."},
                  {"source", "en"},
                  {"target", "zh"},
                  {"api_key", 12345}})
                .status,
            403);
  // Guessing keys spends the address's requests: the default 3, of which
  // the broken key's and the number's refusals spent two; then 429.
  int refused = 0, slowed = 0;
  for (int i = 0; i < 6; ++i) {
    const int status = Translate(port, "guess-" + std::to_string(i)).status;
    refused += status == 403;
    slowed += status == 429;
  }
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(slowed, 5);
}

TEST(ApiAccessTest, AnIpv6NetworkOfSlash64IsOneClient) {
  EXPECT_EQ(ClientOfAddress("2001:db8:1:2:aaaa:bbbb:cccc:dddd"),
            "address 2001:db8:1:2::/64");
  EXPECT_EQ(ClientOfAddress("2001:db8:1:2::1"), "address 2001:db8:1:2::/64");
  EXPECT_EQ(ClientOfAddress("198.51.100.7"), "address 198.51.100.7");
  EXPECT_EQ(ClientOfAddress("::ffff:198.51.100.7"),
            "address ::ffff:198.51.100.7");
  EXPECT_EQ(ClientOfAddress("not an address"), "address not an address");
}

TEST(ApiKeyStoreTest, StoresOpeningANewFileAtOnceMakeOneTable) {
  for (int trial = 0; trial < 20; ++trial) {
    const std::string path = NewFile("race.db");
    std::atomic<int> failed{0};
    std::vector<std::thread> openers;
    for (int i = 0; i < 4; ++i) {
      openers.emplace_back([&path, &failed, i] {
        try {
          ApiKeyStore store(path);
          ApiKeyLimits limits;
          limits.requests_per_minute = i;
          store.Put("key-" + std::to_string(i), limits);
        } catch (const std::exception& e) {
          ++failed;
          ADD_FAILURE() << e.what();
        }
      });
    }
    for (std::thread& opener : openers) opener.join();
    ASSERT_EQ(failed.load(), 0) << "trial " << trial;
    EXPECT_EQ(ApiKeyStore(path).List().size(), 4u);
  }
}

TEST_F(ApiKeysServerTest, ClientsBehindATrustedProxyHaveTheirOwnLimits) {
  // POST /translate through a proxy that says the client is `forwarded`.
  const auto translate = [](int port, const std::string& forwarded) {
    const std::string body =
        R"({"q": "Hello.", "source": "en", "target": "zh"})";
    return testing_util::HttpExchange(
        port,
        "POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
        "close\r\nContent-Type: application/json\r\nX-Forwarded-For: " +
            forwarded + "\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\n\r\n" + body);
  };
  ServerOptions options = Options("");
  options.http_requests_per_minute = 1;
  options.trust_forwarded_for = true;  // Loopback is trusted by default.
  {
    std::unique_ptr<TranslationServer> server =
        TranslationServer::Start(options);
    const int port = server->http_port();
    EXPECT_EQ(translate(port, "198.51.100.1").status, 200);
    EXPECT_EQ(translate(port, "198.51.100.1").status, 429);
    EXPECT_EQ(translate(port, "198.51.100.2").status, 200);
    // A client naming itself to the proxy is still the address the proxy
    // saw.
    EXPECT_EQ(translate(port, "198.51.100.3, 198.51.100.1").status, 429);
  }
  // The connection is not from a trusted proxy: the header counts for
  // nothing, every request is the connection's.
  options.trusted_proxies = "10.0.0.0/8";
  std::unique_ptr<TranslationServer> server = TranslationServer::Start(options);
  const int port = server->http_port();
  EXPECT_EQ(translate(port, "198.51.100.1").status, 200);
  EXPECT_EQ(translate(port, "198.51.100.2").status, 429);
  options.trusted_proxies = "10.0.0.0/33";
  EXPECT_THROW(TranslationServer::Start(options), std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
