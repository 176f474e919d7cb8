#include "core/torch_runtime/generator.h"

#include <ATen/CPUGeneratorImpl.h>

#include <memory>
#include <mutex>
#include <vector>

#include "core/runtime/runtime.h"
#include "core/torch_runtime/openreg_device.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_capture.h"

namespace openreg {

GeneratorImpl::GeneratorImpl(c10::DeviceIndex device)
    : c10::GeneratorImpl(OpenRegDevice(device), kOpenRegKeys),
      cpu_generator_(at::detail::createCPUGenerator()) {}

void GeneratorImpl::set_current_seed(uint64_t seed) {
  cpu_generator_.set_current_seed(seed);
}

void GeneratorImpl::set_offset(uint64_t offset) {
  cpu_generator_.set_offset(offset);
}

uint64_t GeneratorImpl::get_offset() const {
  return cpu_generator_.get_offset();
}

uint64_t GeneratorImpl::current_seed() const {
  return cpu_generator_.current_seed();
}

uint64_t GeneratorImpl::seed() { return cpu_generator_.seed(); }

void GeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  cpu_generator_.unsafeGetGeneratorImpl()->set_state(new_state);
}

c10::intrusive_ptr<c10::TensorImpl> GeneratorImpl::get_state() const {
  return cpu_generator_.unsafeGetGeneratorImpl()->get_state();
}

GeneratorImpl* GeneratorImpl::clone_impl() const {
  auto* copy = new GeneratorImpl(device().index());
  copy->cpu_generator_ = cpu_generator_.clone();
  return copy;
}

const at::Generator& DefaultGenerator(c10::DeviceIndex device) {
  const int32_t count = RuntimeForDevice(device).device_count();
  // Created once for all devices, never destroyed (Python may hold them at
  // exit).
  static std::vector<at::Generator>* generators = [count] {
    auto* created = new std::vector<at::Generator>();
    for (int32_t i = 0; i < count; ++i) {
      created->push_back(
          at::make_generator<GeneratorImpl>(static_cast<c10::DeviceIndex>(i)));
    }
    return created;
  }();
  return (*generators)[device];
}

uint64_t DrawKernelSeed(const at::Generator& device_generator) {
  auto* impl = static_cast<GeneratorImpl*>(
      device_generator.unsafeGetGeneratorImpl());
  std::lock_guard<std::mutex> lock(impl->mutex_);
  return impl->cpu_generator().get<at::CPUGeneratorImpl>()->random64();
}

at::Generator ReserveKernelGenerator(const at::Generator& device_generator) {
  at::Generator kernel_generator =
      at::detail::createCPUGenerator(DrawKernelSeed(device_generator));
  RecordRandomnessIfCapturing(device_generator.device().index(),
                              device_generator, kernel_generator);
  return kernel_generator;
}

at::Generator NewGenerator(c10::DeviceIndex device) {
  CheckDeviceIndex(device);
  return at::make_generator<GeneratorImpl>(device);
}

}  // namespace openreg
