// SentencePiece models (accel's own reader and BPE), on tests/testdata/tokenizers/fortunes_bpe.model (a
// 1000-piece BPE model with Llama-2's settings; SOURCES.md). Expected ids are spm_encode's.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tokenizers/tokenizer.h"

namespace accel::tok {
namespace {

using Ids = std::vector<uint32_t>;

TEST_CASE("SentencePiece: unsupported and malformed models") {
  absl::StatusOr<std::unique_ptr<Tokenizer>> garbage = Tokenizer::Load(std::string(ACCEL_SOURCE_ROOT) + "/README.md");
  REQUIRE(!garbage.ok());
  CHECK(garbage.status().message() == std::string(ACCEL_SOURCE_ROOT) + "/README.md: not a SentencePiece model: not a ModelProto");
}

TEST_CASE("SentencePiece: BOS, ids, byte fallback") {
  absl::StatusOr<std::unique_ptr<Tokenizer>> t =
      Tokenizer::Load(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/fortunes_bpe.model");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK((*t)->id_limit() == 1000);
  CHECK((*t)->prefix_tokens() == Ids{1});
  CHECK((*t)->suffix_tokens().empty());
  CHECK(!(*t)->SplitsAtLineStarts());
  CHECK((*t)->Describe() == "SentencePiece model (BPE, 1000 ids)");
  CHECK((*t)->Encode("Hello, world!") == Ids{1, 474, 626, 908, 933, 798, 953});
  // split_digits: one piece per digit; the dummy prefix "▁" starts the text.
  CHECK((*t)->Encode("  It's 12345.", false) == Ids{906, 906, 546, 934, 914, 906, 949, 947, 963, 972, 968, 920});
  // Byte fallback: 日本 is not in the model, so its UTF-8 bytes are <0xE6> ... tokens.
  CHECK((*t)->Encode("\u65e5\u672c \u00e9", false) == Ids{906, 233, 154, 168, 233, 159, 175, 906, 198, 172});
}

}  // namespace
}  // namespace accel::tok
