#include "common/data/fashion_mnist.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/data/file_contents.h"

namespace pstrain {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension
constexpr int kNumClasses = 10;

uint32_t BigEndian32(absl::string_view bytes, size_t offset) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + offset);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

absl::Status Malformed(absl::string_view file, size_t offset, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": offset ", offset, ": ", reason));
}

// Checks the magic number and reads `num_dims` dimensions; returns the
// element count after checking that exactly that many bytes follow.
absl::StatusOr<int64_t> ParseHeader(absl::string_view bytes, absl::string_view file, uint32_t magic,
                                    int num_dims, std::vector<int64_t>* dims) {
  const size_t header = 4 + 4 * static_cast<size_t>(num_dims);
  if (bytes.size() < header) {
    return Malformed(file, bytes.size(),
                     absl::StrCat("truncated header: ", bytes.size(), " bytes, need ", header));
  }
  const uint32_t found = BigEndian32(bytes, 0);
  if (found != magic) {
    return Malformed(file, 0,
                     absl::StrCat("bad magic number 0x", absl::Hex(found, absl::kZeroPad8),
                                  ", expected 0x", absl::Hex(magic, absl::kZeroPad8)));
  }
  int64_t count = 1;
  for (int i = 0; i < num_dims; ++i) {
    const int64_t dim = BigEndian32(bytes, 4 + 4 * i);
    if (dim == 0) return Malformed(file, 4 + 4 * i, absl::StrCat("dimension ", i, " is 0"));
    dims->push_back(dim);
    count *= dim;  // at most three 32-bit dims of bytes already in memory
    if (count > static_cast<int64_t>(bytes.size())) break;
  }
  const int64_t available = static_cast<int64_t>(bytes.size() - header);
  if (count > available) {
    return Malformed(file, bytes.size(),
                     absl::StrCat("truncated: the header promises ", count, " data bytes, ",
                                  available, " present"));
  }
  if (count < available) {
    return Malformed(file, header + count,
                     absl::StrCat(available - count, " trailing bytes after the data"));
  }
  return count;
}

}  // namespace

absl::StatusOr<IdxImages> ParseIdxImages(ByteBuffer bytes, absl::string_view file) {
  std::vector<int64_t> dims;
  absl::StatusOr<int64_t> count = ParseHeader(bytes.view(), file, kImagesMagic, 3, &dims);
  if (!count.ok()) return count.status();
  IdxImages images;
  images.count = dims[0];
  images.rows = dims[1];
  images.cols = dims[2];
  bytes.RemovePrefix(16);
  images.pixels = std::move(bytes);
  return images;
}

absl::StatusOr<std::vector<uint8_t>> ParseIdxLabels(absl::string_view bytes,
                                                    absl::string_view file) {
  std::vector<int64_t> dims;
  absl::StatusOr<int64_t> count = ParseHeader(bytes, file, kLabelsMagic, 1, &dims);
  if (!count.ok()) return count.status();
  return std::vector<uint8_t>(bytes.begin() + 8, bytes.end());
}

absl::StatusOr<std::unique_ptr<InMemorySource>> LoadFashionMnist(absl::string_view dir, bool test) {
  const absl::string_view prefix = test ? "t10k" : "train";
  const std::string images_file = absl::StrCat(dir, "/", prefix, "-images-idx3-ubyte.gz");
  const std::string labels_file = absl::StrCat(dir, "/", prefix, "-labels-idx1-ubyte.gz");

  absl::StatusOr<ByteBuffer> image_bytes = ReadFileContents(images_file);
  if (!image_bytes.ok()) return image_bytes.status();
  absl::StatusOr<IdxImages> images = ParseIdxImages(*std::move(image_bytes), images_file);
  if (!images.ok()) return images.status();

  absl::StatusOr<ByteBuffer> label_bytes = ReadFileContents(labels_file);
  if (!label_bytes.ok()) return label_bytes.status();
  absl::StatusOr<std::vector<uint8_t>> labels = ParseIdxLabels(label_bytes->view(), labels_file);
  if (!labels.ok()) return labels.status();

  if (static_cast<int64_t>(labels->size()) != images->count) {
    return absl::InvalidArgumentError(absl::StrCat(labels_file, ": ", labels->size(),
                                                   " labels for ", images->count, " images in ",
                                                   images_file));
  }
  InMemorySource::Examples examples;
  examples.num_examples = images->count;
  examples.labels.reserve(labels->size());
  for (size_t i = 0; i < labels->size(); ++i) {
    if ((*labels)[i] >= kNumClasses) {
      return Malformed(labels_file, 8 + i,
                       absl::StrCat("label ", int{(*labels)[i]}, " is not a class id 0-9"));
    }
    examples.labels.push_back((*labels)[i]);
  }
  examples.dense_dim = images->rows * images->cols;
  examples.image_height = images->rows;
  examples.image_width = images->cols;
  examples.image_channels = 1;
  examples.dense_bytes = std::move(images->pixels);
  examples.byte_scale = 1.0f / 255.0f;
  return InMemorySource::Create(std::move(examples));
}

}  // namespace pstrain
