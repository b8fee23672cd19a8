// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78), the checksum of iSCSI
// (RFC 3720, appendix B.4) and ext4/Btrfs metadata. Used for checkpoint manifests.
#ifndef ACCEL_CHECKPOINT_CRC32C_H_
#define ACCEL_CHECKPOINT_CRC32C_H_

#include <cstdint>
#include <string_view>

namespace accel::exec {

// Extends crc (the value returned for the preceding bytes; 0 to start) with data.
// Crc32c("123456789") == 0xE3069283 (the standard check value).
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_CRC32C_H_
