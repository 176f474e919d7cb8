#include "third_party/openmp/thread_workers.h"

#include <dlfcn.h>

#include <atomic>

namespace openreg::openmp {
namespace {

// omp_pause_resource_all(omp_pause_soft) (OpenMP 5.0) frees the calling
// thread's worker pool and leaves the runtime usable.
using PauseResourceAll = int (*)(int kind);
constexpr int kOmpPauseSoft = 1;
// omp_set_num_threads sets the calling thread's team size for the parallel
// regions it starts.
using SetNumThreads = void (*)(int threads);

// The OpenMP runtimes PyTorch builds use: GNU (libgomp), LLVM and Intel.
constexpr const char* kRuntimes[] = {"libgomp.so.1", "libomp.so",
                                     "libiomp5.so"};

// `symbol` of the loaded OpenMP runtime, or null. The handle is kept (never
// dlclose'd) so the runtime cannot be unloaded under the pointer. Lookups are
// not cheap (dlopen may search the library path for a name not loaded):
// callers cache what they find.
void* FindInLoadedRuntime(const char* symbol) {
  for (const char* library : kRuntimes) {
    // RTLD_NOLOAD: only a runtime the process already loaded.
    void* handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    if (void* found = dlsym(handle, symbol)) return found;
    dlclose(handle);
  }
  return nullptr;
}

// `symbol` as a `Function`, once found. Until a runtime is found every call
// looks again: the application may load its OpenMP runtime after openreg
// started. Two threads may both find it: the same pointer, one extra
// reference to the library.
template <typename Function>
Function Find(std::atomic<Function>& found, const char* symbol) {
  if (Function function = found.load(std::memory_order_acquire)) {
    return function;
  }
  const auto function = reinterpret_cast<Function>(FindInLoadedRuntime(symbol));
  if (function != nullptr) found.store(function, std::memory_order_release);
  return function;
}

}  // namespace

void ReleaseCallingThreadWorkers() {
  static std::atomic<PauseResourceAll> pause{nullptr};
  if (PauseResourceAll function = Find(pause, "omp_pause_resource_all")) {
    function(kOmpPauseSoft);
  }
}

void SetCallingThreadTeamSize(int threads) {
  static std::atomic<SetNumThreads> set{nullptr};
  if (SetNumThreads function = Find(set, "omp_set_num_threads")) {
    function(threads);
  }
}

}  // namespace openreg::openmp
