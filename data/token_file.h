// Pre-tokenized corpora in nanoGPT's .bin layout: a flat array of little-endian unsigned integers,
// no header (nanoGPT data/*/prepare.py writes uint16 with numpy's tofile).
#ifndef ACCEL_DATA_TOKEN_FILE_H_
#define ACCEL_DATA_TOKEN_FILE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accel::exec {

// Width of one token on disk.
enum class TokenWidth { kUint16, kUint32 };

// Bytes per token for width (2 or 4).
int TokenWidthBytes(TokenWidth width);

// Reads the whole file. Errors: NotFound "token file does not exist: PATH"; InvalidArgument when
// its size is not a multiple of the token width or it is empty ("token file is empty: PATH").
absl::StatusOr<std::vector<uint32_t>> ReadTokenFile(const std::string& path, TokenWidth width);

// Writes tokens (each must fit the width) little-endian. Errors: InvalidArgument for a token that
// does not fit in 16 bits with kUint16; Internal on I/O failure.
absl::Status WriteTokenFile(const std::string& path, std::span<const uint32_t> tokens, TokenWidth width);

}  // namespace accel::exec

#endif  // ACCEL_DATA_TOKEN_FILE_H_
