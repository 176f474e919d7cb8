#include "tests/conformance/gate.h"

namespace openreg::conformance {

Gate::~Gate() {
  std::unique_lock<std::mutex> lock(mu_);
  open_ = true;
  changed_.notify_all();
  changed_.wait_for(lock, kSafetyTimeout,
                    [this] { return !launched_ || finished_.load(); });
}

openreg_status Gate::Launch(const openreg_driver_api* api,
                            openreg_context context, openreg_stream stream) {
  launcher_ = std::this_thread::get_id();
  const openreg_status status =
      api->launch_host_func(context, stream, &Gate::Run, this);
  std::lock_guard<std::mutex> lock(mu_);
  launched_ = status == OPENREG_SUCCESS;
  return status;
}

void Gate::Open() {
  std::lock_guard<std::mutex> lock(mu_);
  open_ = true;
  changed_.notify_all();
}

bool Gate::AwaitStarted(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, timeout, [this] { return started_.load(); });
}

openreg_status Gate::Run(void* user_data) {
  auto* gate = static_cast<Gate*>(user_data);
  std::unique_lock<std::mutex> lock(gate->mu_);
  gate->started_ = true;
  gate->changed_.notify_all();
  openreg_status status = OPENREG_SUCCESS;
  if (std::this_thread::get_id() == gate->launcher_) {
    gate->ran_inline_ = true;
  } else if (!gate->changed_.wait_for(lock, kSafetyTimeout,
                                      [gate] { return gate->open_; })) {
    status = OPENREG_ERROR_INTERNAL;
  }
  gate->finished_ = true;
  gate->changed_.notify_all();
  return status;
}

}  // namespace openreg::conformance
