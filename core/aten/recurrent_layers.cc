// Note [Fused LSTM layers]
//
// On the CPU, at::lstm hands float32 LSTMs without projections to oneDNN,
// one mkldnn_rnn_layer call per layer and direction, and autograd pairs
// each with mkldnn_rnn_layer_backward. PyTorch takes that route only for CPU
// tensors; on openreg at::lstm's generic decomposition ran instead: a fused
// cell per time step, each a dozen openreg ops (recurrent_ops.cc), thousands
// of launches per training step. openreg now registers aten::lstm itself
// (for PrivateUse1 and AutogradPrivateUse1) and takes the CPU's route under
// the CPU's conditions, so both devices run the same oneDNN kernels on the
// same numbers. Everything else (projections, other dtypes, autocast, packed
// sequences, which arrive as aten::lstm.data) keeps the generic path.
//
// mkldnn_rnn_layer itself runs as one kernel on the stream over CPU aliases
// of the device memory. Its results must exist before the kernel runs, and
// one of them, the workspace oneDNN keeps for the backward pass, has a size
// only oneDNN knows (its primitive descriptor, which PyTorch does not
// export). WorkspaceBytes learns it by running the CPU kernel once on zeros
// of the same shapes, on the calling thread, and remembers it per shape: a
// training loop pays once per distinct layer shape. The kernel computes its
// results in their outputs' memory, as the fallback's functional kernels do
// (results_into_outputs.h): copied, the workspace alone was 2% of the bench's
// LSTM step on threaded_sim. The backward op has a meta kernel, so the CPU
// fallback runs it without waiting.
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/lstm_native.h>
#include <ATen/ops/mkldnn_rnn_layer.h>
#include <ATen/ops/mkldnn_rnn_layer_ops.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/GradMode.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/synchronization/mutex.h"
#include "core/aten/argument_devices.h"
#include "core/aten/cpu_alias.h"
#include "core/aten/device_memory_aliases.h"
#include "core/aten/kernel_memory.h"
#include "core/aten/native_ops.h"
#include "core/aten/result_memory_plan.h"
#include "core/aten/results_into_outputs.h"
#include "core/torch_runtime/runtime_accessor.h"
#include "core/torch_runtime/stream_work.h"
#include "core/torch_runtime/torch_stream.h"

namespace openreg {
namespace {

constexpr c10::DispatchKeySet kCpuKeys(c10::DispatchKey::CPU);

// mkldnn_rnn_layer's `mode` (ideep::rnn_kind): the CPU kernel implements
// LSTM only.
constexpr int64_t kLstmMode = 2;
constexpr int64_t kLstmGates = 4;

const std::string& LayerOpName() {
  static const auto* name = new std::string("aten::mkldnn_rnn_layer");
  return *name;
}

// What the workspace size depends on: the layer's shapes, dtype and
// direction.
struct LayerShape {
  int64_t steps, batch, input_size, hidden_size;
  at::ScalarType dtype;
  bool reverse;

  template <typename H>
  friend H AbslHashValue(H h, const LayerShape& s) {
    return H::combine(std::move(h), s.steps, s.batch, s.input_size,
                      s.hidden_size, s.dtype, s.reverse);
  }
  friend bool operator==(const LayerShape&, const LayerShape&) = default;
};

// Workspace sizes learned so far. Thread-safety: the map is guarded by
// `mutex_`; user threads of every device share it. Bounded: a program cycling
// through more shapes than this starts over.
class WorkspaceSizes {
 public:
  static WorkspaceSizes& Get() {
    static auto* sizes = new WorkspaceSizes();
    return *sizes;
  }

  int64_t Bytes(const LayerShape& shape) {
    {
      absl::MutexLock lock(&mutex_);
      auto it = bytes_.find(shape);
      if (it != bytes_.end()) return it->second;
    }
    // Outside the lock: the probe runs a whole layer. Two threads probing
    // the same shape at once both get the same answer.
    const int64_t bytes = Probe(shape);
    absl::MutexLock lock(&mutex_);
    if (bytes_.size() >= kMaxShapes) bytes_.clear();
    bytes_.emplace(shape, bytes);
    return bytes;
  }

