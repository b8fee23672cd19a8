// Malformed tokenizer files give one clear message naming the file, line:column and field.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/remove_tree.h"
#include "tokenizers/tokenizer.h"

namespace accel::tok {
namespace {

namespace fs = std::filesystem;

// A directory of this test's own, removed at the end.
class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("accel-tokenizer-test-" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    RemoveTree(path_.string(), ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string file = (path_ / name).string();
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

 private:
  fs::path path_;
};

// The error message of loading `text` as NAME, with the directory stripped from it.
std::string LoadError(const std::string& name, const std::string& text) {
  TempDir dir;
  std::string path = dir.Write(name, text);
  absl::StatusOr<std::unique_ptr<Tokenizer>> t = Tokenizer::Load(path);
  REQUIRE(!t.ok());
  std::string message(t.status().message());
  std::string prefix = path.substr(0, path.size() - name.size());
  if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
  return message;
}

const char* kGoodModel = R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";

std::string WithModel(const std::string& rest) { return std::string("{\n") + rest + ",\n " + kGoodModel + "\n}\n"; }

TEST_CASE("a well-formed minimal file loads") {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<Tokenizer>> t = Tokenizer::Load(dir.Write("ok.json", WithModel(R"( "normalizer": null)")));
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  // No pre-tokenizer: the whole text is one word.
  CHECK((*t)->Encode("abab", false) == std::vector<uint32_t>{2, 2});
  CHECK(!(*t)->SplitsAtLineStarts());
}

TEST_CASE("bad JSON names the line and column") {
  CHECK(LoadError("t.json", "{\n  \"model\": {\"type\": \"BPE\",}\n}") ==
        "t.json:2:27: invalid JSON: syntax error while parsing object key - unexpected '}'; expected string literal");
  CHECK(LoadError("t.json", "{\"a\": [1, 2") ==
        "t.json:1:12: invalid JSON: syntax error while parsing array - unexpected end of input; expected ']'");
  // A number too large for a double has no position from nlohmann: located by its text.
  CHECK(LoadError("t.json", "{\n \"model\": {\"dropout\": 2021e308}}") ==
        "t.json:2:23: invalid JSON: number overflow parsing '2021e308'");
  CHECK(LoadError("t.json", "[1, 2]") == "t.json:1:1: (top level): a tokenizer.json must hold a JSON object");
}

TEST_CASE("unknown model type") {
  CHECK(LoadError("t.json", "{\n \"model\": {\n  \"type\": \"WordPiece\", \"vocab\": {}}\n}") ==
        "t.json:3:11: model.type: unsupported model type 'WordPiece'; accel reads BPE tokenizer.json files "
        "(and SentencePiece tokenizer.model files)");
  CHECK(LoadError("t.json", "{\"version\": \"1.0\"}") == "t.json:1:1: model: is missing");
}

TEST_CASE("unsupported or malformed decoders") {
  CHECK(LoadError("t.json", WithModel(R"( "decoder": {"type": "WordPiece"})")) ==
        "t.json:2:22: decoder.type: unsupported decoder type 'WordPiece'; accel supports ByteLevel, Metaspace, "
        "Replace, ByteFallback, Fuse, Strip and Sequence");
  CHECK(LoadError("t.json", WithModel(R"( "decoder": {"type": "Sequence", "decoders": [{"type": "Fuse"}, 3]})")) ==
        "t.json:2:65: decoder.decoders[1]: must be an object with a 'type'");
  CHECK(LoadError("t.json", WithModel(R"( "decoder": {"type": "Strip", "content": "ab", "start": 1, "stop": 0})")) ==
        "t.json:2:42: decoder.content: must be one character");
  CHECK(LoadError("t.json", WithModel(R"( "decoder": {"type": "Strip", "content": " ", "start": -1, "stop": 0})")) ==
        "t.json:2:56: decoder.start: must be an integer from 0");
  CHECK(LoadError("t.json", WithModel(R"( "decoder": {"type": "Replace", "pattern": {"Regex": "x"}, "content": ""})")) ==
        "t.json:2:44: decoder.pattern.String: is missing");
}

TEST_CASE("missing or malformed merges and vocab") {
  CHECK(LoadError("t.json", "{\n \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}}\n}") ==
        "t.json:2:11: model.merges: is missing");
  CHECK(LoadError("t.json", "{\n \"model\": {\"type\": \"BPE\", \"merges\": []}\n}") == "t.json:2:11: model.vocab: is missing");
  CHECK(LoadError("t.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": -1}, \"merges\": []}}") ==
        "t.json:1:42: model.vocab.a: must be a token id (an integer from 0)");
  CHECK(LoadError("t.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1},\n \"merges\": [\"a b\"]}}") ==
        "t.json:2:13: model.merges[0]: token 'ab' is not in model.vocab");
  CHECK(LoadError("t.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0},\n \"merges\": [\"a c\"]}}") ==
        "t.json:2:13: model.merges[0]: token 'c' is not in model.vocab");
  CHECK(LoadError("t.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0},\n \"merges\": [\"a\", 7]}}") ==
        "t.json:2:13: model.merges[0]: merge \"a\" must be two tokens separated by one space");
  CHECK(LoadError("t.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"aa\": 1},\n \"merges\": [[\"a\", \"a\"], 7]}}") ==
        "t.json:2:25: model.merges[1]: must be a string \"A B\" or a pair [\"A\", \"B\"]");
}

TEST_CASE("bad regex in a Split pre-tokenizer") {
  CHECK(LoadError("t.json", WithModel(R"( "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "[a-"}, "behavior": "Isolated"})")) ==
        "t.json:2:58: pre_tokenizer.pattern.Regex: invalid regular expression at offset 3: missing terminating ] for "
        "character class");
  CHECK(LoadError("t.json", WithModel(R"( "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Apart"})")) ==
        "t.json:2:76: pre_tokenizer.behavior: unknown behavior 'Apart'; expected Removed, Isolated, MergedWithPrevious, "
        "MergedWithNext or Contiguous");
}

TEST_CASE("unsupported parts are named") {
  CHECK(LoadError("t.json", WithModel(R"( "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Metaspace"}]})")) ==
        "t.json:2:67: pre_tokenizer.pretokenizers[0].type: unsupported pre-tokenizer type 'Metaspace'; accel supports "
        "Split, ByteLevel, Digits and Sequence");
  CHECK(LoadError("t.json", WithModel(R"( "normalizer": {"type": "BertNormalizer"})")) ==
        "t.json:2:25: normalizer.type: unsupported normalizer type 'BertNormalizer'; accel supports NFC, NFD, NFKC, "
        "NFKD, Lowercase, Prepend, Replace and Sequence");
  CHECK(LoadError("t.json", WithModel(R"( "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}]})")) ==
        "t.json:2:86: post_processor.single[0].SpecialToken.id: special token '<s>' has no ids in "
        "post_processor.special_tokens");
  CHECK(LoadError("t.json", WithModel(R"( "added_tokens": [{"id": 5}])")) == "t.json:2:19: added_tokens[0].content: is missing");
}

