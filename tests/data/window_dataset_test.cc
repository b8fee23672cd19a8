#include "data/window_dataset.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <set>
#include <unistd.h>

#include "data/corpus.h"
#include "data/token_file.h"

namespace accel::exec {
namespace {

std::vector<uint32_t> Iota(size_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

// First token of every window read, which identifies the window (window w starts at w*seq_len).
std::vector<int64_t> Starts(WindowDataset& ds, int64_t count) {
  std::vector<int64_t> batch;
  ds.NextBatch(count, batch);
  std::vector<int64_t> starts;
  const int64_t width = ds.options().seq_len + 1;
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t k = 1; k < width; ++k) REQUIRE(batch[i * width + k] == batch[i * width] + k);
    starts.push_back(batch[i * width]);
  }
  return starts;
}

TEST_CASE("windows are seq_len+1 tokens overlapping by one") {
  WindowDatasetOptions o;
  o.seq_len = 4;
  o.shuffle = false;
  auto ds = WindowDataset::Create(Iota(14), o, "iota");
  REQUIRE(ds.ok());
  CHECK((*ds)->NumWindows() == 3);
  CHECK(Starts(**ds, 3) == std::vector<int64_t>{0, 4, 8});
  CHECK((*ds)->Position() == DataPosition{1, 0});
  CHECK(Starts(**ds, 1) == std::vector<int64_t>{0});
}

TEST_CASE("shuffle is deterministic, a permutation, and differs per epoch") {
  WindowDatasetOptions o;
  o.seq_len = 2;
  o.seed = 42;
  auto a = WindowDataset::Create(Iota(201), o, "iota");
  auto b = WindowDataset::Create(Iota(201), o, "iota");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  std::vector<int64_t> e0 = Starts(**a, 100);
  CHECK(e0 == Starts(**b, 100));
  CHECK(std::set<int64_t>(e0.begin(), e0.end()).size() == 100);
  std::vector<int64_t> sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted != e0);
  CHECK(Starts(**a, 100) != e0);
}

TEST_CASE("data-parallel shards are disjoint and interleave the single-rank order") {
  WindowDatasetOptions o;
  o.seq_len = 3;
  o.seed = 9;
  auto single = WindowDataset::Create(Iota(100), o, "iota");
  REQUIRE(single.ok());
  std::vector<int64_t> all = Starts(**single, 32);
  o.dp_size = 3;
  std::set<int64_t> seen;
  for (int r = 0; r < 3; ++r) {
    o.dp_rank = r;
    auto shard = WindowDataset::Create(Iota(100), o, "iota");
    REQUIRE(shard.ok());
    CHECK((*shard)->WindowsPerRank() == 11);
    std::vector<int64_t> mine = Starts(**shard, 10);
    for (int i = 0; i < 10; ++i) {
      CHECK(mine[i] == all[i * 3 + r]);
      CHECK(seen.insert(mine[i]).second);
    }
  }
}

TEST_CASE("position round-trips through Seek") {
  WindowDatasetOptions o;
  o.seq_len = 5;
  o.seed = 3;
  auto a = WindowDataset::Create(Iota(300), o, "iota");
  REQUIRE(a.ok());
  Starts(**a, 70);  // crosses into epoch 1
  DataPosition p = (*a)->Position();
  CHECK(p.epoch == 1);
  std::vector<int64_t> next = Starts(**a, 20);
  auto b = WindowDataset::Create(Iota(300), o, "iota");
  REQUIRE(b.ok());
  REQUIRE((*b)->Seek(p).ok());
  CHECK(Starts(**b, 20) == next);
  CHECK_FALSE((*b)->Seek({0, 1000}).ok());
}

// The windows all dp ranks read in the next `steps` micro-steps of `micro` windows per rank, in
// global order (rank-major within a micro-step, as the ranks' positions interleave).
std::vector<int64_t> NextGlobalWindows(std::vector<std::unique_ptr<WindowDataset>>& ranks,
                                       int64_t steps, int64_t micro) {
  std::vector<int64_t> out;
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<std::vector<int64_t>> per_rank;
    for (auto& r : ranks) per_rank.push_back(Starts(*r, micro));
    for (int64_t i = 0; i < micro; ++i) {
      for (auto& starts : per_rank) out.push_back(starts[i]);
    }
  }
  return out;
}

std::vector<std::unique_ptr<WindowDataset>> Ranks(int dp) {
  std::vector<std::unique_ptr<WindowDataset>> ranks;
  for (int r = 0; r < dp; ++r) {
    WindowDatasetOptions o;
    o.seq_len = 4;
    o.seed = 9;
    o.dp_rank = r;
    o.dp_size = dp;
    ranks.push_back(*WindowDataset::Create(Iota(401), o, "iota"));
  }
  return ranks;
}

