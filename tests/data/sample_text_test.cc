// The worker's text sample (training.sample_tokens): its starting context and the text printed for
// sampled ids, with bytes and with tokenizer files (tests/testdata/tokenizers). Torch-free, so it runs
// in executor_launcher_test; the worker draws the ids with the model (executor/worker.cc).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "data/sample_text.h"
#include "tokenizers/tokenizer.h"
#include "tests/tokenizers/tokenizer_files.h"

namespace accel::exec {
namespace {

using accel::testing::LoadTokenizerOrDie;

std::vector<int64_t> Wide(const std::vector<uint32_t>& ids) { return std::vector<int64_t>(ids.begin(), ids.end()); }

TEST_CASE("sample with bytes: one byte per id, printable ASCII and newlines") {
  CHECK(SampleContext(nullptr) == std::vector<int64_t>{'\n'});
  CHECK(SampleTextOf({'H', 'i', '\n', 0xC3, 0xA9, 7, 300}, nullptr) == "Hi\n????");
}

TEST_CASE("sample with a tokenizer.json: the decoded text, special tokens shown") {
  auto t = LoadTokenizerOrDie("tiny_bpe.json");
  // Sampling starts after BOS, as every training document does.
  CHECK(SampleContext(t.get()) == std::vector<int64_t>{274});
  const std::string text = "It's caf\u00e9 \u65e5\u672c\n\tthe end";
  CHECK(SampleTextOf(Wide(t->Encode(text, false)), t.get()) == text);
  CHECK(SampleTextOf(Wide(t->Encode("hi<|endoftext|>there", false)), t.get()) == "hi<|endoftext|>there");
  // Ids of a vocabulary padded past the tokenizer's (276 ids) are left out; control characters
  // other than newline and tab are shown as '?'.
  CHECK(SampleTextOf({'a', 276, 100000, 'b', 0x1B, '[', '\r', '\n'}, t.get()) == "ab?[?\n");
}

TEST_CASE("sample with a SentencePiece model: the decoded text") {
  auto t = LoadTokenizerOrDie("fortunes_bpe.model");
  CHECK(SampleContext(t.get()) == std::vector<int64_t>{1});
  const std::string text = "  Hello, world! \u65e5\u672c";
  CHECK(SampleTextOf(Wide(t->Encode(text, false)), t.get()) == text);
}

}  // namespace
}  // namespace accel::exec
