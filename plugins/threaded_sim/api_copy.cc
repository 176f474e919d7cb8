// memcpy_async and memset_async.
//
// Note [Pageable host memory]
// As on CUDA, a copy is fully asynchronous only between device memory and
// pinned host memory (from host_malloc). Any other host memory is pageable,
// and the caller may reuse it as soon as the call returns:
//   - a small pageable source (up to kStagingLimit) is staged: its bytes are
//     copied into a buffer the work item owns before the call returns, and
//     the item copies from there;
//   - a larger pageable source, and any pageable destination, make the call
//     blocking: it enqueues the copy and returns only once it (and so all
//     earlier work on the stream) has finished. For a large source this is
//     CUDA's behaviour too (it synchronizes the stream before a pageable
//     upload), and it copies the bytes once instead of twice into a fresh
//     buffer, whose page faults cost more than the copy itself.
// Device pointers are validated when the work is enqueued; the caller
// guarantees they stay allocated until it ran.
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#include "absl/strings/str_format.h"
#include "plugins/threaded_sim/api.h"
#include "plugins/threaded_sim/driver_state.h"
#include "plugins/sim_support/error.h"
#include "plugins/threaded_sim/global_state.h"
#include "plugins/threaded_sim/stream.h"
#include "plugins/threaded_sim/work_item.h"

namespace openreg::threaded_sim {

using sim::Allocation;
using sim::Fail;
using sim::RequireNonNull;

namespace {

// The description of a copy in failure messages, or null for a bad kind.
const char* CopyDescription(int32_t kind) {
  switch (kind) {
    case OPENREG_MEMCPY_HOST_TO_HOST:
      return "memcpy_async (OPENREG_MEMCPY_HOST_TO_HOST)";
    case OPENREG_MEMCPY_HOST_TO_DEVICE:
      return "memcpy_async (OPENREG_MEMCPY_HOST_TO_DEVICE)";
    case OPENREG_MEMCPY_DEVICE_TO_HOST:
      return "memcpy_async (OPENREG_MEMCPY_DEVICE_TO_HOST)";
    case OPENREG_MEMCPY_DEVICE_TO_DEVICE:
      return "memcpy_async (OPENREG_MEMCPY_DEVICE_TO_DEVICE)";
  }
  return nullptr;
}

// Fails with INVALID_ARGUMENT unless [ptr, ptr + size) lies inside a single
// live device allocation, naming the allocation's bounds when it does not.
// `role` ("dst", "src", "ptr") and `purpose` say in the message which
// argument is wrong and why it must be device memory.
openreg_status CheckDeviceRange(const DriverState& state, const void* ptr,
                                size_t size, const char* function,
                                const char* role, const char* purpose) {
  const PointerInfo info = state.Classify(ptr);
  if (info.memory_type != OPENREG_MEMORY_TYPE_DEVICE) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: %s %p is not inside any live device "
                                "allocation%s, but %s needs device memory "
                                "there; pass memory from device_malloc",
                                function, role, ptr,
                                info.memory_type == OPENREG_MEMORY_TYPE_HOST
                                    ? " (it is pinned host memory)"
                                    : "",
                                purpose));
  }
  const Allocation& allocation = info.allocation;
  if (!allocation.Holds(ptr, size)) {
    const uint64_t available = allocation.size - allocation.OffsetOf(ptr);
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: %s range [%p, +%u bytes) runs past the "
                                "end of its device allocation [%p, +%u bytes) "
                                "on device %d by %u bytes; shorten the size "
                                "or use a larger allocation",
                                function, role, ptr, size, allocation.base,
                                allocation.size, info.device,
                                size - available));
  }
  return OPENREG_SUCCESS;
}

// True when [ptr, ptr + size) lies inside one pinned host allocation.
bool IsPinned(DriverState& state, const void* ptr, size_t size) {
  const std::optional<Allocation> pinned = state.pinned_memory().Find(ptr);
  return pinned.has_value() && pinned->Holds(ptr, size);
}

// Pageable sources up to this size are staged; larger ones are copied in
// place while the caller waits.
constexpr size_t kStagingLimit = size_t{1} << 20;

// The blocking case of Note [Pageable host memory].
openreg_status CopyAndWait(Stream& stream, void* dst, const void* src,
                           size_t size, const char* description) {
  constexpr const char* kFunction = "memcpy_async";
  if (Stream::CurrentWorker() == &stream) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: a copy into pageable host memory waits "
                                "for the stream, but it was called by a host "
                                "function running on that stream %p, which "
                                "would wait for itself forever; copy into "
                                "pinned memory (host_malloc) or use another "
                                "stream",
                                kFunction, stream.handle()));
  }
  uint64_t ticket = 0;
  SIM_RETURN_IF_ERROR(stream.Enqueue(
      WorkItem::Compute(description,
                        [dst, src, size] {
                          std::memmove(dst, src, size);
                          return OPENREG_SUCCESS;
                        }),
      kFunction, &ticket));
  if (!stream.AwaitFinished(ticket)) {
    return Fail(OPENREG_ERROR_NOT_INITIALIZED,
                absl::StrFormat("%s: stream %p was shut down before the copy "
                                "to or from pageable memory ran",
                                kFunction, stream.handle()));
  }
  return OPENREG_SUCCESS;
}

