// Views of openreg device memory as CPU tensors.
//
// A simulated device's memory is host memory, so an ATen CPU kernel can run on
// it directly: wrap the storage as a non-owning CPU storage and give the CPU
// tensor the same sizes, strides and offset. No data is copied. The CPU
// storage points at the memory's execution view (device address + the
// device's execution offset, docs/memory.md): the device address itself
// faults on the host. Such aliases may only be touched inside a function
// launched on the device's stream (core/torch_runtime/stream_work.h), where
// the driver guarantees earlier work is done and the execution view is
// where its threads reach the memory.
//
// The CPU tensor and storage made for the first tensor of each storage come
// from a per-thread pool that recycles them once nothing references them
// (Note [Recycled CPU aliases], core/aten/cpu_alias_pool.h).
//
// Every op makes one CpuAliases, and most ops have one to three tensor
// arguments: the tables are inline arrays searched linearly, with no heap
// allocation, and a hash index is built only once a table grows past a few
// dozen entries (tensor lists of foreach ops, collectives).
//
// Thread-safety: a CpuAliases object belongs to one operator call.
#ifndef OPENREG_CORE_ATEN_CPU_ALIAS_H_
#define OPENREG_CORE_ATEN_CPU_ALIAS_H_

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

// Which original storages a CpuAliases table need not hold: those whose
// memory is stream-ordered on `stream`, the stream the work using the
// aliases is enqueued on, as `ordered_on` tells (OrderedOnStream in
// core/torch_runtime/device_allocator.h). A free of such memory only lets
// later work on that stream reuse it (Note [Stream-ordered reuse],
// core/runtime/memory/device_memory_pool.h). The default holds them all.
struct WorkStreamOrder {
  openreg_stream stream = nullptr;
  bool (*ordered_on)(const c10::Storage&, openreg_stream) = nullptr;
};

class CpuAliases {
 public:
  // Whether the table holds a reference to each original tensor, to the
  // alias it made for it and to that alias's CPU storage, or only borrows
  // them: a caller that keeps every original and every alias it was given
  // alive for as long as it uses the table, and calls ForgetOriginalTensors
  // before letting any original go, saves four atomic reference-count
  // updates per tensor and two per storage (structured ops, on every call;
  // an atomic costs several plain instructions' time, docs/performance.md).
  // The original storages are held either way, keeping the memory alive for
  // the enqueued work, except those stream-ordered on the work's stream
  // (below). OriginalOf needs kHeld.
  enum class Originals { kHeld, kBorrowed };

  // Aliases of openreg tensors, whose devices' execution offsets are
  // `execution_offsets` (Runtime::execution_offsets(), by device index; the
  // runtime lives for the rest of the process).
  explicit CpuAliases(absl::Span<const intptr_t> execution_offsets,
                      Originals originals = Originals::kHeld,
                      WorkStreamOrder work_stream = {})
      : execution_offsets_(execution_offsets),
        originals_(originals),
        work_stream_(work_stream) {}

  // Where aliases see the first byte of `storage`, an openreg storage: its
  // device address plus its device's offset (NULL stays NULL: an empty
  // storage has no memory to translate).
  void* ExecutionAddress(const c10::Storage& storage) const {
    const void* device_address = storage.data();
    if (device_address == nullptr) return nullptr;
    return const_cast<char*>(static_cast<const char*>(device_address)) +
           execution_offsets_[storage.device().index()];
  }

  // What aliases add to a device address of `device`'s memory.
  intptr_t ExecutionOffset(c10::DeviceIndex device) const {
    return execution_offsets_[device];
  }

  // A CPU tensor over the same memory as `tensor`, with its conjugate and
  // negative bits; the same alias every time for the same tensor. Tensors
  // sharing an openreg storage get CPU tensors sharing one CPU storage, so
  // kernels see their aliasing exactly as it is.
  at::Tensor Alias(const at::Tensor& tensor);

  // The openreg tensor whose alias is `cpu_tensor` (same TensorImpl), if any
  // and held (Originals::kHeld).
  const at::Tensor* OriginalOf(const at::Tensor& cpu_tensor) const;

  // The openreg storage whose alias holds `cpu_tensor`'s storage, if any and
  // held.
  const c10::Storage* OriginalStorageOf(const at::Tensor& cpu_tensor) const;

  // Drops the references to the original openreg tensors and keeps their
  // storages. Enqueued work needs the memory, not the tensors; and while C++
  // holds a tensor whose Python object was dropped, PyTorch keeps that object
  // alive, so every result of a queued op would linger for the garbage
  // collector until the work is reaped. After this, OriginalOf finds nothing.
  void ForgetOriginalTensors();

 private:
  struct StorageAlias {
    const c10::StorageImpl* original_impl;
    c10::Storage original;  // undefined when stream-ordered on work_stream_
    c10::StorageImpl* cpu_impl;
    c10::Storage cpu;  // holds cpu_impl; undefined when borrowed
  };
  struct TensorAlias {
    const c10::TensorImpl* original_impl;
    at::Tensor original;  // undefined when borrowed
    c10::TensorImpl* cpu_impl;
    at::Tensor cpu;  // holds cpu_impl; undefined when borrowed
  };

  // Past this many entries a table is also indexed by a hash map: linear
  // search would cost more than hashing.
  static constexpr size_t kLinearSearchLimit = 32;

  // The entry of `tensors_` whose original is `impl`, or -1.
  ptrdiff_t FindTensor(const c10::TensorImpl* impl) const;
  // Whether the work's stream orders `storage`'s memory (WorkStreamOrder).
  bool NeedsNoReference(const c10::Storage& storage) const;
  // The entry of `storages_` whose original is `impl`, or -1.
  ptrdiff_t FindStorage(const c10::StorageImpl* impl) const;

  absl::Span<const intptr_t> execution_offsets_;
  Originals originals_;
  WorkStreamOrder work_stream_;
  absl::InlinedVector<StorageAlias, 4> storages_;
  absl::InlinedVector<TensorAlias, 4> tensors_;
  // Original impl -> index, filled only past kLinearSearchLimit entries.
  absl::flat_hash_map<const c10::StorageImpl*, size_t> storage_index_;
  absl::flat_hash_map<const c10::TensorImpl*, size_t> tensor_index_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_CPU_ALIAS_H_
