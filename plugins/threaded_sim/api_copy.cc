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
#include "plugins/sim_support/copy_checks.h"
#include "plugins/sim_support/context_registry.h"
#include "plugins/sim_support/error.h"
#include "plugins/threaded_sim/stream.h"
#include "plugins/threaded_sim/work_item.h"

namespace openreg::threaded_sim {

using sim::Allocation;
using sim::Fail;

namespace {

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
                           size_t size, int32_t kind, const char* description) {
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
  SIM_RETURN_IF_ERROR(stream.Enqueue(WorkItem::Copy(description, kind, size,
                                                    [dst, src, size] {
                                                      std::memmove(dst, src,
                                                                   size);
                                                      return OPENREG_SUCCESS;
                                                    }),
                                     kFunction, &ticket));
  if (!stream.AwaitFinished(ticket)) {
    return Fail(OPENREG_ERROR_INVALID_ARGUMENT,
                absl::StrFormat("%s: stream %p was stopped (the process is "
                                "exiting, or its context was destroyed) "
                                "before the copy to or from pageable memory "
                                "ran",
                                kFunction, stream.handle()));
  }
  return OPENREG_SUCCESS;
}

// The staging case of Note [Pageable host memory].
openreg_status CopyFromPageable(Stream& stream, void* dst, const void* src,
                                size_t size, int32_t kind,
                                const char* description) {
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
  return stream.Enqueue(WorkItem::Copy(description, kind, size,
                                       [dst, staged = std::move(staged), size] {
                                         std::memcpy(dst, staged.get(), size);
                                         return OPENREG_SUCCESS;
                                       }),
                        kFunction, nullptr);
}

}  // namespace

openreg_status memcpy_async(openreg_context context, void* dst, const void* src,
                            size_t size, int32_t kind, openreg_stream stream) {
  constexpr const char* kFunction = "memcpy_async";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  std::shared_ptr<Stream> target;
  SIM_RETURN_IF_ERROR(state->FindStream(stream, kFunction, &target));
  const char* description;
  SIM_RETURN_IF_ERROR(
      sim::CheckCopy(*state, dst, src, size, kind, &description));
  if (size == 0) return OPENREG_SUCCESS;
  // An injected fault refuses the copy before anything is enqueued.
  SIM_RETURN_IF_ERROR(
      state->InjectFault(sim::FaultPoint::kMemcpyAsync, kFunction));
  // The work reaches the device sides through their execution view; the
  // host sides are tested below as they are.
  if (sim::CopyWritesDevice(kind)) dst = state->ExecutionAddress(dst);
  if (sim::CopyReadsDevice(kind)) src = state->ExecutionAddress(src);
  if (!sim::CopyWritesDevice(kind) && !IsPinned(*state, dst, size)) {
    return CopyAndWait(*target, dst, src, size, kind, description);
  }
  if (!sim::CopyReadsDevice(kind) && !IsPinned(*state, src, size)) {
    // A host function on this stream cannot wait for its own stream.
    if (size > kStagingLimit && Stream::CurrentWorker() != target.get()) {
      return CopyAndWait(*target, dst, src, size, kind, description);
    }
    return CopyFromPageable(*target, dst, src, size, kind, description);
  }
  // memmove: a device-to-device copy within one allocation may overlap.
  return target->Enqueue(WorkItem::Copy(description, kind, size,
                                        [dst, src, size] {
                                          std::memmove(dst, src, size);
                                          return OPENREG_SUCCESS;
                                        }),
                         kFunction, nullptr);
}

openreg_status memset_async(openreg_context context, void* ptr, int32_t value,
                            size_t size, openreg_stream stream) {
  constexpr const char* kFunction = "memset_async";
  DriverState* state = nullptr;
  SIM_RETURN_IF_ERROR(sim::FindState(context, kFunction, &state));
  std::shared_ptr<Stream> target;
  SIM_RETURN_IF_ERROR(state->FindStream(stream, kFunction, &target));
  if (size == 0) return OPENREG_SUCCESS;
  SIM_RETURN_IF_ERROR(
      sim::CheckDeviceRange(*state, ptr, size, kFunction, "ptr", kFunction));
  SIM_RETURN_IF_ERROR(
      state->InjectFault(sim::FaultPoint::kMemsetAsync, kFunction));
  ptr = state->ExecutionAddress(ptr);
  // Like memset and cudaMemset, only the low byte of `value` is used.
  const unsigned char byte = static_cast<unsigned char>(value);
  return target->Enqueue(WorkItem::Memset(size,
                                          [ptr, byte, size] {
                                            std::memset(ptr, byte, size);
                                            return OPENREG_SUCCESS;
                                          }),
                         kFunction, nullptr);
}

}  // namespace openreg::threaded_sim
