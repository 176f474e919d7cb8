#include "core/runtime/runtime.h"

#include <pthread.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/driver/driver_paths.h"

namespace openreg {
namespace {

absl::Mutex package_directory_mutex;
std::string& PackageDriverDirectory() {
  static std::string* directory = new std::string();  // never destroyed
  return *directory;
}

std::atomic<bool> initialized{false};
std::atomic<bool> in_bad_fork{false};

absl::Status BadForkError() {
  return absl::FailedPreconditionError(
      "openreg cannot be used in a process forked after the parent "
      "initialized it: the driver's threads and state do not survive fork(). "
      "To use openreg in subprocesses, use the 'spawn' start method "
      "(multiprocessing.set_start_method('spawn') or "
      "torch.multiprocessing.get_context('spawn')), or do not use the device "
      "in the parent before forking.");
}

}  // namespace

void Runtime::MarkChildAsBadFork() {
  in_bad_fork.store(true);
  started_.store(nullptr);
}

void Runtime::SetPackageDriverDirectory(std::string directory) {
  absl::MutexLock lock(&package_directory_mutex);
  PackageDriverDirectory() = std::move(directory);
}

std::vector<std::string> Runtime::DriverSearchDirectories(
    const RuntimeConfig& config) {
  std::vector<std::string> directories;
  {
    absl::MutexLock lock(&package_directory_mutex);
    if (!PackageDriverDirectory().empty()) {
      directories.push_back(PackageDriverDirectory());
    }
  }
  directories.insert(directories.end(), config.extra_driver_dirs.begin(),
                     config.extra_driver_dirs.end());
  return directories;
}

absl::StatusOr<Runtime*> Runtime::Get() {
  if (in_bad_fork.load()) return BadForkError();
  // A function-local static gives thread-safe once-only creation; the result
  // (runtime or error) is kept for the life of the process.
  static const absl::StatusOr<Runtime*>* runtime =
      new absl::StatusOr<Runtime*>(Create());
  return *runtime;
}

bool Runtime::IsInitialized() {
  return initialized.load() && !in_bad_fork.load();
}

bool Runtime::InBadFork() { return in_bad_fork.load(); }

absl::StatusOr<Runtime*> Runtime::Create() {
#ifdef NDEBUG
  // Debian builds abseil with mutex deadlock detection on: a graph lookup on
  // every lock, a third of a cached allocation's cost. Release builds turn it
  // off before any driver thread exists; debug and sanitizer builds keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  absl::StatusOr<RuntimeConfig> config = RuntimeConfigFromEnvironment();
  if (!config.ok()) return config.status();
  absl::StatusOr<std::string> path =
      ResolveDriverPath(config->driver_spec, DriverSearchDirectories(*config));
  if (!path.ok()) return path.status();
  DriverConfig driver_config;
  driver_config.device_count = config->device_count;
  driver_config.device_memory_bytes = config->device_memory_bytes;
  driver_config.options = config->driver_options;
  driver_config.validation = config->driver_validation;
  absl::StatusOr<std::unique_ptr<Driver>> driver =
      Driver::Load(*path, driver_config);
  if (!driver.ok()) return driver.status();
  absl::StatusOr<int32_t> count = (*driver)->DeviceCount();
  if (!count.ok()) return count.status();
  if (*count < 1 || *count > kMaxDeviceCount) {
    return absl::FailedPreconditionError(absl::StrCat(
        "openreg driver '", (*driver)->name(), "' reports ", *count,
        " devices; expected 1 to ", kMaxDeviceCount, "."));
  }
  // Asked once: the ABI keeps a device's offset constant, and every kernel
  // launch reads it (docs/memory.md, "Device memory the host cannot touch").
  std::vector<intptr_t> execution_offsets(*count);
  for (int32_t device = 0; device < *count; ++device) {
    absl::StatusOr<intptr_t> offset = (*driver)->DeviceExecutionOffset(device);
    if (!offset.ok()) return offset.status();
    execution_offsets[device] = *offset;
  }
  Runtime* runtime = new Runtime(*std::move(config), *std::move(driver), *count,
                                 std::move(execution_offsets));
  initialized.store(true);
  started_.store(runtime, std::memory_order_release);
  // Registered only once the driver runs: a child forked before that may
  // start its own runtime.
  pthread_atfork(nullptr, nullptr, &MarkChildAsBadFork);
  return runtime;
}

Runtime::Runtime(RuntimeConfig config, std::unique_ptr<Driver> driver,
                 int32_t device_count, std::vector<intptr_t> execution_offsets)
    : config_(std::move(config)),
      driver_(std::move(driver)),
      device_count_(device_count),
      execution_offsets_(std::move(execution_offsets)),
      streams_(*driver_, device_count),
      device_memory_(*driver_, device_count, config_.allocator),
      pinned_memory_(*driver_),
      device_used_(new std::atomic<bool>[device_count]) {
  for (int32_t i = 0; i < device_count; ++i) device_used_[i].store(false);
}

absl::Status Runtime::CheckDevice(int64_t device) const {
  if (device >= 0 && device < device_count_) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat(
      "openreg device index ", device, " is out of range: there ",
      device_count_ == 1 ? "is 1 device" : absl::StrCat("are ", device_count_, " devices"),
      ", so valid indices are 0 to ", device_count_ - 1,
      ". Use a valid index, or set OPENREG_DEVICE_COUNT before the first "
      "use of the device to have more."));
}

bool Runtime::HasPrimaryContext(int32_t device) const {
  return device >= 0 && device < device_count_ && device_used_[device].load();
}

void Runtime::MarkDeviceUsed(int32_t device) {
  // Every allocation calls this: a load, not a locked store, once set.
  if (device >= 0 && device < device_count_ &&
      !device_used_[device].load(std::memory_order_relaxed)) {
    device_used_[device].store(true);
  }
}

}  // namespace openreg
