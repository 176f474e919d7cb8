#include "core/aten/meta_shapes.h"

#include <ATen/EmptyTensor.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace openreg {
namespace {

// Bounds the cache; a program with more distinct signatures than this is
// unusual, and simply starts over.
constexpr size_t kMaxCachedSignatures = 16384;

bool IsOpenReg(const at::Tensor& tensor) {
  return tensor.defined() &&
         tensor.device().type() == c10::DeviceType::PrivateUse1;
}

// Raw bytes, not text: the signature is built on every op. Counts come
// first so that no two different argument lists give the same bytes.
template <typename T>
void AppendRaw(std::string& key, char tag, T value) {
  key.push_back(tag);
  key.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

void AppendInts(std::string& key, c10::IntArrayRef values) {
  AppendRaw(key, '#', values.size());
  key.append(reinterpret_cast<const char*>(values.data()),
             values.size() * sizeof(int64_t));
}

// Appends `value` to the signature; false if it cannot be part of one.
bool AppendSignature(std::string& key, const c10::IValue& value) {
  if (value.isTensor()) {
    const at::Tensor& tensor = value.toTensor();
    if (!tensor.defined()) {
      key.append("u|");
      return true;
    }
    const char facts[] = {
        static_cast<char>(tensor.scalar_type()),
        static_cast<char>(tensor.device().type()),
        // Type promotion treats Python numbers apart.
        static_cast<char>(tensor.unsafeGetTensorImpl()->is_wrapped_number())};
    key.push_back('T');
    key.append(facts, sizeof(facts));
    AppendInts(key, tensor.sizes());
    AppendInts(key, tensor.strides());
    return true;
  }
  if (value.isNone()) {
    key.append("N|");
    return true;
  }
  if (value.isInt()) {
    AppendRaw(key, 'I', value.toInt());
    return true;
  }
  if (value.isBool()) {
    AppendRaw(key, 'B', value.toBool());
    return true;
  }
  if (value.isDouble()) {
    AppendRaw(key, 'D', value.toDouble());
    return true;
  }
  if (value.isIntList()) {
    key.append("L");
    AppendInts(key, value.toIntVector());
    return true;
  }
  if (value.isString()) {
    absl::StrAppend(&key, "S", value.toStringRef(), "|");
    return true;
  }
  if (value.isDevice()) {
    absl::StrAppend(&key, "V", value.toDevice().str(), "|");
    return true;
  }
  if (value.isGenerator()) {
    key.append("G|");
    return true;
  }
  if (value.isTensorList() || value.isOptionalTensorList() || value.isList()) {
    key.append("[");
    for (const c10::IValue& element : value.toListRef()) {
      if (!AppendSignature(key, element)) return false;
    }
    key.append("]");
    return true;
  }
  return false;
}

// A meta tensor with `tensor`'s dtype and geometry.
at::Tensor MetaLike(const at::Tensor& tensor) {
  at::Tensor meta = at::detail::empty_strided_meta(
      tensor.sizes(), tensor.strides(), tensor.scalar_type(), std::nullopt,
      c10::Device(c10::kMeta), std::nullopt);
  return meta;
}

c10::IValue ToMeta(const c10::IValue& value) {
  if (value.isTensor()) {
    const at::Tensor& tensor = value.toTensor();
    return IsOpenReg(tensor) ? MetaLike(tensor) : tensor;
  }
  if (value.isTensorList()) {
    c10::List<at::Tensor> converted;
    for (const at::Tensor& tensor : value.toTensorList()) {
      converted.push_back(IsOpenReg(tensor) ? MetaLike(tensor) : tensor);
    }
    return converted;
  }
  if (value.isOptionalTensorList()) {
    c10::List<std::optional<at::Tensor>> converted;
    for (const std::optional<at::Tensor>& tensor :
         value.toOptionalTensorList()) {
      converted.push_back(tensor.has_value() && IsOpenReg(*tensor)
                              ? std::optional<at::Tensor>(MetaLike(*tensor))
                              : tensor);
    }
    return converted;
  }
  if (value.isDevice() &&
      value.toDevice().type() == c10::DeviceType::PrivateUse1) {
    return c10::Device(c10::kMeta);
  }
  return value;
}

TensorSpec SpecOf(const at::Tensor& tensor) {
  if (!tensor.defined()) {
    return TensorSpec{at::ScalarType::Undefined, {}, {}, /*defined=*/false};
  }
  return TensorSpec{tensor.scalar_type(), tensor.sizes().vec(),
                    tensor.strides().vec()};
}

// The argument of `op` named `name` in `arguments`, or null.
const c10::IValue* ArgumentNamed(const c10::OperatorHandle& op,
                                 c10::ArrayRef<c10::IValue> arguments,
                                 absl::string_view name) {
  const std::vector<c10::Argument>& schema = op.schema().arguments();
  for (size_t i = 0; i < schema.size() && i < arguments.size(); ++i) {
    if (schema[i].name() == name) return &arguments[i];
  }
  return nullptr;
}

// Results a CPU kernel leaves undefined where the op's meta kernel gives an
// empty tensor. _native_multi_head_attention (nn.MultiheadAttention's
// inference fast path) returns no attention weights when need_weights is
// false, nor for an empty query; its Python meta kernel gives an empty
// tensor for them. The caller gets its results before the kernel runs, so
// the plan must say what the kernel will return.
void UndefineWhatTheKernelLeavesUndefined(const c10::OperatorHandle& op,
                                          c10::ArrayRef<c10::IValue> arguments,
                                          ResultSpecs& specs) {
  if (op.operator_name().name != "aten::_native_multi_head_attention" ||
      specs.returns.size() != 2 || specs.returns[1].size() != 1) {
    return;
  }
  const c10::IValue* need_weights = ArgumentNamed(op, arguments, "need_weights");
  const c10::IValue* query = ArgumentNamed(op, arguments, "query");
  const bool without_weights =
      (need_weights != nullptr && need_weights->isBool() &&
       !need_weights->toBool()) ||
      (query != nullptr && query->isTensor() && query->toTensor().numel() == 0);
  if (without_weights) specs.returns[1][0] = SpecOf(at::Tensor());
}

std::shared_ptr<const ResultSpecs> RunMeta(
    const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> arguments) {
  torch::jit::Stack stack;
  stack.reserve(arguments.size());
  for (const c10::IValue& argument : arguments) stack.push_back(ToMeta(argument));
  // The meta stand-ins of out= arguments, to read their final geometry.
  std::vector<at::Tensor> outs;
  const auto& schema_arguments = op.schema().arguments();
  for (size_t i = 0; i < schema_arguments.size(); ++i) {
    if (schema_arguments[i].is_out() && stack[i].isTensor()) {
      outs.push_back(stack[i].toTensor());
    }
  }
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &stack);
  auto specs = std::make_shared<ResultSpecs>();
  for (const c10::IValue& result : stack) {
    // Sparse and quantized results are more than a shape: the kernel itself
    // must make them (layout_fallback.h).
    if (result.isTensor() && result.toTensor().defined() &&
        (result.toTensor().layout() != at::kStrided ||
         result.toTensor().is_quantized())) {
      return nullptr;
    }
    if (result.isTensor()) {
      specs->returns.push_back({SpecOf(result.toTensor())});
    } else if (result.isTensorList()) {
      std::vector<TensorSpec> list;
      for (const at::Tensor& tensor : result.toTensorList()) {
        list.push_back(SpecOf(tensor));
      }
      specs->returns.push_back(std::move(list));
    } else {
      return nullptr;
    }
  }
  for (const at::Tensor& out : outs)
    specs->out_arguments.push_back(SpecOf(out));
  UndefineWhatTheKernelLeavesUndefined(op, arguments, *specs);
  return specs;
}

class SpecCache {
 public:
  enum class Lookup { kMiss, kFound, kWithoutMeta };

