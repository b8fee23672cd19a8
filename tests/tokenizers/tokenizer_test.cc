// The tokenizer.json reader and BPE encoder on a handcrafted tokenizer (tests/testdata/tokenizers,
// SOURCES.md). Expected ids are those of the JavaScript reference (@lenml/tokenizers 3.7.2, a
// fork of transformers.js) on the same file.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "common/utf8.h"
#include "tokenizers/byte_level.h"
#include "tokenizers/split_behavior.h"
#include "tokenizers/tokenizer.h"
#include "tests/tokenizers/tokenizer_files.h"

namespace accel::tok {
namespace {

using Ids = std::vector<uint32_t>;

using accel::testing::LoadTokenizerOrDie;

TEST_CASE("tiny BPE: merges, whitespace, contractions, numbers, unicode and special tokens") {
  auto t = LoadTokenizerOrDie("tiny_bpe.json");
  CHECK(t->id_limit() == 276);
  CHECK(t->prefix_tokens() == Ids{274});
  CHECK(t->suffix_tokens() == Ids{275});
  CHECK(t->SplitsAtLineStarts());
  CHECK(t->Describe() == "tokenizer.json (BPE, byte-level, 276 ids)");
  CHECK(t->Encode("hello the in") == Ids{274, 257, 267, 111, 258, 260, 275});
  CHECK(t->Encode(" hello  hello") == Ids{274, 32, 257, 267, 111, 32, 32, 257, 267, 111, 275});
  CHECK(t->Encode("It's HE'S they'RE") == Ids{274, 73, 116, 263, 32, 72, 69, 39, 83, 258, 121, 39, 82, 69, 275});
  CHECK(t->Encode("a   b\n\n\tc  \n") == Ids{274, 97, 261, 32, 98, 266, 9, 99, 261, 10, 275});
  // NFC composes "e" + U+0301 into "é" (bytes C3 A9, merged into 272).
  CHECK(t->Encode("caf\u00e9 cafe\u0301 na\u00efve \u65e5\u672c") ==
        Ids{274, 99, 97, 102, 272, 32, 99, 97, 102, 272, 32, 110, 97, 195, 175, 118, 101, 32, 230, 151, 165, 230, 156, 172, 275});
  CHECK(t->Encode("12345 1234567") == Ids{274, 265, 52, 53, 32, 265, 52, 53, 54, 55, 275});
  CHECK(t->Encode("hi<|endoftext|>there<s>x</s>") == Ids{274, 104, 105, 273, 116, 257, 114, 101, 274, 120, 275, 275});
  CHECK(t->Encode("") == Ids{274, 275});
  CHECK(t->Encode("   ") == Ids{274, 261, 32, 275});
  CHECK(t->Encode("hello the in", false) == Ids{257, 267, 111, 258, 260});
}

TEST_CASE("tiny BPE with \"a b\" string merges and ignore_merges") {
  auto t = LoadTokenizerOrDie("tiny_bpe_string_merges.json");
  // ignore_merges: words in the vocabulary are one token ("hello" 270, "Ġhello" 271).
  CHECK(t->Encode("hello the in", false) == Ids{270, 258, 260});
  CHECK(t->Encode(" hello  hello", false) == Ids{271, 32, 271});
  CHECK(t->Encode("It's HE'S they'RE", false) == Ids{73, 116, 263, 32, 72, 69, 39, 83, 258, 121, 39, 82, 69});
  CHECK(t->Encode("12345 1234567", false) == Ids{265, 52, 53, 32, 265, 52, 53, 54, 55});
}

TEST_CASE("invalid UTF-8 is encoded as U+FFFD") {
  auto t = LoadTokenizerOrDie("tiny_bpe.json");
  CHECK(t->Encode("a\xff" "b\xc3", false) == t->Encode("a\xEF\xBF\xBD" "b\xEF\xBF\xBD", false));
  CHECK(ReplaceInvalidUtf8("ok \xe6\x97\xa5 \xed\xa0\x80") == "ok \xe6\x97\xa5 \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("a long word without merges stays one symbol per byte") {
  auto t = LoadTokenizerOrDie("tiny_bpe.json");
  std::string word(5000, 'z');
  Ids ids = t->Encode(word, false);
  CHECK(ids == Ids(5000, 'z'));
  // 4000 spaces and a letter: the pattern gives 3999 spaces (\s+(?!\S)) and " x". The spaces
  // merge into pairs ("Ġ Ġ", rank 5) leftmost first, then pairs into quads (rank 6): 999 quads,
  // a pair and a single space; " x" has no merge.
  ids = t->Encode(std::string(4000, ' ') + "x", false);
  REQUIRE(ids.size() == 1003);
  CHECK(ids[0] == 262);
  CHECK(ids[998] == 262);
  CHECK(Ids(ids.begin() + 999, ids.end()) == Ids{261, 32, 32, 120});
}

TEST_CASE("byte-level alphabet") {
  const auto& alphabet = ByteLevelAlphabet();
  CHECK(alphabet[' '] == "\u0120");   // Ġ
  CHECK(alphabet['\n'] == "\u010a");  // Ċ
  CHECK(alphabet['A'] == "A");
  CHECK(alphabet[0xFF] == "\u00ff");
  CHECK(ByteLevelDecode("\u0120hello\u010a") == std::optional<std::string>(" hello\n"));
  CHECK(ByteLevelDecode("\u65e5") == std::nullopt);
}

TEST_CASE("split behaviors follow Hugging Face tokenizers") {
  // "a-b--c" split on "-": segments a | - | b | - | - | c
  std::vector<Segment> s = {{0, 1, false}, {1, 2, true}, {2, 3, false}, {3, 4, true}, {4, 5, true}, {5, 6, false}};
  auto ranges = [](const std::vector<Segment>& out) {
    std::vector<std::pair<size_t, size_t>> r;
    for (const Segment& x : out) r.emplace_back(x.begin, x.end);
    return r;
  };
  using R = std::vector<std::pair<size_t, size_t>>;
  CHECK(ranges(ApplySplitBehavior(s, SplitBehavior::kRemoved)) == R{{0, 1}, {2, 3}, {5, 6}});
  CHECK(ranges(ApplySplitBehavior(s, SplitBehavior::kIsolated)) == R{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}});
  CHECK(ranges(ApplySplitBehavior(s, SplitBehavior::kMergedWithPrevious)) == R{{0, 2}, {2, 4}, {4, 5}, {5, 6}});
  CHECK(ranges(ApplySplitBehavior(s, SplitBehavior::kMergedWithNext)) == R{{0, 1}, {1, 3}, {3, 4}, {4, 6}});
  CHECK(ranges(ApplySplitBehavior(s, SplitBehavior::kContiguous)) == R{{0, 1}, {1, 2}, {2, 3}, {3, 5}, {5, 6}});
}

}  // namespace
}  // namespace accel::tok
