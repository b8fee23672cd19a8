// libFuzzer target: a SentencePiece tokenizer.model (`accel tokenize --tokenizer`), read by
// tok::SentencePieceTokenizer::Parse (accel's own ModelProto reader), then used to encode text.
// The input is the model, optionally followed by "--accel-fuzz-text--" and text to encode.
//
// Invariants: an error names the file; a model that loads encodes any bytes into ids below
// id_limit(), the same ids twice.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "tokenizers/sentencepiece_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts = fuzz::Split(input, "--accel-fuzz-text--", 2);
  const std::string_view text = parts.size() > 1 ? parts[1] : std::string_view(" Hello,  world!\n\t12345 \xff");
  absl::StatusOr<std::unique_ptr<tok::SentencePieceTokenizer>> t = tok::SentencePieceTokenizer::Parse("tokenizer.model", parts[0]);
  if (!t.ok()) {
    const auto message = t.status().message();
    ACCEL_FUZZ_CHECK(std::string_view(message.data(), message.size()).substr(0, 16) == "tokenizer.model:",
                     "error without the file name");
    return 0;
  }
  std::vector<uint32_t> ids = (*t)->Encode(text);
  for (uint32_t id : ids) ACCEL_FUZZ_CHECK(id < (*t)->id_limit(), "id " + std::to_string(id) + " >= id_limit");
  ACCEL_FUZZ_CHECK((*t)->Encode(text) == ids, "encoding is not deterministic");
  return 0;
}
