// One entry point from a data path and its format to the token stream the dataset windows.
#ifndef ACCEL_DATA_CORPUS_H_
#define ACCEL_DATA_CORPUS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace accel::exec {

// How a data path is stored. kText: a UTF-8 file or directory tree read by ReadTextCorpus and
// tokenized with ByteTokenizer (vocabulary 256). kTokensU16 / kTokensU32: a nanoGPT-style flat
// token file (ReadTokenFile).
enum class CorpusFormat { kText, kTokensU16, kTokensU32 };

// The tokens of path. vocab_size bounds every token id (checked for token files, whose ids come
// from an external tokenizer). Errors: those of ReadTextCorpus / ReadTokenFile; InvalidArgument
// "PATH: token T at index I is outside the vocabulary of V" and "byte-level text needs vocab_size
// >= 256, got V".
absl::StatusOr<std::vector<uint32_t>> LoadCorpus(const std::string& path, CorpusFormat format, int64_t vocab_size);

}  // namespace accel::exec

#endif  // ACCEL_DATA_CORPUS_H_
