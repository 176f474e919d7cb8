#include "core/aten/iterator_loops.h"

#include <ATen/Dispatch.h>

#include "core/aten/argument_devices.h"

namespace openreg {

bool Plain(const at::Tensor& tensor) {
  return !tensor.is_conj() && !tensor.is_neg();
}

bool LoopDtype(at::ScalarType dtype) {
  switch (dtype) {
    case at::kBool:
    case at::kByte:
    case at::kChar:
    case at::kShort:
    case at::kInt:
    case at::kLong:
    case at::kFloat:
    case at::kDouble:
    case at::kComplexFloat:
    case at::kComplexDouble:
      return true;
    default:
      return false;
  }
}

bool FloatingOrComplex(at::ScalarType dtype) {
  return c10::isFloatingType(dtype) || c10::isComplexType(dtype);
}

bool LoopTakes(std::initializer_list<const at::Tensor*> inputs,
               const at::Tensor* out, bool (*takes)(at::ScalarType)) {
  const at::ScalarType dtype = (*inputs.begin())->scalar_type();
  if (!LoopDtype(dtype) || !takes(dtype)) return false;
  auto ready = [dtype](const at::Tensor& tensor) {
    return IsOpenReg(tensor) && Plain(tensor) && tensor.scalar_type() == dtype;
  };
  for (const at::Tensor* input : inputs) {
    if (!ready(*input)) return false;
  }
  return out == nullptr || ready(*out);
}

void CheckScalarFits(at::ScalarType dtype, const c10::Scalar& value) {
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND(at::kBool, dtype, "openreg_scalar_fits",
                                        [&] { (void)value.to<scalar_t>(); });
}

c10::OperatorHandle Op(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

}  // namespace openreg
