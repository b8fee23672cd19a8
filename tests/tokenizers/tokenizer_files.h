// Test helpers: the tokenizer files under tests/testdata/tokenizers and loading one of them.
#ifndef ACCEL_TESTS_TOKENIZERS_TOKENIZER_FILES_H_
#define ACCEL_TESTS_TOKENIZERS_TOKENIZER_FILES_H_

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "tokenizers/tokenizer.h"

namespace accel::testing {

// The path of tests/testdata/tokenizers/NAME (ACCEL_SOURCE_ROOT is the repository root).
inline std::string TokenizerDataPath(const std::string& name) {
  return std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/" + name;
}

// Loads tests/testdata/tokenizers/NAME; fails the test case, with the error, when it does not load.
inline std::unique_ptr<tok::Tokenizer> LoadTokenizerOrDie(const std::string& name) {
  absl::StatusOr<std::unique_ptr<tok::Tokenizer>> t = tok::Tokenizer::Load(TokenizerDataPath(name));
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return std::move(*t);
}

}  // namespace accel::testing

#endif  // ACCEL_TESTS_TOKENIZERS_TOKENIZER_FILES_H_
