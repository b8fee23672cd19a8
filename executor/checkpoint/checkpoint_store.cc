#include "executor/checkpoint/checkpoint_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "executor/checkpoint/crc32c.h"

namespace accel::exec {
namespace fs = std::filesystem;
namespace {

constexpr char kManifest[] = "manifest.json";
constexpr char kStepPrefix[] = "step_";
constexpr char kTmpPrefix[] = ".tmp-";

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

absl::Status WriteAndSync(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", path);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status s = Errno("cannot write", path);
      ::close(fd);
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    absl::Status s = Errno("cannot fsync", path);
    ::close(fd);
    return s;
  }
  if (::close(fd) != 0) return Errno("cannot close", path);
  return absl::OkStatus();
}

// A rename or file creation is durable only once the containing directory is synced.
absl::Status SyncDir(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open directory", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Errno("cannot fsync directory", path);
  return absl::OkStatus();
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

absl::StatusOr<std::vector<std::pair<std::string, ManifestEntry>>> ReadManifest(const std::string& dir) {
  auto loss = [&](const std::string& why) { return absl::DataLossError(absl::StrCat(dir, ": ", why)); };
  absl::StatusOr<std::string> bytes = Slurp(fs::path(dir) / kManifest);
  if (!bytes.ok()) return loss("manifest.json is missing");
  nlohmann::json manifest = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.is_object() || manifest.value("format", "") != "accel-checkpoint" ||
      !manifest.contains("files") || !manifest["files"].is_array()) {
    return loss("manifest.json is not a valid accel checkpoint manifest");
  }
  std::vector<std::pair<std::string, ManifestEntry>> entries;
  for (const nlohmann::json& f : manifest["files"]) {
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("size_bytes") ||
        !f["size_bytes"].is_number_unsigned() || !f.contains("crc32c") || !f["crc32c"].is_string()) {
      return loss("manifest.json has a malformed file entry");
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

}  // namespace

CheckpointStore::CheckpointStore(std::string root, int keep) : root_(std::move(root)), keep_(std::max(keep, 1)) {}

std::string CheckpointStore::StepDirName(int64_t step) { return absl::StrFormat("%s%08d", kStepPrefix, step); }

absl::StatusOr<std::string> CheckpointStore::Write(int64_t step, const std::vector<CheckpointFile>& files) {
  if (step < 0) return absl::InvalidArgumentError(absl::StrCat("checkpoint step must be >= 0, got ", step));
  std::set<std::string> names;
  for (const CheckpointFile& f : files) {
    if (f.name.empty() || f.name.find('/') != std::string::npos || f.name == kManifest || f.name[0] == '.' ||
        !names.insert(f.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("bad checkpoint file name '", f.name, "'"));
    }
  }
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create checkpoint root ", root_, ": ", ec.message()));
  const std::string name = StepDirName(step);
  const std::string final_dir = (fs::path(root_) / name).string();
  const std::string tmp_dir = (fs::path(root_) / (kTmpPrefix + name)).string();
  fs::remove_all(tmp_dir, ec);
  if (!fs::create_directory(tmp_dir, ec)) {
    return absl::InternalError(absl::StrCat("cannot create ", tmp_dir, ": ", ec.message()));
  }
  nlohmann::json listed = nlohmann::json::array();
  for (const CheckpointFile& f : files) {
    if (absl::Status s = WriteAndSync((fs::path(tmp_dir) / f.name).string(), f.bytes); !s.ok()) return s;
    listed.push_back({{"name", f.name}, {"size_bytes", f.bytes.size()}, {"crc32c", CrcHex(f.bytes)}});
  }
  nlohmann::json manifest = {{"format", "accel-checkpoint"}, {"version", 1}, {"step", step}, {"files", listed}};
  if (absl::Status s = WriteAndSync((fs::path(tmp_dir) / kManifest).string(), manifest.dump(2) + "\n"); !s.ok()) {
    return s;
  }
  if (absl::Status s = SyncDir(tmp_dir); !s.ok()) return s;
  // rename(2) cannot replace a non-empty directory: an older checkpoint of the same step goes first.
  fs::remove_all(final_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot replace ", final_dir, ": ", ec.message()));
  if (std::rename(tmp_dir.c_str(), final_dir.c_str()) != 0) return Errno("cannot publish", final_dir);
  if (absl::Status s = SyncDir(root_); !s.ok()) return s;

  // Prune: the newest keep_ published checkpoints stay; stale temporaries of crashed writes go.
  absl::StatusOr<std::vector<CheckpointInfo>> all = List();
  if (!all.ok()) return all.status();
  for (size_t i = 0; i + keep_ < all->size(); ++i) {
    fs::remove_all((*all)[i].path, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot prune ", (*all)[i].path, ": ", ec.message()));
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(root_, ec)) {
    if (entry.path().filename().string().rfind(kTmpPrefix, 0) == 0) fs::remove_all(entry.path(), ec);
  }
  if (absl::Status s = SyncDir(root_); !s.ok()) return s;
  return final_dir;
}

absl::StatusOr<std::vector<CheckpointInfo>> CheckpointStore::List() const {
  std::vector<CheckpointInfo> out;
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return out;
  for (const fs::directory_entry& entry : fs::directory_iterator(root_, ec)) {
    int64_t step = 0;
    if (entry.is_directory() && ParseStepDir(entry.path().filename().string(), &step)) {
      out.push_back({step, entry.path().string()});
    }
  }
  if (ec) return absl::InternalError(absl::StrCat("cannot list ", root_, ": ", ec.message()));
  std::sort(out.begin(), out.end(), [](const CheckpointInfo& a, const CheckpointInfo& b) { return a.step < b.step; });
  return out;
}

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
    absl::Status s = Verify(it->path);
    if (s.ok()) return *it;
    if (skipped != nullptr) skipped->push_back(std::string(s.message()));
  }
  return absl::NotFoundError(absl::StrCat("no valid checkpoint under ", root_));
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

}  // namespace accel::exec
