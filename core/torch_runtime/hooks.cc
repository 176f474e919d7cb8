#include "core/torch_runtime/hooks.h"

#include "core/runtime/runtime.h"
#include "core/torch_runtime/generator.h"
#include "core/torch_runtime/guard_impl.h"
#include "core/torch_runtime/host_allocator.h"
#include "core/torch_runtime/openreg_device.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/storage_resize.h"
#include "core/torch_runtime/torch_status.h"

namespace openreg {
void Hooks::init() const { RuntimeOrThrow(); }

bool Hooks::isAvailable() const { return Runtime::Get().ok(); }

bool Hooks::hasPrimaryContext(c10::DeviceIndex device_index) const {
  if (!Runtime::IsInitialized()) return false;
  return RuntimeOrThrow().HasPrimaryContext(device_index);
}

c10::DeviceIndex Hooks::deviceCount() const {
  return GetGuardImpl().deviceCount();
}

void Hooks::setCurrentDevice(c10::DeviceIndex device) const {
  GetGuardImpl().setDevice(OpenRegDevice(device));
}

c10::DeviceIndex Hooks::getCurrentDevice() const {
  return GetGuardImpl().getDevice().index();
}

c10::DeviceIndex Hooks::exchangeDevice(c10::DeviceIndex device) const {
  return GetGuardImpl().exchangeDevice(OpenRegDevice(device)).index();
}

c10::DeviceIndex Hooks::maybeExchangeDevice(c10::DeviceIndex device) const {
  // -1 means "no device": report the current one without changing it.
  if (device < 0) return getCurrentDevice();
  return exchangeDevice(device);
}

const at::Generator& Hooks::getDefaultGenerator(
    c10::DeviceIndex device_index) const {
  return DefaultGenerator(device_index < 0 ? getCurrentDevice() : device_index);
}

at::Generator Hooks::getNewGenerator(c10::DeviceIndex device_index) const {
  return NewGenerator(device_index < 0 ? getCurrentDevice() : device_index);
}

at::Device Hooks::getDeviceFromPtr(void* data) const {
  const PointerAttributes attributes =
      ValueOrThrow(RuntimeOrThrow().driver().GetPointerAttributes(data));
  TORCH_CHECK(attributes.memory_type == OPENREG_MEMORY_TYPE_DEVICE,
              "pointer ", data,
              " is not openreg device memory; expected a pointer from an "
              "openreg tensor's data_ptr().");
  return OpenRegDevice(static_cast<c10::DeviceIndex>(attributes.device));
}

bool Hooks::isPinnedPtr(const void* data) const {
  return IsPinnedHostPointer(data);
}

at::Allocator* Hooks::getPinnedMemoryAllocator() const {
  return &GetHostAllocator();
}

void Hooks::resizePrivateUse1Bytes(const c10::Storage& storage,
                                   size_t new_bytes) const {
  ResizeStorageBytes(storage, new_bytes);
}

}  // namespace openreg
