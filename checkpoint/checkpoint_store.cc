#include "checkpoint/checkpoint_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/no_follow.h"
#include "checkpoint/crc32c.h"
#include "checkpoint/run_identity.h"
#include "common/durable_file.h"
#include "common/remove_tree.h"

namespace accel::exec {
namespace fs = std::filesystem;
namespace {

constexpr char kManifest[] = "manifest.json";
constexpr char kStepPrefix[] = "step_";
constexpr char kTmpPrefix[] = ".tmp-";
constexpr char kRankListPrefix[] = "rank-";
constexpr char kRankListSuffix[] = ".files.json";
constexpr char kRankListFormat[] = "accel-rank-files";

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

bool ParseStepDir(const std::string& name, int64_t* step) {
  if (name.rfind(kStepPrefix, 0) != 0) return false;
  const std::string digits = name.substr(std::strlen(kStepPrefix));
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return false;
  return absl::SimpleAtoi(digits, step);
}

absl::StatusOr<std::string> Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path.string()));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::InternalError(absl::StrCat("cannot read ", path.string()));
  return bytes;
}

struct ManifestEntry {
  uint64_t size = 0;
  std::string crc;
};

// True when json[key] is the string want. (nlohmann's value(key, "") throws on a key of another
// type, e.g. {"format": 1}, so the files below never use it.)
bool HasString(const nlohmann::json& json, const char* key, std::string_view want) {
  auto it = json.find(key);
  return it != json.end() && it->is_string() && it->get_ref<const std::string&>() == want;
}

// The names a checkpoint may hold (Write's rule): a plain file name, not the manifest, not hidden
// (".tmp-*" directories, ".", ".."). Readers apply it too: a manifest or rank list naming
// "../x" or "/dev/zero" would make them open, and Publish list, files outside the checkpoint.
bool IsCheckpointFileName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name.find('\0') == std::string::npos &&
         name != kManifest && name[0] != '.';
}

// dir's manifest.json parsed, with its format and file array checked (not the entries).
absl::StatusOr<nlohmann::json> ReadManifestJson(const std::string& dir) {
  auto loss = [&](const std::string& why) { return absl::DataLossError(absl::StrCat(dir, ": ", why)); };
  absl::StatusOr<std::string> bytes = Slurp(fs::path(dir) / kManifest);
  if (!bytes.ok()) return loss("manifest.json is missing");
  nlohmann::json manifest = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.is_object() || !HasString(manifest, "format", "accel-checkpoint") ||
      !manifest.contains("files") || !manifest["files"].is_array()) {
    return loss("manifest.json is not a valid accel checkpoint manifest");
  }
  return manifest;
}

absl::StatusOr<std::vector<std::pair<std::string, ManifestEntry>>> ReadManifest(const std::string& dir) {
  auto loss = [&](const std::string& why) { return absl::DataLossError(absl::StrCat(dir, ": ", why)); };
  absl::StatusOr<nlohmann::json> manifest = ReadManifestJson(dir);
  if (!manifest.ok()) return manifest.status();
  std::vector<std::pair<std::string, ManifestEntry>> entries;
  for (const nlohmann::json& f : (*manifest)["files"]) {
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("size_bytes") ||
        !f["size_bytes"].is_number_unsigned() || !f.contains("crc32c") || !f["crc32c"].is_string()) {
      return loss("manifest.json has a malformed file entry");
    }
    if (!IsCheckpointFileName(f["name"].get<std::string>())) {
      return loss(absl::StrCat("manifest.json names '", f["name"].get<std::string>(),
                               "', which is not a checkpoint file name"));
    }
    entries.push_back({f["name"].get<std::string>(),
                       ManifestEntry{f["size_bytes"].get<uint64_t>(), f["crc32c"].get<std::string>()}});
  }
  return entries;
}

std::string CrcHex(std::string_view bytes) { return absl::StrFormat("%08x", Crc32c(bytes)); }

