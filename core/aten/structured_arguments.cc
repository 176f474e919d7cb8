#include "core/aten/structured_arguments.h"

namespace openreg {

bool StructuredDtype(at::ScalarType dtype) {
  return FloatingOrComplex(dtype) && LoopDtypeWithoutScalars(dtype);
}

bool StructuredTakes(std::initializer_list<const at::Tensor*> inputs,
                     const at::Tensor* out) {
  return StructuredTakes(inputs, out, StructuredDtype);
}

bool StructuredTakes(std::initializer_list<const at::Tensor*> inputs,
                     const at::Tensor* out, bool (*takes)(at::ScalarType)) {
  const at::Tensor& first = **inputs.begin();
  if (!takes(first.scalar_type())) return false;
  for (const at::Tensor* input : inputs) {
    if (input->scalar_type() != first.scalar_type()) return false;
  }
  return PlainOpenRegOn(first.device(), inputs) &&
         PlainOpenRegOn(first.device(), {out});
}

}  // namespace openreg