// The staging case of Note [Pageable host memory].
openreg_status CopyFromPageable(Stream& stream, void* dst, const void* src,
                                size_t size, const char* description) {
  constexpr const char* kFunction = "memcpy_async";
  std::unique_ptr<char[]> staged(new (std::nothrow) char[size]);
  if (staged == nullptr) {
    return Fail(OPENREG_ERROR_OUT_OF_MEMORY,
                absl::StrFormat("%s: the host could not provide %u bytes to "
                                "stage the pageable source %p; copy from "
                                "pinned memory (host_malloc) instead",
                                kFunction, size, src));
  }
  std::memcpy(staged.get(), src, size);
  return stream.Enqueue(
      WorkItem::Compute(description,
                        [dst, staged = std::move(staged), size] {
                          std::memcpy(dst, staged.get(), size);
                          return OPENREG_SUCCESS;
                        }),
      kFunction, nullptr);
}

}  // namespace

openreg_status MemcpyAsync(void* dst, const void* src, size_t size,
                           int32_t kind, openreg_stream stream) {
  constexpr const char* kFunction = "memcpy_async";
  std::shared_ptr<DriverState> state = AcquireState(kFunction);
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  std::shared_ptr<Stream> target;
  SIM_RETURN_IF_ERROR(state->FindStream(stream, kFunction, &target));
  const char* description = CopyDescription(kind);
  if (description == nullptr) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: kind %d is not a copy direction; use one "
                                "of OPENREG_MEMCPY_HOST_TO_HOST (0), "
                                "HOST_TO_DEVICE (1), DEVICE_TO_HOST (2) or "
                                "DEVICE_TO_DEVICE (3)",
                                kFunction, kind));
  }
  if (size == 0) return OPENREG_SUCCESS;
  SIM_RETURN_IF_ERROR(RequireNonNull(dst, kFunction, "dst"));
  SIM_RETURN_IF_ERROR(RequireNonNull(src, kFunction, "src"));
  const bool device_src = kind == OPENREG_MEMCPY_DEVICE_TO_HOST ||
                          kind == OPENREG_MEMCPY_DEVICE_TO_DEVICE;
  const bool device_dst = kind == OPENREG_MEMCPY_HOST_TO_DEVICE ||
                          kind == OPENREG_MEMCPY_DEVICE_TO_DEVICE;
  // The description names the kind, which is what the device memory is for.
  if (device_src) {
    SIM_RETURN_IF_ERROR(CheckDeviceRange(*state, src, size, kFunction,
                                                  "src", description));
  }
  if (device_dst) {
    SIM_RETURN_IF_ERROR(CheckDeviceRange(*state, dst, size, kFunction,
                                                  "dst", description));
  }
  if (!device_dst && !IsPinned(*state, dst, size)) {
    return CopyAndWait(*target, dst, src, size, description);
  }
  if (!device_src && !IsPinned(*state, src, size)) {
    // A host function on this stream cannot wait for its own stream.
    if (size > kStagingLimit && Stream::CurrentWorker() != target.get()) {
      return CopyAndWait(*target, dst, src, size, description);
    }
    return CopyFromPageable(*target, dst, src, size, description);
  }
  // memmove: a device-to-device copy within one allocation may overlap.
  return target->Enqueue(WorkItem::Compute(description,
                                           [dst, src, size] {
                                             std::memmove(dst, src, size);
                                             return OPENREG_SUCCESS;
                                           }),
                         kFunction, nullptr);
}

openreg_status MemsetAsync(void* ptr, int32_t value, size_t size,
                           openreg_stream stream) {
  constexpr const char* kFunction = "memset_async";
  std::shared_ptr<DriverState> state = AcquireState(kFunction);
  if (state == nullptr) return OPENREG_ERROR_NOT_INITIALIZED;
  std::shared_ptr<Stream> target;
  SIM_RETURN_IF_ERROR(state->FindStream(stream, kFunction, &target));
  if (size == 0) return OPENREG_SUCCESS;
  SIM_RETURN_IF_ERROR(
      CheckDeviceRange(*state, ptr, size, kFunction, "ptr", kFunction));
  // Like memset and cudaMemset, only the low byte of `value` is used.
  const unsigned char byte = static_cast<unsigned char>(value);
  return target->Enqueue(WorkItem::Compute("memset_async",
                                           [ptr, byte, size] {
                                             std::memset(ptr, byte, size);
                                             return OPENREG_SUCCESS;
                                           }),
                         kFunction, nullptr);
}

}  // namespace openreg::threaded_sim
