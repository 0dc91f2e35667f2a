// A real Prometheus (Debian's /usr/bin/prometheus) scrapes a real local
// cluster through the committed configuration (deploy/prometheus/) and the
// file_sd targets file that LocalCluster writes, while a short job trains.
// Then: every target is up, the global step and examples/s moved, the
// job's final state is visible; every /metrics page passes `promtool check
// metrics`; and every metric the Grafana dashboard queries exists.

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/net/http_get.h"
#include "common/process/child_process.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/cluster_fixture.h"
#include "common/net/testing/reserved_port.h"

namespace pstrain {
namespace {

using ::testing::IsEmpty;
using testing_cluster::JobRecord;
using testing_cluster::TestCluster;

constexpr char kPrometheus[] = "/usr/bin/prometheus";
constexpr char kPromtool[] = "/usr/bin/promtool";

// Logistic regression on synthetic click logs: a few seconds of training,
// checkpoints and evaluations on the way.
std::string ClicksJobText() {
  testing_jobs::ClicksJob job;
  job.num_examples = 200000;
  job.max_steps = 1500;
  job.steps_per_loop = 10;
  job.checkpoint_every_steps = 500;
  return job.Text();
}

// Wide-and-deep on the same data, its embedding table dynamic with a byte
// budget small enough to evict: the parameter server's embedding series
// exist only while a job with embeddings runs.
constexpr char kEmbeddingsJob[] = R"pb(
  name: "clicks-embeddings"
  mode: JOB_MODE_TRAIN
  model {
    wide_and_deep {
      embedding { dim: 4 max_bytes_per_shard: 16384 }
      hidden_units: [ 8 ]
    }
  }
  train_data {
    synthetic_clicks { num_examples: 200000 seed: 5 }
    batch_size: 128
  }
  optimizer {
    adagrad {}
    learning_rate: 0.1
  }
  training { steps_per_loop: 10 }
  stop { max_steps: 1000 }
  checkpoint { model_dir: "clicks-embeddings" every_steps: 500 }
)pb";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

// A file of this workspace in the test's runfiles.
std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return path;
  return absl::StrCat(srcdir, "/", workspace, "/", path);
}

std::string UrlEncode(const std::string& text) {
  std::string encoded;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      encoded += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", c);
      encoded += hex;
    }
  }
  return encoded;
}

// Runs a shell command; its exit code and what it printed.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};

CommandResult RunShell(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t read;
  while ((read = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, read);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// The sample names on a /metrics page (x_bucket, x_sum, x_count for a
// histogram x), which is what PromQL selects.
std::set<std::string> SampleNames(const std::string& page) {
  std::set<std::string> names;
  for (absl::string_view line : absl::StrSplit(page, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    names.insert(std::string(line.substr(0, line.find_first_of("{ "))));
  }
  return names;
}

// The metric names a PromQL expression selects: identifiers that are not
// functions, keywords, label names or label values.
std::set<std::string> MetricNamesIn(std::string expr) {
  static const std::regex kStrings(R"("[^"]*")");
  static const std::regex kMatchers(R"(\{[^}]*\})");
  static const std::regex kRanges(R"(\[[^\]]*\])");
  static const std::regex kLabelLists(
      R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))");
  static const std::regex kIdentifier(R"([a-zA-Z_:][a-zA-Z0-9_:]*)");
  static const std::set<std::string> kKeywords = {"and", "or", "unless", "bool", "offset"};
  for (const std::regex* strip : {&kStrings, &kMatchers, &kRanges, &kLabelLists}) {
    expr = std::regex_replace(expr, *strip, " ");
  }
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), kIdentifier);
       it != std::sregex_iterator(); ++it) {
    const std::string name = it->str();
    const size_t after = it->position() + name.size();
    const size_t next = expr.find_first_not_of(' ', after);
    const bool is_call = next != std::string::npos && expr[next] == '(';
    const bool in_number = it->position() > 0 && std::isdigit(expr[it->position() - 1]);
    if (is_call || in_number || kKeywords.count(name) > 0) continue;
    names.insert(name);
  }
  return names;
}

