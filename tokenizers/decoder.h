// tokenizer.json "decoder": turns the tokens of decoded ids back into text (Hugging Face
// tokenizers decoders/, Decoder::decode_chain). Supported types: ByteLevel (the GPT-2 alphabet
// back to bytes: GPT-2, Llama-3, Qwen2/Qwen3), Metaspace, and the pieces of Llama-2/Mistral-style
// files: Replace with a String pattern, ByteFallback (<0xXX> tokens to bytes), Fuse, Strip, and
// Sequence of them. Each step rewrites the list of token strings, as decode_chain does; the text
// is the final list joined.
#ifndef ACCEL_TOKENIZERS_DECODER_H_
#define ACCEL_TOKENIZERS_DECODER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/json_document.h"

namespace accel::tok {

// One decoder (or a Sequence of them); immutable, shared by threads.
class Decoder {
 public:
  virtual ~Decoder() = default;

  // Rewrites `tokens` (tokenizer.json's written forms of the ids, in order) in place.
  virtual void DecodeChain(std::vector<std::string>& tokens) const = 0;
};

// Builds the decoder at `field` (an object with "type"). Errors: InvalidArgument located at the
// field for an unsupported type or a missing/mistyped parameter.
absl::StatusOr<std::unique_ptr<Decoder>> MakeDecoder(const JsonDocument& doc, const FieldPath& field);

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_DECODER_H_
