// openreg's c10::impl::DeviceGuardImplInterface: how PyTorch's device guards,
// streams and events reach the driver.
//
// Current device and current streams are per-thread (thread_state.h); the
// driver is told the device explicitly on every call. Event handles are
// created lazily on first record, on the recording stream's device.
//
// Thread-safety: stateless; every method may be called from any thread.
#ifndef OPENREG_CORE_TORCH_RUNTIME_GUARD_IMPL_H_
#define OPENREG_CORE_TORCH_RUNTIME_GUARD_IMPL_H_

#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace openreg {

class GuardImpl final : public c10::impl::DeviceGuardImplInterface {
 public:
  static constexpr c10::DeviceType kDeviceType = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return kDeviceType; }

  c10::Device exchangeDevice(c10::Device device) const override;
  c10::Device getDevice() const override;
  void setDevice(c10::Device device) const override;
  void uncheckedSetDevice(c10::Device device) const noexcept override;
  c10::DeviceIndex deviceCount() const noexcept override;
  c10::DeviceCapability getDeviceCapability(c10::Device device) const override;

  c10::Stream getStream(c10::Device device) const override;
  c10::Stream getDefaultStream(c10::Device device) const override;
  c10::Stream getStreamFromGlobalPool(c10::Device device,
                                      bool is_high_priority) const override;
  c10::Stream getNewStream(c10::Device device, int priority) const override;
  c10::Stream exchangeStream(c10::Stream stream) const override;
  bool queryStream(const c10::Stream& stream) const override;
  void synchronizeStream(const c10::Stream& stream) const override;
  void synchronizeDevice(c10::DeviceIndex device_index) const override;

  void record(void** event, const c10::Stream& stream,
              c10::DeviceIndex device_index,
              c10::EventFlag flag) const override;
  void block(void* event, const c10::Stream& stream) const override;
  bool queryEvent(void* event) const override;
  void synchronizeEvent(void* event) const override;
  double elapsedTime(void* start, void* end,
                     c10::DeviceIndex device_index) const override;
  void destroyEvent(void* event,
                    c10::DeviceIndex device_index) const noexcept override;
};

// A process-wide instance, for callers that want the guard's operations
// directly (hooks, bindings) rather than through c10's registry.
const GuardImpl& GetGuardImpl();

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_GUARD_IMPL_H_
