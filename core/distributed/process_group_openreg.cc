#include "core/distributed/process_group_openreg.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/distributed/borrowed_device_memory.h"
#include "core/distributed/collective_work.h"
#include "core/distributed/cross_rank_check.h"
#include "core/distributed/tensor_checks.h"
#include "core/torch_runtime/device_allocator.h"
#include "core/torch_runtime/guard_impl.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_capture.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_status.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {
namespace {

using c10d::OpType;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

std::vector<at::Tensor> Views(CpuAliases& aliases,
                              const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> views;
  views.reserve(tensors.size());
  for (const at::Tensor& tensor : tensors) views.push_back(aliases.Alias(tensor));
  return views;
}

std::vector<std::vector<at::Tensor>> Views(
    CpuAliases& aliases, const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<std::vector<at::Tensor>> views;
  views.reserve(lists.size());
  for (const auto& list : lists) views.push_back(Views(aliases, list));
  return views;
}

std::vector<at::Tensor> Flatten(const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<at::Tensor> flat;
  for (const auto& list : lists) flat.insert(flat.end(), list.begin(), list.end());
  return flat;
}

std::vector<at::Tensor> Concat(std::vector<at::Tensor> a,
                               const std::vector<at::Tensor>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The message of the exception being handled.
std::string CurrentExceptionText() {
  try {
    throw;
  } catch (const c10::Error& error) {
    return error.what_without_backtrace();
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "unknown exception";
  }
}

// What every rank contributes alike to `collective`, for the cross-rank
// check; none for collectives whose ranks may differ.
std::optional<CollectiveSignature> SignatureFor(
    OpType type, const std::vector<at::Tensor>& tensors,
    const std::vector<at::Tensor>& outputs) {
  switch (type) {
    case OpType::ALLREDUCE:
    case OpType::ALLREDUCE_COALESCED:
    case OpType::BROADCAST:
    case OpType::REDUCE:
    case OpType::ALLGATHER:
    case OpType::_ALLGATHER_BASE:
    case OpType::ALLGATHER_COALESCED:
    case OpType::REDUCE_SCATTER:
    case OpType::_REDUCE_SCATTER_BASE:
    case OpType::COALESCED:
      return SignatureOf(type, tensors);
    case OpType::GATHER:  // only the root has a gather list
      return SignatureOf(type, {tensors.front()});
    case OpType::SCATTER:  // only the root has a scatter list
      return SignatureOf(type, outputs);
    default:
      return std::nullopt;
  }
}

}  // namespace

ProcessGroupOpenReg::ProcessGroupOpenReg(c10::intrusive_ptr<c10d::Backend> gloo,
                                         int rank, int size,
                                         std::chrono::milliseconds timeout,
                                         std::vector<int64_t> global_ranks)
    : c10d::Backend(rank, size),
      gloo_(std::move(gloo)),
      global_ranks_(std::move(global_ranks)),
      timeout_ms_(timeout.count()) {
  TORCH_CHECK(gloo_, "ProcessGroupOpenReg needs a Gloo backend");
  TORCH_CHECK(gloo_->getRank() == rank && gloo_->getSize() == size,
              "ProcessGroupOpenReg: the Gloo backend is rank ",
              gloo_->getRank(), " of ", gloo_->getSize(), ", expected rank ",
              rank, " of ", size);
  init();
}

std::chrono::milliseconds ProcessGroupOpenReg::TimeoutOf(
    std::chrono::milliseconds requested) const {
  if (requested != c10d::kUnsetTimeout) return requested;
  return std::chrono::milliseconds(timeout_ms_.load());
}

void ProcessGroupOpenReg::setTimeout(std::chrono::milliseconds timeout) {
  timeout_ms_.store(timeout.count());
  gloo_->setTimeout(timeout);
}

void ProcessGroupOpenReg::setSequenceNumberForGroup() {
  gloo_->setSequenceNumberForGroup();
}

uint64_t ProcessGroupOpenReg::getSequenceNumberForGroup() {
  return gloo_->getSequenceNumberForGroup();
}

c10::DeviceIndex ProcessGroupOpenReg::CheckedDevice(
    const char* name, const std::vector<at::Tensor>& tensors) {
  absl::MutexLock lock(&mutex_);
  std::optional<c10::DeviceIndex> bound = device_;
  if (!bound.has_value() && bound_device_id_.has_value()) {
    bound = bound_device_id_->index();
  }
  const c10::DeviceIndex device =
      ValueOrThrow(CheckDeviceTensors(name, tensors, bound));
  device_ = device;
  return device;
}

std::string ProcessGroupOpenReg::FailureMessage(
    const std::string& name, std::chrono::milliseconds timeout,
    const std::string& gloo_message) const {
  std::vector<int64_t> ranks = global_ranks_;
  if (ranks.empty()) {
    ranks.resize(size_);
    std::iota(ranks.begin(), ranks.end(), 0);
  }
  return absl::StrCat(
      name, " failed on rank ", rank_, " of the group of ranks [",
      absl::StrJoin(ranks, ", "), "] (the group's timeout of ", timeout.count(),
      " ms). Gloo reported: ", gloo_message,
      "\nEvery rank of the group must call the same collectives in the same "
      "order within the timeout; a rank that exited, crashed, hung or called "
      "a different collective causes this. The device stays usable; this "
      "process group should be destroyed.");
}

c10d::ReduceOp ProcessGroupOpenReg::GlooReduceOp(
    const char* name, const c10d::ReduceOp& op,
    const std::vector<at::Tensor>& reduced, AfterGloo* after) const {
  switch (op.op_) {
    case c10d::ReduceOp::AVG: {
      for (const at::Tensor& tensor : reduced) {
        TORCH_CHECK_VALUE(
            at::isFloatingType(tensor.scalar_type()) ||
                at::isComplexType(tensor.scalar_type()),
            name, " with ReduceOp.AVG: expected floating-point or complex "
            "tensors, found ", tensor.scalar_type(),
            ". Use ReduceOp.SUM and divide, or convert the tensor.");
      }
      *after = [reduced = BorrowDeviceMemory(reduced),
                size = size_](CpuAliases& aliases) {
        for (const at::Tensor& tensor : reduced) aliases.Alias(tensor).div_(size);
      };
      return c10d::ReduceOp::SUM;
    }
    case c10d::ReduceOp::PREMUL_SUM: {
      const auto* supplement =
          dynamic_cast<const c10d::PreMulSumSupplement*>(op.supplement_.get());
      TORCH_CHECK_VALUE(supplement != nullptr, name,
                        " with ReduceOp.PREMUL_SUM: expected a factor, found "
                        "none. Build the op with "
                        "torch.distributed._make_nccl_premul_sum(factor).");
      at::Tensor factor = supplement->tensor_factor;
      const double scalar_factor = supplement->double_factor;
      *after = [reduced = BorrowDeviceMemory(reduced), factor,
                scalar_factor](CpuAliases& aliases) {
        for (const at::Tensor& tensor : reduced) {
          at::Tensor view = aliases.Alias(tensor);
          if (!factor.defined()) {
            view.mul_(scalar_factor);
          } else if (factor.device().type() == c10::DeviceType::PrivateUse1) {
            view.mul_(aliases.Alias(factor));
          } else {
            view.mul_(factor);
          }
        }
      };
      return c10d::ReduceOp::SUM;
    }
    case c10d::ReduceOp::BAND:
    case c10d::ReduceOp::BOR:
    case c10d::ReduceOp::BXOR:
      for (const at::Tensor& tensor : reduced) {
        TORCH_CHECK_VALUE(
            at::isIntegralType(tensor.scalar_type(), /*includeBool=*/true),
            name, " with a bitwise ReduceOp: expected integer or bool "
            "tensors, found ", tensor.scalar_type(), ".");
      }
      return op;
    default:
      return op;
  }
}

WorkPtr ProcessGroupOpenReg::Launch(Collective collective) {
  const c10::DeviceIndex device =
      CheckedDevice(collective.name, collective.tensors);
  {
    absl::MutexLock lock(&mutex_);
    if (coalescing_.has_value()) {
      coalescing_->push_back(std::move(collective));
      return nullptr;
    }
  }
  const c10d::OpType type = collective.type;
  std::string name = collective.name;
  std::vector<Collective> batch;
  batch.push_back(std::move(collective));
  return EnqueueBatch(std::move(name), type, device, std::move(batch));
}

void ProcessGroupOpenReg::startCoalescing() {
  absl::MutexLock lock(&mutex_);
  TORCH_CHECK(!coalescing_.has_value(),
              "startCoalescing on the openreg backend: already coalescing; "
              "call endCoalescing first");
  coalescing_.emplace();
}

WorkPtr ProcessGroupOpenReg::endCoalescing() {
  std::vector<Collective> batch;
  std::optional<c10::DeviceIndex> device;
  {
    absl::MutexLock lock(&mutex_);
    TORCH_CHECK(coalescing_.has_value(),
                "endCoalescing on the openreg backend without startCoalescing");
    batch = *std::move(coalescing_);
    coalescing_.reset();
    device = device_;
  }
  if (batch.empty()) return nullptr;
  std::vector<std::string> names;
  for (const Collective& collective : batch) names.push_back(collective.name);
  return EnqueueBatch(absl::StrCat("coalesced [", absl::StrJoin(names, ", "), "]"),
                      OpType::COALESCED, *device, std::move(batch));
}

std::optional<std::string> ProcessGroupOpenReg::Disagreement(
    const std::vector<std::pair<const char*, CollectiveSignature>>& signatures,
    std::chrono::milliseconds timeout) const {
  for (const auto& [name, signature] : signatures) {
    const absl::Status agreed =
        CheckSameAcrossRanks(*gloo_, name, signature, timeout);
    if (!agreed.ok()) return std::string(agreed.message());
  }
  return std::nullopt;
}

WorkPtr ProcessGroupOpenReg::EnqueueBatch(std::string name, OpType type,
                                          c10::DeviceIndex device,
                                          std::vector<Collective> batch) {
  const c10::Stream stream = CurrentStream(device);
  const openreg_stream driver_stream = DriverStreamOf(stream);
  auto outcome = std::make_shared<CollectiveOutcome>();
  std::vector<at::Tensor> outputs;
  bool blocks_host = false;
  std::chrono::milliseconds timeout{0};
  // What the work reads of the tensors (their signatures) and the storages
  // it must own; the calls see the memory through borrowed tensors, so once
  // the originals are dropped here, memory stream-ordered on this stream is
  // the caller's to free (Note [Collectives borrow stream-ordered memory]).
  std::vector<std::pair<const char*, CollectiveSignature>> signatures;
  std::vector<c10::Storage> owned;
  const openreg_stream ordering = StreamOrderingWork(driver_stream);
  for (Collective& collective : batch) {
    if (std::optional<CollectiveSignature> signature = SignatureFor(
            collective.type, collective.tensors, collective.outputs)) {
      signatures.emplace_back(collective.name, *std::move(signature));
    }
    for (const at::Tensor& tensor : collective.tensors) {
      if (!OrderedOnStream(tensor.storage(), ordering)) {
        owned.push_back(tensor.storage());
      }
    }
    outputs.insert(outputs.end(), collective.outputs.begin(),
                   collective.outputs.end());
    blocks_host = blocks_host || collective.blocks_host;
    timeout = std::max(timeout, collective.timeout);
    collective.tensors.clear();
    collective.outputs.clear();
  }
  if (blocks_host) {
    RefuseWhileCapturing(device, driver_stream,
                         absl::StrCat("the collective ", name),
                         "its work blocks the calling thread until it has "
                         "run, and captured work only runs at replay");
  }
  // The collective's place in the order of Gloo calls is taken when it is
  // issued: here, or, when the stream captures, at every replay of the
  // graph (the recorded work below then runs once per replay).
  auto tickets = std::make_shared<IssuedTickets>();
  std::function<void()> issue = [order = order_, tickets] {
    tickets->Push(order->Take());
  };
  if (!RecordReplayIssueIfCapturing(driver_stream, issue)) issue();
  // Everything the lambda captures is released on a user thread once it has
  // run (Note [Asynchronous execution]).
  // Gloo reads and writes the tensors in place, on the driver's thread:
  // through aliases of their execution view.
  const std::vector<intptr_t>& execution_offsets =
      RuntimeForDevice(device).execution_offsets();
  EnqueueWork(
      device, driver_stream, name,
      [this_group = c10::intrusive_ptr<ProcessGroupOpenReg>::reclaim_copy(this),
       tickets = std::move(tickets), batch = std::move(batch),
       signatures = std::move(signatures), owned = std::move(owned), outcome,
       timeout, name, &execution_offsets]() mutable {
        CpuAliases aliases(execution_offsets);
        std::optional<IssueTicket> ticket = tickets->Pop();
        TORCH_CHECK(ticket.has_value(), "openreg: internal error: the ", name,
                    " ran without having been issued");
        ticket->AwaitTurn();
        std::optional<std::string> failure;
        std::vector<WorkPtr> gloo_works;
        try {
          failure = this_group->Disagreement(signatures, timeout);
          // Every call starts before any is waited for: a batch's sends and
          // receives may depend on each other across ranks.
          for (Collective& collective : batch) {
            if (failure.has_value()) break;
            gloo_works.push_back(collective.call(*this_group->gloo_, aliases));
          }
        } catch (...) {
          failure = this_group->FailureMessage(name, timeout, CurrentExceptionText());
        }
        ticket->Release();  // Gloo has all of this batch's calls, or none
        try {
          for (size_t i = 0; !failure.has_value() && i < batch.size(); ++i) {
            gloo_works[i]->wait(timeout);
            if (batch[i].type == OpType::RECVANYSOURCE) {
              outcome->SetSourceRank(gloo_works[i]->sourceRank());
            }
          }
        } catch (...) {
          failure = this_group->FailureMessage(name, timeout, CurrentExceptionText());
        }
        if (failure.has_value()) {
          outcome->Fail(*failure);
          TORCH_CHECK(false, *failure);
        }
        for (Collective& collective : batch) {
          if (collective.after) collective.after(aliases);
        }
      });
  return c10::make_intrusive<CollectiveWork>(rank_, type, stream,
                                             std::move(outputs),
                                             std::move(outcome), blocks_host);
}

WorkPtr ProcessGroupOpenReg::broadcast(std::vector<at::Tensor>& tensors,
                                       const c10d::BroadcastOptions& opts) {
  return Launch({"broadcast", OpType::BROADCAST, tensors, tensors,
                 TimeoutOf(opts.timeout),
                 [tensors = BorrowDeviceMemory(tensors),
                  opts](c10d::Backend& gloo, CpuAliases& aliases) {
                   std::vector<at::Tensor> views = Views(aliases, tensors);
                   return gloo.broadcast(views, opts);
                 }});
}

WorkPtr ProcessGroupOpenReg::allreduce(std::vector<at::Tensor>& tensors,
                                       const c10d::AllreduceOptions& opts) {
  Collective collective{"all_reduce", OpType::ALLREDUCE, tensors, tensors,
                        TimeoutOf(opts.timeout), nullptr};
  c10d::AllreduceOptions gloo_opts = opts;
  gloo_opts.reduceOp =
      GlooReduceOp("all_reduce", opts.reduceOp, tensors, &collective.after);
  collective.call = [tensors = BorrowDeviceMemory(tensors),
                     gloo_opts](c10d::Backend& gloo, CpuAliases& aliases) {
    std::vector<at::Tensor> views = Views(aliases, tensors);
    return gloo.allreduce(views, gloo_opts);
  };
  return Launch(std::move(collective));
}

WorkPtr ProcessGroupOpenReg::allreduce_coalesced(
    std::vector<at::Tensor>& tensors,
    const c10d::AllreduceCoalescedOptions& opts) {
  Collective collective{"all_reduce_coalesced", OpType::ALLREDUCE_COALESCED,
                        tensors, tensors, TimeoutOf(opts.timeout), nullptr};
  c10d::AllreduceCoalescedOptions gloo_opts = opts;
  gloo_opts.reduceOp = GlooReduceOp("all_reduce_coalesced", opts.reduceOp,
                                    tensors, &collective.after);
  collective.call = [tensors = BorrowDeviceMemory(tensors),
                     gloo_opts](c10d::Backend& gloo, CpuAliases& aliases) {
    std::vector<at::Tensor> views = Views(aliases, tensors);
    return gloo.allreduce_coalesced(views, gloo_opts);
  };
  return Launch(std::move(collective));
}

WorkPtr ProcessGroupOpenReg::reduce(std::vector<at::Tensor>& tensors,
                                    const c10d::ReduceOptions& opts) {
  Collective collective{"reduce", OpType::REDUCE, tensors, tensors,
                        TimeoutOf(opts.timeout), nullptr};
  c10d::ReduceOptions gloo_opts = opts;
  // Only the root holds the reduction, so only it finishes AVG/PREMUL_SUM.
  const std::vector<at::Tensor> reduced =
      opts.rootRank == rank_ ? tensors : std::vector<at::Tensor>{};
  gloo_opts.reduceOp =
      GlooReduceOp("reduce", opts.reduceOp, reduced, &collective.after);
  collective.call = [tensors = BorrowDeviceMemory(tensors),
                     gloo_opts](c10d::Backend& gloo, CpuAliases& aliases) {
    std::vector<at::Tensor> views = Views(aliases, tensors);
    return gloo.reduce(views, gloo_opts);
  };
  return Launch(std::move(collective));
}

WorkPtr ProcessGroupOpenReg::allgather(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) {
  TORCH_CHECK_VALUE(inputs.size() == 1 && outputs.size() == 1,
                    "all_gather: expected one input tensor and one output "
                    "list, found ", inputs.size(), " and ", outputs.size());
  ThrowIfError(CheckListLength("all_gather", "output tensors (one per rank)",
                               outputs[0], size_));
  for (const at::Tensor& output : outputs[0]) {
    ThrowIfError(CheckSameDtypeAndNumel("all_gather", "each output tensor",
                                        inputs[0], output));
  }
  return Launch({"all_gather", OpType::ALLGATHER,
                 Concat(inputs, outputs[0]), outputs[0], TimeoutOf(opts.timeout),
                 [outputs = BorrowDeviceMemory(outputs),
                  inputs = BorrowDeviceMemory(inputs),
                  opts](c10d::Backend& gloo, CpuAliases& aliases) {
                   auto output_views = Views(aliases, outputs);
                   auto input_views = Views(aliases, inputs);
                   return gloo.allgather(output_views, input_views, opts);
                 }});
}

WorkPtr ProcessGroupOpenReg::_allgather_base(at::Tensor& output,
                                             at::Tensor& input,
                                             const c10d::AllgatherOptions& opts) {
  ThrowIfError(
      CheckConcatenation("all_gather_into_tensor", input, output, size_));
  return Launch({"all_gather_into_tensor", OpType::_ALLGATHER_BASE,
                 {input, output}, {output}, TimeoutOf(opts.timeout),
                 [output = BorrowDeviceMemory(output),
                  input = BorrowDeviceMemory(input),
                  opts](c10d::Backend& gloo, CpuAliases& aliases) {
                   at::Tensor output_view = aliases.Alias(output);
                   at::Tensor input_view = aliases.Alias(input);
                   return gloo._allgather_base(output_view, input_view, opts);
                 }});
}

WorkPtr ProcessGroupOpenReg::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& output_lists,
    std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) {
  // output_lists[rank] holds rank's copy of every input.
  TORCH_CHECK_VALUE(static_cast<int>(output_lists.size()) == size_,
                    "all_gather_coalesced: expected ", size_,
                    " output lists (one per rank), found ", output_lists.size());
  for (const auto& list : output_lists) {
    ThrowIfError(CheckListLength("all_gather_coalesced",
                                 "tensors in each output list (one per input)",
                                 list, static_cast<int64_t>(inputs.size())));
    for (size_t i = 0; i < inputs.size(); ++i) {
      ThrowIfError(CheckSameDtypeAndNumel("all_gather_coalesced",
                                          "each output tensor", inputs[i],
                                          list[i]));
    }
  }
  return Launch({"all_gather_coalesced", OpType::ALLGATHER_COALESCED,
                 Concat(inputs, Flatten(output_lists)), Flatten(output_lists),
                 TimeoutOf(opts.timeout),
                 [output_lists = BorrowDeviceMemory(output_lists),
                  inputs = BorrowDeviceMemory(inputs),
                  opts](c10d::Backend& gloo, CpuAliases& aliases) {
                   auto output_views = Views(aliases, output_lists);
                   auto input_views = Views(aliases, inputs);
                   return gloo.allgather_coalesced(output_views, input_views,
                                                   opts);
                 }});
}

