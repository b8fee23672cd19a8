#include "data/token_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace accel::exec {

int TokenWidthBytes(TokenWidth width) { return width == TokenWidth::kUint16 ? 2 : 4; }

absl::StatusOr<std::vector<uint32_t>> ReadTokenFile(const std::string& path, TokenWidth width) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("token file does not exist: ", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError(absl::StrCat("cannot open token file: ", path));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::InternalError(absl::StrCat("cannot read token file: ", path));
  if (bytes.empty()) return absl::InvalidArgumentError(absl::StrCat("token file is empty: ", path));
  const int w = TokenWidthBytes(width);
  if (bytes.size() % w != 0) {
    return absl::InvalidArgumentError(absl::StrCat("token file size ", bytes.size(),
                                                   " is not a multiple of ", w, " bytes: ", path));
  }
  std::vector<uint32_t> tokens(bytes.size() / w);
  for (size_t i = 0; i < tokens.size(); ++i) {
    uint32_t v = 0;
    // Assemble little-endian explicitly so the reader is independent of the host byte order.
    for (int k = w - 1; k >= 0; --k) v = (v << 8) | bytes[i * w + k];
    tokens[i] = v;
  }
  return tokens;
}

absl::Status WriteTokenFile(const std::string& path, std::span<const uint32_t> tokens, TokenWidth width) {
  const int w = TokenWidthBytes(width);
  std::vector<char> bytes(tokens.size() * w);
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (width == TokenWidth::kUint16 && tokens[i] > 0xFFFF) {
      return absl::InvalidArgumentError(absl::StrCat("token ", tokens[i], " at index ", i, " does not fit uint16"));
    }
    for (int k = 0; k < w; ++k) bytes[i * w + k] = static_cast<char>((tokens[i] >> (8 * k)) & 0xFF);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write token file: ", path));
  return absl::OkStatus();
}

}  // namespace accel::exec
