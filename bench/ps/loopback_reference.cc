#include "bench/ps/loopback_reference.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "glog/logging.h"

namespace pstrain {

namespace {

// User + system time of this process so far, in seconds.
double ProcessCpuSeconds() {
  rusage usage{};
  CHECK_EQ(getrusage(RUSAGE_SELF, &usage), 0);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

LoopbackTcp MeasureLoopbackTcp(int64_t total_bytes, int64_t write_bytes) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  CHECK_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  CHECK_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof(addr);
  CHECK_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);

  int64_t received = 0;
  std::thread receiver([&] {
    const int fd = accept(listener, nullptr, nullptr);
    CHECK_GE(fd, 0);
    std::vector<char> buffer(write_bytes);
    for (;;) {
      const ssize_t n = read(fd, buffer.data(), buffer.size());
      if (n <= 0) break;
      received += n;
    }
    close(fd);
  });
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  std::vector<char> buffer(write_bytes, 'x');
  const double cpu_start = ProcessCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  for (int64_t sent = 0; sent < total_bytes;) {
    const ssize_t n = write(fd, buffer.data(), buffer.size());
    CHECK_GT(n, 0);
    sent += n;
  }
  close(fd);
  receiver.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_seconds = ProcessCpuSeconds() - cpu_start;
  close(listener);
  return LoopbackTcp{static_cast<double>(received) / seconds,
                     static_cast<double>(received) / cpu_seconds};
}

double MemcpyBytesPerSecond(int64_t bytes, int repeats) {
  std::vector<char> a(bytes, 1), b(bytes, 2);
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(r % 2 ? a.data() : b.data(), r % 2 ? b.data() : a.data(), bytes);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(bytes) / s);
  }
  return best;
}

}  // namespace pstrain
