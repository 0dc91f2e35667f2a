#ifndef PSTRAIN_COMMON_CONFIG_PASS_MODE_H_
#define PSTRAIN_COMMON_CONFIG_PASS_MODE_H_

// What a pass over examples is for, wherever that changes what is done:
// the model's forward pass (dropout), the data's defaults (shuffling, the
// split a source reads) and which of a job's data specs is read. One
// spelling for train versus eval, so no call site passes a bare bool of
// either polarity. Not a job's state (server/coordinator/job_phase.h).
//
//   OpenExampleSource(spec.eval_data(), PassMode::kEval);
//   model.Forward(view, batch, PassMode::kTrain, &output);

namespace pstrain {

enum class PassMode {
  kTrain,  // dropout on; shuffled; the train split by default
  kEval,   // dropout off, deterministic; in order; the test split by default
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_PASS_MODE_H_
