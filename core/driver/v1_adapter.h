// V1Adapter: runs a driver written for ABI major 1 (openreg_driver_v1.h)
// behind an ABI 2.0 table, so the rest of the core knows only 2.0.
//
// A 1.x driver has one process-wide instance between `init` and `shutdown`,
// so the adapter gives out one context at a time per 1.x driver (keyed by
// its table, so loading the same library twice does not get around it):
// CreateContext calls `init`, the table's context_destroy calls `shutdown`,
// and a second CreateContext while a context lives fails with NOT_SUPPORTED
// naming the driver and its ABI version. Every other function of the table
// forwards to the 1.x function of the same name, dropping the context. A 1.x
// driver's own statuses pass through unchanged.
//
// A context is a number, never reused and never a pointer, that every
// function looks up in the adapter's registry of live contexts before
// anything else: a NULL, destroyed or made-up context is INVALID_ARGUMENT, as
// the ABI requires, and never reaches the 1.x driver (which would answer
// NOT_INITIALIZED after its shutdown). The number names one of 64 slots and a
// generation never used before; the lookup compares it with the slot's, so
// it costs two loads and no lock. 64 1.x drivers can have a context at once;
// one more is NOT_SUPPORTED, saying so.
//
// stream_get_priority, optional in 1.1, is NOT_SUPPORTED with a message
// naming the driver and that it needs ABI 1.1 when the 1.x table lacks it.
//
// Messages: the adapter's own failures (a context not live, second context,
// missing stream_get_priority) and a failed `init` keep their message per
// thread in the adapter, so last_error_message works with a context and with
// NULL after a failed CreateContext; for every other failure it returns the
// 1.x driver's last_error_message().
//
// Ownership: the 1.x table (and the library holding it) must outlive the
// adapter, and every context must be destroyed before the adapter dies.
// Thread-safety: as the ABI's. The registry has a process-wide mutex, taken
// by creating and destroying contexts and never held while the 1.x driver
// runs; the lookup that starts every function reads its slots' atomics
// without it.
#ifndef OPENREG_CORE_DRIVER_V1_ADAPTER_H_
#define OPENREG_CORE_DRIVER_V1_ADAPTER_H_

#include <string>

#include "driver_abi/openreg_driver.h"
#include "driver_abi/openreg_driver_v1.h"

namespace openreg {

class V1Adapter {
 public:
  // `driver` is a 1.x table that passed ValidateDriverApi.
  explicit V1Adapter(const openreg_driver_api_v1& driver);
  V1Adapter(const V1Adapter&) = delete;
  V1Adapter& operator=(const V1Adapter&) = delete;

  // The 2.0 table. Its context_create entry fails with NOT_SUPPORTED (a C
  // function cannot know which 1.x driver to adapt); use CreateContext.
  const openreg_driver_api& api() const { return table_; }

  // Initializes the 1.x driver and returns the context standing for its one
  // instance.
  openreg_status CreateContext(const openreg_driver_config* config,
                               openreg_context* context) const;

 private:
  friend struct V1Calls;

  // Identifies the 1.x driver's instance (see the header comment).
  const openreg_driver_api_v1* const driver_table_;
  // The 1.x table's fields that its struct_size covers; the rest NULL.
  const openreg_driver_api_v1 driver_;
  // Why stream_get_priority is not supported; empty when it is.
  const std::string missing_priority_message_;
  const openreg_driver_api table_;
};

}  // namespace openreg

#endif  // OPENREG_CORE_DRIVER_V1_ADAPTER_H_
