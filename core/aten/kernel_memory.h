// Note [Kernel allocations in device memory]
//
// The fallback runs ATen CPU kernels on device memory, and those kernels
// allocate their results (and scratch space) through the CPU allocator. Left
// alone, every fresh result would be computed into host memory and then
// copied onto the device. Instead, KernelMemoryRouter is installed as the
// process's CPU allocator: on a thread inside a ScopedKernelMemoryOnDevice
// (that is, inside a kernel launched for openreg) it hands out device memory;
// everywhere else it forwards to PyTorch's default CPU allocator. The fallback
// then adopts a kernel's fresh results as openreg tensors without copying.
//
// The kernel runs on the driver's thread, so it gets the execution address of
// the device memory (device address + the device's execution offset,
// docs/memory.md); AdoptKernelStorage maps it back to the device address.
//
// c10::Allocator requires one deleter for everything an allocator returns, so
// RoutedFree serves both kinds. Device allocations made inside kernels are
// kept in a registry until they are freed or adopted; while the registry is
// empty (always, outside a running kernel) a free costs one atomic load more
// than PyTorch's own.
//
// Output memory lent to a kernel's allocation (Note [Results computed in
// their outputs' memory]) goes through the same registry, marked as a loan:
// freeing it does nothing, and adoption refuses it.
//
// Thread-safety: the registry is guarded by a mutex; the routing decision and
// the plan of outputs to lend are thread-local.
#ifndef OPENREG_CORE_ATEN_KERNEL_MEMORY_H_
#define OPENREG_CORE_ATEN_KERNEL_MEMORY_H_

#include <c10/core/Allocator.h>
#include <c10/core/Storage.h>

#include <cstdint>

namespace openreg {

class KernelMemoryRouter final : public c10::Allocator {
 public:
  // Wraps PyTorch's default CPU allocator.
  KernelMemoryRouter();

  c10::DataPtr allocate(size_t size) override;
  c10::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  // The instance to install with c10::SetCPUAllocator.
  static KernelMemoryRouter& Get();
};

// While alive, CPU allocations on this thread come from `device`'s memory,
// handed out at their execution address (`execution_offset` is the device's,
// Runtime::execution_offset).
class ScopedKernelMemoryOnDevice {
 public:
  ScopedKernelMemoryOnDevice(c10::DeviceIndex device,
                             intptr_t execution_offset);
  ~ScopedKernelMemoryOnDevice();
  ScopedKernelMemoryOnDevice(const ScopedKernelMemoryOnDevice&) = delete;
  ScopedKernelMemoryOnDevice& operator=(const ScopedKernelMemoryOnDevice&) =
      delete;

 private:
  c10::DeviceIndex previous_;
  intptr_t previous_offset_;
};

class ResultMemoryPlan;

// While alive, inside a ScopedKernelMemoryOnDevice, this thread's kernel
// allocations may be served from the memory of `plan`'s outputs, as it
// decides (Note [Results computed in their outputs' memory]). A null plan
// lends nothing.
class ScopedResultMemoryPlan {
 public:
  explicit ScopedResultMemoryPlan(ResultMemoryPlan* plan);
  ~ScopedResultMemoryPlan();
  ScopedResultMemoryPlan(const ScopedResultMemoryPlan&) = delete;
  ScopedResultMemoryPlan& operator=(const ScopedResultMemoryPlan&) = delete;

 private:
  ResultMemoryPlan* previous_;
};

// Ends the loan of output memory at `lent` (as the kernel saw it) once its
// kernel returned. If `holder`, a result's storage, holds that memory, it
// keeps pointing at it without owning it. Returns false if an allocation
// other than `holder` still holds it: the kernel kept a buffer past its
// return in memory that is the output's. That buffer then keeps `output`
// (the openreg storage the memory belongs to) alive until it is freed, if
// the caller still has the output. If not, the memory already serves later
// work on the output's stream (Note [Stream-ordered reuse]) and may be
// handed out again while the buffer shares it; the registry stays
// consistent, and the caller reports the kernel.
bool EndLoan(void* lent, c10::StorageImpl* holder,
             const c10::weak_intrusive_ptr<c10::StorageImpl>& output);

// Whether output memory at `execution_address` may be lent to a kernel: not
// while a kernel's buffer kept from an earlier loan is there (EndLoan).
bool MayLendOutputMemory(void* execution_address);

// If `cpu_storage` is device memory a kernel allocated for `device`, turns it
// into an openreg storage over the same memory, at its device address (the
// CPU storage is left empty), and returns true; otherwise returns false and
// leaves it alone.
bool AdoptKernelStorage(c10::Storage& cpu_storage, c10::DeviceIndex device,
                        c10::Storage* adopted);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_KERNEL_MEMORY_H_