WorkPtr ProcessGroupOpenReg::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  ThrowIfError(CheckListLength("all_gather_into_tensor_coalesced",
                               "output tensors (one per input)", outputs,
                               static_cast<int64_t>(inputs.size())));
  for (size_t i = 0; i < inputs.size(); ++i) {
    ThrowIfError(CheckConcatenation("all_gather_into_tensor_coalesced",
                                    inputs[i], outputs[i], size_));
  }
  return Launch({"all_gather_into_tensor_coalesced", OpType::COALESCED,
                 Concat(inputs, outputs), outputs, TimeoutOf(opts.timeout),
                 [outputs = BorrowDeviceMemory(outputs),
                  inputs = BorrowDeviceMemory(inputs),
                  opts](c10d::Backend& gloo, CpuAliases& aliases) {
                   auto output_views = Views(aliases, outputs);
                   auto input_views = Views(aliases, inputs);
                   return gloo.allgather_into_tensor_coalesced(
                       output_views, input_views, opts);
                 }});
}

WorkPtr ProcessGroupOpenReg::gather(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  TORCH_CHECK_VALUE(inputs.size() == 1, "gather: expected one input tensor, found ",
                    inputs.size());
  if (opts.rootRank == rank_) {
    TORCH_CHECK_VALUE(outputs.size() == 1, "gather: expected one gather list "
                      "on the root, found ", outputs.size());
    ThrowIfError(CheckListLength("gather", "tensors in the gather list (one per rank)",
                                 outputs[0], size_));
    for (const at::Tensor& output : outputs[0]) {
      ThrowIfError(CheckSameDtypeAndNumel("gather", "each gathered tensor",
                                          inputs[0], output));
    }
  }
  const std::vector<at::Tensor> gathered = Flatten(outputs);
  return Launch({"gather", OpType::GATHER, Concat(inputs, gathered), gathered,
                 TimeoutOf(opts.timeout),
                 [outputs = BorrowDeviceMemory(outputs),
                  inputs = BorrowDeviceMemory(inputs),
                  opts](c10d::Backend& gloo, CpuAliases& aliases) {
                   auto output_views = Views(aliases, outputs);
                   auto input_views = Views(aliases, inputs);
                   return gloo.gather(output_views, input_views, opts);
                 }});
}

