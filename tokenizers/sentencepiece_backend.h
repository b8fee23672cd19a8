// The sentencepiece library behind a header free of its types. sentencepiece_processor.h declares
// `namespace absl { using std::string_view; }`, which clashes with Debian's Abseil (whose
// absl::string_view is its own class), so only sentencepiece_backend.cc includes it and that file
// includes no Abseil header.
#ifndef ACCEL_TOKENIZERS_SENTENCEPIECE_BACKEND_H_
#define ACCEL_TOKENIZERS_SENTENCEPIECE_BACKEND_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace accel::tok {

class SentencePieceBackend {
 public:
  ~SentencePieceBackend();

  // Loads a serialized ModelProto; nullptr with the library's message in *error on failure.
  static std::unique_ptr<SentencePieceBackend> Load(std::string_view serialized, std::string* error);

  // Appends the ids of text.
  void Encode(std::string_view text, std::vector<int>& ids) const;

  int piece_count() const;
  int bos_id() const;  // -1 when the model has no BOS

 private:
  struct Impl;
  explicit SentencePieceBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_SENTENCEPIECE_BACKEND_H_
