#include "checkpoint/sharded_tensors.h"

#include <algorithm>
#include <regex>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/safetensors.h"

namespace accel::exec {
namespace {

constexpr char kShardFormat[] = "accel-shard";
constexpr char kShardVersion[] = "1";
constexpr char kLegacyModelFile[] = "model.safetensors";


std::string RangeText(int64_t begin, int64_t end) { return absl::StrCat("[", begin, ", ", end, ")"); }

// The element count of shape, or -1 when a dimension is negative or the product overflows int64.
int64_t CheckedNumel(const std::vector<int64_t>& shape) {
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel)) return -1;
  }
  return numel;
}

bool RangeFits(int64_t begin, int64_t end, int64_t numel) { return begin >= 0 && end >= begin && end <= numel; }

absl::Status CheckSlice(const TensorSlice& s) {
  const int size = SafetensorsDtypeSize(s.dtype);
  if (size == 0) return absl::InvalidArgumentError(absl::StrCat("tensor ", s.name, ": unknown dtype ", s.dtype));
  const int64_t numel = CheckedNumel(s.global_shape);
  if (numel < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor ", s.name, ": negative dimension in shape ", ShapeText(s.global_shape)));
  }
  if (!RangeFits(s.begin, s.end, numel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor ", s.name, ": range ", RangeText(s.begin, s.end), " is not within [0, ", numel, ")"));
  }
  const uint64_t expected = static_cast<uint64_t>(s.end - s.begin) * size;
  if (s.data.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", s.name, ": ", s.data.size(), " data bytes for range ",
                                                   RangeText(s.begin, s.end), " of ", s.dtype, ", expected ",
                                                   expected));
  }
  return absl::OkStatus();
}

bool IsShardFileName(const std::string& name) {
  static const std::regex kPattern("shard-[0-9]+-of-[0-9]+\\.safetensors");
  return std::regex_match(name, kPattern);
}

// The "slices" metadata of a shard file: name -> (global shape, begin, end).
struct SliceEntry {
  std::vector<int64_t> shape;
  int64_t begin = 0;
  int64_t end = 0;
};
using SliceIndex = std::map<std::string, SliceEntry>;

absl::StatusOr<SliceIndex> ParseSlicesMetadata(const SafetensorsFile& file,
                                                                       const std::string& source) {
  auto loss = [&](const std::string& why) { return absl::DataLossError(absl::StrCat(source, ": ", why)); };
  auto get = [&](const char* key) {
    auto it = file.metadata.find(key);
    return it == file.metadata.end() ? std::string() : it->second;
  };
  if (get("format") != kShardFormat) {
    return loss(absl::StrCat("not an accel shard file (metadata format '", get("format"), "')"));
  }
  if (get("version") != kShardVersion) {
    return loss(absl::StrCat("accel shard version '", get("version"), "' is not supported (expected 1)"));
  }
  const nlohmann::json slices = nlohmann::json::parse(get("slices"), nullptr, /*allow_exceptions=*/false);
  if (slices.is_discarded() || !slices.is_object()) return loss("slices metadata is not a JSON object");
  SliceIndex out;
  for (auto it = slices.begin(); it != slices.end(); ++it) {
    const nlohmann::json& v = it.value();
    bool ok = v.is_object() && v.contains("shape") && v["shape"].is_array() && v.contains("range") &&
              v["range"].is_array() && v["range"].size() == 2 && v["range"][0].is_number_integer() &&
              v["range"][1].is_number_integer();
    SliceEntry entry;
    for (size_t k = 0; ok && k < v["shape"].size(); ++k) {
      ok = v["shape"][k].is_number_integer();
      if (ok) entry.shape.push_back(v["shape"][k].get<int64_t>());
    }
    if (!ok || CheckedNumel(entry.shape) < 0) return loss(absl::StrCat("slices metadata entry for ", it.key(), " is malformed"));
    entry.begin = v["range"][0].get<int64_t>();
    entry.end = v["range"][1].get<int64_t>();
    out.emplace(it.key(), std::move(entry));
  }
  return out;
}

