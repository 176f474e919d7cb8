#include "core/aten/iterator_loops.h"

#include <ATen/Dispatch.h>

#include "core/aten/argument_devices.h"
#include "core/aten/native_ops.h"

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

bool LoopDtypeWithoutScalars(at::ScalarType dtype) {
  return LoopDtype(dtype) || dtype == at::kHalf || dtype == at::kBFloat16;
}

bool FloatingOrComplex(at::ScalarType dtype) {
  return c10::isFloatingType(dtype) || c10::isComplexType(dtype);
}

bool Floating(at::ScalarType dtype) { return c10::isFloatingType(dtype); }

bool Real(at::ScalarType dtype) { return !c10::isComplexType(dtype); }

bool RealNotBool(at::ScalarType dtype) {
  return dtype != at::kBool && Real(dtype);
}

bool NotBool(at::ScalarType dtype) { return dtype != at::kBool; }

PromotionCategory CategoryOf(at::ScalarType dtype) {
  if (dtype == at::kBool) return PromotionCategory::kBool;
  if (c10::isComplexType(dtype)) return PromotionCategory::kComplex;
  if (c10::isFloatingType(dtype)) return PromotionCategory::kFloating;
  return PromotionCategory::kIntegral;
}

PromotionCategory CategoryOf(const c10::Scalar& number) {
  if (number.isBoolean()) return PromotionCategory::kBool;
  if (number.isComplex()) return PromotionCategory::kComplex;
  if (number.isFloatingPoint()) return PromotionCategory::kFloating;
  return PromotionCategory::kIntegral;
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

const at::Tensor& FreshOutputIterator::maybe_get_output(int64_t output_idx) {
  return operands_[output_idx].tensor();
}

void FreshOutputIterator::set_output_raw_strided(int64_t output_idx,
                                                 at::IntArrayRef sizes,
                                                 at::IntArrayRef strides,
                                                 at::TensorOptions options) {
  AllocateFreshOutput(operands_[output_idx], sizes, strides, options);
}

void AllocateFreshOutput(at::OperandInfo& operand, at::IntArrayRef sizes,
                         at::IntArrayRef strides,
                         const at::TensorOptions& options) {
  TORCH_INTERNAL_ASSERT(!operand.tensor_base().defined(),
                        "openreg internal error: a fresh-output iterator was "
                        "given an output tensor");
  const at::ScalarType dtype = options.dtype().toScalarType();
  at::Tensor result =
      strides.empty()
          ? Empty(sizes, dtype, /*layout=*/std::nullopt, options.device(),
                  /*pin_memory=*/std::nullopt, options.memory_format_opt())
          : EmptyStrided(sizes, strides, dtype, /*layout=*/std::nullopt,
                         options.device(), /*pin_memory=*/std::nullopt);
  operand.tensor(c10::MaybeOwned<at::TensorBase>::owned(std::move(result)));
  operand.current_dtype = operand.target_dtype;
}

namespace {

// TensorIteratorBase keeps its operand records protected, and
// at::TensorIterator, which the in-place and out= loops use, is final: a
// pointer to the member named through a subclass reaches them in both.
class IteratorOperands : public at::TensorIteratorBase {
 public:
  static c10::SmallVector<at::OperandInfo, 4>& Of(
      at::TensorIteratorBase& iter) {
    return iter.*(&IteratorOperands::operands_);
  }
};

}  // namespace

void HoldStoragesInsteadOfTensors(
    at::TensorIteratorBase& iter, openreg_stream work_stream,
    c10::SmallVectorImpl<c10::Storage>* storages) {
  for (at::OperandInfo& operand : IteratorOperands::Of(iter)) {
    if (!operand.device.has_value() ||
        operand.device->type() != c10::DeviceType::PrivateUse1) {
      continue;
    }
    const c10::Storage& storage = operand.tensor_base().storage();
    if (!OrderedOnStream(storage, work_stream)) storages->push_back(storage);
    operand.tensor(c10::MaybeOwned<at::TensorBase>::owned(std::in_place));
  }
}

c10::OperatorHandle Op(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

}  // namespace openreg
