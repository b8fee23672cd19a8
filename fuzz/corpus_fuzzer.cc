// libFuzzer target: training data as the workers load it (data/corpus.h LoadCorpus): a
// UTF-8 text file (ReadTextCorpus + ByteTokenizer) or a nanoGPT-style token file (ReadTokenFile,
// uint16 or uint32). Input byte 0 picks the format, byte 1 the vocabulary size; the rest is the
// file, written into a scratch directory.
//
// Invariants (a differential check against independent formulations of the documented rules):
// text loads exactly when it is non-empty, has no NUL and is well-formed UTF-8 by the Unicode
// Standard's table of well-formed byte sequences (Table 3-7), and its tokens are its bytes; a token
// file loads exactly when it is non-empty, a whole number of tokens, and every little-endian token
// is below the vocabulary size.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/utf8.h"
#include "data/byte_tokenizer.h"
#include "data/corpus.h"
#include "data/text_source.h"
#include "fuzz/fuzz_util.h"

namespace {

// Unicode 15, Table 3-7 "Well-Formed UTF-8 Byte Sequences".
bool WellFormedUtf8(std::string_view s) {
  size_t i = 0;
  auto in = [&](size_t k, int lo, int hi) {
    if (i + k >= s.size()) return false;
    const int b = static_cast<uint8_t>(s[i + k]);
    return b >= lo && b <= hi;
  };
  while (i < s.size()) {
    const int b = static_cast<uint8_t>(s[i]);
    int len = 0;
    if (b <= 0x7F) len = 1;
    else if (b >= 0xC2 && b <= 0xDF) len = in(1, 0x80, 0xBF) ? 2 : 0;
    else if (b == 0xE0) len = in(1, 0xA0, 0xBF) && in(2, 0x80, 0xBF) ? 3 : 0;
    else if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) len = in(1, 0x80, 0xBF) && in(2, 0x80, 0xBF) ? 3 : 0;
    else if (b == 0xED) len = in(1, 0x80, 0x9F) && in(2, 0x80, 0xBF) ? 3 : 0;
    else if (b == 0xF0) len = in(1, 0x90, 0xBF) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
    else if (b >= 0xF1 && b <= 0xF3) len = in(1, 0x80, 0xBF) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
    else if (b == 0xF4) len = in(1, 0x80, 0x8F) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
    if (len == 0) return false;
    i += len;
  }
  return true;
}

constexpr int64_t kVocabSizes[] = {256, 1, 100, 50257, 65535, 65536, int64_t{1} << 22, int64_t{1} << 32};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel::exec;
  if (size < 2) return 0;
  const CorpusFormat format = data[0] % 3 == 0   ? CorpusFormat::kText
                              : data[0] % 3 == 1 ? CorpusFormat::kTokensU16
                                                 : CorpusFormat::kTokensU32;
  const int64_t vocab = kVocabSizes[data[1] % (sizeof(kVocabSizes) / sizeof(kVocabSizes[0]))];
  const std::string_view content(reinterpret_cast<const char*>(data) + 2, size - 2);
  const std::string path = accel::fuzz::ScratchDir() + (format == CorpusFormat::kText ? "/train.txt" : "/train.bin");
  accel::fuzz::WriteFileOrDie(path, content);

  ACCEL_FUZZ_CHECK(accel::IsValidUtf8(content) == WellFormedUtf8(content), "IsValidUtf8 disagrees with Table 3-7");
  absl::StatusOr<std::vector<uint32_t>> tokens = LoadCorpus(path, format, vocab);
  if (format == CorpusFormat::kText) {
    const bool loads = vocab >= 256 && !content.empty() && content.find('\0') == std::string_view::npos &&
                       WellFormedUtf8(content);
    ACCEL_FUZZ_CHECK(tokens.ok() == loads, "text corpus: " + tokens.status().ToString());
    if (tokens.ok()) {
      ACCEL_FUZZ_CHECK(*tokens == ByteTokenizer::Encode(content), "text tokens are not its bytes");
      ACCEL_FUZZ_CHECK(ByteTokenizer::Decode(*tokens) == content, "decode(encode(text)) != text");
    }
    return 0;
  }
  const size_t width = format == CorpusFormat::kTokensU16 ? 2 : 4;
  bool loads = !content.empty() && content.size() % width == 0;
  std::vector<uint32_t> expected;
  for (size_t i = 0; loads && i < content.size(); i += width) {
    uint32_t v = 0;
    for (size_t k = 0; k < width; ++k) v |= static_cast<uint32_t>(static_cast<uint8_t>(content[i + k])) << (8 * k);
    expected.push_back(v);
    loads = static_cast<int64_t>(v) < vocab;
  }
  ACCEL_FUZZ_CHECK(tokens.ok() == loads, "token file: " + tokens.status().ToString());
  if (tokens.ok()) ACCEL_FUZZ_CHECK(*tokens == expected, "token file decoded differently");
  return 0;
}
