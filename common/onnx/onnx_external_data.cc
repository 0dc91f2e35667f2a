#include "common/onnx/onnx_external_data.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/checkpoint/file_path.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

absl::StatusOr<int64_t> ParseByteCount(const onnx::StringStringEntryProto& entry,
                                       const std::string& what) {
  int64_t count = 0;
  if (!absl::SimpleAtoi(entry.value(), &count) || count < 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": its external data ", entry.key(), " '",
                                                   entry.value(),
                                                   "' is not a non-negative integer"));
  }
  return count;
}

}  // namespace

absl::StatusOr<OnnxExternalLocation> ParseOnnxExternalLocation(const onnx::TensorProto& tensor,
                                                               const std::string& what) {
  OnnxExternalLocation where;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      where.location = entry.value();
    } else if (entry.key() == "offset") {
      ASSIGN_OR_RETURN(where.offset, ParseByteCount(entry, what));
    } else if (entry.key() == "length") {
      ASSIGN_OR_RETURN(where.length, ParseByteCount(entry, what));
    } else if (entry.key() != "checksum") {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": its external data has an entry '", entry.key(),
                       "', which ONNX does not define (location, offset, length, checksum)"));
    }
  }
  if (where.location.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " keeps its data in an external file but names none (no location)"));
  }
  if (where.location.front() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": its external data file ", where.location,
                     " is an absolute path; it must be relative to the model's folder"));
  }
  for (absl::string_view component : absl::StrSplit(where.location, '/')) {
    if (component == ".." || component.find('\0') != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": its external data file ", where.location,
          " leaves the model's folder; it must lie inside it, with no '..' and no NUL"));
    }
  }
  return where;
}

void SetOnnxExternalLocation(const OnnxExternalLocation& where, onnx::TensorProto* tensor) {
  tensor->clear_raw_data();
  tensor->clear_external_data();
  tensor->set_data_location(onnx::TensorProto::EXTERNAL);
  std::vector<std::pair<const char*, std::string>> entries = {
      {"location", where.location}, {"offset", absl::StrCat(where.offset)}};
  if (where.length >= 0) entries.emplace_back("length", absl::StrCat(where.length));
  for (auto& [key, value] : entries) {
    onnx::StringStringEntryProto* entry = tensor->add_external_data();
    entry->set_key(key);
    entry->set_value(std::move(value));
  }
}

absl::StatusOr<std::string> ReadOnnxExternalData(Env& env, const std::string& model_folder,
                                                 const onnx::TensorProto& tensor, int64_t bytes,
                                                 const std::string& what) {
  ASSIGN_OR_RETURN(const OnnxExternalLocation where, ParseOnnxExternalLocation(tensor, what));
  const std::string path = JoinPath(model_folder, where.location);
  auto failed = [&](const absl::Status& status) {
    return absl::Status(status.code(),
                        absl::StrCat(what, ": its external data: ", status.message()));
  };
  // Opened first: a link to nothing is NotFound here, where Stat would
  // describe it as empty.
  absl::StatusOr<std::unique_ptr<SequentialFile>> file = env.NewSequentialFile(path);
  if (!file.ok()) return failed(file.status());
  absl::StatusOr<FileInfo> info = env.Stat(path);
  if (!info.ok()) return failed(info.status());
  if (info->is_directory) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": its external data file ", path, " is a folder"));
  }
  if (where.length >= 0 && where.length != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": its external data is ", where.length,
                                                   " bytes long; its dims and type take ", bytes));
  }
  if (where.offset > info->size || info->size - where.offset < bytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": its external data file ", path, " has ",
                                                   info->size, " bytes, too few for ", bytes,
                                                   " from offset ", where.offset));
  }
  if (where.length < 0 && info->size - where.offset != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": its external data runs from offset ", where.offset, " to the end of ", path, ", ",
        info->size - where.offset, " bytes; its dims and type take ", bytes));
  }
  if (absl::Status skipped = (*file)->Skip(where.offset); !skipped.ok()) return failed(skipped);
  std::string data(static_cast<size_t>(bytes), '\0');
  for (size_t got = 0; got < data.size();) {
    absl::StatusOr<absl::string_view> piece = (*file)->Read(data.size() - got, &data[got]);
    if (!piece.ok()) return failed(piece.status());
    if (piece->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": its external data file ", path,
                                                     " ended after ", where.offset + got,
                                                     " bytes while it was read"));
    }
    got += piece->size();
  }
  return data;
}

}  // namespace pstrain
