#include "common/data/tfrecord_reader.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/data/file_patterns.h"
#include "common/data/tf_example_decoder.h"
#include "common/data/tfrecord_file.h"
#include "common/status/status_macros.h"
#include "common/summary/record_writer.h"

namespace pstrain {
namespace {

// Makes room in *examples for the records `bytes` of files hold, judged by
// the first record (`record_bytes` long): growing by doubling instead
// copies the dense features again and again, and faults in fresh pages.
void ReserveFor(int64_t bytes, size_t record_bytes, InMemorySource::Examples* examples) {
  const int64_t records =
      bytes / static_cast<int64_t>(record_bytes + kRecordHeaderBytes + kRecordFooterBytes) + 1;
  examples->dense_floats.reserve(static_cast<size_t>(records * examples->dense_dim));
  examples->labels.reserve(static_cast<size_t>(records));
}

// Appends the examples of the records of `path`; `bytes` is the size of it
// and the files after it.
absl::Status ReadFile(Env& env, const std::string& path, int64_t bytes, const TfRecordSource& spec,
                      TfExampleDecoder& decoder, InMemorySource::Examples* examples) {
  ASSIGN_OR_RETURN(const bool gzip, IsGzippedTfRecord(env, path, spec.compression()));
  return ForEachTfRecord(
      env, path, gzip, TfRecordSpan{},
      [&](absl::string_view record, int64_t index, int64_t offset) -> absl::Status {
        RETURN_IF_ERROR(decoder.Append(record, examples));
        examples->label_places.Saw(examples->labels.back(), [&] {
          return absl::StrCat(path, ": record ", index, " at offset ", offset);
        });
        if (examples->num_examples == 1) {
          ReserveFor(bytes, record.size(), examples);
        }
        return absl::OkStatus();
      });
}

}  // namespace

absl::StatusOr<std::unique_ptr<InMemorySource>> LoadTfRecord(Env& env, const TfRecordSource& spec) {
  const std::vector<std::string> patterns(spec.paths().begin(), spec.paths().end());
  ASSIGN_OR_RETURN(const std::vector<std::string> files, ExpandFilePatterns(patterns));
  // Bytes from each file to the end of the list.
  std::vector<int64_t> bytes_from(files.size() + 1, 0);
  for (size_t i = files.size(); i-- > 0;) {
    absl::StatusOr<FileInfo> info = env.Stat(files[i]);
    bytes_from[i] = bytes_from[i + 1] + (info.ok() ? info->size : 0);
  }
  TfExampleDecoder decoder(spec);
  InMemorySource::Examples examples;
  for (size_t i = 0; i < files.size(); ++i) {
    RETURN_IF_ERROR(ReadFile(env, files[i], bytes_from[i], spec, decoder, &examples));
  }
  if (examples.num_examples == 0) {
    return absl::InvalidArgumentError(absl::StrCat("tfrecord: no records in ", files.size(),
                                                   " file(s): ", files.front(),
                                                   files.size() > 1 ? ", ..." : ""));
  }
  decoder.Finish(&examples);
  return InMemorySource::Create(std::move(examples));
}

}  // namespace pstrain
