#include "core/aten/op_facts.h"

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "core/aten/out_variants.h"

namespace openreg {
namespace {

bool IsOptionalOf(const c10::TypePtr& type, c10::TypeKind kind) {
  if (type->kind() == kind) return true;
  if (auto optional = type->cast<c10::OptionalType>()) {
    return optional->getElementType()->kind() == kind;
  }
  return false;
}

bool IsWritten(const c10::Argument& argument) {
  return argument.alias_info() != nullptr && argument.alias_info()->isWrite();
}

bool IsTensorOrTensorList(const c10::Argument& value) {
  const c10::TypeKind kind = value.real_type()->kind();
  if (kind == c10::TypeKind::TensorType) return true;
  if (auto list = value.real_type()->cast<c10::ListType>()) {
    return list->getElementType()->kind() == c10::TypeKind::TensorType;
  }
  return false;
}

// In-place ops whose CPU kernel resizes `self`: addbmm_ expands `self` to
// the product's shape and resizes it to that (so a [1] or [] `self` becomes
// [n, p]), where structured in-place ops reject a `self` the result
// broadcasts beyond. Its meta kernel rejects it, so the new shape is not
// known before the kernel runs.
bool ResizesSelf(const c10::FunctionSchema& schema) {
  return schema.name() == "aten::addbmm_";
}

ResultKind ClassifyResults(const c10::FunctionSchema& schema) {
  bool all_written = true;
  bool all_fresh = true;
  for (const c10::Argument& result : schema.returns()) {
    if (!IsTensorOrTensorList(result)) return ResultKind::kOther;
    all_written = all_written && IsWritten(result);
    all_fresh = all_fresh && result.alias_info() == nullptr;
  }
  if (all_written) return ResultKind::kWrittenArguments;
  return all_fresh ? ResultKind::kFreshTensors : ResultKind::kOther;
}

std::unique_ptr<OpFacts> ComputeFacts(const c10::OperatorHandle& op) {
  const c10::FunctionSchema& schema = op.schema();
  auto facts = std::make_unique<OpFacts>(op.operator_name());
  facts->schema_name = schema.name();
  facts->argument_count = schema.arguments().size();
  facts->result_kind = ClassifyResults(schema);
  facts->accepts_cpu_tensors = absl::StrContains(schema.name(), "index");
  facts->resizes_self = ResizesSelf(schema);
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const c10::Argument& argument = schema.arguments()[i];
    facts->written.push_back(IsWritten(argument));
    facts->is_out.push_back(argument.is_out());
    facts->has_out_arguments = facts->has_out_arguments || argument.is_out();
    if (IsOptionalOf(argument.real_type(), c10::TypeKind::GeneratorType)) {
      facts->generator_arguments.push_back(i);
    }
  }
  if (facts->result_kind == ResultKind::kWrittenArguments) {
    // Each result is the argument sharing its alias set.
    for (const c10::Argument& result : schema.returns()) {
      for (size_t i = 0; i < schema.arguments().size(); ++i) {
        const c10::AliasInfo* info = schema.arguments()[i].alias_info();
        if (info != nullptr &&
            info->beforeSets() == result.alias_info()->beforeSets()) {
          facts->result_arguments.push_back(i);
          break;
        }
      }
    }
    TORCH_INTERNAL_ASSERT(
        facts->result_arguments.size() == schema.returns().size(),
        "cannot match the results of ", schema.name(), " to its arguments");
  } else if (facts->result_kind == ResultKind::kFreshTensors) {
    facts->out_variant = FindOutVariant(op);
  }
  return facts;
}

bool Describes(const OpFacts& facts, const c10::OperatorHandle& op) {
  return facts.name == op.operator_name() &&
         facts.argument_count == op.schema().arguments().size();
}

// Every OpFacts ever computed, by registration address.
class SharedFacts {
 public:
  const OpFacts& Get(const void* key, const c10::OperatorHandle& op) {
    absl::MutexLock lock(&mutex_);
    std::unique_ptr<OpFacts>& slot = facts_[key];
    if (slot == nullptr || !Describes(*slot, op)) {
      // Facts of an op registered earlier at this address stay allocated:
      // other threads' tables may still point at them until they look again.
      if (slot != nullptr) retired_.push_back(std::move(slot));
      slot = ComputeFacts(op);
    }
    return *slot;
  }

 private:
  absl::Mutex mutex_;
  absl::flat_hash_map<const void*, std::unique_ptr<OpFacts>> facts_
      ABSL_GUARDED_BY(mutex_);
  std::vector<std::unique_ptr<OpFacts>> retired_ ABSL_GUARDED_BY(mutex_);
};

SharedFacts& Shared() {
  static auto* shared = new SharedFacts();  // never destroyed
  return *shared;
}

}  // namespace

const OpFacts& FactsOf(const c10::OperatorHandle& op) {
  // The name lives in the op's registration entry: its address names the
  // op for as long as it is registered.
  const void* key = &op.operator_name();
  thread_local absl::flat_hash_map<const void*, const OpFacts*> local;
  const OpFacts*& cached = local[key];
  if (cached == nullptr || !Describes(*cached, op)) {
    cached = &Shared().Get(key, op);
  }
  return *cached;
}

}  // namespace openreg
