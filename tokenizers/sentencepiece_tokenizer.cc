#include "tokenizers/sentencepiece_tokenizer.h"

#include <algorithm>
#include <queue>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "common/utf8.h"
#include "tokenizers/sentencepiece_model.pb.h"

namespace accel::tok {
namespace {

constexpr std::string_view kSpaceSymbol = "\xe2\x96\x81";  // U+2581, "▁"

// A symbol of the text being merged: a view into the normalized text, linked to its neighbours.
struct Symbol {
  std::string_view piece;
  int prev;
  int next;
  bool frozen;  // a user-defined symbol, never merged
};

// A candidate merge of symbols left and right; best score first, then leftmost (bpe_model.cc).
struct Candidate {
  int left;
  int right;
  float score;
  size_t size;
  bool operator<(const Candidate& other) const {
    return score < other.score || (score == other.score && left > other.left);
  }
};

// The byte of a byte piece "<0xXX>".
std::optional<char> ByteOfPiece(std::string_view piece) {
  unsigned value = 0;
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece.back() != '>') return std::nullopt;
  for (char c : piece.substr(3, 2)) {
    if (c >= '0' && c <= '9') {
      value = value * 16 + (c - '0');
    } else if (c >= 'A' && c <= 'F') {
      value = value * 16 + (c - 'A' + 10);
    } else {
      return std::nullopt;
    }
  }
  return static_cast<char>(value);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Parse(const std::string& file,
                                                                                     std::string_view serialized) {
  spm::ModelProto model;
  if (!model.ParseFromArray(serialized.data(), static_cast<int>(serialized.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": not a SentencePiece model: not a ModelProto"));
  }
  if (model.pieces_size() == 0) return absl::InvalidArgumentError(absl::StrCat(file, ": not a SentencePiece model: no pieces"));
  const spm::TrainerSpec& trainer = model.trainer_spec();
  const spm::NormalizerSpec& normalizer = model.normalizer_spec();
  if (trainer.model_type() != spm::TrainerSpec::BPE) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": unsupported SentencePiece model: model type ",
                                                   spm::TrainerSpec::ModelType_Name(trainer.model_type()),
                                                   "; accel supports BPE models (Llama-2, Mistral)"));
  }
  if (!normalizer.precompiled_charsmap().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": unsupported SentencePiece model: normalization '",
                                                   normalizer.name(), "'; accel supports identity normalization"));
  }
  std::unique_ptr<SentencePieceTokenizer> t(new SentencePieceTokenizer());
  t->byte_fallback_ = trainer.byte_fallback();
  t->add_dummy_prefix_ = normalizer.add_dummy_prefix();
  t->remove_extra_whitespaces_ = normalizer.remove_extra_whitespaces();
  t->escape_whitespaces_ = normalizer.escape_whitespaces();
  t->whitespace_as_suffix_ = trainer.treat_whitespace_as_suffix();
  t->unk_id_ = trainer.unk_id() >= 0 && trainer.unk_id() < model.pieces_size() ? trainer.unk_id() : 0;
  for (int id = 0; id < model.pieces_size(); ++id) {
    const spm::ModelProto::SentencePiece& p = model.pieces(id);
    using Type = spm::ModelProto::SentencePiece;
    t->scores_.push_back(p.score());
    t->unused_.push_back(p.type() == Type::UNUSED);
    t->piece_of_.push_back(p.piece());
    t->kind_of_.push_back(p.type() == Type::CONTROL ? Kind::kControl
                          : p.type() == Type::UNKNOWN ? Kind::kUnknown
                          : p.type() == Type::BYTE    ? Kind::kByte
                                                      : Kind::kText);
    if (p.type() == Type::NORMAL || p.type() == Type::USER_DEFINED || p.type() == Type::UNUSED) {
      t->pieces_.emplace(p.piece(), id);
    } else {
      t->reserved_.emplace(p.piece(), id);
    }
    if (p.type() == Type::USER_DEFINED && !p.piece().empty()) t->user_defined_.push_back(p.piece());
    if (p.type() == Type::BYTE) {
      for (int b = 0; b < 256; ++b) {
        if (p.piece() == absl::StrFormat("<0x%02X>", b)) t->byte_ids_[b] = id;
      }
    }
  }
  std::sort(t->user_defined_.begin(), t->user_defined_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  if (trainer.bos_id() >= 0 && trainer.bos_id() < model.pieces_size()) t->prefix_.push_back(trainer.bos_id());
  return t;
}

