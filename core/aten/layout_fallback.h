// The fallback for ops on sparse, quantized and nested openreg tensors, and
// for ops that make them from strided ones.
//
// Registered for the SparsePrivateUse1, SparseCsrPrivateUse1,
// QuantizedPrivateUse1 and NestedTensorPrivateUse1 keys, and for the
// PrivateUse1 ops whose results have another layout than their arguments
// (quantize_per_tensor, _to_sparse, _nested_tensor_from_mask, ...). It runs
// the op's CPU kernel the way the strided fallback does (cpu_fallback.h), on
// CPU counterparts of the arguments (layout_tensors.h), inside work on the
// current stream of the op's device, and waits for it: a sparse result's
// size, and a nested one's components, depend on the data. An op the CPU has
// no kernel for with these layouts is refused before anything is enqueued.
#ifndef OPENREG_CORE_ATEN_LAYOUT_FALLBACK_H_
#define OPENREG_CORE_ATEN_LAYOUT_FALLBACK_H_

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace openreg {

void LayoutFallback(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                    torch::jit::Stack* stack);

// _copy_from for quantized tensors: ATen's copy_ sends copies that involve
// another device than the CPU there, and the CPU has no quantized _copy_from;
// its copy_ copies quantized tensors, so this runs that.
void LayoutCopyFrom(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                    torch::jit::Stack* stack);

}  // namespace openreg

#endif  // OPENREG_CORE_ATEN_LAYOUT_FALLBACK_H_