absl::Status CheckFile(const std::string& dir, const std::string& name, const ManifestEntry& entry,
                       const std::string& bytes) {
  if (bytes.size() != entry.size) {
    return absl::DataLossError(absl::StrCat(dir, ": ", name, " has ", bytes.size(), " bytes, manifest says ",
                                            entry.size, " (truncated?)"));
  }
  if (CrcHex(bytes) != entry.crc) {
    return absl::DataLossError(absl::StrCat(dir, ": ", name, " fails its CRC-32C (", CrcHex(bytes),
                                            " != ", entry.crc, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<CheckpointInfo>> ListSteps(const std::string& root);

// The error of a checkpoint that could not be written (a full disk, a quota, a link planted in the
// directory, another run's checkpoint at its name): nothing was published, so the newest published
// checkpoint is still the one resume picks; the message says so only when root holds one. Keeps
// the code of `cause`.
absl::Status NotWritten(const std::string& root, int64_t step, const absl::Status& cause) {
  absl::StatusOr<std::vector<CheckpointInfo>> published = ListSteps(root);
  const bool any = published.ok() && !published->empty();
  return absl::Status(cause.code(),
                      absl::StrCat("checkpoint of step ", step, " not written (",
                                   any ? "the previous checkpoints are intact" : "no earlier checkpoint exists",
                                   "): ", cause.message()));
}

std::string TmpDir(const std::string& root, int64_t step) {
  return (fs::path(root) / (kTmpPrefix + CheckpointStore::StepDirName(step))).string();
}

nlohmann::json ListEntry(const std::string& name, std::string_view bytes) {
  return {{"name", name}, {"size_bytes", bytes.size()}, {"crc32c", CrcHex(bytes)}};
}

// Write's rules for a file name, plus uniqueness against (and insertion into) names.
absl::Status CheckFileName(const std::string& name, std::set<std::string>& names) {
  if (!IsCheckpointFileName(name) || !names.insert(name).second) {
    return absl::InvalidArgumentError(absl::StrCat("bad checkpoint file name '", name, "'"));
  }
  return absl::OkStatus();
}

// rank-*.files.json names are reserved for the per-rank lists of multi-writer checkpoints.
bool IsRankListName(const std::string& name) {
  return name.rfind(kRankListPrefix, 0) == 0 && absl::EndsWith(name, kRankListSuffix);
}

absl::StatusOr<std::vector<CheckpointInfo>> ListSteps(const std::string& root) {
  std::vector<CheckpointInfo> out;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return out;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    int64_t step = 0;
    if (entry.is_directory() && ParseStepDir(entry.path().filename().string(), &step)) {
      out.push_back({step, entry.path().string()});
    }
  }
  if (ec) return absl::InternalError(absl::StrCat("cannot list ", root, ": ", ec.message()));
  std::sort(out.begin(), out.end(), [](const CheckpointInfo& a, const CheckpointInfo& b) { return a.step < b.step; });
  return out;
}

// The identity recorded in dir's manifest. Errors: ReadManifestJson's DataLoss.
absl::StatusOr<CheckpointIdentity> ReadIdentityOf(const std::string& dir) {
  absl::StatusOr<nlohmann::json> manifest = ReadManifestJson(dir);
  if (!manifest.ok()) return manifest.status();
  return IdentityFromManifest(*manifest);
}

// "job 'x', run 1a2b3c4d" for messages about a checkpoint of another run.
std::string WriterText(const CheckpointIdentity& identity) {
  return absl::StrCat("job '", identity.job, "', ", RunLabel(identity.run_id));
}

// An existing checkpoint at final_dir may be replaced only by its own run (a restart that writes
// the same step again): another run's, or one whose manifest cannot be read, is never deleted.
absl::Status CheckReplaceable(const std::string& final_dir, const std::string& run_id) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(final_dir, ec))) return absl::OkStatus();
  absl::StatusOr<CheckpointIdentity> there = ReadIdentityOf(final_dir);
  if (!there.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(final_dir, " already exists and is not a readable checkpoint; accel never replaces it"));
  }
  if (there->run_id != run_id) {
    return absl::FailedPreconditionError(absl::StrCat(final_dir, " holds a checkpoint of another run (",
                                                      WriterText(*there), "); accel never replaces it"));
  }
  return absl::OkStatus();
}

