// DriverLibrary: a dlopen()ed driver whose function table passed validation,
// presented as an ABI 2.0 table whatever major version the driver implements.
//
// A 2.0 driver's own table is used as is. A 1.x driver's table
// (driver_abi/openreg_driver_v1.h) is adapted (core/driver/v1_adapter.h)
// behind 2.0 contexts; a 1.x driver has one process-wide instance, so its
// adapter allows one context at a time (a second CreateContext fails with
// NOT_SUPPORTED naming the driver and its ABI version).
//
// Ownership: the library is shared (shared_ptr) by everything that uses it;
// it is dlclose()d when the last owner lets go, so every holder of a context
// of it must also hold the library. Contexts are owned by whoever created
// them and destroyed through api().context_destroy.
//
// Thread-safety: immutable after Load; every method may be called from any
// thread. The table's own thread-safety is the ABI's (openreg_driver.h).
#ifndef OPENREG_CORE_DRIVER_DRIVER_LIBRARY_H_
#define OPENREG_CORE_DRIVER_DRIVER_LIBRARY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/driver/driver_paths.h"
#include "driver_abi/openreg_driver.h"

namespace openreg {

class V1Adapter;

class DriverLibrary {
 public:
  // dlopen()s `path`, calls its entry symbol and validates the table
  // (ValidateDriverApi). A library that fails is dlclose()d again.
  static absl::StatusOr<std::shared_ptr<const DriverLibrary>> Load(
      const std::string& path);

  ~DriverLibrary();
  DriverLibrary(const DriverLibrary&) = delete;
  DriverLibrary& operator=(const DriverLibrary&) = delete;

  // The 2.0 table to call: the driver's, or the adapter's for a 1.x driver.
  // Valid for the life of the library.
  const openreg_driver_api& api() const { return *api_; }

  // Creates a context: api().context_create for a 2.0 driver, the adapter's
  // creation for a 1.x driver (a plain C table cannot know which 1.x library
  // to adapt, so the adapter table's own context_create entry fails with
  // NOT_SUPPORTED and says to use this). On failure the message is
  // api().last_error_message(nullptr).
  openreg_status CreateContext(const openreg_driver_config* config,
                               openreg_context* context) const;

  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  // The ABI version the driver itself implements (1.x for an adapted one).
  uint32_t abi_version_major() const { return abi_version_major_; }
  uint32_t abi_version_minor() const { return abi_version_minor_; }

 private:
  DriverLibrary(void* handle, std::string path,
                const openreg_driver_api_prefix& prefix);

  void* handle_;
  std::string path_;
  std::string name_;
  std::string version_;
  uint32_t abi_version_major_;
  uint32_t abi_version_minor_;
  // Set for a 1.x driver only; owns the table api_ points to then.
  std::unique_ptr<V1Adapter> adapter_;
  const openreg_driver_api* api_ = nullptr;
};

// Checks a table returned by a driver's entry point, of any major version:
// major 2 (this core's) or 1 (adapted), each against its own rules: a struct
// at least as large as the first version of its major and as the minor
// version it reports, every required function present (each missing one
// named), and sane name and version strings. Any other major is refused,
// naming both versions. Optional functions of later minor versions may be
// absent.
absl::Status ValidateDriverApi(const openreg_driver_api_prefix* api,
                               absl::string_view path);

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_DRIVER_LIBRARY_H_
