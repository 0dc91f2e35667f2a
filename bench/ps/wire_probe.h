#ifndef PSTRAIN_BENCH_PS_WIRE_PROBE_H_
#define PSTRAIN_BENCH_PS_WIRE_PROBE_H_

// What one worker's step costs on the wire, apart from its compute: with
// the worker's own client (worker/ps_client.h) it pushes a dense model's
// whole gradient (ParameterServerClient::Push, which waits for the shards'
// outcome) and reads the whole model back (ParameterServerClient::Pull),
// step after step, to shards that run in this process, each with its own
// store, service and gRPC server on 127.0.0.1:0, configured as pstrain-ps
// configures them. The shards apply SGD; the pulled model is checked
// against every step's update.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/tensor/tensor_shape.h"

namespace pstrain {

// The dense variables of a model, by name and shape.
struct WireModel {
  std::string label;
  std::vector<std::pair<std::string, Shape>> variables;
  int64_t bytes = 0;  // float32
};

// A model of `mb` MB (2^20 bytes) as one variable per shard, each an equal
// part.
WireModel DenseWireModel(int mb, int num_shards);

// An MLP 784-h1-...-10 (kernels and biases) with `hidden` layers.
WireModel MlpWireModel(const std::vector<int64_t>& hidden);

struct WireProbeOptions {
  // Through shared-memory lanes (measured once every lane is open), else
  // everything over the gRPC streams.
  bool shm = false;
  int64_t chunk_bytes = 1 << 20;
  int streams_per_shard = 2;
  int warmup_steps = 2;
  // Measures at least this long and this many steps.
  double seconds = 2;
  int min_steps = 3;
};

struct WireResult {
  int steps = 0;
  double seconds = 0;
  // The process's user + system time over the steps: worker and shards.
  double cpu_seconds = 0;
  int64_t bytes_per_step = 0;  // pushed + pulled
  double rate() const { return bytes_per_step * steps / seconds; }
  double step_ms() const { return seconds / steps * 1e3; }
  double cpu_ms() const { return cpu_seconds / steps * 1e3; }
  double bytes_per_cpu_second() const { return bytes_per_step * steps / cpu_seconds; }
};

// Pushes and pulls `model` with its variables placed round-robin over
// `num_shards` shards. Dies (CHECK) when a step fails or the pulled model
// is wrong: a benchmark that moved wrong bytes has measured nothing.
WireResult MeasureWire(const WireModel& model, int num_shards, const WireProbeOptions& options);

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_PS_WIRE_PROBE_H_
