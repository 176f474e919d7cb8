#include "third_party/openmp/thread_workers.h"

#include <dlfcn.h>

#include <atomic>

namespace openreg::openmp {
namespace {

// omp_pause_resource_all(omp_pause_soft) (OpenMP 5.0) frees the calling
// thread's worker pool and leaves the runtime usable.
using PauseResourceAll = int (*)(int kind);
constexpr int kOmpPauseSoft = 1;

// The OpenMP runtimes PyTorch builds use: GNU (libgomp), LLVM and Intel.
constexpr const char* kRuntimes[] = {"libgomp.so.1", "libomp.so",
                                     "libiomp5.so"};

// The loaded runtime's omp_pause_resource_all, once found. The handle is
// kept (never dlclose'd) so the runtime cannot be unloaded under the pointer.
// Until a runtime is found every call looks again: the application may load
// its OpenMP runtime after openreg started. Lookups are not cheap (dlopen may
// search the library path for a name not loaded), and graph replays call this
// once each.
PauseResourceAll FindPauseResourceAll() {
  static std::atomic<PauseResourceAll> found{nullptr};
  if (PauseResourceAll pause = found.load(std::memory_order_acquire)) {
    return pause;
  }
  for (const char* library : kRuntimes) {
    // RTLD_NOLOAD: only a runtime the process already loaded.
    void* handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    if (void* symbol = dlsym(handle, "omp_pause_resource_all")) {
      // Two threads may both find it: same pointer, one extra reference.
      const auto pause = reinterpret_cast<PauseResourceAll>(symbol);
      found.store(pause, std::memory_order_release);
      return pause;
    }
    dlclose(handle);
  }
  return nullptr;
}

}  // namespace

void ReleaseCallingThreadWorkers() {
  if (PauseResourceAll pause = FindPauseResourceAll()) pause(kOmpPauseSoft);
}

}  // namespace openreg::openmp
