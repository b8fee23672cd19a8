#include "checkpoint/pretrained.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "checkpoint/expert_names.h"
#include "checkpoint/hf_config.h"
#include "checkpoint/mapped_file.h"
#include "checkpoint/safetensors.h"
#include "nlohmann/json.hpp"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

absl::Status NotSafetensors(const std::string& file, const std::string& why) {
  return absl::DataLossError(absl::StrCat(file, ": not a safetensors file: ", why));
}

// Adds the tensors of one mapped file's header to index. Every offset is checked against the
// mapping's size before it is used.
absl::Status IndexFile(const MappedFile& mapped, PretrainedIndex& index) {
  const std::string& file = mapped.path();
  const std::string_view bytes = mapped.bytes();
  const uint64_t size = bytes.size();
  if (size < 8) return NotSafetensors(file, "shorter than its 8-byte header length");
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | static_cast<unsigned char>(bytes[k]);
  if (n > kMaxSafetensorsHeaderBytes || n > size - 8) return NotSafetensors(file, "header length beyond the file");
  const std::string_view header = bytes.substr(8, n);
  const nlohmann::json json = nlohmann::json::parse(header.begin(), header.end(), nullptr,
                                                    /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return NotSafetensors(file, "header is not a JSON object");
  const uint64_t data_begin = 8 + n;
  for (const auto& [name, entry] : json.items()) {
    if (name == "__metadata__") continue;
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
        !entry.contains("shape") || !entry["shape"].is_array() || !entry.contains("data_offsets") ||
        !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2) {
      return NotSafetensors(file, absl::StrCat("entry ", name, " lacks dtype, shape or data_offsets"));
    }
    PretrainedTensor t;
    t.file = file;
    t.dtype = entry["dtype"].get<std::string>();
    const int element = SafetensorsDtypeSize(t.dtype);
    if (element == 0) return NotSafetensors(file, absl::StrCat("entry ", name, " has unknown dtype ", t.dtype));
    unsigned __int128 tensor_bytes = static_cast<unsigned>(element);
    for (const nlohmann::json& d : entry["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t{INT64_MAX}) {
        return NotSafetensors(file, absl::StrCat("entry ", name, " has a bad shape"));
      }
      t.shape.push_back(d.get<int64_t>());
      tensor_bytes *= d.get<uint64_t>();
      if (tensor_bytes > size) return NotSafetensors(file, absl::StrCat("entry ", name, " is larger than the file"));
    }
    const nlohmann::json& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      return NotSafetensors(file, absl::StrCat("entry ", name, " has bad data_offsets"));
    }
    const uint64_t b = offsets[0].get<uint64_t>(), e = offsets[1].get<uint64_t>();
    if (b > e || e - b != tensor_bytes || e > size - data_begin) {
      return NotSafetensors(file, absl::StrCat("entry ", name, "'s data_offsets do not match its shape or "
                                        "leave the file"));
    }
    t.begin = data_begin + b;
    t.end = data_begin + e;
    index[name] = std::move(t);
  }
  return absl::OkStatus();
}

// The mappings of a checkpoint's files, by path; each file is mapped once.
using MappedFiles = std::map<std::string, std::unique_ptr<MappedFile>>;

// Maps `file` (once) and adds its header's tensors to index.
absl::Status MapAndIndex(const std::string& file, MappedFiles& files, PretrainedIndex& index) {
  if (files.count(file) > 0) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<MappedFile>> mapped = MappedFile::Open(file);
  if (!mapped.ok()) return mapped.status();
  const MappedFile& m = **mapped;
  files[file] = *std::move(mapped);
  return IndexFile(m, index);
}