// Writes the manifest into tmp_dir, syncs it and renames it to ROOT/step_N; returns that path.
absl::StatusOr<std::string> RenameIntoPlace(const std::string& root, const std::string& tmp_dir, int64_t step,
                                            const nlohmann::json& listed, const CheckpointIdentity& identity) {
  const std::string final_dir = (fs::path(root) / CheckpointStore::StepDirName(step)).string();
  if (absl::Status s = CheckReplaceable(final_dir, identity.run_id); !s.ok()) return s;
  nlohmann::json manifest = {{"format", "accel-checkpoint"}, {"version", 1}, {"step", step}, {"files", listed}};
  if (!identity.job.empty() || !identity.run_id.empty()) manifest["run"] = IdentityToJson(identity);
  if (!identity.layout.is_null()) manifest["layout"] = identity.layout;
  if (absl::Status s = WriteAndSync((fs::path(tmp_dir) / kManifest).string(), manifest.dump(2) + "\n"); !s.ok()) {
    return s;
  }
  if (absl::Status s = SyncDir(tmp_dir); !s.ok()) return s;
  // rename(2) cannot replace a non-empty directory: this run's older checkpoint of the same step
  // (CheckReplaceable) goes first.
  std::error_code ec;
  RemoveTree(final_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot replace ", final_dir, ": ", ec.message()));
  if (std::rename(tmp_dir.c_str(), final_dir.c_str()) != 0) return Errno("cannot publish", final_dir);
  if (absl::Status s = SyncDir(root); !s.ok()) return s;
  return final_dir;
}

// The step of a temporary directory name ".tmp-step_N"; max() for other ".tmp-" names.
int64_t TmpStep(const std::string& name) {
  int64_t step = 0;
  if (ParseStepDir(name.substr(std::strlen(kTmpPrefix)), &step)) return step;
  return std::numeric_limits<int64_t>::max();
}

// Whether dir is a checkpoint of run_id whose listed files are all present with their recorded
// sizes: cheap (no CRC), so pruning does not re-read every checkpoint after each write.
bool IsCompleteCheckpointOf(const std::string& dir, const std::string& run_id) {
  absl::StatusOr<CheckpointIdentity> identity = ReadIdentityOf(dir);
  if (!identity.ok() || identity->run_id != run_id) return false;
  absl::StatusOr<std::vector<std::pair<std::string, ManifestEntry>>> manifest = ReadManifest(dir);
  if (!manifest.ok()) return false;
  for (const auto& [name, entry] : *manifest) {
    std::error_code ec;
    if (fs::file_size(fs::path(dir) / name, ec) != entry.size || ec) return false;
  }
  return true;
}

// Keeps the newest `keep` complete checkpoints of run_id, deletes its older complete ones, and
// deletes temporaries of steps <= tmp_up_to (Write passes max(), which deletes them all: a single
// writer has no other write in progress). Another run's checkpoints and incomplete ones are never
// deleted, so the newest readable checkpoint always survives.
absl::Status Prune(const std::string& root, int keep, int64_t tmp_up_to, const std::string& run_id) {
  absl::StatusOr<std::vector<CheckpointInfo>> all = ListSteps(root);
  if (!all.ok()) return all.status();
  std::vector<CheckpointInfo> mine;
  for (const CheckpointInfo& c : *all) {
    if (IsCompleteCheckpointOf(c.path, run_id)) mine.push_back(c);
  }
  std::error_code ec;
  for (size_t i = 0; i + keep < mine.size(); ++i) {
    RemoveTree(mine[i].path, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot prune ", mine[i].path, ": ", ec.message()));
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kTmpPrefix, 0) == 0 && TmpStep(name) <= tmp_up_to) RemoveTree(entry.path(), ec);
  }
  return SyncDir(root);
}