TEST_CASE("deeply nested sequences are refused, not recursed into") {
  std::string nested = R"({"type": "Digits"})";
  for (int i = 0; i < 40; ++i) nested = R"({"type": "Sequence", "pretokenizers": [)" + nested + "]}";
  std::string message = LoadError("t.json", WithModel(" \"pre_tokenizer\": " + nested));
  CHECK(message.find(": is nested more than 32 levels deep") != std::string::npos);
  CHECK(message.rfind("t.json:2:", 0) == 0);
}

TEST_CASE("keys that look like indices, and which tokenizers may be cut at line starts") {
  TempDir dir;
  // Bert-style special token names ("[CLS]") are keys, not array indices.
  absl::StatusOr<std::unique_ptr<Tokenizer>> t = Tokenizer::Load(dir.Write("cls.json", WithModel(
      R"( "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "Removed"},
 "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[CLS]"}}, {"Sequence": {"id": "A"}}],
   "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]}}})")));
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK((*t)->Encode("ab a") == std::vector<uint32_t>{1, 2, 0});
  // A pattern accel does not know may match across a line start: documents are not cut.
  CHECK(!(*t)->SplitsAtLineStarts());
}

TEST_CASE("files that are neither tokenizer.json nor SentencePiece") {
  absl::StatusOr<std::unique_ptr<Tokenizer>> missing = Tokenizer::Load("/nonexistent/tokenizer.json");
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK(missing.status().message() == "tokenizer file does not exist: /nonexistent/tokenizer.json");
  std::string message = LoadError("tokenizer.model", "not a model");
  CHECK(message.rfind("tokenizer.model: not a SentencePiece model: ", 0) == 0);
}

}  // namespace
}  // namespace accel::tok
