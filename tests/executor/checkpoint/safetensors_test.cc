#include "checkpoint/safetensors.h"

#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <nlohmann/json.hpp>

#include "checkpoint/crc32c.h"
#include "executor/checkpoint/torch_tensors.h"

namespace accel::exec {
namespace {

uint64_t ReadU64Le(const std::string& b, size_t at) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = (v << 8) | static_cast<uint8_t>(b[at + k]);
  return v;
}

TEST_CASE("crc32c matches the standard check value") {
  CHECK(Crc32c("123456789") == 0xE3069283u);
  CHECK(Crc32c("") == 0u);
  CHECK(Crc32c("6789", Crc32c("12345")) == 0xE3069283u);
}

TEST_CASE("serialized bytes follow the safetensors layout read by hand") {
  SafetensorsFile file;
  file.metadata["format"] = "pt";
  const float values[3] = {1.0f, -2.5f, 3.25f};
  file.tensors.push_back({"a.weight", "F32", {3}, std::string(reinterpret_cast<const char*>(values), 12)});
  file.tensors.push_back({"b", "I64", {1, 1}, std::string("\x07\0\0\0\0\0\0\0", 8)});
  auto bytes = SerializeSafetensors(file);
  REQUIRE(bytes.ok());
  const uint64_t n = ReadU64Le(*bytes, 0);
  CHECK((8 + n) % 8 == 0);
  REQUIRE(bytes->size() == 8 + n + 20);
  auto header = nlohmann::json::parse(bytes->substr(8, n));
  CHECK(header["a.weight"]["dtype"] == "F32");
  CHECK(header["a.weight"]["shape"] == nlohmann::json::array({3}));
  CHECK(header["a.weight"]["data_offsets"] == nlohmann::json::array({0, 12}));
  CHECK(header["b"]["data_offsets"] == nlohmann::json::array({12, 20}));
  CHECK(header["__metadata__"]["format"] == "pt");
  float second;
  std::memcpy(&second, bytes->data() + 8 + n + 4, 4);
  CHECK(second == -2.5f);
  CHECK(static_cast<uint8_t>((*bytes)[8 + n + 12]) == 7);

  auto parsed = ParseSafetensors(*bytes, "mem");
  REQUIRE(parsed.ok());
  REQUIRE(parsed->tensors.size() == 2);
  CHECK(parsed->tensors[0].name == "a.weight");
  CHECK(parsed->tensors[0].data == file.tensors[0].data);
  CHECK(parsed->tensors[1].shape == std::vector<int64_t>{1, 1});
  CHECK(parsed->metadata == file.metadata);
}

TEST_CASE("a hand-written file from the specification parses") {
  // Header as another writer might produce it: different key order, no metadata, padding spaces.
  std::string header = R"({"y":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]},"x":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string bytes(8, '\0');
  for (int k = 0; k < 8; ++k) bytes[k] = static_cast<char>((header.size() >> (8 * k)) & 0xFF);
  bytes += header;
  bytes += std::string("\x01\x02\x03\x04\x80\x3F\x00\x40", 8);  // bf16 1.0 = 0x3F80, 2.0 = 0x4000
  auto parsed = ParseSafetensors(bytes, "hand");
  REQUIRE(parsed.ok());
  REQUIRE(parsed->tensors.size() == 2);
  CHECK(parsed->tensors[0].name == "x");
  auto y = SafetensorsToTensor(parsed->tensors[1]);
  REQUIRE(y.ok());
  CHECK(y->scalar_type() == torch::kBFloat16);
  CHECK(torch::equal(y->to(torch::kFloat), torch::tensor({1.0f, 2.0f})));
}

TEST_CASE("corrupt or truncated safetensors are DataLoss errors") {
  SafetensorsFile file;
  file.tensors.push_back({"w", "F32", {2, 2}, std::string(16, '\x01')});
  std::string bytes = *SerializeSafetensors(file);
  CHECK(ParseSafetensors(bytes.substr(0, 5), "f").status().message() ==
        "f: safetensors file shorter than its 8-byte header length");
  auto truncated = ParseSafetensors(bytes.substr(0, bytes.size() - 1), "f");
  CHECK(truncated.status().code() == absl::StatusCode::kDataLoss);
  std::string trailing = bytes + "x";
  CHECK(ParseSafetensors(trailing, "f").status().message() == "f: safetensors buffer has 17 bytes but tensors cover 16");
  std::string bad_json = bytes;
  bad_json[9] = '[';
  CHECK(ParseSafetensors(bad_json, "f").status().message() == "f: safetensors header is not a JSON object");
  std::string huge = bytes;
  huge[7] = '\x7f';
  CHECK(ParseSafetensors(huge, "f").status().code() == absl::StatusCode::kDataLoss);
}

// Found with fuzz/safetensors_fuzzer (fuzz/regressions/safetensors_fuzzer): the element count was
// multiplied without an overflow check, so [2^32, 2^32] wrapped to 0 elements and an empty buffer
// was accepted for it; a dimension above 2^63 - 1 came back negative.
TEST_CASE("safetensors shapes whose size overflows 64 bits are DataLoss errors") {
  auto with_entry = [](const std::string& entry) {
    std::string header = R"({"w":)" + entry + "}";
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string bytes(8, '\0');
    for (int k = 0; k < 8; ++k) bytes[k] = static_cast<char>((header.size() >> (8 * k)) & 0xFF);
    return bytes + header;
  };
  CHECK(ParseSafetensors(with_entry(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]})"), "f")
            .status()
            .message() == "f: safetensors entry w has a shape of more than 2^64 bytes");
  CHECK(ParseSafetensors(with_entry(R"({"dtype":"U8","shape":[18446744073709551615,0],"data_offsets":[0,0]})"), "f")
            .status()
            .message() == "f: safetensors entry w has a bad shape");
  // The largest shape that fits still has to match its data.
  CHECK(ParseSafetensors(with_entry(R"({"dtype":"U8","shape":[9223372036854775807],"data_offsets":[0,0]})"), "f")
            .status()
            .message() == "f: safetensors entry w has 0 bytes for 9223372036854775807 x U8");
}

