#ifndef PSTRAIN_COMMON_DAEMON_EXIT_CODES_H_
#define PSTRAIN_COMMON_DAEMON_EXIT_CODES_H_

namespace pstrain {

// How a pstrain daemon's process ends (docs/daemons.md, "Exit codes").
// Codes 1 to 127 are final: Kubeflow's `restartPolicy: ExitCode` does not
// restart a pod that ends so. A daemon stopped by a signal before its work
// was done exits 128 + the signal, which that policy retries.
enum DaemonExitCode : int {
  // A clean shutdown; in a one-shot cluster (pstrain-coordinator --job),
  // the job SUCCEEDED.
  kDaemonExitOk = 0,
  // Serving failed (a port in use), or the daemon stopped on an error.
  kDaemonExitFailed = 1,
  // Bad flags or configuration, a one-shot job's spec among them.
  kDaemonExitBadConfiguration = 2,
  // One-shot: the job ended FAILED.
  kDaemonExitJobFailed = 3,
  // One-shot: the job was stopped (`pstrain stop`, `pstrain shutdown`)
  // before it finished.
  kDaemonExitJobStopped = 4,
  // Added to a signal's number: stopped by it before the work was done.
  kDaemonExitSignalBase = 128,
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DAEMON_EXIT_CODES_H_
