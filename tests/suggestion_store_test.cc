// Users' suggestions in SQLite: what the store adds, SQLite's own shell
// reads; a file LibreTranslate made (its table, written by the shell) is
// read, and gains fanyi's columns when the server opens it; the trainer
// reads the pairs of its languages, either way round, while the server
// writes; a full file and a held lock are outcomes; files that are not
// suggestions (views, virtual tables, texts by default value) or hold
// oversized values are refused with the file named.
#include "common/formats/suggestion_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_util.h"
#include "trainer/corpus_sources.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

// What SQLite's shell prints for `sql` on the file at `path` (rows one per
// line, columns joined by '|'); throws when the shell fails.
std::string Shell(const std::string& path, const std::string& sql) {
  const std::string command = "sqlite3 '" + path + "' \"" + sql + "\" 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run sqlite3");
  std::string output;
  char buffer[4096];
  for (std::size_t got; (got = fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    output.append(buffer, got);
  }
  if (pclose(pipe) != 0) {
    throw std::runtime_error("sqlite3 failed on " + sql + ": " + output);
  }
  return output;
}

constexpr int64_t kGiB = int64_t{1} << 30;
using Outcome = SuggestionStore::Outcome;

// LibreTranslate's table, as its server creates it.
const char kLibreTranslateTable[] =
    "CREATE TABLE IF NOT EXISTS suggestions (\\\"q\\\" TEXT NOT NULL, "
    "\\\"s\\\" TEXT NOT NULL, \\\"source\\\" TEXT NOT NULL, "
    "\\\"target\\\" TEXT NOT NULL);";

Suggestion Make(std::string text, std::string suggestion,
                std::string source = "en", std::string target = "zh") {
  Suggestion made;
  made.text = std::move(text);
  made.suggestion = std::move(suggestion);
  made.source_language = std::move(source);
  made.target_language = std::move(target);
  return made;
}

std::vector<Suggestion> ReadAll(const std::string& path) {
  SuggestionReader reader(path);
  std::vector<Suggestion> read;
  Suggestion suggestion;
  int64_t row = 0;
  while (reader.Next(&suggestion, &row)) {
    EXPECT_EQ(row, static_cast<int64_t>(read.size()) + 1);
    read.push_back(suggestion);
  }
  EXPECT_FALSE(reader.Next(&suggestion, &row));  // The end stays the end.
  return read;
}

// The message of the std::runtime_error that `read` throws; "" if none.
template <typename Read>
std::string ErrorOf(Read read) {
  try {
    read();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(SuggestionStoreTest, WhatItAddsSqlitesShellReadsAndItCountsAcrossOpens) {
  const std::string path =
      testing_util::MakeTempDir("store_adds") + "/suggestions.db";
  {
    SuggestionStore store(path, 10, kGiB);
    Suggestion first = Make("Invalid API key", "API 密钥无效");
    first.model = "en-zh";
    first.model_version = 3;
    first.api_key = "key-1";
    first.created = 1795000000;
    EXPECT_EQ(store.Add(first), Outcome::kAdded);
    // Quotes and a newline survive as they are.
    EXPECT_EQ(store.Add(Make("It's \"done\".\nNext", "完成了。")),
              Outcome::kAdded);
    // Too long a text is refused before SQLite sees it.
    EXPECT_EQ(store.Add(Make(std::string(kMaxSuggestionBytes + 1, 'a'), "b")),
              Outcome::kTooLarge);
    EXPECT_EQ(store.size(), 2);
  }
  EXPECT_EQ(Shell(path,
                  "SELECT q, s, source, target, model, model_version, "
                  "coalesce(api_key, 'none'), created FROM suggestions"),
            "Invalid API key|API 密钥无效|en|zh|en-zh|3|key-1|1795000000\n"
            "It's \"done\".\nNext|完成了。|en|zh||0|none|0\n");
  SuggestionStore again(path, 3, kGiB);
  EXPECT_EQ(again.size(), 2);
  EXPECT_EQ(again.Add(Make("Go.", "走。")), Outcome::kAdded);
  // Its limit, 3, is reached.
  EXPECT_EQ(again.Add(Make("Stop.", "停。")), Outcome::kFull);
  EXPECT_EQ(again.size(), 3);
  EXPECT_EQ(Shell(path, "SELECT count(*) FROM suggestions"), "3\n");
}

TEST(SuggestionStoreTest, LibreTranslatesFileIsReadAndGainsFanyisColumns) {
  const std::string path =
      testing_util::MakeTempDir("libretranslate_file") + "/suggestions.db";
  ASSERT_EQ(Shell(path, std::string(kLibreTranslateTable) +
                            "INSERT INTO suggestions VALUES ('Hello', "
                            "'你好', 'en', 'zh-Hans');"),
            "");
  std::vector<Suggestion> read = ReadAll(path);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].text, "Hello");
  EXPECT_EQ(read[0].suggestion, "你好");
  EXPECT_EQ(read[0].target_language, "zh-Hans");

  {
    SuggestionStore store(path, 10, kGiB);
    EXPECT_EQ(store.size(), 1);
    Suggestion added = Make("Bye", "再见");
    added.model = "en-zh";
    EXPECT_EQ(store.Add(added), Outcome::kAdded);
  }
  EXPECT_EQ(Shell(path, "SELECT q, coalesce(model, 'null') FROM suggestions"),
            "Hello|null\nBye|en-zh\n");
  read = ReadAll(path);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[1].suggestion, "再见");
}

