// Added tokens of tokenizer.json ("added_tokens": special tokens such as <|endoftext|> and other
// tokens added after training). As in Hugging Face tokenizers (added_vocabulary.rs), they are
// found in the raw text first, leftmost-longest, and the text between them goes through the
// normalizer, pre-tokenizer and model. lstrip/rstrip swallow adjacent whitespace; single_word
// tokens match only between non-word characters. Tokens are matched in the raw text, also those
// marked "normalized" (accel does not normalize before matching).
#ifndef ACCEL_TOKENIZERS_ADDED_TOKENS_H_
#define ACCEL_TOKENIZERS_ADDED_TOKENS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/json_document.h"

namespace accel::tok {

// One entry of "added_tokens", with the fields of tokenizers' AddedToken that encoding uses.
struct AddedToken {
  std::string content;       // the exact text that becomes this token
  uint32_t id = 0;
  bool special = false;      // not used for encoding (all added tokens are split out); decoding
                             // leaves special tokens out when asked to (skip_special_tokens)
  bool lstrip = false;       // swallow whitespace before the token
  bool rstrip = false;       // swallow whitespace after the token
  bool single_word = false;  // match only between non-word characters
};

// Reads "added_tokens" (absent or null means none). Errors: InvalidArgument located at an entry
// that is not an object with a non-empty "content" string and an "id".
absl::StatusOr<std::vector<AddedToken>> ReadAddedTokens(const JsonDocument& doc);

// A run of text to encode (token empty), or an added token.
struct Section {
  std::string_view text;
  std::optional<uint32_t> token;
};

// Finds added tokens in text, leftmost-longest.
class AddedTokenSplitter {
 public:
  explicit AddedTokenSplitter(std::vector<AddedToken> tokens);

  // Appends the sections of `text` in order; empty text runs are left out.
  void Split(std::string_view text, std::vector<Section>& out) const;

  // The id of the added token whose content is `content`, if any.
  std::optional<uint32_t> Find(std::string_view content) const;

  // The added token with id `id`, if any (the first listed when several share it).
  const AddedToken* FindId(uint32_t id) const;

  bool empty() const { return tokens_.empty(); }

  // True when cutting a text before a line start changes no match: no token contains '\n' and
  // none has lstrip (which would swallow the newline before the cut).
  bool LineLocal() const;

 private:
  // The longest token matching at `pos` (nullptr if none).
  const AddedToken* MatchAt(std::string_view text, size_t pos) const;

  std::vector<AddedToken> tokens_;
  std::array<std::vector<uint32_t>, 256> by_first_byte_;  // indices into tokens_, longest first
  absl::flat_hash_map<uint32_t, uint32_t> by_id_;         // id -> index into tokens_
};

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_ADDED_TOKENS_H_
