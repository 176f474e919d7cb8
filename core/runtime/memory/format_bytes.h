// Byte counts for people: "1.50 GiB (1610612736 bytes)".
#ifndef OPENREG_CORE_RUNTIME_MEMORY_FORMAT_BYTES_H_
#define OPENREG_CORE_RUNTIME_MEMORY_FORMAT_BYTES_H_

#include <cstdint>
#include <string>

namespace openreg {

std::string FormatBytes(uint64_t bytes);

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_MEMORY_FORMAT_BYTES_H_
