// tokenizer.json "post_processor", reduced to what it does to one sequence: special tokens put
// before and after it (Hugging Face tokenizers processors/). TemplateProcessing: the
// SpecialToken items of "single" before and after Sequence A; RobertaProcessing and
// BertProcessing: cls before, sep after; ByteLevel: nothing (it only adjusts offsets);
// Sequence: each processor wraps the result of the previous one.
#ifndef ACCEL_TOKENIZERS_POST_PROCESSOR_H_
#define ACCEL_TOKENIZERS_POST_PROCESSOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/json_document.h"

namespace accel::tok {

// The ids added around an encoded sequence when special tokens are requested.
struct SpecialWrap {
  std::vector<uint32_t> prefix;
  std::vector<uint32_t> suffix;
};

// Reads the post-processor at `field` (absent or null gives an empty wrap). Errors:
// InvalidArgument located at the field for an unsupported type, a template item that is neither
// SpecialToken nor Sequence, or a special token missing from "special_tokens".
absl::StatusOr<SpecialWrap> ReadPostProcessor(const JsonDocument& doc, const FieldPath& field);

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_POST_PROCESSOR_H_
