// The web page at / in a real headless Chromium (tests/web_page_check.py,
// Selenium) against a real server (127.0.0.1) with really trained tiny
// models both ways: typing translates, the script choice and swap work, a
// link translates when opened, Auto Detect shows the language, a file is
// translated and downloaded, and the layout stacks on a phone.
#include <gtest/gtest.h>

#include <string>

#include "server/translation_server.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

TEST(WebPageTest, APersonTranslatesInABrowser) {
  const std::string parent = testing_util::MakeTempDir("web_page_test");
  const std::string repository = parent + "/models";
  testing_util::AddModelVersion(repository, "en-zh", 1,
                                testing_util::TrainTinyModel(parent, 30));
  testing_util::AddModelVersion(repository, "zh-en", 1,
                                testing_util::TrainTinyReverseModel(parent));
  ServerOptions options;
  options.model_repository = repository;
  options.repository_poll_ms = 0;
  options.listen = "127.0.0.1:0";
  options.metrics_listen = "127.0.0.1:0";
  options.http_listen = "127.0.0.1:0";
  options.threads = 1;
  options.device = "cpu";
  const auto server = TranslationServer::Start(options);
  // And behind a proxy that serves it under a path prefix (and passes the
  // prefix on): every address the page uses is relative.
  options.url_prefix = "/fanyi";
  const auto prefixed = TranslationServer::Start(options);
  for (const auto& [port, base] :
       {std::pair{server->http_port(), std::string("/")},
        std::pair{prefixed->http_port(), std::string("/fanyi/")}}) {
    const testing_util::CommandResult result =
        testing_util::RunCommand("python3 " FANYI_SOURCE_DIR
                                 "/tests/web_page_check.py http://127.0.0.1:" +
                                 std::to_string(port) + base + " " + parent +
                                 "/page.png " + parent + " 2>&1");
    EXPECT_EQ(result.exit_code, 0)
        << base << "\n"
        << result.output
        << "\n(scripts/test.sh installs chromium, chromium-driver and, for "
           "the python3 on PATH, selenium)";
    EXPECT_NE(result.output.find("checks passed"), std::string::npos)
        << result.output;
  }
}

}  // namespace
}  // namespace fanyi
