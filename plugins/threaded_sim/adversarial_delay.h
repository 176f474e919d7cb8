// Note [Adversarial mode]
// Option adversarial=1 makes every work item of every stream wait a
// pseudo-random time, uniform in [0, adversarial_max_delay_us], before it
// runs (after it got its execution slot, so the delay behaves like a slow
// kernel). A program that reads a result without the synchronization that
// orders it after the producing work then sees stale data almost every time,
// instead of only under rare timings. The delays of a stream are a fixed
// sequence determined by (adversarial_seed, device, the stream's creation
// number on that device), so a failing run can be repeated with the same
// seed; thread scheduling still varies around those delays.
//
// Thread-safety: an AdversarialDelay belongs to one stream and is used only
// by that stream's worker thread.
#ifndef OPENREG_PLUGINS_THREADED_SIM_ADVERSARIAL_DELAY_H_
#define OPENREG_PLUGINS_THREADED_SIM_ADVERSARIAL_DELAY_H_

#include <cstdint>

#include "absl/time/time.h"
#include "plugins/threaded_sim/options.h"

namespace openreg::threaded_sim {

class AdversarialDelay {
 public:
  // Every delay is zero unless options.adversarial is set.
  AdversarialDelay(const DriverOptions& options, int32_t device,
                   uint64_t stream_number);

  // The delay before the stream's next work item.
  absl::Duration Next();

 private:
  const bool enabled_;
  const uint64_t max_delay_us_;
  uint64_t state_;
};

}  // namespace openreg::threaded_sim

#endif  // OPENREG_PLUGINS_THREADED_SIM_ADVERSARIAL_DELAY_H_