WorkPtr ProcessGroupOpenReg::scatter(
    std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  TORCH_CHECK_VALUE(outputs.size() == 1,
                    "scatter: expected one output tensor, found ", outputs.size());
  if (opts.rootRank == rank_) {
    TORCH_CHECK_VALUE(inputs.size() == 1, "scatter: expected one scatter list "
                      "on the root, found ", inputs.size());
    ThrowIfError(CheckListLength("scatter", "tensors in the scatter list (one per rank)",
                                 inputs[0], size_));
    for (const at::Tensor& input : inputs[0]) {
      ThrowIfError(CheckSameDtypeAndNumel("scatter", "each scattered tensor",
                                          outputs[0], input));
    }
  }
  return Launch({"scatter", OpType::SCATTER, Concat(outputs, Flatten(inputs)),
                 outputs, TimeoutOf(opts.timeout),
                 [outputs = BorrowDeviceMemory(outputs),
                  inputs = BorrowDeviceMemory(inputs),
                  opts](c10d::Backend& gloo, CpuAliases& aliases) {
                   auto output_views = Views(aliases, outputs);
                   auto input_views = Views(aliases, inputs);
                   return gloo.scatter(output_views, input_views, opts);
                 }});
}

WorkPtr ProcessGroupOpenReg::reduce_scatter(
    std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK_VALUE(outputs.size() == 1 && inputs.size() == 1,
                    "reduce_scatter: expected one output tensor and one input "
                    "list, found ", outputs.size(), " and ", inputs.size());
  ThrowIfError(CheckListLength("reduce_scatter", "input tensors (one per rank)", inputs[0], size_));
  for (const at::Tensor& input : inputs[0]) {
    ThrowIfError(CheckSameDtypeAndNumel("reduce_scatter", "each input tensor",
                                        outputs[0], input));
  }
  Collective collective{"reduce_scatter", OpType::REDUCE_SCATTER,
                        Concat(outputs, inputs[0]), outputs,
                        TimeoutOf(opts.timeout), nullptr};
  c10d::ReduceScatterOptions gloo_opts = opts;
  gloo_opts.reduceOp =
      GlooReduceOp("reduce_scatter", opts.reduceOp, outputs, &collective.after);
  collective.call = [outputs = BorrowDeviceMemory(outputs),
                     inputs = BorrowDeviceMemory(inputs),
                     gloo_opts](c10d::Backend& gloo, CpuAliases& aliases) {
    auto output_views = Views(aliases, outputs);
    auto input_views = Views(aliases, inputs);
    return gloo.reduce_scatter(output_views, input_views, gloo_opts);
  };
  return Launch(std::move(collective));
}