// Every "expr" string anywhere in a JSON value.
void CollectExprs(const google::protobuf::Value& value, std::vector<std::string>* exprs) {
  if (value.has_struct_value()) {
    for (const auto& [key, field] : value.struct_value().fields()) {
      if (key == "expr" && field.has_string_value()) exprs->push_back(field.string_value());
      CollectExprs(field, exprs);
    }
  } else if (value.has_list_value()) {
    for (const google::protobuf::Value& item : value.list_value().values()) {
      CollectExprs(item, exprs);
    }
  }
}

// The names recording rules define (`record: <name>` lines).
std::set<std::string> RecordedNames(const std::string& rules) {
  std::set<std::string> names;
  for (absl::string_view line : absl::StrSplit(rules, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "- record:")) {
      names.insert(std::string(absl::StripAsciiWhitespace(line)));
    }
  }
  return names;
}

// A Prometheus server on loopback with its own storage, reading the
// committed configuration with 1 s scrapes and rule evaluations.
class PrometheusServer {
 public:
  static absl::StatusOr<std::unique_ptr<PrometheusServer>> Start(const std::string& dir,
                                                                  const std::string& targets) {
    ::mkdir(dir.c_str(), 0755);
    ::mkdir((dir + "/targets").c_str(), 0755);
    ::mkdir((dir + "/data").c_str(), 0755);
    const std::string config = ReadFile(Runfile("deploy/prometheus/prometheus.yml"));
    if (config.find("scrape_interval: 15s") == std::string::npos) {
      return absl::FailedPreconditionError("prometheus.yml has no 'scrape_interval: 15s' to speed up");
    }
    WriteFile(dir + "/prometheus.yml",
              absl::StrReplaceAll(config, {{"scrape_interval: 15s", "scrape_interval: 1s"},
                                           {"evaluation_interval: 15s", "evaluation_interval: 1s"},
                                           {"refresh_interval: 30s", "refresh_interval: 1s"}}));
    for (const char* rules : {"pstrain_recording_rules.yml", "pstrain_alerts.yml"}) {
      WriteFile(absl::StrCat(dir, "/", rules),
                ReadFile(Runfile(absl::StrCat("deploy/prometheus/", rules))));
    }
    WriteFile(dir + "/targets/local.json", ReadFile(targets));

    auto server = std::unique_ptr<PrometheusServer>(new PrometheusServer());
    // Prometheus cannot take port 0 and report what it bound, so the test
    // picks one, held until Prometheus serves on it.
    absl::StatusOr<testing_net::ReservedPort> port = testing_net::ReservedPort::OnLoopback();
    if (!port.ok()) return port.status();
    server->address_ = absl::StrCat("127.0.0.1:", port->port());
    ChildProcessOptions options;
    options.program = kPrometheus;
    options.args = {absl::StrCat("--config.file=", dir, "/prometheus.yml"),
                    absl::StrCat("--storage.tsdb.path=", dir, "/data"),
                    absl::StrCat("--web.listen-address=", server->address_),
                    "--log.level=warn"};
    options.log_path = dir + "/prometheus.log";
    absl::StatusOr<std::unique_ptr<ChildProcess>> process = ChildProcess::Start(options);
    if (!process.ok()) return process.status();
    server->process_ = *std::move(process);
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!HttpGet(server->address_, "/-/ready", absl::Seconds(2)).ok()) {
      if (server->process_->Poll().has_value() || absl::Now() > deadline) {
        return absl::UnavailableError(absl::StrCat("prometheus did not become ready; its log:\n",
                                                   ReadFile(options.log_path)));
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
    return server;
  }

  ~PrometheusServer() { process_->Stop(absl::Seconds(10)); }

  // The result vector of an instant query.
  absl::StatusOr<std::vector<google::protobuf::Value>> Query(const std::string& promql) {
    absl::StatusOr<std::string> body =
        HttpGet(address_, "/api/v1/query?query=" + UrlEncode(promql), absl::Seconds(10));
    if (!body.ok()) return body.status();
    google::protobuf::Struct answer;
    if (!google::protobuf::util::JsonStringToMessage(*body, &answer).ok() ||
        answer.fields().at("status").string_value() != "success") {
      return absl::InternalError(absl::StrCat("query ", promql, " answered: ", *body));
    }
    const google::protobuf::Value& data = answer.fields().at("data");
    std::vector<google::protobuf::Value> result;
    for (const auto& sample : data.struct_value().fields().at("result").list_value().values()) {
      result.push_back(sample);
    }
    return result;
  }

  // Every metric name Prometheus has stored, the series of a finished job
  // included.
  absl::StatusOr<std::set<std::string>> MetricNames() {
    absl::StatusOr<std::string> body =
        HttpGet(address_, "/api/v1/label/__name__/values", absl::Seconds(10));
    if (!body.ok()) return body.status();
    google::protobuf::Struct answer;
    if (!google::protobuf::util::JsonStringToMessage(*body, &answer).ok()) {
      return absl::InternalError(absl::StrCat("metric names answered: ", *body));
    }
    std::set<std::string> names;
    for (const auto& name : answer.fields().at("data").list_value().values()) {
      names.insert(name.string_value());
    }
    return names;
  }

  // Polls `promql` until it returns at least one series (scrapes and rule
  // evaluations take a second or two to catch up).
  std::vector<google::protobuf::Value> AwaitResult(const std::string& promql) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (true) {
      absl::StatusOr<std::vector<google::protobuf::Value>> result = Query(promql);
      if (result.ok() && !result->empty()) return *result;
      if (absl::Now() > deadline) {
        ADD_FAILURE() << "no result within 30 s for " << promql << ": "
                      << (result.ok() ? "empty" : result.status().ToString());
        return {};
      }
      absl::SleepFor(absl::Milliseconds(500));
    }
  }

