// A host function that holds its stream until the test opens it, written so
// that tests using it hold for synchronous drivers too.
//
// A synchronous driver runs a host function on the launching thread before
// the launch returns, where nothing could ever open the gate; so a gate that
// finds itself on its launching thread passes at once (ran_inline()). On an
// asynchronous driver it blocks its stream's worker until Open(), or until a
// safety timeout, after which it returns OPENREG_ERROR_INTERNAL so that a
// broken driver fails the test instead of hanging it.
//
// Tests phrase asynchronous expectations as "while the gate has not finished,
// X must hold", which is vacuous when it ran inline.
#ifndef OPENREG_TESTS_CONFORMANCE_GATE_H_
#define OPENREG_TESTS_CONFORMANCE_GATE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "driver_abi/openreg_driver.h"

namespace openreg::conformance {

class Gate {
 public:
  static constexpr std::chrono::seconds kSafetyTimeout{20};

  Gate() = default;
  // Opens the gate and waits (up to the safety timeout) for a launched gate
  // to finish, so that a test that fails half-way does not free it under a
  // worker.
  ~Gate();

  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  // launch_host_func(context, stream, Run, this) from the calling thread.
  openreg_status Launch(const openreg_driver_api* api, openreg_context context,
                        openreg_stream stream);

  void Open();
  // Blocks until the function started (true) or `timeout` passed.
  bool AwaitStarted(std::chrono::milliseconds timeout = kSafetyTimeout);

  bool started() const { return started_.load(); }
  // Set by the function just before it returns.
  bool finished() const { return finished_.load(); }
  bool ran_inline() const { return ran_inline_.load(); }

 private:
  static openreg_status Run(void* gate);

  std::thread::id launcher_;
  std::atomic<bool> started_{false};
  std::atomic<bool> finished_{false};
  std::atomic<bool> ran_inline_{false};
  std::mutex mu_;
  std::condition_variable changed_;
  bool open_ = false;      // guarded by mu_
  bool launched_ = false;  // guarded by mu_
};

}  // namespace openreg::conformance

#endif  // OPENREG_TESTS_CONFORMANCE_GATE_H_
