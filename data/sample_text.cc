#include "data/sample_text.h"

namespace accel::exec {
namespace {

// Bytes as the sample has always shown them: printable ASCII and newlines, others '?'.
std::string BytesText(const std::vector<int64_t>& ids) {
  std::string out;
  out.reserve(ids.size());
  for (int64_t id : ids) {
    out.push_back((id == '\n' || (id >= 32 && id < 127)) ? static_cast<char>(id) : '?');
  }
  return out;
}

}  // namespace

std::vector<int64_t> SampleContext(const tok::Tokenizer* tokenizer) {
  if (tokenizer == nullptr) return {'\n'};
  std::vector<uint32_t> ids = tokenizer->prefix_tokens();
  if (ids.empty()) ids = tokenizer->Encode("\n", false);
  return std::vector<int64_t>(ids.begin(), ids.end());
}

std::string SampleTextOf(const std::vector<int64_t>& ids, const tok::Tokenizer* tokenizer) {
  if (tokenizer == nullptr) return BytesText(ids);
  std::vector<uint32_t> known;
  known.reserve(ids.size());
  for (int64_t id : ids) {
    if (id >= 0 && id < tokenizer->id_limit()) known.push_back(static_cast<uint32_t>(id));
  }
  std::string text = tokenizer->Decode(known, /*skip_special_tokens=*/false);
  for (char& c : text) {
    const unsigned char b = static_cast<unsigned char>(c);
    if ((b < 32 && c != '\n' && c != '\t') || b == 127) c = '?';
  }
  return text;
}

}  // namespace accel::exec
