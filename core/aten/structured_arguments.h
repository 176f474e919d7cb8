// What the kernels built on StructuredCall (core/aten/structured_calls.h)
// share about their arguments besides it: which tensors the CPU
// implementation can read on the stream as the CPU would, and which kind of
// output a call hands the meta function. Kept apart from structured_calls.h,
// which holds the call itself.
//
// Thread-safety: plain functions over the caller's arguments.
#ifndef OPENREG_CORE_ATEN_STRUCTURED_ARGUMENTS_H_
#define OPENREG_CORE_ATEN_STRUCTURED_ARGUMENTS_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <initializer_list>

#include "core/aten/argument_devices.h"
#include "core/aten/iterator_loops.h"
#include "core/aten/structured_calls.h"

namespace openreg {

// Whether every tensor of `tensors` (null entries, such as a missing out=
// tensor, are skipped) is an openreg tensor on `device` whose stored values
// are its values: neither lazily conjugated nor lazily negated. CPU tensors,
// other devices and lazy bits are the CPU fallback's, which gives their
// results and errors.
inline bool PlainOpenRegOn(const at::Device& device,
                           std::initializer_list<const at::Tensor*> tensors) {
  for (const at::Tensor* tensor : tensors) {
    if (tensor == nullptr) continue;
    if (!IsOpenReg(*tensor) || tensor->device() != device || !Plain(*tensor)) {
      return false;
    }
  }
  return true;
}

// The output kind of a call of Forms (iterator_loops.h) on `self` writing
// `out`: none is a functional call, `self` itself an in-place one.
inline OutputKind OutputKindOf(const at::Tensor& self, const at::Tensor* out) {
  if (out == nullptr) return OutputKind::kFresh;
  return out == &self ? OutputKind::kInPlace : OutputKind::kOut;
}

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_STRUCTURED_ARGUMENTS_H_