TEST_CASE("a global position moves between data-parallel degrees without skipping a window") {
  // 100 windows. 4 ranks read 3 micro-steps of 2 windows each (24 windows), then the position is
  // resumed by 2 ranks reading 4 per micro-step and by 8 ranks reading 1: every layout continues
  // with window 25 of the permuted order, as one uninterrupted 4-rank run would.
  std::vector<std::unique_ptr<WindowDataset>> four = Ranks(4);
  NextGlobalWindows(four, 3, 2);
  const GlobalDataPosition saved = four[0]->GlobalPosition();
  CHECK(saved == GlobalDataPosition{0, 24});
  for (auto& r : four) CHECK(r->GlobalPosition() == saved);
  const std::vector<int64_t> expected = NextGlobalWindows(four, 2, 2);  // windows 25..40 (16)
  for (int dp : {2, 8}) {
    INFO("resumed on " << dp << " ranks");
    std::vector<std::unique_ptr<WindowDataset>> ranks = Ranks(dp);
    for (auto& r : ranks) REQUIRE(r->SeekGlobal(saved).ok());
    CHECK(NextGlobalWindows(ranks, 2, 8 / dp) == expected);  // the same 8 windows per micro-step
  }
  std::vector<std::unique_ptr<WindowDataset>> five = Ranks(5);
  CHECK(five[0]->SeekGlobal(saved).message() ==
        "data position: 24 windows read in epoch 0 do not split evenly over 5 data-parallel ranks");
  CHECK(five[0]->SeekGlobal({-1, 0}).message() == "data position (epoch -1, samples 0) is negative");
  // Past this layout's epoch (8 ranks read 96 of 100 windows per epoch): the next epoch starts.
  std::vector<std::unique_ptr<WindowDataset>> eight = Ranks(8);
  REQUIRE(eight[0]->SeekGlobal({0, 96}).ok());
  CHECK(eight[0]->Position() == DataPosition{1, 0});
}

TEST_CASE("too little data is an error naming the source") {
  WindowDatasetOptions o;
  o.seq_len = 8;
  o.dp_size = 2;
  auto ds = WindowDataset::Create(Iota(10), o, "/data/tiny.bin");
  REQUIRE_FALSE(ds.ok());
  CHECK(ds.status().message() ==
        "/data/tiny.bin has 10 tokens; needs at least 17 for seq_len 8 and 2 data-parallel ranks");
}

TEST_CASE("token files round-trip little-endian in both widths") {
  namespace fs = std::filesystem;
  const fs::path path = fs::temp_directory_path() / ("accel_tokens_" + std::to_string(::getpid()) + ".bin");
  std::vector<uint32_t> tokens = {0, 1, 258, 65535};
  REQUIRE(WriteTokenFile(path.string(), tokens, TokenWidth::kUint16).ok());
  CHECK(fs::file_size(path) == 8);
  {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(bytes.substr(4, 2) == std::string("\x02\x01", 2));
  }
  CHECK(*ReadTokenFile(path.string(), TokenWidth::kUint16) == tokens);
  tokens.push_back(70000);
  CHECK_FALSE(WriteTokenFile(path.string(), tokens, TokenWidth::kUint16).ok());
  REQUIRE(WriteTokenFile(path.string(), tokens, TokenWidth::kUint32).ok());
  CHECK(*ReadTokenFile(path.string(), TokenWidth::kUint32) == tokens);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "abc";
  }
  CHECK(ReadTokenFile(path.string(), TokenWidth::kUint16).status().message() ==
        "token file size 3 is not a multiple of 2 bytes: " + path.string());
  fs::remove(path);
  CHECK(ReadTokenFile(path.string(), TokenWidth::kUint16).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("LoadCorpus checks token ids against the vocabulary") {
  namespace fs = std::filesystem;
  const fs::path path = fs::temp_directory_path() / ("accel_corpus_" + std::to_string(::getpid()) + ".bin");
  REQUIRE(WriteTokenFile(path.string(), std::vector<uint32_t>{1, 2, 300}, TokenWidth::kUint32).ok());
  CHECK(LoadCorpus(path.string(), CorpusFormat::kTokensU32, 512)->size() == 3);
  CHECK(LoadCorpus(path.string(), CorpusFormat::kTokensU32, 256).status().message() ==
        path.string() + ": token 300 at index 2 is outside the vocabulary of 256");
  CHECK(LoadCorpus(path.string(), CorpusFormat::kText, 100).status().message() ==
        "byte-level text needs vocab_size >= 256, got 100");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "hi\n";
  }
  CHECK(*LoadCorpus(path.string(), CorpusFormat::kText, 256) == std::vector<uint32_t>{'h', 'i', '\n'});
  fs::remove(path);
}

}  // namespace
}  // namespace accel::exec
