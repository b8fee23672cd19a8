#include "checkpoint/safetensors.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace accel::exec {
namespace {

absl::Status Corrupt(const std::string& source, const std::string& what) {
  return absl::DataLossError(absl::StrCat(source, ": safetensors ", what));
}

}  // namespace

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

int SafetensorsDtypeSize(std::string_view dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL") return 1;
  return 0;
}

absl::StatusOr<std::string> SerializeSafetensors(const SafetensorsFile& file) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  std::set<std::string> names;
  for (const SafetensorsTensor& t : file.tensors) {
    if (t.name.empty() || t.name == "__metadata__" || !names.insert(t.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("bad or duplicate tensor name '", t.name, "'"));
    }
    const int size = SafetensorsDtypeSize(t.dtype);
    if (size == 0) return absl::InvalidArgumentError(absl::StrCat("unknown dtype ", t.dtype, " for ", t.name));
    uint64_t numel = 1;
    for (int64_t d : t.shape) {
      if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension in ", t.name));
      numel *= static_cast<uint64_t>(d);
    }
    if (numel * size != t.data.size()) {
      return absl::InvalidArgumentError(absl::StrCat(t.name, ": ", t.data.size(), " data bytes for ",
                                                     numel, " elements of ", t.dtype));
    }
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + json.size() + offset);
  const uint64_t n = json.size();
  for (int k = 0; k < 8; ++k) out.push_back(static_cast<char>((n >> (8 * k)) & 0xFF));
  out += json;
  for (const SafetensorsTensor& t : file.tensors) out += t.data;
  return out;
}

absl::StatusOr<SafetensorsFile> ParseSafetensors(std::string_view bytes, const std::string& source) {
  if (bytes.size() < 8) return Corrupt(source, "file shorter than its 8-byte header length");
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | static_cast<uint8_t>(bytes[k]);
  if (n > kMaxSafetensorsHeaderBytes || n > bytes.size() - 8) {
    return Corrupt(source, absl::StrCat("header length ", n, " exceeds the file (", bytes.size(), " bytes)"));
  }
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n), nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return Corrupt(source, "header is not a JSON object");
  const std::string_view buffer = bytes.substr(8 + n);
  SafetensorsFile file;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const nlohmann::json& entry = it.value();
    if (it.key() == "__metadata__") {
      if (!entry.is_object()) return Corrupt(source, "__metadata__ is not an object");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string()) return Corrupt(source, absl::StrCat("metadata ", m.key(), " is not a string"));
        file.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string what = absl::StrCat("entry ", it.key());
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
        !entry.contains("shape") || !entry["shape"].is_array() || !entry.contains("data_offsets") ||
        !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2) {
      return Corrupt(source, absl::StrCat(what, " lacks dtype, shape or data_offsets"));
    }
    SafetensorsTensor t;
    t.name = it.key();
    t.dtype = entry["dtype"].get<std::string>();
    const int size = SafetensorsDtypeSize(t.dtype);
    if (size == 0) return Corrupt(source, absl::StrCat(what, " has unknown dtype ", t.dtype));
    // numel x dtype size, checked: a shape such as [2^32, 2^32] must not wrap to a small byte count
    // that the data offsets then match (a consumer would trust the shape, not the bytes).
    uint64_t bytes_needed = static_cast<uint64_t>(size);
    for (const nlohmann::json& d : entry["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return Corrupt(source, absl::StrCat(what, " has a bad shape"));
      }
      t.shape.push_back(d.get<int64_t>());
      if (__builtin_mul_overflow(bytes_needed, d.get<uint64_t>(), &bytes_needed)) {
        return Corrupt(source, absl::StrCat(what, " has a shape of more than 2^64 bytes"));
      }
    }
    const nlohmann::json& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      return Corrupt(source, absl::StrCat(what, " has bad data_offsets"));
    }
    const uint64_t begin = offsets[0].get<uint64_t>();
    const uint64_t end = offsets[1].get<uint64_t>();
    if (end < begin || end > buffer.size()) {
      return Corrupt(source, absl::StrCat(what, " data [", begin, ", ", end, ") outside the ",
                                          buffer.size(), "-byte buffer"));
    }
    if (end - begin != bytes_needed) {
      return Corrupt(source, absl::StrCat(what, " has ", end - begin, " bytes for ", bytes_needed / size, " x ",
                                          t.dtype));
    }
    t.data = std::string(buffer.substr(begin, end - begin));
    spans.emplace_back(begin, end);
    file.tensors.push_back(std::move(t));
  }
  // Order by offset and require the spans to tile the buffer, as the reference implementation does.
  std::vector<size_t> order(file.tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a] < spans[b]; });
  uint64_t expected = 0;
  std::vector<SafetensorsTensor> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) {
    if (spans[i].first != expected) return Corrupt(source, "data offsets leave a gap or overlap");
    expected = spans[i].second;
    sorted.push_back(std::move(file.tensors[i]));
  }
  if (expected != buffer.size()) {
    return Corrupt(source, absl::StrCat("buffer has ", buffer.size(), " bytes but tensors cover ", expected));
  }
  file.tensors = std::move(sorted);
  return file;
}

absl::StatusOr<SafetensorsFile> ReadSafetensorsFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("safetensors file does not exist: ", path));
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::InternalError(absl::StrCat("cannot read ", path));
  return ParseSafetensors(bytes, path);
}

}  // namespace accel::exec
