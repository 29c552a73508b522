// FileStore: a translated file is downloaded once, expires after its time
// to live, and the store refuses what would exceed its bound.
#include "server/http/file_store.h"

#include <chrono>
#include <string>

#include "gtest/gtest.h"

namespace fanyi {
namespace {

using std::chrono::seconds;

class FileStoreTest : public ::testing::Test {
 protected:
  std::chrono::steady_clock::time_point now_{};
  FileStore store_{seconds(60), 10, [this] { return now_; }};
};

TEST_F(FileStoreTest, AFileIsTakenOnce) {
  const auto name = store_.Put({"notes.zh.md", "text/markdown", "# 你好"});
  ASSERT_TRUE(name.has_value());
  // Unguessable, and one safe path segment ending in the file's name.
  EXPECT_EQ(name->size(), 32 + std::string(".notes.zh.md").size()) << *name;
  EXPECT_EQ(name->substr(32), ".notes.zh.md");
  const auto file = store_.Take(*name);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->content, "# 你好");
  EXPECT_EQ(file->filename, "notes.zh.md");
  EXPECT_FALSE(store_.Take(*name).has_value());
}

TEST_F(FileStoreTest, AFileExpiresAfterItsTimeToLive) {
  const auto name = store_.Put({"a.txt", "text/plain", "abc"});
  now_ += seconds(59);
  const auto other = store_.Put({"b.txt", "text/plain", "def"});
  now_ += seconds(1);
  EXPECT_FALSE(store_.Take(*name).has_value());
  EXPECT_TRUE(store_.Take(*other).has_value());
}

TEST_F(FileStoreTest, RefusesWhatExceedsItsBoundAndMakesRoomWhenTaken) {
  const auto first = store_.Put({"a.txt", "text/plain", "123456"});
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(store_.Put({"b.txt", "text/plain", "12345"}).has_value());
  EXPECT_TRUE(store_.Take(*first).has_value());
  EXPECT_TRUE(store_.Put({"b.txt", "text/plain", "12345"}).has_value());
  // Expired files make room too.
  now_ += seconds(60);
  EXPECT_TRUE(store_.Put({"c.txt", "text/plain", "0123456789"}).has_value());
}

TEST_F(FileStoreTest, NamesAreSafePathSegments) {
  const auto name = store_.Put({"../../etc/pass wd", "text/plain", "x"});
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->find('/'), std::string::npos) << *name;
  EXPECT_EQ(name->find(' '), std::string::npos) << *name;
}

}  // namespace
}  // namespace fanyi
