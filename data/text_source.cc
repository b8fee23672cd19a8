#include "data/text_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/utf8.h"

namespace accel::exec {
namespace fs = std::filesystem;
namespace {

absl::StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError(absl::StrCat("cannot open data file: ", path.string()));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::InternalError(absl::StrCat("cannot read data file: ", path.string()));
  return buffer.str();
}

// Why IsTextFile rejected content, for error messages.
std::string NotTextReason(std::string_view name, std::string_view content) {
  if (name.ends_with(".dat")) return "a .dat index file";
  if (content.find('\0') != std::string_view::npos) return "contains NUL bytes";
  return "not valid UTF-8";
}

}  // namespace

bool IsTextFile(std::string_view name, std::string_view content) {
  return !name.ends_with(".dat") && content.find('\0') == std::string_view::npos &&
         IsValidUtf8(content);
}

absl::StatusOr<std::vector<std::string>> ListTextFiles(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return absl::NotFoundError(absl::StrCat("data path does not exist: ", path));
  if (fs::is_regular_file(status)) {
    absl::StatusOr<std::string> content = ReadFile(path);
    if (!content.ok()) return content.status();
    if (!IsTextFile(path, *content)) {
      return absl::InvalidArgumentError(
          absl::StrCat("data file is not text (", NotTextReason(path, *content), "): ", path));
    }
    return std::vector<std::string>{path};
  }
  if (!fs::is_directory(status)) {
    return absl::InvalidArgumentError(absl::StrCat("data path is neither a file nor a directory: ", path));
  }
  std::vector<std::string> candidates;
  fs::recursive_directory_iterator it(path, fs::directory_options::none, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot list data directory ", path, ": ", ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return absl::InternalError(absl::StrCat("cannot list data directory ", path, ": ", ec.message()));
    // symlink_status: a link is neither followed into a directory nor read as a file.
    if (fs::is_regular_file(it->symlink_status())) candidates.push_back(it->path().string());
  }
  std::sort(candidates.begin(), candidates.end());
  std::vector<std::string> files;
  for (const std::string& file : candidates) {
    if (file.ends_with(".dat")) continue;
    absl::StatusOr<std::string> content = ReadFile(file);
    if (!content.ok()) return content.status();
    if (IsTextFile(file, *content)) files.push_back(file);
  }
  if (files.empty()) return absl::InvalidArgumentError(absl::StrCat("no text files under ", path));
  return files;
}

absl::StatusOr<std::string> ReadTextCorpus(const std::string& path) {
  absl::StatusOr<std::vector<std::string>> files = ListTextFiles(path);
  if (!files.ok()) return files.status();
  std::string corpus;
  for (const std::string& file : *files) {
    absl::StatusOr<std::string> content = ReadFile(file);
    if (!content.ok()) return content.status();
    corpus += *content;
  }
  if (corpus.empty()) return absl::InvalidArgumentError(absl::StrCat("data is empty: ", path));
  return corpus;
}

}  // namespace accel::exec