 private:
  PrometheusServer() = default;
  std::string address_;
  std::unique_ptr<ChildProcess> process_;
};

std::string Label(const google::protobuf::Value& sample, const std::string& name) {
  const auto& labels = sample.struct_value().fields().at("metric").struct_value().fields();
  auto it = labels.find(name);
  return it == labels.end() ? "" : it->second.string_value();
}

double SampleValue(const google::protobuf::Value& sample) {
  const auto& value = sample.struct_value().fields().at("value").list_value().values();
  return std::stod(value[1].string_value());
}

TEST(PrometheusTest, APrometheusServerScrapesEveryProcessOfATrainingCluster) {
  ASSERT_EQ(::access(kPrometheus, X_OK), 0) << "install Debian's prometheus package";
  LocalClusterOptions options;
  options.num_ps = 1;
  options.num_workers = 1;
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start("prometheus", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const LocalCluster& local = (*cluster)->cluster();
  const std::string targets = ReadFile(local.prometheus_targets_path());
  for (const LocalTask& task : local.tasks()) {
    EXPECT_THAT(targets, ::testing::HasSubstr(absl::StrCat("\"", task.metrics_address, "\"")));
  }

  absl::StatusOr<std::unique_ptr<PrometheusServer>> prometheus =
      PrometheusServer::Start(testing::TempDir() + "/prometheus", local.prometheus_targets_path());
  ASSERT_TRUE(prometheus.ok()) << prometheus.status();

  // Every process is a target, scraped and up, labelled as file_sd said.
  std::vector<google::protobuf::Value> up =
      (*prometheus)->AwaitResult("count(up{job=\"pstrain\"} == 1) == " +
                                 std::to_string(local.tasks().size()));
  EXPECT_EQ(up.size(), 1u) << "not every target is up";
  std::vector<google::protobuf::Value> roles =
      (*prometheus)->AwaitResult("up{job=\"pstrain\", task_type=\"ps\", task_index=\"0\"}");
  EXPECT_EQ(roles.size(), 1u);

  absl::StatusOr<std::string> job_id = (*cluster)->Submit(ClicksJobText());
  ASSERT_TRUE(job_id.ok()) << job_id.status();
  const JobRecord job = (*cluster)->Follow(*job_id);
  ASSERT_EQ(job.final_status.state(), JOB_STATE_SUCCEEDED) << job.final_status.ShortDebugString();

  // The job's end, the step it reached and its throughput, as Prometheus
  // stored them.
  std::vector<google::protobuf::Value> ended = (*prometheus)->AwaitResult(absl::StrCat(
      "pstrain_coordinator_last_job_info{job_id=\"", *job_id,
      "\", state=\"succeeded\", stop_reason=\"max_steps\"} == 1"));
  EXPECT_EQ(ended.size(), 1u);
  // Scrapes sample the step; the last ticks before the job's end (and the
  // gauge's reset to 0 after it) may fall between two of them, so what was
  // stored is a step the job passed, not necessarily its last.
  std::vector<google::protobuf::Value> step =
      (*prometheus)->AwaitResult("max_over_time(pstrain_coordinator_global_step[10m]) > 0");
  ASSERT_EQ(step.size(), 1u);
  EXPECT_LE(SampleValue(step[0]), job.final_status.global_step());
  EXPECT_GE(job.final_status.global_step(), 1000);
  std::vector<google::protobuf::Value> steps_per_sec =
      (*prometheus)->AwaitResult("max_over_time(pstrain_coordinator_steps_per_second[10m]) > 0");
  EXPECT_EQ(steps_per_sec.size(), 1u);
  std::vector<google::protobuf::Value> examples =
      (*prometheus)->AwaitResult("max_over_time(job:pstrain_worker_examples:rate1m[10m]) > 0");
  EXPECT_EQ(examples.size(), 1u) << "the recording rule saw no examples/s";
  std::vector<google::protobuf::Value> worker_examples = (*prometheus)->AwaitResult(
      "max_over_time(pstrain_worker_examples_per_second{task_type=\"worker\"}[10m]) > 0");
  EXPECT_EQ(worker_examples.size(), 1u);
  std::vector<google::protobuf::Value> auc =
      (*prometheus)->AwaitResult("pstrain_coordinator_last_eval_metric{name=\"auc\"}");
  ASSERT_EQ(auc.size(), 1u);
  EXPECT_GT(SampleValue(auc[0]), 0.5);
  std::vector<google::protobuf::Value> checkpoints = (*prometheus)->AwaitResult(
      "pstrain_coordinator_checkpoints_total{result=\"ok\"} >= 3");
  EXPECT_EQ(checkpoints.size(), 1u);
  // Standard process metrics and build info from every process.
  std::vector<google::protobuf::Value> cpu =
      (*prometheus)->AwaitResult("count(process_cpu_seconds_total{job=\"pstrain\"})");
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(SampleValue(cpu[0]), local.tasks().size());
  std::vector<google::protobuf::Value> build =
      (*prometheus)->AwaitResult("count(pstrain_build_info{job=\"pstrain\"})");
  ASSERT_EQ(build.size(), 1u);
  EXPECT_EQ(SampleValue(build[0]), local.tasks().size());
  // A job with an embedding table: its rows and budget reach Prometheus
  // while it trains.
  absl::StatusOr<std::string> embeddings_id = (*cluster)->Submit(kEmbeddingsJob);
  ASSERT_TRUE(embeddings_id.ok()) << embeddings_id.status();
  const JobRecord embeddings = (*cluster)->Follow(*embeddings_id);
  ASSERT_EQ(embeddings.final_status.state(), JOB_STATE_SUCCEEDED)
      << embeddings.final_status.ShortDebugString();
  std::vector<google::protobuf::Value> rows =
      (*prometheus)->AwaitResult("max_over_time(pstrain_ps_embedding_rows[10m]) > 0");
  EXPECT_FALSE(rows.empty());
  std::vector<google::protobuf::Value> budget = (*prometheus)->AwaitResult(
      "max_over_time(pstrain_ps_embedding_budget_bytes[10m]) == 16384");
  EXPECT_FALSE(budget.empty());

  // No alert fires on a cluster that did its job.
  absl::StatusOr<std::vector<google::protobuf::Value>> firing =
      (*prometheus)->Query("ALERTS{alertstate=\"firing\"}");
  ASSERT_TRUE(firing.ok()) << firing.status();
  for (const google::protobuf::Value& alert : *firing) {
    ADD_FAILURE() << "alert firing: " << Label(alert, "alertname");
  }

  // What each process serves now (the series of trained jobs are there)
  // passes promtool's lint.
  for (const LocalTask& task : local.tasks()) {
    absl::StatusOr<std::string> page = HttpGet(task.metrics_address, "/metrics", absl::Seconds(10));
    ASSERT_TRUE(page.ok()) << task.name() << ": " << page.status();
    const std::string path = absl::StrCat(testing::TempDir(), "/", task.role, "-", task.index,
                                          ".metrics");
    WriteFile(path, *page);
    const CommandResult lint = RunShell(absl::StrCat(kPromtool, " check metrics < ", path));
    EXPECT_EQ(lint.exit_code, 0) << task.name() << ": " << lint.output;
    EXPECT_THAT(lint.output, IsEmpty()) << task.name() << " has metrics promtool complains about";
    EXPECT_THAT(SampleNames(*page), ::testing::Contains("process_resident_memory_bytes"))
        << task.name();
  }

  // The dashboard queries only what Prometheus stored from the cluster and
  // the recording rules.
  absl::StatusOr<std::set<std::string>> stored = (*prometheus)->MetricNames();
  ASSERT_TRUE(stored.ok()) << stored.status();
  std::set<std::string> exported = *stored;
  const std::set<std::string> recorded =
      RecordedNames(ReadFile(Runfile("deploy/prometheus/pstrain_recording_rules.yml")));
  for (const std::string& name : recorded) {
    EXPECT_EQ(exported.count(name), 1u) << "recording rule " << name << " never produced a series";
  }
  exported.insert(recorded.begin(), recorded.end());

  google::protobuf::Value dashboard;
  const std::string json = ReadFile(Runfile("deploy/grafana/pstrain_dashboard.json"));
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &dashboard).ok())
      << "the dashboard is not valid JSON";
  std::vector<std::string> exprs;
  CollectExprs(dashboard, &exprs);
  EXPECT_GE(exprs.size(), 10u);
  for (const std::string& expr : exprs) {
    const std::set<std::string> names = MetricNamesIn(expr);
    EXPECT_FALSE(names.empty()) << expr;
    for (const std::string& name : names) {
      EXPECT_EQ(exported.count(name), 1u) << "the dashboard queries " << name
                                          << ", which no process exports: " << expr;
    }
  }
}

TEST(MetricNamesInTest, LeavesOutFunctionsLabelsRangesAndNumbers) {
  EXPECT_EQ(MetricNamesIn("histogram_quantile(0.99, sum by (le, job) "
                          "(rate(pstrain_ps_push_latency_seconds_bucket{job=\"a b\"}[1m])))"),
            std::set<std::string>{"pstrain_ps_push_latency_seconds_bucket"});
  EXPECT_EQ(MetricNamesIn("time() - x_timestamp_seconds > 3600 and on (instance) y{s=\"r\"} > 0"),
            (std::set<std::string>{"x_timestamp_seconds", "y"}));
  EXPECT_EQ(MetricNamesIn("sum(job:pstrain_worker_examples:rate1m) / 1e3"),
            std::set<std::string>{"job:pstrain_worker_examples:rate1m"});
}

}  // namespace
}  // namespace pstrain
