#include "core/aten/structured_calls.h"

#include <ATen/native/Resize.h>

#include "core/aten/native_ops.h"

namespace openreg {

StructuredOutput::StructuredOutput(OutputKind kind, const at::Tensor* given)
    : kind_(kind) {
  if (given != nullptr) tensor_ = *given;
}

void StructuredOutput::Set(at::IntArrayRef sizes, at::IntArrayRef strides,
                           const at::TensorOptions& options,
                           bool exact_strides) {
  switch (kind_) {
    case OutputKind::kFresh:
      // Without strides, in the memory format the meta function asks for
      // (cat's result follows channels-last inputs), as ATen's CPU wrapper
      // allocates it.
      tensor_ =
          strides.empty()
              ? Empty(sizes, options.dtype().toScalarType(), options.layout(),
                      options.device(), std::nullopt,
                      options.memory_format_opt())
              : EmptyStrided(sizes, strides, options.dtype().toScalarType(),
                             options.layout(), options.device(), std::nullopt);
      return;
    case OutputKind::kOut: {
      // ATen's structured out= wrappers raise this at the call; the fallback
      // would raise it from work on the stream, with openreg's prefix.
      TORCH_CHECK(tensor_.dtype() == options.dtype(),
                  "Expected out tensor to have dtype ", options.dtype(),
                  ", but got ", tensor_.dtype(), " instead");
      // Warns, as the CPU does, when a non-empty tensor changes shape.
      const bool resized = at::native::resize_output(tensor_, sizes);
      if (strides.empty()) {
        // A resized tensor takes the memory format asked for, as ATen's CPU
        // wrapper restrides it; one of the right shape keeps its strides.
        if (resized && options.memory_format_opt().has_value()) {
          tensor_.unsafeGetTensorImpl()->empty_tensor_restride(
              *options.memory_format_opt());
        }
        return;
      }
      if (resized) {
        tensor_.as_strided_(sizes, strides);
      } else if (exact_strides && tensor_.strides() != strides) {
        accepted_ = false;
      }
      return;
    }
    case OutputKind::kInPlace:
      accepted_ = tensor_.dtype() == options.dtype() &&
                  tensor_.sizes() == sizes &&
                  (!exact_strides || tensor_.strides() == strides);
      return;
  }
}

}  // namespace openreg
