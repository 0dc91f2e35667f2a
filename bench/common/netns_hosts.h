#ifndef PSTRAIN_BENCH_COMMON_NETNS_HOSTS_H_
#define PSTRAIN_BENCH_COMMON_NETNS_HOSTS_H_

// The hosts scripts/netns_hosts.sh made on this machine (network
// namespaces behind one bridge), as the multi-host test and the links
// benchmark drive them: links cut, mended or shaped, and a cluster's tasks
// placed one per host.

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/local_cluster.h"

namespace pstrain {

class NetnsHosts {
 public:
  // `script` is netns_hosts.sh; `prefix` the one its `up` was given.
  NetnsHosts(std::string script, std::string prefix)
      : script_(std::move(script)), prefix_(std::move(prefix)) {}

  // Runs `netns_hosts.sh COMMAND PREFIX ARGS...` (cut HOST, mend HOST,
  // shape RATE) and waits for it, a minute at most. Internal, naming the
  // command, when it fails.
  absl::Status Run(const std::string& command, const std::vector<std::string>& args) const;

  // Each task of a cluster on a host of its own, as LocalClusterOptions::
  // hosts takes it: coordinator/0 on chief-0, ps/i on ps-i, worker/i on
  // worker-i, evaluator/0 on evaluator-0 (hosts `up` must have made), each
  // named pstrain-<host>.pstrain.svc.
  std::map<std::string, TaskHost> OnePerHost(int num_ps, int num_workers) const;

 private:
  std::string script_;
  std::string prefix_;
};

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMMON_NETNS_HOSTS_H_