 private:
  static constexpr size_t kMaxShapes = 256;

  // Runs the CPU kernel on zeros of `shape`, with autograd on (the kernel
  // makes a workspace only then), and reads the workspace's size.
  static int64_t Probe(const LayerShape& shape) {
    const at::TensorOptions options = at::TensorOptions().dtype(shape.dtype);
    const int64_t gates = kLstmGates * shape.hidden_size;
    const at::Tensor bias = at::zeros({gates}, options);
    const at::Tensor state =
        at::zeros({shape.batch, shape.hidden_size}, options);
    const c10::AutoGradMode grad_mode(true);
    const auto results = at::_ops::mkldnn_rnn_layer::redispatch(
        kCpuKeys,
        at::zeros({shape.steps, shape.batch, shape.input_size}, options),
        at::zeros({gates, shape.input_size}, options),
        at::zeros({gates, shape.hidden_size}, options), bias, bias, state,
        state, shape.reverse, /*batch_sizes=*/{}, kLstmMode, shape.hidden_size,
        /*num_layers=*/1, /*has_biases=*/true, /*bidirectional=*/false,
        /*batch_first=*/false, /*train=*/true);
    return std::get<3>(results).numel();
  }

  absl::Mutex mutex_;
  absl::flat_hash_map<LayerShape, int64_t> bytes_ ABSL_GUARDED_BY(mutex_);
};

void CheckLayerArgument(bool ok, const char* what, const at::Tensor& found) {
  TORCH_CHECK(ok, LayerOpName(), " on openreg expects ", what, ", got a ",
              found.scalar_type(), " tensor of shape ", found.sizes(),
              ". It runs one LSTM layer (mode 2) on time-major input "
              "[steps, batch, input_size]; nn.LSTM and torch.lstm call it "
              "with the right arguments.");
}

// The layer op's, for computing its results in their outputs' memory (Note
// [Results computed in their outputs' memory]).
ResultOrdinals& LayerResultOrdinals() {
  static auto* ordinals = new ResultOrdinals();
  return *ordinals;
}

// What the layer's kernel owns until it has run: the aliases (which hold the
// device storages its stream does not order, device_memory_aliases.h) and
// the CPU-side arguments and results.
struct LayerLaunch {
  LayerLaunch(CpuAliases aliases, c10::DeviceIndex device)
      : aliases(std::move(aliases)),
        device(device),
        execution_offset(ExecutionOffsetOf(device)) {}

  CpuAliases aliases;
  c10::DeviceIndex device;
  intptr_t execution_offset;
  std::vector<at::Tensor> inputs;  // input, w0..w3, hx, cx
  // Aliases of output, hy, cy[, workspace], and weak references to their
  // openreg storages (results_into_outputs.h).
  std::vector<at::Tensor> outputs;
  std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>> output_storages;
  bool reverse = false;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  bool has_biases = false;
  bool bidirectional = false;
  bool train = false;
  bool grad_enabled = false;