TEST(SuggestionStoreTest, FilesThatAreNotSuggestionsAreRefusedNamingThem) {
  const std::string dir = testing_util::MakeTempDir("not_suggestions");
  const std::string text = dir + "/text.db";
  std::ofstream(text) << "not a database, though long enough to be read as "
                         "one: SQLite reads the first hundred bytes of a "
                         "file for its header before anything else\n";
  for (const std::string& message :
       {ErrorOf([&] { SuggestionReader reader(text); }),
        ErrorOf([&] { SuggestionStore store(text, 10, kGiB); })}) {
    EXPECT_EQ(message.rfind(text + ": ", 0), 0u) << message;
  }

  const std::string view = dir + "/view.db";
  Shell(view,
        "CREATE TABLE t (q, s, source, target); CREATE VIEW suggestions AS "
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
        "SELECT 'a' AS q, 'b' AS s, 'en' AS source, 'zh' AS target FROM n;");
  EXPECT_EQ(ErrorOf([&] { SuggestionReader reader(view); }),
            view + ": its \"suggestions\" is a view, not a table");

  const std::string columns = dir + "/columns.db";
  Shell(columns, "CREATE TABLE suggestions (q TEXT, s TEXT, source TEXT);");
  EXPECT_EQ(ErrorOf([&] { SuggestionReader reader(columns); }),
            columns + ": its suggestions table has no column target");

  const std::string virtual_table = dir + "/virtual.db";
  Shell(virtual_table,
        "CREATE VIRTUAL TABLE suggestions USING fts5(q, s, source, target);");
  EXPECT_EQ(
      ErrorOf([&] { SuggestionReader reader(virtual_table); }),
      virtual_table + ": its \"suggestions\" is a virtual table, not a table");

  // Rows written short that would read long: a million of them from a
  // file of a few pages.
  const std::string defaulted = dir + "/defaulted.db";
  Shell(defaulted,
        "CREATE TABLE suggestions (x); INSERT INTO suggestions VALUES (1);"
        "ALTER TABLE suggestions ADD COLUMN q TEXT DEFAULT 'long';"
        "ALTER TABLE suggestions ADD COLUMN s TEXT;"
        "ALTER TABLE suggestions ADD COLUMN source TEXT;"
        "ALTER TABLE suggestions ADD COLUMN target TEXT;");
  EXPECT_EQ(ErrorOf([&] { SuggestionReader reader(defaulted); }),
            defaulted +
                ": its suggestions table gives column q a default "
                "value");

  const std::string empty = dir + "/empty.db";
  Shell(empty, "CREATE TABLE other (x);");
  EXPECT_EQ(ErrorOf([&] { SuggestionReader reader(empty); }),
            empty + ": no suggestions table in it");
  EXPECT_NE(ErrorOf([&] { SuggestionReader reader(dir + "/missing.db"); }), "");
  EXPECT_FALSE(fs::exists(dir + "/missing.db"));  // Reading creates nothing.
}

