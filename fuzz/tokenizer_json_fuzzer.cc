// libFuzzer target: a Hugging Face tokenizer.json (`accel tokenize --tokenizer`), read by
// tok::HfTokenizer::Parse, then used to encode text. The input is the file, optionally followed by
// "\n--accel-fuzz-text--\n" and text to encode with it.
//
// Invariants: an error names the file and a line:column inside the text ("tokenizer.json:L:C: ...");
// a tokenizer that loads encodes any bytes (valid UTF-8 or not) into ids below id_limit(), and
// encoding in chunks at line starts gives the same ids when the tokenizer says it may.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/utf8.h"
#include "fuzz/fuzz_util.h"
#include "tokenizers/corpus_encoder.h"
#include "tokenizers/hf_tokenizer.h"

namespace {

// Checks "tokenizer.json:LINE:COL: " at the start of message, with LINE within the text.
void CheckLocatedError(std::string_view message, std::string_view text) {
  const std::string_view prefix = "tokenizer.json:";
  ACCEL_FUZZ_CHECK(message.substr(0, prefix.size()) == prefix, "error without the file name: " + std::string(message));
  size_t line = 0, i = prefix.size();
  while (i < message.size() && message[i] >= '0' && message[i] <= '9') line = line * 10 + (message[i++] - '0');
  size_t lines = 1;
  for (char c : text) lines += c == '\n';
  ACCEL_FUZZ_CHECK(line >= 1 && line <= lines, "error located outside the text: " + std::string(message));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts = fuzz::Split(input, "\n--accel-fuzz-text--\n", 2);
  const std::string_view json = parts[0];
  const std::string_view text = parts.size() > 1 ? parts[1] : std::string_view("Hello, world!\n  It's 12345.");
  absl::StatusOr<std::unique_ptr<tok::HfTokenizer>> t = tok::HfTokenizer::Parse("tokenizer.json", std::string(json));
  if (!t.ok()) {
    const auto message = t.status().message();
    CheckLocatedError(std::string_view(message.data(), message.size()), json);
    return 0;
  }
  std::vector<uint32_t> ids = (*t)->Encode(text);
  for (uint32_t id : ids) ACCEL_FUZZ_CHECK(id < (*t)->id_limit(), "id " + std::to_string(id) + " >= id_limit");
  if ((*t)->SplitsAtLineStarts()) {
    tok::EncodeCorpusOptions options;
    options.chunk_bytes = 1;
    std::string valid = ReplaceInvalidUtf8(text);
    ACCEL_FUZZ_CHECK(tok::EncodeCorpus(**t, {valid}, options) == (*t)->Encode(valid), "chunked encoding differs");
  }
  return 0;
}
