// The parallel corpus encoder: cut points, and the same ids for every thread count and chunk size.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizers/corpus_encoder.h"

namespace accel::tok {
namespace {

using Ids = std::vector<uint32_t>;

std::string ReadData(const std::string& name) {
  std::ifstream in(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/" + name, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST_CASE("chunks are cut where a line starts with a letter or digit") {
  std::string text = "ab\n cd\n\nef\n-g\n9h";
  std::vector<Chunk> chunks = PlanChunks({text}, true, 1);
  std::vector<std::string> parts;
  for (const Chunk& c : chunks) parts.push_back(text.substr(c.begin, c.end - c.begin));
  CHECK(parts == std::vector<std::string>{"ab\n cd\n\n", "ef\n-g\n", "9h"});
  CHECK(chunks.front().first);
  CHECK(!chunks.front().last);
  CHECK(chunks.back().last);
  CHECK(PlanChunks({text}, false, 1).size() == 1);
  CHECK(PlanChunks({text, ""}, true, 100).size() == 2);
}

TEST_CASE("the token stream is the same for every thread count and chunk size") {
  absl::StatusOr<std::unique_ptr<Tokenizer>> t =
      Tokenizer::Load(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/tiny_bpe.json");
  REQUIRE(t.ok());
  std::vector<std::string> texts = {ReadData("fortunes/debian"), ReadData("fortunes/fortunes"),
                                    ReadData("fortunes/goedel")};
  std::vector<std::string_view> documents(texts.begin(), texts.end());
  // Reference: every document encoded whole, one after the other, with <s> ... </s> around it.
  Ids expected;
  for (std::string_view d : documents) {
    Ids ids = (*t)->Encode(d);
    expected.insert(expected.end(), ids.begin(), ids.end());
  }
  REQUIRE(expected.size() > 20000);
  for (int threads : {1, 2, 3, 8}) {
    for (size_t chunk_bytes : {size_t{1} << 20, size_t{4096}, size_t{100}}) {
      EncodeCorpusOptions options;
      options.threads = threads;
      options.chunk_bytes = chunk_bytes;
      size_t last_done = 0;
      options.progress = [&](size_t done, size_t total) { last_done = done; };
      INFO("threads " << threads << ", chunk bytes " << chunk_bytes);
      CHECK(EncodeCorpus(**t, documents, options) == expected);
      CHECK(last_done == texts[0].size() + texts[1].size() + texts[2].size());
    }
  }
}

TEST_CASE("without special tokens only the text's ids are written") {
  absl::StatusOr<std::unique_ptr<Tokenizer>> t =
      Tokenizer::Load(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/tiny_bpe.json");
  REQUIRE(t.ok());
  EncodeCorpusOptions options;
  options.add_special_tokens = false;
  CHECK(EncodeCorpus(**t, {"hello the in", "12345"}, options) == Ids{257, 267, 111, 258, 260, 265, 52, 53});
}

}  // namespace
}  // namespace accel::tok
