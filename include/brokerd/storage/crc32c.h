#pragma once
// CRC-32C (Castagnoli), the checksum of RecordBatch v2.
#include <cstddef>
#include <cstdint>
#include <span>

namespace brokerd::storage {

// Continues a CRC: pass the previous result as `crc` (0 to start).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);

inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }
inline uint32_t crc32c(std::span<const std::byte> data) { return crc32c_extend(0, data.data(), data.size()); }

// The portable table version, exposed so tests can compare it with the hardware path.
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size);

// True when the SSE4.2 instruction path is used.
bool crc32c_hardware_accelerated();

}  // namespace brokerd::storage