  // Runs the CPU kernel with its allocations in device memory, each result
  // computed in its output's memory once the plan has learned which
  // allocation it is (on a miss, copied there).
  void Run() {
    const KernelOutputs placed{outputs, output_storages};
    ResultMemoryPlan plan(LayerResultOrdinals());
    OfferOutputMemory(placed, plan);
    std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> results;
    {
      const ScopedKernelMemoryOnDevice kernel_memory(device, execution_offset);
      const ScopedResultMemoryPlan lend(&plan);
      const c10::AutoGradMode grad_mode(grad_enabled);
      results = at::_ops::mkldnn_rnn_layer::redispatch(
          kCpuKeys, inputs[0], inputs[1], inputs[2], inputs[3], inputs[4],
          inputs[5], inputs[6], reverse, /*batch_sizes=*/{}, kLstmMode,
          hidden_size, num_layers, has_biases, bidirectional,
          /*batch_first=*/false, train);
    }
    absl::InlinedVector<at::Tensor, 4> placed_results = {
        std::get<0>(results), std::get<1>(results), std::get<2>(results)};
    if (outputs.size() == 4) {
      const at::Tensor& workspace = std::get<3>(results);
      TORCH_CHECK(workspace.numel() == outputs[3].numel(),
                  "openreg internal error: oneDNN's LSTM workspace has ",
                  workspace.numel(), " bytes, ", outputs[3].numel(),
                  " were planned for it. Please report this.");
      placed_results.push_back(workspace);
    }
    PlaceResults(placed_results, placed, plan, LayerOpName());
  }
};

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> MkldnnRnnLayer(
    const at::Tensor& input, const at::Tensor& weight0,
    const at::Tensor& weight1, const at::Tensor& weight2,
    const at::Tensor& weight3, const at::Tensor& hx, const at::Tensor& cx,
    bool reverse, at::IntArrayRef batch_sizes, int64_t mode,
    int64_t hidden_size, int64_t num_layers, bool has_biases,
    bool bidirectional, bool batch_first, bool train) {
  std::optional<c10::DeviceIndex> device;
  const auto no_cpu_tensors = [](const at::Tensor&) { return false; };
  for (const at::Tensor* tensor :
       {&input, &weight0, &weight1, &weight2, &weight3, &hx, &cx}) {
    CheckArgumentDevices(*tensor, LayerOpName(), no_cpu_tensors, &device);
  }
  TORCH_CHECK(mode == kLstmMode, LayerOpName(),
              " on openreg runs LSTM layers (mode 2) only, as on the CPU; got "
              "mode ",
              mode, ".");
  TORCH_CHECK(batch_sizes.empty(), LayerOpName(),
              " does not take packed sequences (batch_sizes must be empty, "
              "got ",
              batch_sizes.size(), " entries); nn.LSTM runs them another way.");
  CheckLayerArgument(input.dim() == 3 && input.scalar_type() == at::kFloat,
                     "a 3-D float32 input", input);
  const int64_t steps = input.size(0);
  const int64_t batch = input.size(1);
  const int64_t gates = kLstmGates * hidden_size;
  CheckLayerArgument(weight0.sizes() == at::IntArrayRef({gates, input.size(2)}),
                     "weight0 of shape [4 * hidden_size, input_size]", weight0);
  CheckLayerArgument(weight1.sizes() == at::IntArrayRef({gates, hidden_size}),
                     "weight1 of shape [4 * hidden_size, hidden_size]",
                     weight1);
  CheckLayerArgument(hx.sizes() == at::IntArrayRef({batch, hidden_size}),
                     "hx_ of shape [batch, hidden_size]", hx);
  CheckLayerArgument(cx.sizes() == at::IntArrayRef({batch, hidden_size}),
                     "cx_ of shape [batch, hidden_size]", cx);
  for (const at::Tensor* tensor :
       {&weight0, &weight1, &weight2, &weight3, &hx, &cx}) {
    CheckLayerArgument(tensor->scalar_type() == at::kFloat,
                       "float32 weights and states", *tensor);
  }
  const c10::DeviceGuard guard(input.device());
  const bool grad_enabled = c10::GradMode::is_enabled();
  const openreg_stream stream = CurrentDriverStream(*device);

  auto launch = std::make_unique<LayerLaunch>(
      DeviceMemoryAliases(stream, CpuAliases::Originals::kHeld), *device);
  // oneDNN reads the input and states as dense arrays, whatever their
  // strides. The dense copies live until the launch is enqueued: freed
  // before, their memory could become the outputs' (the aliases do not hold
  // memory ordered on the stream).
  const std::array<at::Tensor, 7> inputs = {
      input.contiguous(), weight0,         weight1,        weight2,
      weight3,            hx.contiguous(), cx.contiguous()};
  for (const at::Tensor& tensor : inputs) {
    launch->inputs.push_back(launch->aliases.Alias(tensor));
  }
  at::Tensor output = at::empty({steps, batch, hidden_size}, input.options());
  at::Tensor hy = at::empty(hx.sizes(), hx.options());
  at::Tensor cy = at::empty(cx.sizes(), cx.options());
  at::Tensor workspace;
  if (grad_enabled) {
    const int64_t bytes =
        WorkspaceSizes::Get().Bytes({steps, batch, input.size(2), hidden_size,
                                     input.scalar_type(), reverse});
    workspace = at::empty({bytes}, input.options().dtype(at::kByte));
  }
  for (const at::Tensor& tensor : {output, hy, cy, workspace}) {
    if (tensor.defined()) {
      launch->outputs.push_back(launch->aliases.Alias(tensor));
      launch->output_storages.push_back(tensor.storage().getWeakStorageImpl());
    }
  }
  launch->reverse = reverse;
  launch->hidden_size = hidden_size;
  launch->num_layers = num_layers;
  launch->has_biases = has_biases;
  launch->bidirectional = bidirectional;
  launch->train = train;
  launch->grad_enabled = grad_enabled;
  launch->aliases.ForgetOriginalTensors();
  EnqueueWork(*device, stream, LayerOpName(),
              [launch = std::move(launch)] { launch->Run(); });
  return {std::move(output), std::move(hy), std::move(cy),
          std::move(workspace)};
}

namespace {

// Whether the CPU would run this LSTM through oneDNN (at::lstm's own test:
// oneDNN enabled, float32, not empty, no projections). Under autocast the
// generic path stays, so the cells run in the autocast dtype as openreg's
// autocast policy (CUDA's) asks.
bool CpuRunsFusedLstm(const at::Tensor& input, at::TensorList hx) {
  return !at::autocast::is_autocast_enabled(c10::DeviceType::PrivateUse1) &&
         at::globalContext().userEnabledMkldnn() &&
         input.scalar_type() == at::kFloat && input.numel() != 0 &&
         hx[0].size(2) == hx[1].size(2);
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> Lstm(
    const at::Tensor& input, at::TensorList hx, at::TensorList params,
    bool has_biases, int64_t num_layers, double dropout, bool train,
    bool bidirectional, bool batch_first) {
  TORCH_CHECK(hx.size() == 2, "lstm expects two hidden states (h_0, c_0), got ",
              hx.size(), ".");
  if (!CpuRunsFusedLstm(input, hx)) {
    return at::native::lstm(input, hx, params, has_biases, num_layers, dropout,
                            train, bidirectional, batch_first);
  }
  const int64_t directions = bidirectional ? 2 : 1;
  const size_t per_layer = has_biases ? 4 : 2;
  TORCH_CHECK(params.size() == per_layer * num_layers * directions,
              "lstm expects ", per_layer * num_layers * directions,
              " parameter tensors for ", num_layers, " layer(s) and ",
              directions, " direction(s)", (has_biases ? " with" : " without"),
              " biases, got ", params.size(), ".");
  const int64_t hidden_size = hx[0].size(2);
  const at::Tensor h0 = hx[0].contiguous();
  const at::Tensor c0 = hx[1].contiguous();
  at::Tensor layer_input =
      (batch_first ? input.transpose(0, 1) : input).contiguous();
  std::vector<at::Tensor> hy;
  std::vector<at::Tensor> cy;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<at::Tensor> outputs;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const int64_t index = layer * directions + direction;
      const at::TensorList weights = params.slice(index * per_layer, per_layer);
      // Without biases the layer ignores weight2 and weight3 (has_biases is
      // false), but autograd still wants tensors there.
      const at::Tensor no_bias =
          has_biases ? at::Tensor()
                     : at::zeros({weights[0].size(0)}, weights[0].options());
      auto [output, h, c, workspace] = at::mkldnn_rnn_layer(
          layer_input, weights[0], weights[1],
          has_biases ? weights[2] : no_bias, has_biases ? weights[3] : no_bias,
          h0[index], c0[index], /*reverse=*/direction == 1,
          /*batch_sizes=*/{}, kLstmMode, hidden_size, num_layers, has_biases,
          bidirectional, /*batch_first=*/false, train);
      outputs.push_back(std::move(output));
      hy.push_back(std::move(h));
      cy.push_back(std::move(c));
    }
    layer_input = directions == 1 ? outputs[0] : at::cat(outputs, -1);
    if (dropout != 0 && train && layer + 1 < num_layers) {
      layer_input = at::dropout(layer_input, dropout, /*train=*/true);
    }
  }
  return {batch_first ? layer_input.transpose(0, 1) : layer_input,
          at::stack(hy, 0), at::stack(cy, 0)};
}

}  // namespace openreg
