// Encoding a training-data path (a text file or a directory of them) with a tokenizer: the one
// definition both `accel tokenize` and the executor (data.train.tokenizer, format text) use, so
// a run that tokenizes on the fly trains on exactly the ids `accel tokenize` writes.
#ifndef ACCEL_DATA_TEXT_CORPUS_H_
#define ACCEL_DATA_TEXT_CORPUS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tokenizers/tokenizer.h"

namespace accel::tok {

// The documents of a data path: the contents of every file of exec::ListTextFiles(path), in that
// order (byte-wise sorted paths; one document per file). Errors: those of ListTextFiles; Internal
// "cannot read data file: FILE".
absl::StatusOr<std::vector<std::string>> ReadTextDocuments(const std::string& path);

// The ids of every document of `path`, concatenated in order, each document wrapped in the
// tokenizer's prefix/suffix tokens (BOS/EOS as its file defines them) when add_special_tokens.
// Encoded on `threads` threads (at least 1); the ids do not depend on the thread count
// (EncodeCorpus). Errors: those of ReadTextDocuments; InvalidArgument "the input encodes to no
// tokens: PATH".
absl::StatusOr<std::vector<uint32_t>> EncodeTextPath(const Tokenizer& tokenizer, const std::string& path,
                                                     int threads, bool add_special_tokens = true);

}  // namespace accel::tok

#endif  // ACCEL_DATA_TEXT_CORPUS_H_
