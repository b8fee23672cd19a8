// A SentencePiece BPE model (tokenizer.model of Llama-2, Mistral; Kudo & Richardson 2018), read
// and run by accel itself, following google/sentencepiece (normalizer.cc, bpe_model.cc,
// sentencepiece_processor.cc). libsentencepiece is not used: it carries its own copy of protobuf
// 3.14, which aborts in a process that also loads the system's protobuf (as `accel` does).
// Supported: BPE models with identity normalization (no precompiled charsmap), dummy prefix,
// whitespace escaping and folding, user-defined symbols, unused pieces, byte fallback. Encode
// adds BOS before a sequence when the model defines one, as Llama-2 and Mistral do, and no EOS.
// Decode follows SentencePieceProcessor::Decode: control pieces vanish, the unknown piece shows as
// " ⁇ ", runs of byte pieces become their UTF-8 characters (U+FFFD for each byte that is not
// part of one), "▁" becomes a space, and the "▁" that starts the first piece other than control
// pieces is dropped (the dummy prefix; also with remove_extra_whitespaces), as spm_decode 0.1.97
// does.
#ifndef ACCEL_TOKENIZERS_SENTENCEPIECE_TOKENIZER_H_
#define ACCEL_TOKENIZERS_SENTENCEPIECE_TOKENIZER_H_

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "tokenizers/tokenizer.h"

namespace accel::tok {

class SentencePieceTokenizer : public Tokenizer {
 public:
  // Parses a serialized ModelProto read from `file`. Errors: InvalidArgument "FILE: not a
  // SentencePiece model: REASON" when it does not parse or has no pieces, "FILE: unsupported
  // SentencePiece model: REASON" for Unigram/word/char models or a precompiled normalizer.
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> Parse(const std::string& file,
                                                                      std::string_view serialized);

  void EncodeInto(std::string_view text, std::vector<uint32_t>& out) const override;
  // skip_special_tokens changes nothing: control pieces are always left out, as in sentencepiece.
  std::string DecodeIds(const std::vector<uint32_t>& ids, bool skip_special_tokens) const override;
  const std::vector<uint32_t>& prefix_tokens() const override { return prefix_; }
  const std::vector<uint32_t>& suffix_tokens() const override { return suffix_; }
  uint32_t id_limit() const override { return static_cast<uint32_t>(scores_.size()); }
  // The dummy prefix "▁" starts every encoded text, so cutting a document would add one per cut.
  bool SplitsAtLineStarts() const override { return false; }
  std::string Describe() const override;

 private:
  SentencePieceTokenizer() = default;
  // The text as the model sees it: dummy prefix, spaces as "▁", extra spaces removed.
  std::string Normalize(std::string_view text) const;
  // Length of the user-defined symbol at the start of text (0 if none).
  size_t MatchUserDefined(std::string_view text) const;
  // Appends the id of `piece`, or its byte pieces / the unknown id when it is not a piece.
  void EmitPiece(std::string_view piece, std::vector<uint32_t>& out, bool& previous_unknown) const;

  // How a piece decodes.
  enum class Kind : uint8_t { kText, kControl, kUnknown, kByte };
  // The text of one text or unknown piece; `first`: no piece but control pieces came before it.
  std::string DecodePiece(uint32_t id, bool first) const;

  std::vector<std::string> piece_of_;  // id -> piece
  std::vector<Kind> kind_of_;          // id -> how it decodes
  absl::flat_hash_map<std::string, uint32_t> pieces_;    // normal, user-defined and unused pieces
  absl::flat_hash_map<std::string, uint32_t> reserved_;  // control, unknown and byte pieces
  std::vector<float> scores_;
  std::vector<bool> unused_;
  std::vector<std::string> user_defined_;  // longest first
  std::array<std::optional<uint32_t>, 256> byte_ids_{};
  uint32_t unk_id_ = 0;
  bool byte_fallback_ = false;
  bool add_dummy_prefix_ = true;
  bool remove_extra_whitespaces_ = true;
  bool escape_whitespaces_ = true;
  bool whitespace_as_suffix_ = false;
  std::vector<uint32_t> prefix_;
  std::vector<uint32_t> suffix_;
};

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_SENTENCEPIECE_TOKENIZER_H_