size_t SentencePieceTokenizer::MatchUserDefined(std::string_view text) const {
  for (const std::string& symbol : user_defined_) {
    if (text.substr(0, symbol.size()) == symbol) return symbol.size();
  }
  return 0;
}

std::string SentencePieceTokenizer::Normalize(std::string_view text) const {
  std::string out;
  if (remove_extra_whitespaces_) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  }
  if (text.empty()) return out;
  const std::string_view space = escape_whitespaces_ ? kSpaceSymbol : std::string_view(" ");
  if (!whitespace_as_suffix_ && add_dummy_prefix_) out.append(space);
  bool previous_space = remove_extra_whitespaces_;
  while (!text.empty()) {
    // One user-defined symbol or one character (identity normalization).
    size_t length = MatchUserDefined(text);
    if (length == 0) length = std::min(Utf8LengthOfLead(static_cast<unsigned char>(text.front())), text.size());
    std::string_view unit = text.substr(0, length);
    text.remove_prefix(length);
    while (previous_space && !unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    if (!unit.empty()) {
      for (char c : unit) {
        if (c == ' ') {
          out.append(space);
        } else {
          out.push_back(c);
        }
      }
      previous_space = unit.back() == ' ';
    }
    if (!remove_extra_whitespaces_) previous_space = false;
  }
  if (remove_extra_whitespaces_) {
    while (out.size() >= space.size() && std::string_view(out).substr(out.size() - space.size()) == space) {
      out.resize(out.size() - space.size());
    }
  }
  if (whitespace_as_suffix_ && add_dummy_prefix_) out.append(space);
  return out;
}

void SentencePieceTokenizer::EmitPiece(std::string_view piece, std::vector<uint32_t>& out, bool& previous_unknown) const {
  auto reserved = reserved_.find(absl::string_view(piece.data(), piece.size()));
  auto normal = pieces_.find(absl::string_view(piece.data(), piece.size()));
  std::optional<uint32_t> id = reserved != reserved_.end() ? std::optional<uint32_t>(reserved->second)
                               : normal != pieces_.end()   ? std::optional<uint32_t>(normal->second)
                                                           : std::nullopt;
  const bool unknown = !id || *id == unk_id_;
  if (unknown && byte_fallback_) {
    for (char c : piece) {
      std::optional<uint32_t> byte = byte_ids_[static_cast<unsigned char>(c)];
      out.push_back(byte ? *byte : unk_id_);
    }
  } else if (!(unknown && previous_unknown)) {
    // Consecutive unknown pieces become one unknown id (sentencepiece_processor.cc).
    out.push_back(unknown ? unk_id_ : *id);
  }
  previous_unknown = unknown;
}

