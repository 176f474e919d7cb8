#include "plugins/threaded_sim/adversarial_delay.h"

namespace openreg::threaded_sim {
namespace {

// SplitMix64: a small, well-mixed generator whose whole state is one word,
// so a seed per stream is cheap and reproducible.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

AdversarialDelay::AdversarialDelay(const DriverOptions& options,
                                   int32_t device, uint64_t stream_number)
    : enabled_(options.adversarial && options.adversarial_max_delay_us > 0),
      max_delay_us_(static_cast<uint64_t>(options.adversarial_max_delay_us)),
      state_(options.adversarial_seed) {
  // Mix the stream's identity into the seed, so streams get different
  // sequences that still depend only on the seed.
  uint64_t mixer = static_cast<uint64_t>(device) << 32 ^ stream_number;
  state_ ^= SplitMix64(mixer);
}

absl::Duration AdversarialDelay::Next() {
  if (!enabled_) return absl::ZeroDuration();
  const uint64_t micros = SplitMix64(state_) % (max_delay_us_ + 1);
  return absl::Microseconds(static_cast<int64_t>(micros));
}

}  // namespace openreg::threaded_sim
