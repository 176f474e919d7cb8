// The per-device random number generator.
//
// Random ops run ATen's CPU kernels on device memory, and those kernels only
// accept a CPU generator. So each openreg generator owns a CPU generator (the
// same mt19937 state CPU tensors use) and hands it to the kernel; seeding or
// saving the openreg generator seeds or saves that state.
// A consequence users can rely on: the same seed gives the same numbers on
// openreg as on CPU.
//
// Thread-safety: callers hold `mutex_` (GeneratorImpl's) around any use, as
// PyTorch does for every generator.
#ifndef OPENREG_CORE_RUNTIME_GENERATOR_H_
#define OPENREG_CORE_RUNTIME_GENERATOR_H_

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace openreg {

class GeneratorImpl final : public c10::GeneratorImpl {
 public:
  explicit GeneratorImpl(c10::DeviceIndex device);

  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  // The CPU generator whose state this generator is.
  const at::Generator& cpu_generator() const { return cpu_generator_; }

 private:
  GeneratorImpl* clone_impl() const override;

  at::Generator cpu_generator_;
};

// The default generator of `device` (validated), created on first use.
const at::Generator& DefaultGenerator(c10::DeviceIndex device);

at::Generator NewGenerator(c10::DeviceIndex device);

}  // namespace openreg

#endif  // OPENREG_CORE_RUNTIME_GENERATOR_H_