WorkPtr ProcessGroupOpenReg::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input,
    const c10d::ReduceScatterOptions& opts) {
  ThrowIfError(
      CheckConcatenation("reduce_scatter_tensor", output, input, size_));
  Collective collective{"reduce_scatter_tensor", OpType::_REDUCE_SCATTER_BASE,
                        {output, input}, {output}, TimeoutOf(opts.timeout),
                        nullptr};
  c10d::ReduceScatterOptions gloo_opts = opts;
  gloo_opts.reduceOp = GlooReduceOp("reduce_scatter_tensor", opts.reduceOp,
                                    {output}, &collective.after);
  collective.call = [output = BorrowDeviceMemory(output),
                     input = BorrowDeviceMemory(input),
                     gloo_opts](c10d::Backend& gloo, CpuAliases& aliases) {
    at::Tensor output_view = aliases.Alias(output);
    at::Tensor input_view = aliases.Alias(input);
    return gloo._reduce_scatter_base(output_view, input_view, gloo_opts);
  };
  return Launch(std::move(collective));
}

WorkPtr ProcessGroupOpenReg::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  ThrowIfError(CheckListLength("reduce_scatter_tensor_coalesced",
                               "output tensors (one per input)", outputs,
                               static_cast<int64_t>(inputs.size())));
  for (size_t i = 0; i < inputs.size(); ++i) {
    ThrowIfError(CheckConcatenation("reduce_scatter_tensor_coalesced",
                                    outputs[i], inputs[i], size_));
  }
  Collective collective{"reduce_scatter_tensor_coalesced", OpType::COALESCED,
                        Concat(outputs, inputs), outputs,
                        TimeoutOf(opts.timeout), nullptr};
  c10d::ReduceScatterOptions gloo_opts = opts;
  gloo_opts.reduceOp = GlooReduceOp("reduce_scatter_tensor_coalesced",
                                    opts.reduceOp, outputs, &collective.after);
  collective.call = [outputs = BorrowDeviceMemory(outputs),
                     inputs = BorrowDeviceMemory(inputs),
                     gloo_opts](c10d::Backend& gloo, CpuAliases& aliases) {
    auto output_views = Views(aliases, outputs);
    auto input_views = Views(aliases, inputs);
    return gloo.reduce_scatter_tensor_coalesced(output_views, input_views,
                                                gloo_opts);
  };
  return Launch(std::move(collective));
}

