// Subword tokenizers for training data: Hugging Face tokenizer.json files (byte-level BPE: GPT-2,
// Llama-3, Qwen2/Qwen3) and SentencePiece tokenizer.model files (Llama-2, Mistral). The executor
// and `accel tokenize` use them through this interface:
//   absl::StatusOr<std::unique_ptr<Tokenizer>> t = Tokenizer::Load("tokenizer.json");
//   std::vector<uint32_t> ids = (*t)->Encode("Hello world");
//   std::string text = (*t)->Decode(ids);  // "<|begin_of_text|>Hello world" (Llama-3)
// Thread-safe: Encode and Decode may be called from many threads at once.
#ifndef ACCEL_TOKENIZERS_TOKENIZER_H_
#define ACCEL_TOKENIZERS_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace accel::tok {

// A loaded tokenizer: HfTokenizer (tokenizer.json) or SentencePieceTokenizer (tokenizer.model).
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Loads a tokenizer file: a *.json file or JSON text (first non-space byte '{' or '[') is read
  // as a Hugging Face tokenizer.json, anything else as a SentencePiece model. Errors: NotFound "tokenizer file does
  // not exist: PATH"; InvalidArgument "PATH:LINE:COL: FIELD: MESSAGE" for a tokenizer.json that
  // is malformed or uses something accel does not support, "PATH: not a SentencePiece model:
  // MESSAGE" for other files.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& path);

  // The ids of `text`; with add_special_tokens, wrapped in prefix_tokens() and suffix_tokens()
  // (BOS/EOS as the tokenizer file defines them). Text that is not valid UTF-8 is encoded as if
  // each invalid byte were U+FFFD.
  std::vector<uint32_t> Encode(std::string_view text, bool add_special_tokens = true) const;

  // Appends the ids of `text` without special tokens around it.
  virtual void EncodeInto(std::string_view text, std::vector<uint32_t>& out) const = 0;

  // The text of `ids`, as the tokenizer's own library decodes them: for tokenizer.json, Hugging
  // Face tokenizers' Tokenizer::decode (the file's "decoder"; without one, the tokens joined by
  // spaces); for a SentencePiece model, SentencePieceProcessor::DecodeIds. Special tokens: by
  // default (skip_special_tokens false, as in tokenizers) an added token of tokenizer.json shows as
  // its text ("<|endoftext|>"); with skip_special_tokens those marked "special" are left out.
  // SentencePiece always leaves out control pieces (<s>, </s>) and shows <unk> as " ⁇ ", as
  // DecodeIds does. Ids at or past id_limit() are left out. The result is valid UTF-8: bytes that
  // do not form UTF-8 become U+FFFD as each library does (byte-level: one per maximal subpart;
  // ByteFallback and SentencePiece byte pieces: one per byte).
  std::string Decode(const std::vector<uint32_t>& ids, bool skip_special_tokens = false) const {
    return DecodeIds(ids, skip_special_tokens);
  }

  // Decode, as each kind of tokenizer implements it.
  virtual std::string DecodeIds(const std::vector<uint32_t>& ids, bool skip_special_tokens) const = 0;

  // Ids put before / after a sequence when special tokens are requested.
  virtual const std::vector<uint32_t>& prefix_tokens() const = 0;
  virtual const std::vector<uint32_t>& suffix_tokens() const = 0;

  // One more than the largest id Encode can return.
  virtual uint32_t id_limit() const = 0;

  // True when encoding a text equals encoding its parts and concatenating, for texts cut right
  // before an ASCII letter or digit that starts a line ("...\nThe"). `accel tokenize` cuts large
  // documents there to encode them in parallel; other tokenizers get one document per thread.
  virtual bool SplitsAtLineStarts() const = 0;

  // "tokenizer.json (BPE, byte-level)" or "SentencePiece (BPE)": what was loaded, for messages.
  virtual std::string Describe() const = 0;
};

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_TOKENIZER_H_
