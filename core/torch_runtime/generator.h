// The per-device random number generator.
//
// Random ops run ATen's CPU kernels on device memory, and those kernels only
// accept a CPU generator. Each openreg generator's state is a CPU generator
// (mt19937); seeding or saving the openreg generator seeds or saves it.
//
// A random op may run long after it was enqueued, and on another thread, so
// it must not draw from the device generator when it runs: the order would
// depend on the driver's timing. Instead, when the op is enqueued, the core
// draws one 64-bit seed from the device generator
// (ReserveKernelGenerator) and the kernel runs with a fresh CPU generator
// seeded from it. Every driver, synchronous or not, therefore gives the same
// numbers for the same program and seed.
//
// Thread-safety: PyTorch's convention: callers hold `mutex_`
// (GeneratorImpl's) around any use; ReserveKernelGenerator takes it itself.
#ifndef OPENREG_CORE_TORCH_RUNTIME_GENERATOR_H_
#define OPENREG_CORE_TORCH_RUNTIME_GENERATOR_H_

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

// One 64-bit seed drawn from `device_generator` (an openreg generator).
uint64_t DrawKernelSeed(const at::Generator& device_generator);

// A CPU generator for one kernel, seeded by a draw from `device_generator`
// (an openreg generator). Called when the kernel is enqueued. During graph
// capture the graph reseeds it with a fresh draw on every replay.
at::Generator ReserveKernelGenerator(const at::Generator& device_generator);

}  // namespace openreg

#endif  // OPENREG_CORE_TORCH_RUNTIME_GENERATOR_H_