WorkPtr ProcessGroupOpenReg::alltoall_base(at::Tensor& output,
                                           at::Tensor& input,
                                           std::vector<int64_t>& output_splits,
                                           std::vector<int64_t>& input_splits,
                                           const c10d::AllToAllOptions& opts) {
  ThrowIfError(CheckSplits("all_to_all_single", "output", output, output_splits, size_));
  ThrowIfError(CheckSplits("all_to_all_single", "input", input, input_splits, size_));
  TORCH_CHECK_VALUE(output.scalar_type() == input.scalar_type(),
                    "all_to_all_single: expected the output to have the "
                    "input's dtype ", input.scalar_type(), ", found ",
                    output.scalar_type());
  return Launch({"all_to_all_single", OpType::ALLTOALL_BASE, {output, input},
                 {output}, TimeoutOf(opts.timeout),
                 [output = BorrowDeviceMemory(output),
                  input = BorrowDeviceMemory(input),
                  output_splits,
                  input_splits,
                  opts](c10d::Backend& gloo, CpuAliases& aliases) mutable {
                   at::Tensor output_view = aliases.Alias(output);
                   at::Tensor input_view = aliases.Alias(input);
                   return gloo.alltoall_base(output_view, input_view,
                                             output_splits, input_splits, opts);
                 }});
}

