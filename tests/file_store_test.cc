// FileStore: a translated file is downloaded once, expires after its time
// to live, and the store refuses what would exceed its bound or a client's
// share of it.
#include "server/http/file_store.h"

#include <chrono>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace fanyi {
namespace {

using std::chrono::seconds;

class FileStoreTest : public ::testing::Test {
 protected:
  // 10 bytes in all, 8 a client.
  std::chrono::steady_clock::time_point now_{};
  FileStore store_{seconds(60), 10, 8, [this] { return now_; }};
};

TEST_F(FileStoreTest, AFileIsTakenOnce) {
  const auto name = store_.Put({"notes.zh.md", "text/markdown", "# 你好"}, "a");
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
  const auto name = store_.Put({"a.txt", "text/plain", "abc"}, "a");
  now_ += seconds(59);
  const auto other = store_.Put({"b.txt", "text/plain", "def"}, "a");
  now_ += seconds(1);
  EXPECT_FALSE(store_.Take(*name).has_value());
  EXPECT_TRUE(store_.Take(*other).has_value());
}

TEST_F(FileStoreTest, RefusesWhatExceedsItsBoundAndMakesRoomWhenTaken) {
  FileStore::Refusal refusal = FileStore::Refusal::kNone;
  const auto first = store_.Put({"a.txt", "text/plain", "123456"}, "a");
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(
      store_.Put({"b.txt", "text/plain", "12345"}, "b", &refusal).has_value());
  EXPECT_EQ(refusal, FileStore::Refusal::kFull);
  EXPECT_TRUE(store_.Take(*first).has_value());
  EXPECT_TRUE(
      store_.Put({"b.txt", "text/plain", "12345"}, "b", &refusal).has_value());
  EXPECT_EQ(refusal, FileStore::Refusal::kNone);
  // Expired files make room too.
  now_ += seconds(60);
  EXPECT_TRUE(store_.Put({"c.txt", "text/plain", "01234567"}, "c").has_value());
}

// One client cannot take the whole store: past its share it is refused,
// while another client still has room; what it downloads or lets expire
// gives its share back.
TEST_F(FileStoreTest, AClientIsHeldToItsShare) {
  FileStore::Refusal refusal = FileStore::Refusal::kNone;
  const auto first = store_.Put({"a.txt", "text/plain", "123456"}, "a");
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(
      store_.Put({"b.txt", "text/plain", "123"}, "a", &refusal).has_value());
  EXPECT_EQ(refusal, FileStore::Refusal::kClientShare);
  EXPECT_FALSE(store_.Put({"c.txt", "text/plain", "123456789"}, "b", &refusal)
                   .has_value());
  EXPECT_EQ(refusal, FileStore::Refusal::kClientShare);
  EXPECT_TRUE(store_.Put({"d.txt", "text/plain", "123"}, "b").has_value());
  EXPECT_TRUE(store_.Take(*first).has_value());
  EXPECT_TRUE(store_.Put({"e.txt", "text/plain", "123"}, "a").has_value());
  now_ += seconds(60);
  EXPECT_TRUE(store_.Put({"f.txt", "text/plain", "12345678"}, "a").has_value());
}

// Empty files (a translation can be empty) come and go without upsetting
// any client's count.
TEST_F(FileStoreTest, EmptyFilesAreHeldToo) {
  const auto full = store_.Put({"a.txt", "text/plain", "12345"}, "a");
  const auto empty = store_.Put({"b.txt", "text/plain", ""}, "a");
  ASSERT_TRUE(full.has_value());
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(store_.Take(*full).has_value());
  EXPECT_EQ(store_.Take(*empty)->content, "");
  EXPECT_TRUE(store_.Put({"c.txt", "text/plain", "12345678"}, "a").has_value());
}

// Names come from a cryptographic generator: no two alike over many.
TEST_F(FileStoreTest, NamesDoNotRepeat) {
  FileStore store(seconds(60), 1 << 20, 1 << 20, [this] { return now_; });
  std::set<std::string> names;
  for (int i = 0; i < 1000; ++i) {
    const auto name = store.Put({"x", "text/plain", "x"}, "a");
    ASSERT_TRUE(name.has_value());
    EXPECT_TRUE(names.insert(name->substr(0, 32)).second) << *name;
  }
}

TEST_F(FileStoreTest, NamesAreSafePathSegments) {
  const auto name = store_.Put({"../../etc/pass wd", "text/plain", "x"}, "a");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->find('/'), std::string::npos) << *name;
  EXPECT_EQ(name->find(' '), std::string::npos) << *name;
}

}  // namespace
}  // namespace fanyi