// One rank's list, checked against the files present in tmp_dir.
absl::StatusOr<nlohmann::json> ReadRankList(const std::string& tmp_dir, int rank, int world_size) {
  const std::string list_name = CheckpointStore::RankListName(rank);
  absl::StatusOr<std::string> bytes = Slurp(fs::path(tmp_dir) / list_name);
  if (!bytes.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(tmp_dir, ": rank ", rank, " of ", world_size,
                                                      " has not written its file list (", list_name, ")"));
  }
  const nlohmann::json list = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  auto malformed = [&] { return absl::DataLossError(absl::StrCat(tmp_dir, ": ", list_name, " is malformed")); };
  if (list.is_discarded() || !list.is_object() || !HasString(list, "format", kRankListFormat) ||
      !list.contains("rank") || list["rank"] != rank || !list.contains("files") || !list["files"].is_array()) {
    return malformed();
  }
  for (const nlohmann::json& f : list["files"]) {
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("size_bytes") ||
        !f["size_bytes"].is_number_unsigned() || !f.contains("crc32c") || !f["crc32c"].is_string()) {
      return malformed();
    }
    const std::string name = f["name"].get<std::string>();
    if (!IsCheckpointFileName(name)) {
      return absl::DataLossError(
          absl::StrCat(tmp_dir, ": ", list_name, " names '", name, "', which is not a checkpoint file name"));
    }
    std::error_code ec;
    const uintmax_t size = fs::file_size(fs::path(tmp_dir) / name, ec);
    if (ec) return absl::DataLossError(absl::StrCat(tmp_dir, ": rank ", rank, "'s ", name, " is missing"));
    if (size != f["size_bytes"].get<uint64_t>()) {
      return absl::DataLossError(absl::StrCat(tmp_dir, ": rank ", rank, "'s ", name, " has ", size,
                                              " bytes, its list says ", f["size_bytes"].get<uint64_t>()));
    }
  }
  return list["files"];
}

// Lists of ranks >= world_size can only be leftovers of an earlier attempt with more ranks; their
// files would be mixed into this checkpoint, so publication stops.
absl::Status CheckNoForeignLists(const std::string& tmp_dir, int world_size) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(tmp_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!IsRankListName(name)) continue;
    const std::string digits =
        name.substr(std::strlen(kRankListPrefix), name.size() - std::strlen(kRankListPrefix) - std::strlen(kRankListSuffix));
    int rank = 0;
    const bool parsed = absl::SimpleAtoi(digits, &rank);
    if (parsed && rank >= 0 && rank < world_size) continue;
    return absl::FailedPreconditionError(absl::StrCat(tmp_dir, ": ", name, " is from rank ",
                                                      parsed ? std::to_string(rank) : digits,
                                                      ", but the world size is ", world_size,
                                                      " (left over from an earlier run?)"));
  }
  if (ec) return absl::InternalError(absl::StrCat("cannot list ", tmp_dir, ": ", ec.message()));
  return absl::OkStatus();
}

// Every rank's list, concatenated in rank order; a file name claimed by two ranks is an error.
absl::StatusOr<nlohmann::json> MergeRankLists(const std::string& tmp_dir, int world_size) {
  if (absl::Status s = CheckNoForeignLists(tmp_dir, world_size); !s.ok()) return s;
  nlohmann::json merged = nlohmann::json::array();
  std::map<std::string, int> owner;
  for (int rank = 0; rank < world_size; ++rank) {
    absl::StatusOr<nlohmann::json> files = ReadRankList(tmp_dir, rank, world_size);
    if (!files.ok()) return files.status();
    for (const nlohmann::json& f : *files) {
      const auto [it, fresh] = owner.emplace(f["name"].get<std::string>(), rank);
      if (!fresh) {
        return absl::FailedPreconditionError(absl::StrCat(tmp_dir, ": ", it->first, " is written by rank ",
                                                          it->second, " and rank ", rank));
      }
      merged.push_back(f);
    }
  }
  return merged;
}

