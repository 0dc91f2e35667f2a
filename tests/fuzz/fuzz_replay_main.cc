// A main for fuzz targets built without libFuzzer (gcc, the normal build):
// runs every file of the given corpus folders (or the given files) through
// LLVMFuzzerTestOneInput, then spends a bounded time on simple seeded
// mutations of them, so every `bazel test` fuzzes each target briefly.
//
// Usage: <target>_test [--seconds=S] [--seed=N] [--max_len=B] PATH...
//   S: mutation time after the replay (default 5; 0: replay only).
//   N: the mutations' seed (default 1; FUZZ_SEED overrides it), so a
//      failure repeats.
//   B: the largest mutated input (default 4096).
// Files ending in ".crash" are skipped: they are inputs that still crash a
// part of the code this project has not fixed yet (see tests/fuzz/README.md).
// When an input crashes the target, its bytes are written to
// $TEST_UNDECLARED_OUTPUTS_DIR/crash-input (or ./crash-input) before the
// process dies, so the failure can be replayed by passing that file.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

// The input being run, for the crash handler.
const std::string* g_current = nullptr;
char g_crash_path[4096] = "crash-input";

void DumpCurrentInput(int signal_number) {
  if (g_current != nullptr) {
    const int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      const char* p = g_current->data();
      size_t left = g_current->size();
      while (left > 0) {
        const ssize_t n = write(fd, p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<size_t>(n);
      }
      close(fd);
    }
    static const char kMessage[] = "fuzz_replay_main: the crashing input was saved to ";
    write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    write(STDERR_FILENO, g_crash_path, strlen(g_crash_path));
    write(STDERR_FILENO, "\n", 1);
  }
  std::signal(signal_number, SIG_DFL);
  raise(signal_number);
}

void RunOne(const std::string& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  g_current = nullptr;
}

std::vector<std::string> CorpusFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path().string());
      }
    } else {
      files.push_back(path);
    }
  }
  files.erase(std::remove_if(files.begin(), files.end(),
                             [](const std::string& f) { return absl::EndsWith(f, ".crash"); }),
              files.end());
  std::sort(files.begin(), files.end());
  return files;
}

// One of libFuzzer's simpler mutations, chosen at random.
void Mutate(std::mt19937_64& random, const std::vector<std::string>& corpus, size_t max_len,
            std::string* input) {
  static const int64_t kInteresting[] = {0,  1,   -1,  0x7f, 0x80, 0xff, 0x7fff, 0xffff,
                                         64, 256, 1024, 0x7fffffff, int64_t{1} << 32,
                                         INT64_MAX, INT64_MIN};
  auto below = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(random() % n); };
  switch (random() % 7) {
    case 0:  // flip a bit
      if (!input->empty()) (*input)[below(input->size())] ^= static_cast<char>(1 << below(8));
      break;
    case 1:  // set a byte
      if (!input->empty()) (*input)[below(input->size())] = static_cast<char>(random());
      break;
    case 2:  // insert bytes
      input->insert(below(input->size() + 1), std::string(1 + below(8), static_cast<char>(random())));
      break;
    case 3: {  // erase bytes
      if (input->empty()) break;
      const size_t at = below(input->size());
      input->erase(at, 1 + below(std::min<size_t>(16, input->size() - at)));
      break;
    }
    case 4: {  // copy a piece of the input elsewhere in it
      if (input->empty()) break;
      const size_t from = below(input->size());
      const std::string piece = input->substr(from, 1 + below(32));
      input->insert(below(input->size() + 1), piece);
      break;
    }
    case 5: {  // write an interesting integer, little-endian
      const int64_t value = kInteresting[below(std::size(kInteresting))];
      const size_t width = size_t{1} << below(4);
      if (input->size() < width) break;
      const size_t at = below(input->size() - width + 1);
      std::memcpy(&(*input)[at], &value, width);
      break;
    }
    default: {  // splice with another corpus entry
      const std::string& other = corpus[below(corpus.size())];
      const size_t keep = below(input->size() + 1);
      const size_t from = below(other.size() + 1);
      *input = input->substr(0, keep) + other.substr(from);
      break;
    }
  }
  if (input->size() > max_len) input->resize(max_len);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  uint64_t seed = 1;
  size_t max_len = 4096;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    bool ok = true;
    if (absl::StartsWith(arg, "--seconds=")) {
      ok = absl::SimpleAtod(arg.substr(10), &seconds);
    } else if (absl::StartsWith(arg, "--seed=")) {
      ok = absl::SimpleAtoi(arg.substr(7), &seed);
    } else if (absl::StartsWith(arg, "--max_len=")) {
      ok = absl::SimpleAtoi(arg.substr(10), &max_len);
    } else {
      paths.push_back(arg);
    }
    if (!ok) {
      std::cerr << "bad flag: " << arg << "\n";
      return 2;
    }
  }
  if (const char* env_seed = std::getenv("FUZZ_SEED"); env_seed != nullptr) {
    if (!absl::SimpleAtoi(env_seed, &seed)) {
      std::cerr << "bad FUZZ_SEED: " << env_seed << "\n";
      return 2;
    }
  }
  if (const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR"); outputs != nullptr) {
    std::snprintf(g_crash_path, sizeof(g_crash_path), "%s/crash-input", outputs);
  }
  for (int signal_number : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    std::signal(signal_number, DumpCurrentInput);
  }
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);

  std::vector<std::string> corpus;
  for (const std::string& file : CorpusFiles(paths)) {
    std::ifstream in(file, std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::cerr << "cannot read " << file << "\n";
      return 2;
    }
  }
  if (corpus.empty()) {
    std::cerr << "no corpus files in the given paths\n";
    return 2;
  }
  for (const std::string& input : corpus) RunOne(input);
  std::cout << "replayed " << corpus.size() << " corpus inputs\n";

  std::mt19937_64 random(seed);
  const absl::Time end = absl::Now() + absl::Seconds(seconds);
  int64_t runs = 0;
  while (seconds > 0 && absl::Now() < end) {
    std::string input = corpus[random() % corpus.size()];
    const int mutations = 1 + static_cast<int>(random() % 4);
    for (int m = 0; m < mutations; ++m) Mutate(random, corpus, max_len, &input);
    RunOne(input);
    ++runs;
  }
  std::cout << "ran " << runs << " mutated inputs (seed " << seed << ")\n";
  return 0;
}
