// tokenizer.json "model" of type BPE: a vocabulary and ranked merges (Hugging Face tokenizers
// models/bpe; Sennrich et al. 2016). Encoding a word starts from one symbol per byte (byte-level
// tokenizers) or per character, then repeatedly applies the lowest-ranked merge among adjacent
// symbols, leftmost first. Supports both merges formats ("a b" strings and ["a", "b"] pairs),
// ignore_merges (a word that is itself in the vocabulary is one token), byte_fallback
// (<0xXX> tokens), unk_token and fuse_unk. dropout is ignored (encoding stays deterministic).
#ifndef ACCEL_TOKENIZERS_BPE_MODEL_H_
#define ACCEL_TOKENIZERS_BPE_MODEL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/json_document.h"

namespace accel::tok {

// A memo of encoded words for one thread (BpeModel::Encode is const and shared). Words up to
// kMaxWordBytes long are kept (long whitespace runs in ASCII art are frequent and costly to
// merge); the cache empties itself past kMaxWords words or kMaxBytes bytes of words.
class WordCache {
 public:
  // The ids of `word` when cached.
  std::optional<std::pair<const uint32_t*, size_t>> Find(std::string_view word) const;
  // Remembers the ids of `word`.
  void Insert(std::string_view word, const uint32_t* ids, size_t count);
  // Forgets every word.
  void Clear();

  static constexpr size_t kMaxWords = size_t{1} << 18;
  static constexpr size_t kMaxWordBytes = 1024;
  static constexpr size_t kMaxBytes = size_t{32} << 20;

 private:
  absl::flat_hash_map<std::string, std::pair<uint32_t, uint32_t>> index_;  // word -> (offset, count)
  std::vector<uint32_t> ids_;
  size_t word_bytes_ = 0;
};

// The vocabulary and merges of a BPE model; immutable after FromJson, shared by threads.
class BpeModel {
 public:
  // Reads the model object at `field`. With `byte_level`, vocabulary entries are keyed by the
  // bytes they stand for (byte_level.h). Errors: InvalidArgument located at the offending field:
  // a type other than BPE, missing or mistyped vocab/merges, a merge whose tokens (or their
  // concatenation) are not in the vocabulary, unsupported continuing_subword_prefix or
  // end_of_word_suffix.
  static absl::StatusOr<BpeModel> FromJson(const JsonDocument& doc, const FieldPath& field, bool byte_level);

  // Appends the ids of one pre-tokenized piece to `out`.
  void Encode(std::string_view word, WordCache& cache, std::vector<uint32_t>& out) const;

  // The id of the vocabulary entry written `token` in tokenizer.json, if any.
  std::optional<uint32_t> FindToken(std::string_view token) const;

  // The vocabulary entry of `id` as tokenizer.json writes it ("Ġhello" in a byte-level file), or
  // nullptr when no entry has that id.
  const std::string* TokenOf(uint32_t id) const;

  // One more than the largest id in the vocabulary.
  uint32_t id_limit() const { return id_limit_; }

 private:
  struct Merge {
    uint32_t rank;
    uint32_t id;
  };
  static uint64_t PairKey(uint32_t left, uint32_t right) { return (uint64_t{left} << 32) | right; }
  const Merge* FindMerge(uint32_t left, uint32_t right) const;
  std::optional<uint32_t> FindRaw(std::string_view raw) const;
  void InitialSymbols(std::string_view word, std::vector<uint32_t>& symbols) const;
  void MergeSymbols(std::vector<uint32_t>& symbols) const;

  bool byte_level_ = false;
  bool ignore_merges_ = false;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  std::optional<uint32_t> unk_;
  uint32_t id_limit_ = 0;
  absl::flat_hash_map<std::string, uint32_t> vocab_;  // raw form (bytes when byte-level) -> id
  std::vector<std::string> written_;                  // id -> written form; "" for ids without entry
  std::vector<bool> has_entry_;                       // id -> whether the vocabulary has it
  absl::flat_hash_map<uint64_t, Merge> merges_;
  std::array<std::optional<uint32_t>, 256> byte_ids_{};  // byte-level: the id of each single byte
  std::array<std::optional<uint32_t>, 256> fallback_ids_{};  // byte_fallback: the id of <0xXX>
};

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_BPE_MODEL_H_