// The published directory holds exactly the manifest's files: the per-rank lists (already merged)
// and anything no list names (a partial write of a crashed attempt) are deleted.
absl::Status RemoveUnlisted(const std::string& tmp_dir, const std::set<std::string>& listed) {
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (const fs::directory_entry& entry : fs::directory_iterator(tmp_dir, ec)) {
    if (listed.count(entry.path().filename().string()) == 0) doomed.push_back(entry.path());
  }
  if (ec) return absl::InternalError(absl::StrCat("cannot list ", tmp_dir, ": ", ec.message()));
  for (const fs::path& path : doomed) {
    RemoveTree(path, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot remove ", path.string(), ": ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace

CheckpointStore::CheckpointStore(std::string root, int keep, CheckpointIdentity identity)
    : root_(std::move(root)), keep_(std::max(keep, 1)), identity_(std::move(identity)) {}

void CheckpointStore::ContinueRun(const CheckpointIdentity& resumed) {
  if (identity_.run_id.empty()) identity_.run_id = resumed.run_id;
}

absl::Status CheckpointStore::EnsureRunId() {
  if (identity_.job.empty() || !identity_.run_id.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> id = NewRunId();
  if (!id.ok()) return id.status();
  identity_.run_id = *id;
  return absl::OkStatus();
}

absl::StatusOr<CheckpointIdentity> CheckpointStore::ReadIdentity(const std::string& dir) { return ReadIdentityOf(dir); }

std::string CheckpointStore::StepDirName(int64_t step) { return absl::StrFormat("%s%08d", kStepPrefix, step); }

absl::StatusOr<std::string> CheckpointStore::Write(int64_t step, const std::vector<CheckpointFile>& files) {
  if (step < 0) return absl::InvalidArgumentError(absl::StrCat("checkpoint step must be >= 0, got ", step));
  std::set<std::string> names;
  for (const CheckpointFile& f : files) {
    if (absl::Status s = CheckFileName(f.name, names); !s.ok()) return s;
  }
  if (absl::Status s = EnsureRunId(); !s.ok()) return s;
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create checkpoint root ", root_, ": ", ec.message()));
  const std::string tmp_dir = TmpDir(root_, step);
  RemoveTree(tmp_dir, ec);
  if (!fs::create_directory(tmp_dir, ec)) {
    return absl::InternalError(absl::StrCat("cannot create ", tmp_dir, ": ", ec.message()));
  }
  nlohmann::json listed = nlohmann::json::array();
  absl::StatusOr<std::string> final_dir = absl::UnknownError("");
  for (const CheckpointFile& f : files) {
    if (absl::Status s = WriteAndSync((fs::path(tmp_dir) / f.name).string(), f.bytes); !s.ok()) {
      final_dir = s;
      break;
    }
    listed.push_back(ListEntry(f.name, f.bytes));
  }
  if (listed.size() == files.size()) final_dir = RenameIntoPlace(root_, tmp_dir, step, listed, identity_);
  if (!final_dir.ok()) {
    // The partial files go at once: on a full disk they hold the space the next try needs.
    RemoveTree(tmp_dir, ec);
    return NotWritten(root_, step, final_dir.status());
  }
  // Prune: this run's newest keep_ checkpoints stay; stale temporaries of crashed writes go.
  const int64_t all_temporaries = std::numeric_limits<int64_t>::max();
  if (absl::Status s = Prune(root_, keep_, all_temporaries, identity_.run_id); !s.ok()) return s;
  return final_dir;
}

absl::StatusOr<std::string> CheckpointStore::BeginStep(int64_t step) {
  if (step < 0) return absl::InvalidArgumentError(absl::StrCat("checkpoint step must be >= 0, got ", step));
  const std::string tmp_dir = TmpDir(root_, step);
  // A link planted at the temporary name would send every rank's files elsewhere.
  if (IsSymlink(tmp_dir)) return SymlinkRefusal(tmp_dir);
  // create_directories succeeds when another rank created the directory first.
  std::error_code ec;
  fs::create_directories(tmp_dir, ec);
  if (ec || !fs::is_directory(tmp_dir)) {
    return absl::InternalError(absl::StrCat("cannot create ", tmp_dir, ": ", ec.message()));
  }
  return tmp_dir;
}

absl::Status CheckpointStore::WriteRankFiles(const std::string& tmp_dir, int rank,
                                             const std::vector<CheckpointFile>& files) {
  if (rank < 0) return absl::InvalidArgumentError(absl::StrCat("rank must be >= 0, got ", rank));
  std::set<std::string> names;
  for (const CheckpointFile& f : files) {
    if (IsRankListName(f.name)) return absl::InvalidArgumentError(absl::StrCat("bad checkpoint file name '", f.name, "'"));
    if (absl::Status s = CheckFileName(f.name, names); !s.ok()) return s;
  }
  std::error_code ec;
  if (!fs::is_directory(tmp_dir, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(tmp_dir, " does not exist (BeginStep creates it)"));
  }
  const int64_t step = TmpStep(fs::path(tmp_dir).filename().string());
  const std::string root = fs::path(tmp_dir).parent_path().string();
  nlohmann::json listed = nlohmann::json::array();
  for (const CheckpointFile& f : files) {
    if (absl::Status s = WriteAndSync((fs::path(tmp_dir) / f.name).string(), f.bytes); !s.ok()) {
      return NotWritten(root, step, s);
    }
    listed.push_back(ListEntry(f.name, f.bytes));
  }
  const nlohmann::json list = {{"format", kRankListFormat}, {"rank", rank}, {"files", listed}};
  // Written atomically: a list that exists under its real name is complete.
  if (absl::Status s = WriteFileAtomically(tmp_dir, RankListName(rank), list.dump(2) + "\n"); !s.ok()) {
    return NotWritten(root, step, s);
  }
  return SyncDir(tmp_dir);
}

absl::StatusOr<std::string> CheckpointStore::Publish(int64_t step, int world_size,
                                                     const std::vector<CheckpointFile>& extra_files_from_rank0) {
  if (step < 0) return absl::InvalidArgumentError(absl::StrCat("checkpoint step must be >= 0, got ", step));
  if (world_size < 1) return absl::InvalidArgumentError(absl::StrCat("world size must be >= 1, got ", world_size));
  const std::string tmp_dir = TmpDir(root_, step);
  std::error_code ec;
  if (!fs::is_directory(tmp_dir, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("no checkpoint of step ", step, " is in progress (", tmp_dir, " is missing)"));
  }
  if (absl::Status s = EnsureRunId(); !s.ok()) return s;
  absl::StatusOr<nlohmann::json> listed = MergeRankLists(tmp_dir, world_size);
  if (!listed.ok()) return listed.status();
  std::set<std::string> names;
  for (const nlohmann::json& entry : *listed) names.insert(entry["name"].get<std::string>());
  for (const CheckpointFile& f : extra_files_from_rank0) {
    if (IsRankListName(f.name)) return absl::InvalidArgumentError(absl::StrCat("bad checkpoint file name '", f.name, "'"));
    if (absl::Status s = CheckFileName(f.name, names); !s.ok()) return s;
  }
  for (const CheckpointFile& f : extra_files_from_rank0) {
    if (absl::Status s = WriteAndSync((fs::path(tmp_dir) / f.name).string(), f.bytes); !s.ok()) {
      return NotWritten(root_, step, s);
    }
    listed->push_back(ListEntry(f.name, f.bytes));
  }
  if (absl::Status s = RemoveUnlisted(tmp_dir, names); !s.ok()) return s;
  absl::StatusOr<std::string> final_dir = RenameIntoPlace(root_, tmp_dir, step, *listed, identity_);
  if (!final_dir.ok()) return NotWritten(root_, step, final_dir.status());
  if (absl::Status s = Prune(root_, keep_, step, identity_.run_id); !s.ok()) return s;
  return final_dir;
}

absl::Status CheckpointStore::RemoveStaleTemporaries() const {
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return absl::OkStatus();
  for (const fs::directory_entry& entry : fs::directory_iterator(root_, ec)) {
    if (entry.path().filename().string().rfind(kTmpPrefix, 0) != 0) continue;
    RemoveTree(entry.path(), ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot remove ", entry.path().string(), ": ", ec.message()));
  }
  if (ec) return absl::InternalError(absl::StrCat("cannot list ", root_, ": ", ec.message()));
  return SyncDir(root_);
}

absl::StatusOr<std::vector<CheckpointInfo>> CheckpointStore::List() const { return ListSteps(root_); }

absl::Status CheckpointStore::Verify(const std::string& dir) {
  absl::StatusOr<std::vector<std::pair<std::string, ManifestEntry>>> manifest = ReadManifest(dir);
  if (!manifest.ok()) return manifest.status();
  for (const auto& [name, entry] : *manifest) {
    absl::StatusOr<std::string> bytes = Slurp(fs::path(dir) / name);
    if (!bytes.ok()) return absl::DataLossError(absl::StrCat(dir, ": ", name, " is missing"));
    if (absl::Status s = CheckFile(dir, name, entry, *bytes); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<CheckpointInfo> CheckpointStore::LatestGood(std::vector<std::string>* skipped) const {
  absl::StatusOr<std::vector<CheckpointInfo>> all = List();
  if (!all.ok()) return all.status();
  for (auto it = all->rbegin(); it != all->rend(); ++it) {
    if (!IsOwnJob(it->path)) continue;
    absl::Status s = Verify(it->path);
    if (s.ok()) return *it;
    if (skipped != nullptr) skipped->push_back(std::string(s.message()));
  }
  return absl::NotFoundError(absl::StrCat("no valid checkpoint under ", root_));
}

std::optional<CheckpointInfo> CheckpointStore::NewestOfRun() const {
  absl::StatusOr<std::vector<CheckpointInfo>> all = List();
  if (!all.ok() || identity_.run_id.empty()) return std::nullopt;
  for (auto it = all->rbegin(); it != all->rend(); ++it) {
    if (IsCompleteCheckpointOf(it->path, identity_.run_id)) return *it;
  }
  return std::nullopt;
}

bool CheckpointStore::IsOwnJob(const std::string& dir) const {
  if (identity_.job.empty()) return true;
  absl::StatusOr<CheckpointIdentity> there = ReadIdentityOf(dir);
  // An unreadable manifest is left to Verify, which reports it as skipped.
  return !there.ok() || there->job.empty() || there->job == identity_.job;
}

absl::StatusOr<std::string> CheckpointStore::ReadFile(const std::string& dir, const std::string& name) {
  absl::StatusOr<std::vector<std::pair<std::string, ManifestEntry>>> manifest = ReadManifest(dir);
  if (!manifest.ok()) return manifest.status();
  for (const auto& [listed, entry] : *manifest) {
    if (listed != name) continue;
    absl::StatusOr<std::string> bytes = Slurp(fs::path(dir) / name);
    if (!bytes.ok()) return absl::DataLossError(absl::StrCat(dir, ": ", name, " is missing"));
    if (absl::Status s = CheckFile(dir, name, entry, *bytes); !s.ok()) return s;
    return bytes;
  }
  return absl::NotFoundError(absl::StrCat(dir, ": manifest does not list ", name));
}

absl::StatusOr<std::vector<std::string>> CheckpointStore::ManifestFiles(const std::string& dir) {
  absl::StatusOr<std::vector<std::pair<std::string, ManifestEntry>>> manifest = ReadManifest(dir);
  if (!manifest.ok()) return manifest.status();
  std::vector<std::string> names;
  for (const auto& [name, entry] : *manifest) names.push_back(name);
  return names;
}

std::string CheckpointStore::RankListName(int rank) { return absl::StrFormat("rank-%05d.files.json", rank); }

}  // namespace accel::exec
