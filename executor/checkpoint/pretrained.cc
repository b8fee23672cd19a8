#include "executor/checkpoint/pretrained.h"

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/checkpoint/safetensors.h"
#include "nlohmann/json.hpp"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

// Headers beyond this are not safetensors written by anyone (transformers' are < 1 MiB).
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;

absl::Status Corrupt(const std::string& file, const std::string& why) {
  return absl::DataLossError(absl::StrCat(file, ": not a safetensors file: ", why));
}

// Adds the tensors of one file's header to index.
absl::Status IndexFile(const std::string& file, PretrainedIndex& index) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", file));
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  unsigned char length_bytes[8] = {};
  if (ec || size < 8 || !in.read(reinterpret_cast<char*>(length_bytes), 8)) {
    return Corrupt(file, "shorter than its 8-byte header length");
  }
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | length_bytes[k];
  if (n > kMaxHeaderBytes || n > size - 8) return Corrupt(file, "header length beyond the file");
  std::string header(n, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(n))) return Corrupt(file, "truncated header");
  const nlohmann::json json = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return Corrupt(file, "header is not a JSON object");
  const uint64_t data_begin = 8 + n;
  for (const auto& [name, entry] : json.items()) {
    if (name == "__metadata__") continue;
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
        !entry.contains("shape") || !entry["shape"].is_array() || !entry.contains("data_offsets") ||
        !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2) {
      return Corrupt(file, absl::StrCat("entry ", name, " lacks dtype, shape or data_offsets"));
    }
    PretrainedTensor t;
    t.file = file;
    t.dtype = entry["dtype"].get<std::string>();
    const int element = SafetensorsDtypeSize(t.dtype);
    if (element == 0) return Corrupt(file, absl::StrCat("entry ", name, " has unknown dtype ", t.dtype));
    unsigned __int128 bytes = static_cast<unsigned>(element);
    for (const nlohmann::json& d : entry["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t{INT64_MAX}) {
        return Corrupt(file, absl::StrCat("entry ", name, " has a bad shape"));
      }
      t.shape.push_back(d.get<int64_t>());
      bytes *= d.get<uint64_t>();
      if (bytes > size) return Corrupt(file, absl::StrCat("entry ", name, " is larger than the file"));
    }
    const nlohmann::json& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      return Corrupt(file, absl::StrCat("entry ", name, " has bad data_offsets"));
    }
    const uint64_t b = offsets[0].get<uint64_t>(), e = offsets[1].get<uint64_t>();
    if (b > e || e - b != bytes || e > size - data_begin) {
      return Corrupt(file, absl::StrCat("entry ", name, "'s data_offsets do not match its shape or "
                                        "leave the file"));
    }
    t.begin = data_begin + b;
    t.end = data_begin + e;
    index[name] = std::move(t);
  }
  return absl::OkStatus();
}

// model.safetensors.index.json: {"weight_map": {"tensor name": "file name", ...}}.
absl::Status IndexSharded(const fs::path& dir, const fs::path& index_file, PretrainedIndex& index) {
  std::ifstream in(index_file);
  const nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  const std::string where = index_file.string();
  if (json.is_discarded() || !json.is_object() || !json.contains("weight_map") ||
      !json["weight_map"].is_object()) {
    return absl::DataLossError(absl::StrCat(where, ": not a safetensors index (no weight_map object)"));
  }
  std::map<std::string, bool> files;
  for (const auto& [name, file] : json["weight_map"].items()) {
    if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos) {
      return absl::DataLossError(absl::StrCat(where, ": weight_map entry ", name,
                                              " is not a file name in ", dir.string()));
    }
    files[file.get<std::string>()] = true;
  }
  for (const auto& [file, unused] : files) {
    if (absl::Status s = IndexFile((dir / file).string(), index); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool IsFloat(const std::string& dtype) {
  return dtype == "F64" || dtype == "F32" || dtype == "F16" || dtype == "BF16";
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

}  // namespace

absl::StatusOr<PretrainedIndex> OpenPretrained(const std::string& path) {
  std::error_code ec;
  PretrainedIndex index;
  if (fs::is_regular_file(path, ec)) {
    if (absl::Status s = IndexFile(path, index); !s.ok()) return s;
    return index;
  }
  if (!fs::is_directory(path, ec)) return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  const fs::path dir(path);
  if (fs::is_regular_file(dir / "model.safetensors.index.json", ec)) {
    if (absl::Status s = IndexSharded(dir, dir / "model.safetensors.index.json", index); !s.ok()) {
      return s;
    }
    return index;
  }
  if (fs::is_regular_file(dir / "model.safetensors", ec)) {
    if (absl::Status s = IndexFile((dir / "model.safetensors").string(), index); !s.ok()) return s;
    return index;
  }
  return absl::NotFoundError(absl::StrCat(
      path, " holds neither model.safetensors nor model.safetensors.index.json"));
}

const PretrainedTensor* FindPretrained(const PretrainedIndex& index, const std::string& name) {
  auto it = index.find(name);
  if (it != index.end()) return &it->second;
  constexpr std::string_view kPrefix = "transformer.";
  if (name.rfind(kPrefix, 0) == 0) {
    it = index.find(name.substr(kPrefix.size()));
    if (it != index.end()) return &it->second;
  }
  return nullptr;
}

std::vector<std::string> CheckPretrainedAgainstPlan(const ir::Plan& plan, const PretrainedIndex& index) {
  std::vector<std::string> out;
  const int64_t vocab = plan.model().vocab_size();
  const int64_t padded = plan.model().padded_vocab_size();
  for (const ir::ShardUnit& unit : plan.sharding().units()) {
    for (const ir::Parameter& p : unit.parameters()) {
      const PretrainedTensor* t = FindPretrained(index, p.name());
      if (t == nullptr) {
        out.push_back(absl::StrCat("the checkpoint has no tensor ", p.name()));
        continue;
      }
      if (!IsFloat(t->dtype)) {
        out.push_back(absl::StrCat("tensor ", p.name(), " is ", t->dtype,
                                   ", not a floating-point dtype (F64, F32, F16, BF16)"));
        continue;
      }
      std::vector<int64_t> want(p.shape().begin(), p.shape().end());
      std::vector<int64_t> have = t->shape;
      // Vocabulary rows: the checkpoint has vocab_size of them where the plan pads.
      const bool vocab_rows = !want.empty() && !have.empty() && want[0] == padded && padded > vocab &&
                              have[0] == vocab;
      if (vocab_rows) have[0] = padded;
      if (have != want) {
        out.push_back(absl::StrCat("tensor ", p.name(), " has shape ", ShapeText(t->shape),
                                   ", the plan expects ", ShapeText(want)));
      }
    }
  }
  return out;
}

absl::StatusOr<std::string> ReadPretrainedBytes(const PretrainedTensor& t) {
  std::ifstream in(t.file, std::ios::binary);
  std::string bytes(t.end - t.begin, '\0');
  if (!in || !in.seekg(static_cast<std::streamoff>(t.begin)) ||
      !in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    return absl::InternalError(absl::StrCat("cannot read ", t.file, " at byte ", t.begin));
  }
  return bytes;
}

}  // namespace accel::exec
