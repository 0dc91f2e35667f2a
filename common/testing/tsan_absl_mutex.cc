// ThreadSanitizer annotations for Debian's prebuilt Abseil.
//
// libabsl_synchronization is built without -fsanitize=thread, so TSan cannot
// see absl::Mutex acquire and release, and reports every access guarded by
// one as a race. Linked into a test built with -fsanitize=thread, this file
// interposes the Mutex entry points (the test's definitions win over the
// shared library's), tells TSan what they do with its mutex annotations,
// and forwards to the real ones. Without -fsanitize=thread it is empty.
//
// gRPC's libraries are not instrumented either, and their hand-offs between
// threads cannot be annotated from outside: tests that run a gRPC server
// skip themselves under ThreadSanitizer.

#if defined(__SANITIZE_THREAD__)

#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace {

template <typename Fn>
Fn Real(const char* symbol) {
  void* p = dlsym(RTLD_NEXT, symbol);
  if (p == nullptr) {
    std::fprintf(stderr, "tsan_absl_mutex: %s not found\n", symbol);
    std::abort();
  }
  return reinterpret_cast<Fn>(p);
}

using absl::Condition;
using absl::Mutex;
using absl::Time;

constexpr unsigned kRead = __tsan_mutex_read_lock;

void Acquire(void* mu, unsigned flags) {
  __tsan_mutex_pre_lock(mu, flags);
  __tsan_mutex_post_lock(mu, flags, 0);
}

void Release(void* mu, unsigned flags) {
  __tsan_mutex_pre_unlock(mu, flags);
  __tsan_mutex_post_unlock(mu, flags);
}

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

Mutex::~Mutex() {
  static auto real = Real<void (*)(Mutex*)>("_ZN4absl7debian35MutexD2Ev");
  __tsan_mutex_destroy(this, 0);
  real(this);
}

void Mutex::Lock() {
  static auto real = Real<void (*)(Mutex*)>("_ZN4absl7debian35Mutex4LockEv");
  __tsan_mutex_pre_lock(this, 0);
  real(this);
  __tsan_mutex_post_lock(this, 0, 0);
}

void Mutex::ReaderLock() {
  static auto real = Real<void (*)(Mutex*)>("_ZN4absl7debian35Mutex10ReaderLockEv");
  __tsan_mutex_pre_lock(this, kRead);
  real(this);
  __tsan_mutex_post_lock(this, kRead, 0);
}

bool Mutex::TryLock() {
  static auto real = Real<bool (*)(Mutex*)>("_ZN4absl7debian35Mutex7TryLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_try_lock);
  const bool ok = real(this);
  __tsan_mutex_post_lock(this, ok ? __tsan_mutex_try_lock : __tsan_mutex_try_lock_failed, 0);
  return ok;
}

bool Mutex::ReaderTryLock() {
  static auto real = Real<bool (*)(Mutex*)>("_ZN4absl7debian35Mutex13ReaderTryLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_try_read_lock);
  const bool ok = real(this);
  __tsan_mutex_post_lock(this, ok ? __tsan_mutex_try_read_lock : __tsan_mutex_try_read_lock_failed,
                         0);
  return ok;
}

void Mutex::Unlock() {
  static auto real = Real<void (*)(Mutex*)>("_ZN4absl7debian35Mutex6UnlockEv");
  __tsan_mutex_pre_unlock(this, 0);
  real(this);  // evaluates waiters' conditions: ignored until post_unlock
  __tsan_mutex_post_unlock(this, 0);
}

void Mutex::ReaderUnlock() {
  static auto real = Real<void (*)(Mutex*)>("_ZN4absl7debian35Mutex12ReaderUnlockEv");
  __tsan_mutex_pre_unlock(this, kRead);
  real(this);
  __tsan_mutex_post_unlock(this, kRead);
}

// Waits release the mutex, evaluate conditions (ignored, as other threads
// may evaluate them too), and return holding it again.
void Mutex::Await(const Condition& cond) {
  static auto real =
      Real<void (*)(Mutex*, const Condition&)>("_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE");
  __tsan_mutex_pre_unlock(this, 0);
  real(this, cond);
  __tsan_mutex_post_unlock(this, 0);
  Acquire(this, 0);
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, Time)>(
      "_ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  __tsan_mutex_pre_unlock(this, 0);
  const bool ok = real(this, cond, deadline);
  __tsan_mutex_post_unlock(this, 0);
  Acquire(this, 0);
  return ok;
}

void Mutex::LockWhen(const Condition& cond) {
  static auto real =
      Real<void (*)(Mutex*, const Condition&)>("_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE");
  __tsan_mutex_pre_lock(this, 0);
  real(this, cond);
  __tsan_mutex_post_lock(this, 0, 0);
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, Time)>(
      "_ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  __tsan_mutex_pre_lock(this, 0);
  const bool ok = real(this, cond, deadline);
  __tsan_mutex_post_lock(this, 0, 0);
  return ok;
}

void CondVar::Wait(Mutex* mu) {
  static auto real = Real<void (*)(CondVar*, Mutex*)>("_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE");
  Release(mu, 0);
  real(this, mu);
  Acquire(mu, 0);
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  static auto real = Real<bool (*)(CondVar*, Mutex*, Time)>(
      "_ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  Release(mu, 0);
  const bool timed_out = real(this, mu, deadline);
  Acquire(mu, 0);
  return timed_out;
}

// absl::Status shares its message between copies with a reference count
// whose last decrement happens inside the uninstrumented library: annotate
// it as a release by every owner and an acquire by the one that frees it.
void Status::UnrefNonInlined(uintptr_t rep) {
  static auto real = Real<void (*)(uintptr_t)>("_ZN4absl7debian36Status15UnrefNonInlinedEm");
  auto* r = reinterpret_cast<status_internal::StatusRep*>(rep);
  if (r->ref.load(std::memory_order_acquire) == 1) {
    __tsan_acquire(r);  // the last owner: it frees the message
  } else {
    __tsan_release(r);
  }
  real(rep);
}

ABSL_NAMESPACE_END
}  // namespace absl

#endif  // defined(__SANITIZE_THREAD__)
