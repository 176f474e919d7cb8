// A context of one simulated driver library given to another: each library
// links its own context registry, and must reject the other's contexts with
// INVALID_ARGUMENT rather than take them for one of its own. Both libraries
// are loaded with dlopen, as the core loads drivers.
#include <dlfcn.h>

#include <string>

#include "driver_abi/openreg_driver.h"
#include "gtest/gtest.h"

namespace {

// Relative to the runfiles root, the working directory of a Bazel test.
constexpr char kCpuSimPath[] = "plugins/cpu_sim/libopenreg_cpu_sim.so";
constexpr char kThreadedSimPath[] =
    "plugins/threaded_sim/libopenreg_threaded_sim.so";

// The table of the driver at `path`, loaded for the rest of the process; null
// after a failed test assertion.
const openreg_driver_api* Load(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  if (handle == nullptr) return nullptr;
  auto entry = reinterpret_cast<openreg_driver_get_api_fn>(
      dlsym(handle, OPENREG_DRIVER_ENTRY_SYMBOL_NAME));
  EXPECT_NE(entry, nullptr) << dlerror();
  const openreg_driver_api* api = nullptr;
  if (entry == nullptr ||
      entry(OPENREG_DRIVER_ABI_VERSION_MAJOR, OPENREG_DRIVER_ABI_VERSION_MINOR,
            &api) != OPENREG_SUCCESS) {
    ADD_FAILURE() << "cannot get the table of " << path;
    return nullptr;
  }
  return api;
}

openreg_context NewContext(const openreg_driver_api* api) {
  openreg_context context = nullptr;
  EXPECT_EQ(api->context_create(nullptr, &context), OPENREG_SUCCESS)
      << api->last_error_message(nullptr);
  return context;
}

// `api` rejects `foreign`, a live context of another library.
void ExpectRejects(const openreg_driver_api* api, openreg_context foreign) {
  SCOPED_TRACE(api->driver_name);
  int32_t count = 0;
  EXPECT_EQ(api->get_device_count(foreign, &count),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api->last_error_message(foreign))
                .find("belongs to another driver library"),
            std::string::npos)
      << api->last_error_message(foreign);
  openreg_stream stream = nullptr;
  EXPECT_EQ(api->stream_create(foreign, 0, 0, &stream),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(api->context_destroy(foreign), OPENREG_ERROR_INVALID_ARGUMENT);
}

TEST(ForeignContextTest, EachLibraryRejectsTheOthersContexts) {
  const openreg_driver_api* cpu_sim = Load(kCpuSimPath);
  const openreg_driver_api* threaded_sim = Load(kThreadedSimPath);
  ASSERT_NE(cpu_sim, nullptr);
  ASSERT_NE(threaded_sim, nullptr);
  // Several each, made in the same order, so that handles drawn from
  // per-library counters would coincide.
  openreg_context of_cpu_sim[3];
  openreg_context of_threaded_sim[3];
  for (int i = 0; i < 3; ++i) {
    of_cpu_sim[i] = NewContext(cpu_sim);
    of_threaded_sim[i] = NewContext(threaded_sim);
  }
  for (int i = 0; i < 3; ++i) {
    ExpectRejects(cpu_sim, of_threaded_sim[i]);
    ExpectRejects(threaded_sim, of_cpu_sim[i]);
    // Each still works with its own library.
    int32_t count = 0;
    EXPECT_EQ(cpu_sim->get_device_count(of_cpu_sim[i], &count),
              OPENREG_SUCCESS);
    EXPECT_EQ(threaded_sim->get_device_count(of_threaded_sim[i], &count),
              OPENREG_SUCCESS);
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(cpu_sim->context_destroy(of_cpu_sim[i]), OPENREG_SUCCESS);
    EXPECT_EQ(threaded_sim->context_destroy(of_threaded_sim[i]),
              OPENREG_SUCCESS);
  }
}

}  // namespace