WorkPtr ProcessGroupOpenReg::alltoall(std::vector<at::Tensor>& outputs,
                                      std::vector<at::Tensor>& inputs,
                                      const c10d::AllToAllOptions& opts) {
  ThrowIfError(CheckListLength("all_to_all", "output tensors (one per rank)", outputs, size_));
  ThrowIfError(CheckListLength("all_to_all", "input tensors (one per rank)", inputs, size_));
  return Launch({"all_to_all", OpType::ALLTOALL, Concat(outputs, inputs),
                 outputs, TimeoutOf(opts.timeout),
                 [outputs = BorrowDeviceMemory(outputs),
                  inputs = BorrowDeviceMemory(inputs),
                  opts](c10d::Backend& gloo, CpuAliases& aliases) {
                   auto output_views = Views(aliases, outputs);
                   auto input_views = Views(aliases, inputs);
                   return gloo.alltoall(output_views, input_views, opts);
                 }});
}

WorkPtr ProcessGroupOpenReg::send(std::vector<at::Tensor>& tensors,
                                  int dst_rank, int tag) {
  return Launch({"send", OpType::SEND, tensors, {}, TimeoutOf(c10d::kUnsetTimeout),
                 [tensors = BorrowDeviceMemory(tensors),
                  dst_rank,
                  tag](c10d::Backend& gloo, CpuAliases& aliases) {
                   std::vector<at::Tensor> views = Views(aliases, tensors);
                   return gloo.send(views, dst_rank, tag);
                 }});
}