  // Looks `key` up, and whether `name` (the key's prefix up to "(") is an
  // op known to have no meta kernel; a hit sets `specs` (null for ops whose
  // results cannot be known). An empty `key` (arguments that cannot form a
  // signature) checks only `name`: no signature is empty.
  Lookup Find(absl::string_view key, absl::string_view name,
              std::shared_ptr<const ResultSpecs>* specs) {
    absl::MutexLock lock(&mutex_);
    if (without_meta_.contains(name)) return Lookup::kWithoutMeta;
    auto it = specs_.find(key);
    if (it == specs_.end()) return Lookup::kMiss;
    *specs = it->second;
    return Lookup::kFound;
  }

  void Insert(absl::string_view key, std::shared_ptr<const ResultSpecs> specs) {
    absl::MutexLock lock(&mutex_);
    if (specs_.size() >= kMaxCachedSignatures) specs_.clear();
    specs_.insert_or_assign(std::string(key), std::move(specs));
  }

  void MarkWithoutMeta(absl::string_view name) {
    absl::MutexLock lock(&mutex_);
    without_meta_.insert(std::string(name));
  }

 private:
  absl::Mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<const ResultSpecs>> specs_
      ABSL_GUARDED_BY(mutex_);
  // Ops whose meta kernel is missing: not worth an exception every call.
  absl::flat_hash_set<std::string> without_meta_ ABSL_GUARDED_BY(mutex_);
};

SpecCache& Cache() {
  static auto* cache = new SpecCache();  // never destroyed
  return *cache;
}

// Whether `arguments` run a batch norm in evaluation mode: its "training"
// argument is false.
bool EvaluatesBatchNorm(const c10::OperatorHandle& op,
                        c10::ArrayRef<c10::IValue> arguments) {
  const c10::IValue* training = ArgumentNamed(op, arguments, "training");
  return training != nullptr && training->isBool() && !training->toBool();
}

// Ops whose CPU kernel returns other shapes than their meta kernel for some
// arguments: _embedding_bag's bookkeeping outputs depend on the mode,
// native_batch_norm and _native_batch_norm_legit return empty saved
// statistics in evaluation mode (in training mode, what every training step
// runs, both give one per channel), and multilabel_margin_loss_forward's meta
// kernel gives an unreduced loss of a single (1-D) sample shape [1] where the
// CPU's is a scalar. Their results are taken from the kernel itself, after it
// ran.
bool CpuShapesDifferFromMeta(const c10::OperatorHandle& op,
                             c10::ArrayRef<c10::IValue> arguments) {
  const std::string& name = op.operator_name().name;
  if (name == "aten::native_batch_norm" ||
      name == "aten::_native_batch_norm_legit") {
    return EvaluatesBatchNorm(op, arguments);
  }
  return name == "aten::_embedding_bag" ||
         name == "aten::_embedding_bag_forward_only" ||
         name == "aten::multilabel_margin_loss_forward";
}

// In float16 and bfloat16, the meta kernels of native_layer_norm and of the
// batch norms give the saved statistics in float (what CUDA returns), but
// their CPU kernels return them in the input's dtype; the kernel would then
// reject the float results handed to it. Their results are taken from the
// kernel too.
bool CpuDtypesDifferFromMeta(const c10::OperatorName& name,
                             c10::ArrayRef<c10::IValue> arguments) {
  if (name.name != "aten::native_layer_norm" &&
      name.name != "aten::native_batch_norm" &&
      name.name != "aten::_batch_norm_with_update" &&
      name.name != "aten::_native_batch_norm_legit") {
    return false;
  }
  if (arguments.empty() || !arguments[0].isTensor()) return false;
  const at::ScalarType input = arguments[0].toTensor().scalar_type();
  return input == at::kHalf || input == at::kBFloat16;
}

}  // namespace

