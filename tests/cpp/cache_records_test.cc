#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "test_support.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

using test_support::TemporaryCacheDir;

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(CacheRecordsTest, RoundTripInAPrivateFolder) {
  TemporaryCacheDir cache("tilec_cache_records_");
  EXPECT_EQ(read_cache_record("autotuner", "key1"), std::nullopt);
  write_cache_record("autotuner", "key1", "{\"block_M\": 64}");
  EXPECT_EQ(read_cache_record("autotuner", "key1"), "{\"block_M\": 64}");
  write_cache_record("autotuner", "key1", "{\"block_M\": 128}");
  EXPECT_EQ(read_cache_record("autotuner", "key1"), "{\"block_M\": 128}");

  const std::string folder = cache_record_folder("autotuner");
  EXPECT_EQ(folder, cache.path() + "/autotuner");
  EXPECT_EQ(mode_of(folder), 0700u);
  EXPECT_EQ(mode_of(folder + "/key1"), 0600u);
}

TEST(CacheRecordsTest, DamagedOrForeignRecordReadsAsMissing) {
  TemporaryCacheDir cache("tilec_cache_records_");
  write_cache_record("autotuner", "key", "{\"latency\": 1.5}");
  const std::string path = cache_record_folder("autotuner") + "/key";
  std::ofstream(path, std::ios::trunc) << "{\"latency\": 0.1}";
  EXPECT_EQ(read_cache_record("autotuner", "key"), std::nullopt);

  write_cache_record("autotuner", "key", "{\"latency\": 1.5}");
  chmod(path.c_str(), 0666);
  EXPECT_EQ(read_cache_record("autotuner", "key"), std::nullopt);
}

TEST(CacheRecordsTest, NamesThatAreNotPlainAreRefused) {
  TemporaryCacheDir cache("tilec_cache_records_");
  for (const char* bad : {"", ".", "..", "a/b", "../x"}) {
    EXPECT_THROW(write_cache_record("autotuner", bad, "x"), std::invalid_argument) << bad;
    EXPECT_THROW(read_cache_record(bad, "key"), std::invalid_argument) << bad;
  }
  try {
    read_cache_record("autotuner", "../cpu");
    FAIL() << "no error";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("'../cpu' is not a plain name"), std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(std::filesystem::exists(cache.path() + "/cpu"));
}

}  // namespace
}  // namespace tilec