TEST(SuggestionStoreTest, AnOversizedValueIsRefusedWithItsRow) {
  const std::string path =
      testing_util::MakeTempDir("oversized") + "/suggestions.db";
  Shell(path, std::string(kLibreTranslateTable) +
                  "INSERT INTO suggestions VALUES ('a', 'b', 'en', 'zh');"
                  "INSERT INTO suggestions VALUES (hex(zeroblob(" +
                  std::to_string(kMaxSuggestionBytes / 2 + 1) +
                  ")), 'b', 'en', 'zh');");
  SuggestionReader reader(path);
  Suggestion suggestion;
  int64_t row = 0;
  ASSERT_TRUE(reader.Next(&suggestion, &row));
  const std::string message = ErrorOf([&] { reader.Next(&suggestion, &row); });
  EXPECT_EQ(message.rfind(path + ": row 2 holds " +
                              std::to_string(kMaxSuggestionBytes + 2) +
                              " bytes in a text",
                          0),
            0u)
      << message;
}

TEST(SuggestionStoreTest, AFullFileAndAHeldLockAreOutcomesNotErrors) {
  const std::string dir = testing_util::MakeTempDir("full_and_busy");
  // A file of at most a few pages fills up.
  SuggestionStore small(dir + "/small.db", 1000000, 64 << 10);
  int added = 0;
  Outcome outcome = Outcome::kAdded;
  while ((outcome = small.Add(Make(std::string(4000, 'a'), "b"))) ==
         Outcome::kAdded) {
    ++added;
  }
  EXPECT_EQ(outcome, Outcome::kFull);
  EXPECT_GT(added, 0);
  EXPECT_LT(added, 16);

  // Another program holds the write lock: Add gives up, then adds once it
  // is released. Reading meanwhile waits for nobody (write-ahead log).
  const std::string path = dir + "/busy.db";
  SuggestionStore store(path, 100, kGiB);
  ASSERT_EQ(store.Add(Make("a", "b")), Outcome::kAdded);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
            SQLITE_OK);
  EXPECT_EQ(store.Add(Make("c", "d")), Outcome::kBusy);
  EXPECT_EQ(ReadAll(path).size(), 1u);
  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(other);
  EXPECT_EQ(store.Add(Make("c", "d")), Outcome::kAdded);
  EXPECT_EQ(ReadAll(path).size(), 2u);
  EXPECT_EQ(store.size(), 2);
}

TEST(SuggestionStoreTest, TheTrainerReadsThePairsOfItsLanguagesEitherWay) {
  const std::string path =
      testing_util::MakeTempDir("trainer_reads") + "/suggestions.sqlite";
  {
    SuggestionStore store(path, 100, kGiB);
    store.Add(Make("  Open\nthe   file ", "打开 文件"));
    store.Add(Make("Hallo", "Hello", "de", "en"));  // Another pair.
    store.Add(Make("关闭", "Close", "zh", "en"));   // The other way round.
    store.Add(Make("Bad \xC3", "坏"));              // Not UTF-8.
    store.Add(Make(" \t", "空"));                   // Blank once squeezed.
    store.Add(Make("Save", "保存", "en-US", "zh-Hans"));
  }
  ASSERT_EQ(KindOfCorpusFile(path), CorpusFileKind::kSuggestions);
  const ReadCorpus corpus = ReadCorpusFiles(path, TsvColumns{});
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const SentencePair& pair : corpus.pairs) {
    pairs.emplace_back(pair.source, pair.target);
  }
  EXPECT_EQ(pairs, (std::vector<std::pair<std::string, std::string>>{
                       {"Open the file", "打开 文件"},
                       {"Close", "关闭"},
                       {"Save", "保存"}}));
  ASSERT_EQ(corpus.bad_lines.size(), 2u);
  EXPECT_EQ(corpus.bad_lines[0].line.line_number, 4);
  EXPECT_EQ(corpus.bad_lines[0].line.reason, "invalid UTF-8 at byte 4");
  EXPECT_EQ(corpus.bad_lines[1].line.line_number, 5);
  EXPECT_EQ(corpus.bad_lines[1].line.reason, "empty source");
}

}  // namespace
}  // namespace fanyi
