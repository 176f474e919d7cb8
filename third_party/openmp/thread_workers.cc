#include "third_party/openmp/thread_workers.h"

#include <dlfcn.h>

namespace openreg::openmp {
namespace {

// omp_pause_resource_all(omp_pause_soft) (OpenMP 5.0) frees the calling
// thread's worker pool and leaves the runtime usable.
using PauseResourceAll = int (*)(int kind);
constexpr int kOmpPauseSoft = 1;

// The OpenMP runtimes PyTorch builds use: GNU (libgomp), LLVM and Intel.
constexpr const char* kRuntimes[] = {"libgomp.so.1", "libomp.so",
                                     "libiomp5.so"};

}  // namespace

void ReleaseCallingThreadWorkers() {
  // Looked up on every call, which is rare (once per idle period): the
  // application may load its OpenMP runtime after openreg started.
  for (const char* library : kRuntimes) {
    // RTLD_NOLOAD: only a runtime the process already loaded. The handle is a
    // reference of our own, dropped once the call returned.
    void* handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    if (void* symbol = dlsym(handle, "omp_pause_resource_all")) {
      reinterpret_cast<PauseResourceAll>(symbol)(kOmpPauseSoft);
    }
    dlclose(handle);
  }
}

}  // namespace openreg::openmp