// The slices of one shard file, checked against its metadata; data is moved out of file.
absl::StatusOr<std::vector<TensorSlice>> DecodeShard(SafetensorsFile file, const std::string& source) {
  auto loss = [&](const std::string& why) { return absl::DataLossError(absl::StrCat(source, ": ", why)); };
  ACCEL_ASSIGN_OR_RETURN(SliceIndex entries, ParseSlicesMetadata(file, source));
  std::vector<TensorSlice> out;
  for (SafetensorsTensor& t : file.tensors) {
    auto it = entries.find(t.name);
    if (it == entries.end()) return loss(absl::StrCat("tensor ", t.name, " has no slices metadata entry"));
    const SliceEntry& e = it->second;
    const int64_t numel = CheckedNumel(e.shape);
    if (!RangeFits(e.begin, e.end, numel)) {
      return loss(absl::StrCat("tensor ", t.name, ": range ", RangeText(e.begin, e.end), " is not within [0, ", numel, ")"));
    }
    if (t.shape.size() != 1 || t.shape[0] != e.end - e.begin) {
      return loss(absl::StrCat("tensor ", t.name, " has shape ", ShapeText(t.shape), ", its range ",
                               RangeText(e.begin, e.end), " needs [", e.end - e.begin, "]"));
    }
    out.push_back({t.name, t.dtype, e.shape, e.begin, e.end, std::move(t.data)});
    entries.erase(it);
  }
  if (!entries.empty()) {
    return loss(absl::StrCat("slices metadata names ", entries.begin()->first, ", which the file does not hold"));
  }
  return out;
}

// The tensors of a single-writer model.safetensors, each as one whole slice.
std::vector<TensorSlice> WholeSlices(SafetensorsFile file) {
  std::vector<TensorSlice> out;
  for (SafetensorsTensor& t : file.tensors) {
    const int64_t numel = CheckedNumel(t.shape);  // ParseSafetensors checked the shape against the data
    out.push_back({t.name, t.dtype, t.shape, 0, numel, std::move(t.data)});
  }
  return out;
}

// Reads, verifies and decodes one file of dir; the raw bytes are released before returning.
absl::StatusOr<std::vector<TensorSlice>> ReadSlices(const std::string& dir, const std::string& name, bool shard) {
  const std::string source = absl::StrCat(dir, "/", name);
  SafetensorsFile file;
  {
    ACCEL_ASSIGN_OR_RETURN(std::string bytes, CheckpointStore::ReadFile(dir, name));
    ACCEL_ASSIGN_OR_RETURN(file, ParseSafetensors(bytes, source));
  }
  if (!shard) return WholeSlices(std::move(file));
  return DecodeShard(std::move(file), source);
}

}  // namespace

int64_t GlobalTensorInfo::numel() const { return CheckedNumel(shape); }

std::string ShardFileName(int rank, int world_size) {
  return absl::StrFormat("shard-%05d-of-%05d.safetensors", rank, world_size);
}

absl::StatusOr<std::string> SerializeShardFile(const std::vector<TensorSlice>& slices) {
  SafetensorsFile file;
  nlohmann::json index = nlohmann::json::object();
  std::set<std::string> names;
  for (const TensorSlice& s : slices) {
    ACCEL_RETURN_IF_ERROR(CheckSlice(s));
    if (!names.insert(s.name).second) return absl::InvalidArgumentError(absl::StrCat("duplicate tensor slice ", s.name));
    index[s.name] = {{"shape", s.global_shape}, {"range", {s.begin, s.end}}};
    file.tensors.push_back({s.name, s.dtype, {s.end - s.begin}, s.data});
  }
  file.metadata = {{"format", kShardFormat}, {"version", kShardVersion}, {"slices", index.dump()}};
  return SerializeSafetensors(file);
}

absl::StatusOr<ShardedTensorReader> ShardedTensorReader::Open(const std::string& checkpoint_dir, const Filter& keep) {
  ACCEL_ASSIGN_OR_RETURN(std::vector<std::string> listed, CheckpointStore::ManifestFiles(checkpoint_dir));
  std::vector<std::string> shards;
  std::copy_if(listed.begin(), listed.end(), std::back_inserter(shards), IsShardFileName);
  const bool legacy = shards.empty();
  if (legacy) {
    if (std::find(listed.begin(), listed.end(), kLegacyModelFile) == listed.end()) {
      return absl::NotFoundError(
          absl::StrCat(checkpoint_dir, ": the manifest lists no shard-*.safetensors or model.safetensors"));
    }
    shards.push_back(kLegacyModelFile);
  }
  ShardedTensorReader reader;
  reader.dir_ = checkpoint_dir;
  for (const std::string& name : shards) {
    ACCEL_ASSIGN_OR_RETURN(std::vector<TensorSlice> slices, ReadSlices(checkpoint_dir, name, !legacy));
    for (TensorSlice& s : slices) {
      if (keep && !keep(s.name)) continue;
      ACCEL_RETURN_IF_ERROR(reader.Add(name, {s.name, s.dtype, s.global_shape}, s.begin, s.end, std::move(s.data)));
    }
  }
  ACCEL_RETURN_IF_ERROR(reader.SortAndCheckCoverage());
  return reader;
}