TEST_CASE("torch tensors round-trip through safetensors in every supported dtype") {
  for (auto dtype : {torch::kFloat, torch::kDouble, torch::kHalf, torch::kBFloat16, torch::kLong, torch::kInt,
                     torch::kShort, torch::kChar, torch::kByte, torch::kBool}) {
    torch::Tensor t = (torch::arange(12).reshape({3, 4}) % 5).to(dtype).t();  // non-contiguous
    auto record = TensorToSafetensors("t", t);
    REQUIRE(record.ok());
    SafetensorsFile file;
    file.tensors.push_back(*record);
    auto parsed = ParseSafetensors(*SerializeSafetensors(file), "mem");
    REQUIRE(parsed.ok());
    auto back = SafetensorsToTensor(parsed->tensors[0]);
    REQUIRE(back.ok());
    CHECK(back->scalar_type() == dtype);
    CHECK(torch::equal(*back, t));
  }
}

TEST_CASE("LoadInto checks names and shapes") {
  torch::Tensor a = torch::zeros({2});
  torch::Tensor b = torch::zeros({3});
  SafetensorsFile file;
  file.tensors.push_back(*TensorToSafetensors("a", torch::tensor({1.0f, 2.0f})));
  file.tensors.push_back(*TensorToSafetensors("b", torch::tensor({3.0, 4.0, 5.0}, torch::kDouble)));
  REQUIRE(LoadInto(file, {{"a", a}, {"b", b}}, "f").ok());
  CHECK(torch::equal(b, torch::tensor({3.0f, 4.0f, 5.0f})));
  CHECK(LoadInto(file, {{"a", a}}, "f").message() == "f: unexpected tensor b");
  CHECK(LoadInto(file, {{"a", a}, {"b", b}, {"c", b}}, "f").message() == "f: missing tensor c");
  torch::Tensor wrong = torch::zeros({2, 1});
  CHECK(LoadInto(file, {{"a", wrong}, {"b", b}}, "f").message() == "f: a has shape [2], expected [2, 1]");
}

}  // namespace
}  // namespace accel::exec