// model.safetensors.index.json: {"weight_map": {"tensor name": "file name", ...}}.
absl::Status IndexSharded(const fs::path& dir, const fs::path& index_file, MappedFiles& mapped,
                          PretrainedIndex& index) {
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
    if (absl::Status s = MapAndIndex((dir / file).string(), mapped, index); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool IsFloat(const std::string& dtype) {
  return dtype == "F64" || dtype == "F32" || dtype == "F16" || dtype == "BF16";
}

}  // namespace

struct PretrainedCheckpoint::Files {
  MappedFiles mapped;
  // Per file, which of its pages a Read has copied from (for PretrainedReadStats.pages_touched):
  // one bit a page, 3 MiB for a 100 GB file, made on the file's first Read.
  std::map<std::string, std::vector<bool>> touched;
};

PretrainedCheckpoint::PretrainedCheckpoint() : files_(std::make_unique<Files>()) {}
PretrainedCheckpoint::PretrainedCheckpoint(PretrainedCheckpoint&&) noexcept = default;
PretrainedCheckpoint& PretrainedCheckpoint::operator=(PretrainedCheckpoint&&) noexcept = default;
PretrainedCheckpoint::~PretrainedCheckpoint() = default;

absl::StatusOr<PretrainedCheckpoint> PretrainedCheckpoint::Open(const std::string& path) {
  std::error_code ec;
  PretrainedCheckpoint checkpoint;
  MappedFiles& files = checkpoint.files_->mapped;
  PretrainedIndex& index = checkpoint.index_;
  if (fs::is_regular_file(path, ec)) {
    if (absl::Status s = MapAndIndex(path, files, index); !s.ok()) return s;
    return checkpoint;
  }
  if (!fs::is_directory(path, ec)) return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  const fs::path dir(path);
  if (fs::is_regular_file(dir / "model.safetensors.index.json", ec)) {
    if (absl::Status s = IndexSharded(dir, dir / "model.safetensors.index.json", files, index); !s.ok()) {
      return s;
    }
    return checkpoint;
  }
  if (fs::is_regular_file(dir / "model.safetensors", ec)) {
    if (absl::Status s = MapAndIndex((dir / "model.safetensors").string(), files, index); !s.ok()) return s;
    return checkpoint;
  }
  return absl::NotFoundError(absl::StrCat(
      path, " holds neither model.safetensors nor model.safetensors.index.json"));
}

absl::StatusOr<SafetensorsTensor> PretrainedCheckpoint::Read(const std::string& name,
                                                             const PretrainedTensor& t,
                                                             const TensorSelection& selection) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", name, ": ", why));
  };
  auto it = files_->mapped.find(t.file);
  const int element = SafetensorsDtypeSize(t.dtype);
  if (it == files_->mapped.end() || element == 0 || t.begin > t.end ||
      t.end > it->second->bytes().size()) {
    return absl::InternalError(absl::StrCat("tensor ", name, " does not lie within ", t.file));
  }
  const std::string_view file = it->second->bytes();
  // Index entries satisfy this (IndexFile); a hand-made `t` must too, or the runs below could
  // leave it. Checked step by step, so no product below overflows (a 0 dim makes them all 0).
  const auto mismatch = [&] {
    return absl::InternalError(absl::StrCat("tensor ", name, ": ", t.end - t.begin,
                                            " bytes do not match its shape"));
  };
  unsigned __int128 whole = static_cast<unsigned>(element);
  for (int64_t n : t.shape) {
    if (n < 0) return mismatch();
    whole *= static_cast<uint64_t>(n);
    if (whole > t.end - t.begin) return mismatch();
  }
  if (whole != t.end - t.begin) return mismatch();
  const int rank = static_cast<int>(t.shape.size());
  // The tensor as outer x extent x inner: runs of `inner` bytes along the selected dim.
  const int dim = selection.dim;
  if (dim >= rank) return bad(absl::StrCat("dim ", dim, " is not one of its ", rank, " dims"));
  uint64_t outer = 1, extent = 1, inner = static_cast<uint64_t>(element);
  for (int d = 0; d < rank; ++d) {
    const uint64_t n = static_cast<uint64_t>(t.shape[d]);
    if (dim < 0 || d > dim) inner *= n;
    else if (d < dim) outer *= n;
    else extent = n;
  }
  if (dim < 0) outer = 1;
  // Dim 0 kept in part (dim >= 1): the outer indices of rows [first_row, end_row).
  uint64_t first_outer = 0, end_outer = outer;
  uint64_t kept_rows = 0;
  if (dim >= 1) {
    const auto [row_begin, row_end] = selection.rows;
    if (row_begin < 0 || row_end < row_begin) return bad("selected rows must be an increasing range");
    const uint64_t rows = static_cast<uint64_t>(t.shape[0]);
    const uint64_t per_row = rows == 0 ? 0 : outer / rows;
    const uint64_t first_row = std::min<uint64_t>(static_cast<uint64_t>(row_begin), rows);
    const uint64_t end_row = std::min<uint64_t>(static_cast<uint64_t>(row_end), rows);
    kept_rows = end_row - first_row;
    first_outer = first_row * per_row;
    end_outer = end_row * per_row;
  }
  // The ranges, cut to the extent.
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  int64_t previous_end = 0;
  if (dim < 0) {
    runs.emplace_back(0, 1);
  } else {
    for (const auto& [begin, end] : selection.ranges) {
      if (begin < previous_end || end < begin) return bad("selected ranges must be increasing and disjoint");
      previous_end = end;
      const uint64_t b = std::min<uint64_t>(static_cast<uint64_t>(begin), extent);
      const uint64_t e = std::min<uint64_t>(static_cast<uint64_t>(end), extent);
      if (e > b) runs.emplace_back(b, e);
    }
  }
  uint64_t selected = 0;
  for (const auto& [b, e] : runs) selected += e - b;
  // outer x selected x inner <= the tensor's bytes, which lie in the file (checked at Open and
  // above): no overflow.
  SafetensorsTensor out{name, t.dtype, t.shape, {}};
  if (dim >= 0) out.shape[dim] = static_cast<int64_t>(selected);
  if (dim >= 1) out.shape[0] = static_cast<int64_t>(kept_rows);
  out.data.resize((end_outer - first_outer) * selected * inner);
  char* dst = out.data.data();
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<bool>& touched = files_->touched[t.file];
  if (touched.empty()) touched.resize((file.size() + page - 1) / page);
  for (uint64_t o = first_outer; o < end_outer; ++o) {
    for (const auto& [b, e] : runs) {
      const uint64_t from = t.begin + (o * extent + b) * inner;
      const uint64_t length = (e - b) * inner;
      if (length == 0) continue;
      std::memcpy(dst, file.data() + from, length);
      dst += length;
      for (uint64_t p = from / page; p <= (from + length - 1) / page; ++p) {
        if (!touched[p]) stats_.pages_touched += 1;
        touched[p] = true;
      }
    }
  }
  stats_.tensors += 1;
  stats_.bytes_copied += out.data.size();
  stats_.tensor_bytes += t.end - t.begin;
  return out;
}