void SentencePieceTokenizer::EncodeInto(std::string_view text, std::vector<uint32_t>& out) const {
  // sentencepiece reads an invalid byte as U+FFFD, as ReplaceInvalidUtf8 does.
  std::string repaired;
  if (!IsValidUtf8(text)) {
    repaired = ReplaceInvalidUtf8(text);
    text = repaired;
  }
  const std::string normalized = Normalize(text);
  std::vector<Symbol> symbols;
  for (std::string_view rest = normalized; !rest.empty();) {
    size_t length = MatchUserDefined(rest);
    bool frozen = length > 0;
    if (!frozen) length = std::min(Utf8LengthOfLead(static_cast<unsigned char>(rest.front())), rest.size());
    int index = static_cast<int>(symbols.size());
    symbols.push_back({rest.substr(0, length), index - 1, rest.size() > length ? index + 1 : -1, frozen});
    rest.remove_prefix(length);
  }
  std::priority_queue<Candidate> agenda;
  absl::flat_hash_map<std::string, std::pair<std::string_view, std::string_view>> unmerge;  // for unused pieces
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0 || symbols[left].frozen || symbols[right].frozen) return;
    std::string_view merged(symbols[left].piece.data(), symbols[left].piece.size() + symbols[right].piece.size());
    auto it = pieces_.find(absl::string_view(merged.data(), merged.size()));
    if (it == pieces_.end()) return;
    agenda.push({left, right, scores_[it->second], merged.size()});
    if (unused_[it->second]) unmerge[std::string(merged)] = {symbols[left].piece, symbols[right].piece};
  };
  for (size_t i = 1; i < symbols.size(); ++i) consider(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!agenda.empty()) {
    Candidate top = agenda.top();
    agenda.pop();
    Symbol& left = symbols[top.left];
    Symbol& right = symbols[top.right];
    if (left.piece.empty() || right.piece.empty() || left.piece.size() + right.piece.size() != top.size) continue;
    left.piece = std::string_view(left.piece.data(), top.size);
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    right.piece = std::string_view();
    consider(left.prev, top.left);
    consider(top.left, left.next);
  }
  // Unused pieces are split back into the pieces they were merged from (bpe_model.cc resegment).
  bool previous_unknown = false;
  std::vector<std::string_view> stack;
  for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) {
    stack.assign(1, symbols[i].piece);
    while (!stack.empty()) {
      std::string_view piece = stack.back();
      stack.pop_back();
      auto normal = pieces_.find(absl::string_view(piece.data(), piece.size()));
      auto parts = unmerge.find(absl::string_view(piece.data(), piece.size()));
      if (normal != pieces_.end() && unused_[normal->second] && parts != unmerge.end()) {
        stack.push_back(parts->second.second);
        stack.push_back(parts->second.first);
        continue;
      }
      EmitPiece(piece, out, previous_unknown);
    }
  }
}

std::string SentencePieceTokenizer::DecodePiece(uint32_t id, bool first) const {
  if (kind_of_[id] == Kind::kUnknown) return " \xE2\x81\x87 ";  // kDefaultUnknownSymbol, " ⁇ "
  std::string_view piece = piece_of_[id];
  if (first && !whitespace_as_suffix_ && (add_dummy_prefix_ || remove_extra_whitespaces_) &&
      piece.starts_with(kSpaceSymbol)) {
    piece.remove_prefix(kSpaceSymbol.size());
  }
  return absl::StrReplaceAll(absl::string_view(piece.data(), piece.size()),
                             {{absl::string_view(kSpaceSymbol.data(), kSpaceSymbol.size()), " "}});
}

std::string SentencePieceTokenizer::DecodeIds(const std::vector<uint32_t>& ids, bool skip_special_tokens) const {
  std::string text;
  std::string bytes;  // a run of byte pieces not yet decoded
  auto flush = [&] {
    // Each valid character as it is, each other byte as U+FFFD (ProcessBytePieces).
    text += ReplaceInvalidUtf8(bytes);
    bytes.clear();
  };
  bool first = true;  // no piece but control pieces so far
  for (uint32_t id : ids) {
    if (id >= kind_of_.size() || kind_of_[id] == Kind::kControl) continue;
    if (kind_of_[id] == Kind::kByte) {
      std::optional<char> byte = ByteOfPiece(piece_of_[id]);
      if (byte) bytes.push_back(*byte);
    } else {
      flush();
      text += DecodePiece(id, first);
    }
    first = false;
  }
  flush();
  return text;
}

std::string SentencePieceTokenizer::Describe() const {
  return absl::StrCat("SentencePiece model (BPE, ", scores_.size(), " ids)");
}

}  // namespace accel::tok
