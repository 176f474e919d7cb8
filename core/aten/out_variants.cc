#include "core/aten/out_variants.h"

#include <ATen/core/enum_tag.h>

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace openreg {
namespace {

bool IsOutVariantOf(const c10::FunctionSchema& out,
                    const c10::FunctionSchema& functional) {
  const auto& functional_arguments = functional.arguments();
  const auto& out_arguments = out.arguments();
  const size_t results = functional.returns().size();
  if (results == 0 ||
      out_arguments.size() != functional_arguments.size() + results) {
    return false;
  }
  for (size_t i = 0; i < functional_arguments.size(); ++i) {
    if (out_arguments[i].name() != functional_arguments[i].name() ||
        *out_arguments[i].type() != *functional_arguments[i].type()) {
      return false;
    }
  }
  for (size_t i = 0; i < results; ++i) {
    const c10::Argument& argument = out_arguments[functional_arguments.size() + i];
    if (!argument.is_out() ||
        !argument.type()->isSubtypeOf(*functional.returns()[i].type())) {
      return false;
    }
  }
  return true;
}

class OutVariantCache {
 public:
  std::optional<c10::OperatorHandle> Find(const c10::OperatorHandle& op) {
    const c10::OperatorName& name = op.operator_name();
    const std::string key = name.name + "." + name.overload_name;
    absl::MutexLock lock(&mutex_);
    auto it = variants_.find(key);
    if (it != variants_.end()) return it->second;
    std::optional<c10::OperatorHandle> found = Search(op);
    variants_.emplace(key, found);
    return found;
  }

 private:
  std::optional<c10::OperatorHandle> Search(const c10::OperatorHandle& op)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (overloads_.empty()) {
      // Built once: every registered op name, grouped by base name.
      for (const c10::OperatorName& name :
           c10::Dispatcher::singleton().getAllOpNames()) {
        overloads_[name.name].push_back(name.overload_name);
      }
    }
    const c10::OperatorName& name = op.operator_name();
    if (OutOverloadHasOtherContract(name)) return std::nullopt;
    auto it = overloads_.find(name.name);
    if (it == overloads_.end()) return std::nullopt;
    for (const std::string& overload : it->second) {
      std::optional<c10::OperatorHandle> candidate =
          c10::Dispatcher::singleton().findSchema({name.name, overload});
      if (candidate.has_value() && candidate->hasSchema() &&
          !candidate->hasTag(at::Tag::generated) &&
          IsOutVariantOf(candidate->schema(), op.schema())) {
        return candidate;
      }
    }
    return std::nullopt;
  }

  absl::Mutex mutex_;
  absl::flat_hash_map<std::string, std::optional<c10::OperatorHandle>> variants_
      ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, std::vector<std::string>> overloads_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace

bool OutOverloadHasOtherContract(const c10::OperatorName& name) {
  return name.name == "aten::binary_cross_entropy" ||
         name.name == "aten::mse_loss" || name.name == "aten::smooth_l1_loss" ||
         name.name == "aten::huber_loss";
}

std::optional<c10::OperatorHandle> FindOutVariant(
    const c10::OperatorHandle& op) {
  static auto* cache = new OutVariantCache();  // never destroyed
  return cache->Find(op);
}

}  // namespace openreg
