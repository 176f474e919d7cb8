// Every registration of the runtime with PyTorch, in one place: the device
// guard, the hooks, the device allocator and the serialization of backend
// metadata for PrivateUse1.
//
// These are static initializers; the library that holds this file is linked
// with alwayslink so they are not dropped.
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/jit/serialization/pickler_helper.h>

#include "core/torch_runtime/backend_meta.h"
#include "core/torch_runtime/device_allocator.h"
#include "core/torch_runtime/guard_impl.h"
#include "core/torch_runtime/hooks.h"
#include "core/torch_runtime/host_allocator.h"

namespace openreg {
namespace {

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &GetDeviceAllocator());

const bool host_allocator_registered = [] {
  at::setHostAllocator(c10::DeviceType::PrivateUse1, &GetHostAllocator());
  return true;
}();

const bool hooks_registered = [] {
  // Never destroyed: PyTorch keeps the pointer for the life of the process.
  at::RegisterPrivateUse1HooksInterface(new Hooks());
  return true;
}();

const bool backend_meta_serialization_registered = [] {
  torch::jit::TensorBackendMetaRegistry(c10::DeviceType::PrivateUse1,
                                        &SerializeBackendFlags,
                                        &DeserializeBackendFlags);
  return true;
}();

}  // namespace
}  // namespace openreg
