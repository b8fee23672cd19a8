#include "data/text_source.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "data/byte_tokenizer.h"
#include "common/remove_tree.h"

namespace accel::exec {
namespace {
namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed at scope exit.
struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() / ("accel_text_source_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter++));
    std::error_code ec;
    RemoveTree(path.string(), ec);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    RemoveTree(path.string(), ec);
  }
  void Write(const std::string& name, const std::string& content) const {
    fs::create_directories((path / name).parent_path());
    std::ofstream(path / name, std::ios::binary) << content;
  }
  fs::path path;
  static inline int counter = 0;
};

TEST_CASE("text rule rejects .dat, NUL bytes and invalid utf-8") {
  CHECK(IsTextFile("cookie", "hello\n%\nworld\n"));
  CHECK_FALSE(IsTextFile("cookie.dat", "hello"));
  CHECK_FALSE(IsTextFile("x", std::string("a\0b", 3)));
  CHECK_FALSE(IsTextFile("x", "\xFF\xFE"));
}

TEST_CASE("directory walk is recursive, sorted, and skips binaries and symlinks") {
  TempDir dir;
  dir.Write("b.txt", "B");
  dir.Write("a/z.txt", "Z");
  dir.Write("a/c.txt", "C");
  dir.Write("index.dat", "text but an index");
  dir.Write("nul.bin", std::string("x\0y", 3));
  dir.Write("latin1", "caf\xE9");
  fs::create_symlink(dir.path / "b.txt", dir.path / "b.u8");
  auto files = ListTextFiles(dir.path.string());
  REQUIRE(files.ok());
  REQUIRE(files->size() == 3);
  CHECK((*files)[0] == (dir.path / "a/c.txt").string());
  CHECK((*files)[1] == (dir.path / "a/z.txt").string());
  CHECK((*files)[2] == (dir.path / "b.txt").string());
  auto corpus = ReadTextCorpus(dir.path.string());
  REQUIRE(corpus.ok());
  CHECK(*corpus == "CZB");
}

TEST_CASE("missing, binary and empty data give errors naming the path") {
  TempDir dir;
  const std::string missing = (dir.path / "nope").string();
  CHECK(ListTextFiles(missing).status().message() == "data path does not exist: " + missing);
  CHECK(ListTextFiles(missing).status().code() == absl::StatusCode::kNotFound);
  dir.Write("x.dat", "abc");
  const std::string dat = (dir.path / "x.dat").string();
  CHECK(ListTextFiles(dat).status().message() == "data file is not text (a .dat index file): " + dat);
  CHECK(ListTextFiles(dir.path.string()).status().message() == "no text files under " + dir.path.string());
  dir.Write("empty.txt", "");
  CHECK(ReadTextCorpus(dir.path.string()).status().message() == "data is empty: " + dir.path.string());
}

TEST_CASE("fortunes directory reads as text when installed") {
  const std::string fortunes = "/usr/share/games/fortunes";
  if (!fs::is_directory(fortunes)) {
    WARN("fortunes not installed; skipping");
    return;
  }
  auto files = ListTextFiles(fortunes);
  REQUIRE(files.ok());
  for (const std::string& f : *files) {
    CHECK_FALSE(f.ends_with(".dat"));
    CHECK_FALSE(f.ends_with(".u8"));
  }
  auto corpus = ReadTextCorpus(fortunes);
  REQUIRE(corpus.ok());
  CHECK(corpus->size() > 100000);
  CHECK(corpus->find('\0') == std::string::npos);
}

TEST_CASE("byte tokenizer round-trips any bytes") {
  const std::string text("h\xC3\xA9llo\0\xFF", 8);
  std::vector<uint32_t> tokens = ByteTokenizer::Encode(text);
  REQUIRE(tokens.size() == 8);
  CHECK(tokens[1] == 0xC3);
  CHECK(tokens[7] == 255);
  CHECK(ByteTokenizer::Decode(tokens) == text);
  CHECK(ByteTokenizer::kVocabSize == 256);
}

}  // namespace
}  // namespace accel::exec
