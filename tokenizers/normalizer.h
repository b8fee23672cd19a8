// tokenizer.json "normalizer": rewrites text before pre-tokenization (Hugging Face tokenizers
// normalizers/). Supported types: NFC, NFD, NFKC, NFKD (ICU), Lowercase, Prepend, Replace with a
// String pattern, and Sequence of them. Added tokens are split out before normalizing.
#ifndef ACCEL_TOKENIZERS_NORMALIZER_H_
#define ACCEL_TOKENIZERS_NORMALIZER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/json_document.h"

namespace accel::tok {

// One normalizer (or a Sequence of them); immutable, shared by threads.
class Normalizer {
 public:
  virtual ~Normalizer() = default;

  // Rewrites `text` (valid UTF-8) in place.
  virtual void Apply(std::string& text) const = 0;

  // True when normalizing a text equals normalizing its lines separately and joining them (it
  // holds for Unicode normal forms and lower-casing, not for Prepend): `accel tokenize` may then
  // split documents at line starts.
  virtual bool LineLocal() const = 0;
};

// Builds the normalizer at `field` (an object with "type"). Errors: InvalidArgument located at
// the field for an unknown or unsupported type or a missing/mistyped parameter.
absl::StatusOr<std::unique_ptr<Normalizer>> MakeNormalizer(const JsonDocument& doc, const FieldPath& field);

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_NORMALIZER_H_
