#include "data/plan_tokens.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "data/byte_tokenizer.h"
#include "data/text_source.h"
#include "data/token_file.h"
#include "ir/enum_names.h"
#include "tokenizers/hf_tokenizer.h"
#include "data/text_corpus.h"

namespace accel::exec {

absl::StatusOr<std::unique_ptr<tok::Tokenizer>> LoadPlanTokenizer(const ir::Data& data) {
  const ir::TokenizerKind kind = data.tokenizer();
  if (kind == ir::TOKENIZER_KIND_UNSPECIFIED || kind == ir::TOKENIZER_KIND_BYTES) {
    return std::unique_ptr<tok::Tokenizer>();
  }
  if (kind != ir::TOKENIZER_KIND_HUGGINGFACE && kind != ir::TOKENIZER_KIND_SENTENCEPIECE) {
    return absl::InvalidArgumentError(absl::StrCat("tokenizer kind is ", std::string(ir::Name(kind)),
                                                   ": expected bytes, huggingface or sentencepiece"));
  }
  absl::StatusOr<std::unique_ptr<tok::Tokenizer>> tokenizer = tok::Tokenizer::Load(data.tokenizer_path());
  if (!tokenizer.ok()) return tokenizer.status();
  // Load reads JSON text as a tokenizer.json whatever its name: the planner's kind (from the
  // name) and the content must agree, or the plan would not say what runs.
  const bool is_json = dynamic_cast<const tok::HfTokenizer*>(tokenizer->get()) != nullptr;
  if (is_json != (kind == ir::TOKENIZER_KIND_HUGGINGFACE)) {
    return absl::InvalidArgumentError(absl::StrCat(data.tokenizer_path(), ": planned as ",
                                                   std::string(ir::Name(kind)), " but the file is ",
                                                   (*tokenizer)->Describe()));
  }
  return tokenizer;
}

absl::StatusOr<std::vector<uint32_t>> LoadPlanTokens(const ir::Data& data, int64_t vocab_size, int threads) {
  absl::StatusOr<std::vector<uint32_t>> tokens;
  if (data.format() == ir::DATA_FORMAT_TOKENS) {
    tokens = ReadTokenFile(data.path(), data.token_dtype() == ir::TOKEN_DTYPE_UINT32 ? TokenWidth::kUint32
                                                                                 : TokenWidth::kUint16);
  } else {
    absl::StatusOr<std::unique_ptr<tok::Tokenizer>> tokenizer = LoadPlanTokenizer(data);
    if (!tokenizer.ok()) return tokenizer.status();
    if (*tokenizer == nullptr) {
      absl::StatusOr<std::string> text = ReadTextCorpus(data.path());
      if (!text.ok()) return text.status();
      tokens = ByteTokenizer::Encode(*text);
    } else {
      tokens = tok::EncodeTextPath(**tokenizer, data.path(), threads);
    }
  }
  if (!tokens.ok()) return tokens.status();
  auto too_big = std::find_if(tokens->begin(), tokens->end(),
                              [vocab_size](uint32_t t) { return t >= vocab_size; });
  if (too_big != tokens->end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(data.path(), ": token ", *too_big, " at position ", too_big - tokens->begin(),
                     " is outside the model's vocabulary of ", vocab_size));
  }
  return tokens;
}

}  // namespace accel::exec
