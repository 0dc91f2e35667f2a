#ifndef PSTRAIN_CLIENT_WRITE_TFRECORD_COMMAND_H_
#define PSTRAIN_CLIENT_WRITE_TFRECORD_COMMAND_H_

#include <string>
#include <vector>

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain write-tfrecord` for the command table: its usage, help and flags.
Subcommand WriteTfRecordCommand();

// `pstrain write-tfrecord JOB.pbtxt --tfrecord_dir=DIR`: writes the job's
// train_data and eval_data as TFRecord files of tf.Example in DIR and
// prints the data specs that read them. Returns the exit code its help
// describes.
int RunWriteTfRecordCommand(const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_WRITE_TFRECORD_COMMAND_H_
