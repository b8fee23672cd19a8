#include "executor/data/text_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"

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

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t min;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2, min = 0x80, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, min = 0x800, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, min = 0x10000, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (int k = 1; k < len; ++k) {
      const auto cc = static_cast<uint8_t>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

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