absl::Status ShardedTensorReader::Add(const std::string& file, GlobalTensorInfo info, int64_t begin, int64_t end,
                                      std::string data) {
  auto [it, fresh] = tensors_.try_emplace(info.name);
  Global& g = it->second;
  if (fresh) {
    g.info = std::move(info);
    g.first_file = file;
  } else if (g.info.shape != info.shape) {
    return absl::DataLossError(absl::StrCat(dir_, ": tensor ", info.name, ": shape ", ShapeText(g.info.shape), " in ",
                                            g.first_file, " but ", ShapeText(info.shape), " in ", file));
  } else if (g.info.dtype != info.dtype) {
    return absl::DataLossError(absl::StrCat(dir_, ": tensor ", info.name, ": dtype ", g.info.dtype, " in ",
                                            g.first_file, " but ", info.dtype, " in ", file));
  }
  if (begin < end) g.pieces.push_back({begin, end, file, std::move(data)});
  return absl::OkStatus();
}

// Sorts each tensor's pieces and walks them once: a piece starting after the covered prefix leaves
// a gap, one starting inside it overlaps. The first problem is reported.
absl::Status ShardedTensorReader::SortAndCheckCoverage() {
  for (auto& [name, g] : tensors_) {
    std::sort(g.pieces.begin(), g.pieces.end(),
              [](const Piece& a, const Piece& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
    int64_t covered = 0;
    const Piece* last = nullptr;
    for (const Piece& p : g.pieces) {
      if (p.begin > covered) {
        return absl::DataLossError(
            absl::StrCat(dir_, ": tensor ", name, ": elements ", RangeText(covered, p.begin), " are missing"));
      }
      if (p.begin < covered) {
        return absl::DataLossError(absl::StrCat(dir_, ": tensor ", name, ": elements ",
                                                RangeText(p.begin, std::min(p.end, covered)), " overlap (", last->file,
                                                " and ", p.file, ")"));
      }
      covered = p.end;
      last = &p;
    }
    if (covered < g.info.numel()) {
      return absl::DataLossError(
          absl::StrCat(dir_, ": tensor ", name, ": elements ", RangeText(covered, g.info.numel()), " are missing"));
    }
  }
  return absl::OkStatus();
}

std::vector<GlobalTensorInfo> ShardedTensorReader::Tensors() const {
  std::vector<GlobalTensorInfo> out;
  for (const auto& [name, g] : tensors_) out.push_back(g.info);
  return out;
}

absl::StatusOr<std::string> ShardedTensorReader::ReadRange(const std::string& name, int64_t begin, int64_t end) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return absl::NotFoundError(absl::StrCat(dir_, ": no tensor ", name));
  const Global& g = it->second;
  const int64_t numel = g.info.numel();
  if (!RangeFits(begin, end, numel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor ", name, ": range ", RangeText(begin, end), " is not within [0, ", numel, ")"));
  }
  const size_t size = SafetensorsDtypeSize(g.info.dtype);
  std::string out;
  out.reserve(static_cast<size_t>(end - begin) * size);
  // Pieces tile [0, numel) in order (SortAndCheckCoverage), so the first piece ending after begin starts
  // the copy and each next one continues it.
  auto p = std::partition_point(g.pieces.begin(), g.pieces.end(), [&](const Piece& x) { return x.end <= begin; });
  for (; p != g.pieces.end() && p->begin < end; ++p) {
    const int64_t lo = std::max(begin, p->begin);
    const int64_t hi = std::min(end, p->end);
    out.append(p->data, static_cast<size_t>(lo - p->begin) * size, static_cast<size_t>(hi - lo) * size);
  }
  return out;
}

absl::StatusOr<std::string> ShardedTensorReader::ReadWhole(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return absl::NotFoundError(absl::StrCat(dir_, ": no tensor ", name));
  return ReadRange(name, 0, it->second.info.numel());
}

}  // namespace accel::exec
