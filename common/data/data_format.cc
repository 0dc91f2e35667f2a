#include "common/data/data_format.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pstrain {
namespace {

bool Always(const DataSpec&) { return true; }
bool Never(const DataSpec&) { return false; }
bool TfRecordCarriesIds(const DataSpec& data) {
  return !data.tfrecord().sparse_features().empty();
}

bool CsvCarriesIds(const DataSpec& data) { return !data.csv().categorical().empty(); }

bool NamedLikeIdx(absl::string_view file) {
  return absl::EndsWith(file, "-ubyte") || absl::StrContains(file, ".idx");
}
bool NamedLikeCsv(absl::string_view file) { return absl::EndsWith(file, ".csv"); }
bool NamedLikeLibsvm(absl::string_view file) {
  return absl::EndsWith(file, ".svm") || absl::EndsWith(file, ".libsvm") ||
         absl::EndsWith(file, ".svmlight");
}

// One row per DataSpec source, in the proto's order.
constexpr DataFormat kDataFormats[] = {
    // source, name, streams, images, carries_ids, ids_condition, predict_name, named_like
    {DataSpec::kFashionMnist, "fashion_mnist", false, true, Never, "", "idx", NamedLikeIdx},
    {DataSpec::kCsv, "csv", true, false, CsvCarriesIds, "csv with categorical columns", "csv",
     NamedLikeCsv},
    {DataSpec::kLibsvm, "libsvm", true, false, Always, "", "libsvm", NamedLikeLibsvm},
    {DataSpec::kSyntheticClicks, "synthetic_clicks", false, false, Always, "", "", nullptr},
    {DataSpec::kTfrecord, "tfrecord", true, false, TfRecordCarriesIds,
     "tfrecord with sparse_features", "", nullptr},
    {DataSpec::kCriteo, "criteo", true, false, Always, "", "criteo", nullptr},
};

}  // namespace

absl::Span<const DataFormat> DataFormats() { return kDataFormats; }

const DataFormat* DataFormatOf(DataSpec::SourceCase source) {
  for (const DataFormat& format : kDataFormats) {
    if (format.source == source) return &format;
  }
  return nullptr;
}

std::vector<absl::string_view> DataFormatNames(bool (*pick)(const DataFormat& format)) {
  std::vector<absl::string_view> names;
  for (const DataFormat& format : kDataFormats) {
    if (pick(format)) names.push_back(format.name);
  }
  return names;
}

std::string JoinNames(absl::Span<const absl::string_view> names, absl::string_view conjunction) {
  if (names.size() <= 1) return absl::StrJoin(names, "");
  if (names.size() == 2) return absl::StrCat(names[0], " ", conjunction, " ", names[1]);
  return absl::StrCat(absl::StrJoin(names.subspan(0, names.size() - 1), ", "), ", ", conjunction,
                      " ", names.back());
}

}  // namespace pstrain
