#include "checkpoint/tp_layout.h"

#include <nlohmann/json.hpp>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace accel::exec {

TensorSelection TpSelection(TpSplitRecord split, int64_t extent, int64_t rank, int64_t size) {
  TensorSelection out;
  if (split.dim < 0 || size <= 1) return out;
  out.dim = split.dim;
  const int64_t block = extent / split.parts;
  const int64_t slice = block / size;
  for (int64_t p = 0; p < split.parts; ++p) {
    out.ranges.emplace_back(p * block + rank * slice, p * block + (rank + 1) * slice);
  }
  return out;
}

std::string TpLayoutJson(const TpLayoutRecord& record) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, split] : record.parameters) {
    params[name] = {{"dim", split.dim}, {"parts", split.parts}};
    if (split.replicas > 1) params[name]["replicas"] = split.replicas;
  }
  nlohmann::json doc = {{"degree", record.degree}, {"parameters", params}};
  return doc.dump(2) + "\n";
}

absl::StatusOr<TpLayoutRecord> ParseTpLayoutJson(const std::string& text, const std::string& source) {
  auto bad = [&](const std::string& why) { return absl::DataLossError(absl::StrCat(source, " is malformed: ", why)); };
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return bad("not a JSON object");
  if (!doc.contains("degree") || !doc["degree"].is_number_integer() || doc["degree"].get<int64_t>() < 2) {
    return bad("\"degree\" must be an integer >= 2");
  }
  if (!doc.contains("parameters") || !doc["parameters"].is_object()) return bad("\"parameters\" must be an object");
  TpLayoutRecord record;
  record.degree = doc["degree"].get<int64_t>();
  for (const auto& [name, split] : doc["parameters"].items()) {
    if (!split.is_object() || !split.contains("dim") || !split["dim"].is_number_integer() ||
        !split.contains("parts") || !split["parts"].is_number_integer() || split["dim"].get<int64_t>() < 0 ||
        split["parts"].get<int64_t>() < 1 || split["dim"].get<int64_t>() > 64 || split["parts"].get<int64_t>() > 64) {
      return bad(absl::StrCat("parameter ", name, " needs integer \"dim\" in [0, 64] and \"parts\" in [1, 64]"));
    }
    int replicas = 1;
    if (split.contains("replicas")) {
      if (!split["replicas"].is_number_integer() || split["replicas"].get<int64_t>() < 1 ||
          record.degree % split["replicas"].get<int64_t>() != 0) {
        return bad(absl::StrCat("parameter ", name, " needs integer \"replicas\" dividing the degree ",
                                record.degree));
      }
      replicas = split["replicas"].get<int>();
    }
    record.parameters[name] = {split["dim"].get<int>(), split["parts"].get<int>(), replicas};
  }
  return record;
}

absl::StatusOr<SafetensorsTensor> MergeTpMajor(const SafetensorsTensor& stacked, int64_t degree,
                                               TpSplitRecord split) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", stacked.name, ": ", why));
  };
  const std::vector<int64_t>& shape = stacked.shape;
  if (shape.empty() || shape[0] != degree) return bad(absl::StrCat("is not stacked over ", degree, " tensor-parallel ranks"));
  const int local_dims = static_cast<int>(shape.size()) - 1;
  if (split.dim >= local_dims) return bad(absl::StrCat("split dim ", split.dim, " is not one of its ", local_dims, " dims"));
  const int64_t extent = shape[1 + split.dim];
  if (split.parts < 1 || extent % split.parts != 0) return bad(absl::StrCat("dim of ", extent, " does not split in ", split.parts));
  int64_t outer = 1;
  int64_t inner = SafetensorsDtypeSize(stacked.dtype);  // bytes
  if (inner <= 0) return bad(absl::StrCat("unknown dtype ", stacked.dtype));
  for (int d = 0; d < split.dim; ++d) outer *= shape[1 + d];
  for (int d = split.dim + 1; d < local_dims; ++d) inner *= shape[1 + d];
  const int64_t block = extent / split.parts;
  if (static_cast<int64_t>(stacked.data.size()) != degree * outer * extent * inner) {
    return bad(absl::StrCat(stacked.data.size(), " data bytes do not match its shape"));
  }
  SafetensorsTensor out{stacked.name, stacked.dtype, std::vector<int64_t>(shape.begin() + 1, shape.end()), {}};
  out.shape[split.dim] = extent * degree;
  out.data.resize(stacked.data.size());
  char* dst = out.data.data();
  const int64_t run = block * inner;  // bytes of one rank's slice of one block
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t p = 0; p < split.parts; ++p) {
      for (int64_t r = 0; r < degree; ++r) {
        std::memcpy(dst, stacked.data.data() + ((r * outer + o) * extent + p * block) * inner, run);
        dst += run;
      }
    }
  }
  return out;
}

}  // namespace accel::exec