WorkPtr ProcessGroupOpenReg::recv(std::vector<at::Tensor>& tensors,
                                  int src_rank, int tag) {
  return Launch({"recv", OpType::RECV, tensors, tensors,
                 TimeoutOf(c10d::kUnsetTimeout),
                 [tensors = BorrowDeviceMemory(tensors),
                  src_rank,
                  tag](c10d::Backend& gloo, CpuAliases& aliases) {
                   std::vector<at::Tensor> views = Views(aliases, tensors);
                   return gloo.recv(views, src_rank, tag);
                 }});
}

WorkPtr ProcessGroupOpenReg::recvAnysource(std::vector<at::Tensor>& tensors,
                                           int tag) {
  return Launch({"recv (from any source)", OpType::RECVANYSOURCE, tensors,
                 tensors, TimeoutOf(c10d::kUnsetTimeout),
                 [tensors = BorrowDeviceMemory(tensors),
                  tag](c10d::Backend& gloo, CpuAliases& aliases) {
                   std::vector<at::Tensor> views = Views(aliases, tensors);
                   return gloo.recvAnysource(views, tag);
                 }});
}

WorkPtr ProcessGroupOpenReg::barrier(const c10d::BarrierOptions& opts) {
  // No tensor says where to run: the group's device, else the device_ids
  // asked for, else the current device.
  c10::DeviceIndex device;
  {
    absl::MutexLock lock(&mutex_);
    if (device_.has_value()) {
      device = *device_;
    } else if (bound_device_id_.has_value()) {
      device = bound_device_id_->index();
    } else if (!opts.device_ids.empty()) {
      device = static_cast<c10::DeviceIndex>(opts.device_ids.front());
    } else {
      device = GetGuardImpl().getDevice().index();
    }
  }
  // A one-element tensor on that device carries the device through the
  // checks; barrier itself sends nothing.
  at::Tensor marker = at::empty(
      {1}, at::TensorOptions().device(c10::DeviceType::PrivateUse1, device));
  Collective collective{"barrier", OpType::BARRIER, {marker}, {},
                        TimeoutOf(opts.timeout),
                        [opts](c10d::Backend& gloo, CpuAliases&) {
                          return gloo.barrier(opts);
                        }};
  collective.blocks_host = true;
  return Launch(std::move(collective));
}

}  // namespace openreg
