// ProcessGroupOpenReg: the c10d backend for openreg tensors, built on the
// Gloo backend shipped in torch.
//
// Note [Collectives are stream-ordered work]
//
// Each collective checks its tensors on the calling thread, then enqueues one
// piece of work on the current stream of the tensors' device (the core's
// EnqueueWork, which keeps the tensors alive until it has run) and returns a
// CollectiveWork without waiting. On the driver's thread, after everything
// queued before it, the work views the device memory as CPU tensors (zero
// copy: a simulated device's memory is host memory) and hands those views to
// Gloo's collective, then waits for Gloo there. Work queued after it on the
// stream therefore sees the result; the calling thread blocks only where
// PyTorch's semantics say so. Gloo calls happen in issue order (IssueOrder),
// which is what matches collectives across ranks. Collectives whose ranks
// contribute alike first compare a signature across ranks
// (cross_rank_check.h), so a mismatch is an error, not an abort inside Gloo.
// A Gloo failure (timeout,
// dead peer) fails the work with a message naming the collective, the ranks
// and the timeout; the core raises it at the stream's next synchronization.
//
// Between startCoalescing and endCoalescing (batch_isend_irecv, the
// coalescing manager) the collectives are only checked and collected; the
// end enqueues one piece of work that starts them all in Gloo and then waits
// for them all, and returns the one Work for the batch (the calls inside
// return none, as with NCCL). Without it, a rank's isend would wait on its
// stream for a receive its peer has queued behind its own isend.
//
// Gloo lacks ReduceOp.AVG and PREMUL_SUM: both run as SUM followed, in the
// same work, by a division by the group size or a multiplication by the
// factor.
//
// Thread-safety: collectives may be issued from any user thread; `mutex_`
// guards the device the group uses and the collectives being coalesced.
// Nothing here takes the Python GIL; the enqueued work runs on driver threads
// and touches only Gloo and the views.
#ifndef OPENREG_CORE_DISTRIBUTED_PROCESS_GROUP_OPENREG_H_
#define OPENREG_CORE_DISTRIBUTED_PROCESS_GROUP_OPENREG_H_

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "core/aten/cpu_alias.h"
#include "core/distributed/cross_rank_check.h"
#include "core/distributed/issue_order.h"

namespace openreg {

inline constexpr char kOpenRegBackendName[] = "openreg";

class ProcessGroupOpenReg final : public c10d::Backend {
 public:
  // `gloo` is a Gloo backend of the same group (rank, size), on a store of
  // its own. `global_ranks` lists the group's ranks in the default group, for
  // error messages (empty: 0..size-1).
  ProcessGroupOpenReg(c10::intrusive_ptr<c10d::Backend> gloo, int rank,
                      int size, std::chrono::milliseconds timeout,
                      std::vector<int64_t> global_ranks);

  const std::string getBackendName() const override {
    return kOpenRegBackendName;
  }

  c10::intrusive_ptr<c10d::Work> broadcast(
      std::vector<at::Tensor>& tensors,
      const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(
      std::vector<at::Tensor>& tensors,
      const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& output_lists,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(
      std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(
      at::Tensor& output, at::Tensor& input,
      std::vector<int64_t>& output_splits, std::vector<int64_t>& input_splits,
      const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors,
                                      int dst_rank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors,
                                      int src_rank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors,
                                               int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(
      const c10d::BarrierOptions& opts) override;

  bool supportsCoalescing() const override { return true; }
  void startCoalescing() override;
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;

  void setSequenceNumberForGroup() override;
  uint64_t getSequenceNumberForGroup() override;
  void setTimeout(std::chrono::milliseconds timeout) override;

 private:
  // Calls Gloo on CPU views of the collective's tensors; runs on the
  // driver's thread. Captures borrowed tensors of the memory it views
  // (Note [Collectives borrow stream-ordered memory]).
  using GlooCall = absl::AnyInvocable<c10::intrusive_ptr<c10d::Work>(
      c10d::Backend& gloo, CpuAliases& aliases)>;
  // Runs after Gloo, in the same work, on the same views (AVG's division).
  using AfterGloo = absl::AnyInvocable<void(CpuAliases& aliases)>;

  struct Collective {
    const char* name;
    c10d::OpType type;
    // Every openreg tensor the collective touches: checked, the device it
    // runs on, and what it owns until it is enqueued.
    std::vector<at::Tensor> tensors;
    // What Work::result() and the future hold.
    std::vector<at::Tensor> outputs;
    std::chrono::milliseconds timeout;
    GlooCall call;
    AfterGloo after = nullptr;
    bool blocks_host = false;
  };

  // Checks the collective and enqueues it, or keeps it for endCoalescing
  // (and returns no Work).
  c10::intrusive_ptr<c10d::Work> Launch(Collective collective);

  // Enqueues `batch` (checked, on `device`) as one piece of work named
  // `name` on the current stream.
  c10::intrusive_ptr<c10d::Work> EnqueueBatch(std::string name,
                                              c10d::OpType type,
                                              c10::DeviceIndex device,
                                              std::vector<Collective> batch);

  // The device of the collective's tensors, after checking them; binds the
  // group to that device on first use (unless init_process_group bound it).
  c10::DeviceIndex CheckedDevice(const char* name,
                                 const std::vector<at::Tensor>& tensors);

  // Why the ranks' tensors disagree, if they do: exchanges the signatures
  // of a batch's collectives, by name, through Gloo (cross_rank_check.h).
  // Runs in the work.
  std::optional<std::string> Disagreement(
      const std::vector<std::pair<const char*, CollectiveSignature>>&
          signatures,
      std::chrono::milliseconds timeout) const;

  // The timeout of one call: its own if set, else the group's.
  std::chrono::milliseconds TimeoutOf(
      std::chrono::milliseconds requested) const;

  // Gloo's reduction for `op`, and what to do after it for the ops Gloo
  // lacks (AVG, PREMUL_SUM) on `reduced`, the tensors holding the result.
  c10d::ReduceOp GlooReduceOp(const char* name, const c10d::ReduceOp& op,
                              const std::vector<at::Tensor>& reduced,
                              AfterGloo* after) const;

  std::string FailureMessage(const std::string& name,
                             std::chrono::milliseconds timeout,
                             const std::string& gloo_message) const;

  const c10::intrusive_ptr<c10d::Backend> gloo_;
  const std::shared_ptr<IssueOrder> order_ = IssueOrder::Create();
  const std::vector<int64_t> global_ranks_;
  std::atomic<int64_t> timeout_ms_;

  mutable absl::Mutex mutex_;
  std::optional<c10::DeviceIndex> device_ ABSL_GUARDED_BY(mutex_);
  // Set between startCoalescing and endCoalescing.
  std::optional<std::vector<Collective>> coalescing_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace openreg

#endif  // OPENREG_CORE_DISTRIBUTED_PROCESS_GROUP_OPENREG_H_