std::shared_ptr<const ResultSpecs> InferResultSpecs(
    const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> arguments) {
  const c10::OperatorName& name = op.operator_name();
  if (CpuShapesDifferFromMeta(op, arguments) ||
      CpuDtypesDifferFromMeta(name, arguments)) {
    return nullptr;
  }
  // Reused by every call on this thread: a hit allocates nothing.
  thread_local std::string key;
  key.clear();
  absl::StrAppend(&key, name.name, ".", name.overload_name);
  const size_t name_length = key.size();
  key.push_back('(');
  bool cacheable = true;
  for (const c10::IValue& argument : arguments) {
    if (!AppendSignature(key, argument)) {
      cacheable = false;
      break;
    }
  }
  std::shared_ptr<const ResultSpecs> specs;
  switch (Cache().Find(cacheable ? absl::string_view(key) : absl::string_view(),
                       absl::string_view(key.data(), name_length), &specs)) {
    case SpecCache::Lookup::kWithoutMeta:
      return nullptr;
    case SpecCache::Lookup::kFound:
      return specs;
    case SpecCache::Lookup::kMiss:
      break;
  }
  // A meta kernel may run ops that come back here and reuse the buffer.
  const std::string signature = key;
  const absl::string_view op_name(signature.data(), name_length);
  try {
    specs = RunMeta(op, arguments);
  } catch (const c10::NotImplementedError&) {
    Cache().MarkWithoutMeta(op_name);
    return nullptr;
  } catch (const std::exception&) {
    // Shapes that depend on data (a Python meta kernel raises a Python
    // exception for those), or arguments the op rejects: the kernel itself
    // will run, and raise the user-facing error if there is one.
    return nullptr;
  }
  if (cacheable) Cache().Insert(signature, specs);
  return specs;
}

}  // namespace openreg
