// openreg's at::PrivateUse1HooksInterface: what ATen asks a backend about
// itself (availability, generators, pinned memory, pointers, contexts).
//
// Thread-safety: stateless; every method may be called from any thread.
#ifndef OPENREG_CORE_TORCH_RUNTIME_HOOKS_H_
#define OPENREG_CORE_TORCH_RUNTIME_HOOKS_H_

#include <ATen/detail/PrivateUse1HooksInterface.h>

namespace openreg {

class Hooks final : public at::PrivateUse1HooksInterface {
 public:
  void init() const override;
  bool isBuilt() const override { return true; }
  bool isAvailable() const override;
  bool hasPrimaryContext(c10::DeviceIndex device_index) const override;

  c10::DeviceIndex deviceCount() const override;
  void setCurrentDevice(c10::DeviceIndex device) const override;
  c10::DeviceIndex getCurrentDevice() const override;
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override;
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override;

  const at::Generator& getDefaultGenerator(
      c10::DeviceIndex device_index) const override;
  at::Generator getNewGenerator(c10::DeviceIndex device_index) const override;

  at::Device getDeviceFromPtr(void* data) const override;
  bool isPinnedPtr(const void* data) const override;
  at::Allocator* getPinnedMemoryAllocator() const override;

  void resizePrivateUse1Bytes(const c10::Storage& storage,
                              size_t new_bytes) const override;
};

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_HOOKS_H_