absl::StatusOr<PretrainedIndex> OpenPretrained(const std::string& path) {
  absl::StatusOr<PretrainedCheckpoint> checkpoint = PretrainedCheckpoint::Open(path);
  if (!checkpoint.ok()) return checkpoint.status();
  return checkpoint->index();
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

namespace {

// One checkpoint tensor a plan parameter reads: its Hugging Face name and whole shape.
struct ExpectedTensor {
  std::string name;
  std::vector<int64_t> shape;
};

// The tensors parameter p reads: itself under its Hugging Face name, or a grouped routed-expert
// tensor's E per-expert tensors (checkpoint/expert_names.h).
std::vector<ExpectedTensor> ExpectedTensors(const ir::Parameter& p, ExpertNaming naming) {
  std::vector<int64_t> shape(p.shape().begin(), p.shape().end());
  const std::optional<GroupedExpertName> grouped = p.routed_expert() ? ParseGroupedExpert(p.name()) : std::nullopt;
  if (!grouped || shape.empty()) return {{HuggingFaceName(p.name(), naming), shape}};
  std::vector<ExpectedTensor> out;
  for (int64_t e = 0; e < shape[0]; ++e) {
    out.push_back({PerExpertName(*grouped, e, naming), {shape.begin() + 1, shape.end()}});
  }
  return out;
}

}  // namespace

std::vector<std::string> CheckPretrainedAgainstPlan(const ir::Plan& plan, const PretrainedIndex& index) {
  std::vector<std::string> out;
  const int64_t vocab = plan.model().vocab_size();
  const int64_t padded = plan.model().padded_vocab_size();
  const ExpertNaming naming = ExpertNamingOf(HuggingFaceModelType(plan.model()));
  for (const ir::ShardUnit& unit : plan.sharding().units()) {
    for (const ir::Parameter& p : unit.parameters()) {
      for (const ExpectedTensor& want : ExpectedTensors(p, naming)) {
        const PretrainedTensor* t = FindPretrained(index, want.name);
        if (t == nullptr) {
          out.push_back(absl::StrCat("the checkpoint has no tensor ", want.name));
          continue;
        }
        if (!IsFloat(t->dtype)) {
          out.push_back(absl::StrCat("tensor ", want.name, " is ", t->dtype,
                                     ", not a floating-point dtype (F64, F32, F16, BF16)"));
          continue;
        }
        std::vector<int64_t> have = t->shape;
        // Vocabulary rows: the checkpoint has vocab_size of them where the plan pads.
        const bool vocab_rows = !want.shape.empty() && !have.empty() && want.shape[0] == padded &&
                                padded > vocab && have[0] == vocab;
        if (vocab_rows) have[0] = padded;
        if (have != want.shape) {
          out.push_back(absl::StrCat("tensor ", want.name, " has shape ", ShapeText(t->shape),
                                     ", the plan expects ", ShapeText(want.shape)));
        }
      }
    }
  }
  return out;
}

}  // namespace accel::exec
