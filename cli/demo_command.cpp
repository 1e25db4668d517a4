#include "cli/demo_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/duration_text.h"
#include "cli/query_target.h"
#include "cli/table_printer.h"
#include "cli/text_chart.h"
#include "cli/argusd_process.h"
#include "simulate/synthetic_steps.h"
#include "wire/step_sender.h"

namespace argus::cli {

namespace {

using Json = nlohmann::json;

struct DemoOptions {
  uint32_t ranks = 16;
  uint32_t steps = 50;
  int signatures = 64;
  uint32_t slow_rank = 5;
  std::string keep_dir;
};

// The argusd next to this binary, unless ARGUSD_BIN says otherwise.
std::string siblingArgusd() {
  if (const char* bin = std::getenv("ARGUSD_BIN"); bin != nullptr && *bin != '\0') return bin;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "argusd";
  return (self.parent_path() / "argusd").string();
}

// A 3-D layout for `ranks`: tensor-parallel 2, pipeline 2, the rest data-parallel.
model::RankTopology layoutOf(uint32_t rank, uint32_t ranks) {
  model::RankTopology t;
  t.rank = rank;
  t.world_size = ranks;
  t.tp_size = ranks % 2 == 0 ? 2 : 1;
  t.pp_size = ranks % (t.tp_size * 2) == 0 ? 2 : 1;
  t.dp_size = ranks / (t.tp_size * t.pp_size);
  t.tp_rank = rank % t.tp_size;
  t.pp_rank = (rank / t.tp_size) % t.pp_size;
  t.dp_rank = rank / (t.tp_size * t.pp_size);
  t.local_rank = rank % 8;
  t.device = t.local_rank;
  t.host = "node" + std::to_string(rank / 8);
  return t;
}

// Makes the slow rank's compute 30% slower from the middle of the run, so the query
// answers show something worth finding.
void slowDown(model::StepRecord& rec) {
  int64_t extra = 0;
  for (model::KernelStat& k : rec.kernels) {
    if (k.phase == model::Phase::kCommunication) continue;
    int64_t add = k.total_ns * 3 / 10;
    model::DurationHistogram scaled;
    for (const auto& b : k.hist.buckets()) {
      scaled.add(static_cast<int64_t>(model::DurationHistogram::valueOf(b.index) * 1.3), b.count);
    }
    k.hist = std::move(scaled);
    k.total_ns += add;
    extra += add;
  }
  rec.phase(model::PhaseColumn::kCompute) += extra;
  rec.iter_ns += extra;
  rec.end_ns += extra;
}

// Runs `sql` on argusd (`target`: its POST /api/v1/query); the answer's rows.
Result<Json> query(QueryTarget& target, const std::string& sql) {
  Result<std::string> answer = target.answerJson(sql, query::QueryOptions{});
  if (!answer.isOk()) return answer.status();
  Json body = Json::parse(*answer, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.contains("rows")) return Status::corruption("POST /api/v1/query: the answer has no rows");
  return body["rows"];
}

// A numeric cell (NULL as 0): uint64 ids travel as decimal strings, other numbers as numbers.
double num(const Json& cell) {
  if (cell.is_null()) return 0;
  return cell.is_string() ? std::stod(cell.get<std::string>()) : cell.get<double>();
}

// The query, as a person would type it into `argus shell`, above its answer (indented).
void printQuery(const std::string& title, const std::string& sql) {
  std::printf("\n%s:\n", title.c_str());
  for (size_t at = 0; at < sql.size();) {
    size_t end = std::min(sql.find('\n', at), sql.size());
    std::printf("  %s\n", sql.substr(at, end - at).c_str());
    at = end + 1;
  }
  std::printf("\n");
}

// Streams every rank's steps through its own StepSender, like one shim per rank.
Status streamCluster(const DemoOptions& o, uint16_t port, uint64_t* record_bytes) {
  std::vector<std::unique_ptr<wire::StepSender>> senders;
  std::vector<std::thread> threads;
  std::vector<Status> results(o.ranks);
  for (uint32_t rank = 0; rank < o.ranks; ++rank) {
    wire::StepSenderOptions so;
    so.port = port;
    so.job = "demo";
    so.topology = layoutOf(rank, o.ranks);
    so.client = "argus-demo/0.1";
    senders.push_back(std::make_unique<wire::StepSender>(so));
  }
  for (uint32_t rank = 0; rank < o.ranks; ++rank) {
    threads.emplace_back([&, rank] {
      simulate::SyntheticOptions gen_options;
      gen_options.signatures = o.signatures;
      simulate::SyntheticSteps gen(rank, gen_options);
      wire::StepSender& sender = *senders[rank];
      sender.addKernels(gen.dictionary().kernels);
      sender.addStacks(gen.dictionary().stacks);
      sender.addStrings(gen.dictionary().strings);
      for (uint32_t i = 0; i < o.steps; ++i) {
        model::StepRecord rec = gen.next();
        if (rank == o.slow_rank && i >= o.steps / 2) slowDown(rec);
        Status s = sender.send(std::move(rec));
        if (!s.isOk()) {
          results[rank] = s;
          return;
        }
      }
      results[rank] = sender.close(std::chrono::seconds(60));
    });
  }
  for (std::thread& t : threads) t.join();
  *record_bytes = 0;
  for (uint32_t rank = 0; rank < o.ranks; ++rank) {
    if (!results[rank].isOk()) return results[rank].withContext("rank " + std::to_string(rank));
    *record_bytes += senders[rank]->stats().record_bytes_sent;
  }
  return Status::ok();
}

// The slowest and the median rank's step time per step, as two sparklines on one scale: when
// the run slowed down, and whether all ranks did or a few.
Status printStepChart(QueryTarget& argusd) {
  const std::string per_step =
      "SELECT step, max(iter_ns) AS slowest, median(iter_ns) AS typical\n"
      "FROM steps WHERE job = 'demo' GROUP BY step ORDER BY step";
  Result<Json> rows = query(argusd, per_step);
  if (!rows.isOk()) return rows.status();
  if (rows->empty()) return Status::notFound("no steps stored for job 'demo'");
  std::vector<double> slowest, typical;
  for (const Json& r : *rows) slowest.push_back(num(r[1])), typical.push_back(num(r[2]));
  constexpr size_t kWidth = 64;
  const size_t per_column = columnRun(slowest.size(), kWidth);
  slowest = foldColumns(slowest, kWidth, Fold::kMax);
  typical = foldColumns(typical, kWidth, Fold::kMean);
  const double lo = std::min(*std::min_element(slowest.begin(), slowest.end()), *std::min_element(typical.begin(), typical.end()));
  const double hi = std::max(*std::max_element(slowest.begin(), slowest.end()), *std::max_element(typical.begin(), typical.end()));
  const std::string first = std::to_string(static_cast<int64_t>(num(rows->front()[0])));
  const std::string last = std::to_string(static_cast<int64_t>(num(rows->back()[0])));
  printQuery("Step time across ranks, steps " + first + "-" + last, per_step);
  std::printf("  slowest rank  %s\n  median rank   %s\n", sparkline(slowest, lo, hi).c_str(), sparkline(typical, lo, hi).c_str());
  std::printf("  (one column per %s; %s at the bottom, %s at the top)\n", per_column == 1 ? "step" : (std::to_string(per_column) + " steps").c_str(),
              formatDurationNs(lo).c_str(), formatDurationNs(hi).c_str());
  return Status::ok();
}

Status printFindings(const DemoOptions& o, uint16_t http_port) {
  Result<std::unique_ptr<QueryTarget>> argusd = QueryTarget::connect("127.0.0.1:" + std::to_string(http_port));
  if (!argusd.isOk()) return argusd.status();
  QueryTarget& target = **argusd;
  if (Status s = printStepChart(target); !s.isOk()) return s;
  // Per-rank means over the second half of the run: the slow rank stands out.
  const uint32_t half = o.steps / 2;
  const std::string slowest =
      "SELECT rank, count(*) AS steps, avg(iter_ns) AS iter, avg(compute_ns) AS compute, avg(comm_exposed_ns) AS exposed\n"
      "FROM steps WHERE job = 'demo' AND step >= " + std::to_string(half) + "\n"
      "GROUP BY rank ORDER BY iter DESC, rank LIMIT 5";
  Result<Json> ranks = query(target, slowest);
  if (!ranks.isOk()) return ranks.status();
  if (ranks->empty()) return Status::notFound("no steps stored for job 'demo'");
  printQuery("Slowest ranks, steps " + std::to_string(half) + "-" + std::to_string(o.steps - 1), slowest);
  TablePrinter ranks_table({"rank", "steps", "mean iter", "mean compute", "mean exposed comm"});
  for (const Json& r : *ranks) {
    ranks_table.addRow({std::to_string(static_cast<int64_t>(num(r[0]))), std::to_string(static_cast<int64_t>(num(r[1]))),
                        formatDurationNs(num(r[2])), formatDurationNs(num(r[3])), formatDurationNs(num(r[4]))});
  }
  ranks_table.print(stdout);

  // The slowest rank's heaviest kernels in its last step, named from the kernel dictionary.
  const std::string slow = std::to_string(static_cast<int64_t>(num((*ranks)[0][0])));
  const std::string last = std::to_string(o.steps - 1);
  const std::string heaviest =
      "SELECT coalesce(n.name, '?') AS kernel, k.count, k.total_ns, quantile(k.hist, 0.5) AS p50, quantile(k.hist, 0.99) AS p99\n"
      "FROM kernels k LEFT JOIN kernel_names n USING (job, signature)\n"
      "WHERE k.job = 'demo' AND k.rank = " + slow + " AND k.step = " + last + "\n"
      "ORDER BY k.total_ns DESC LIMIT 8";
  Result<Json> kernels = query(target, heaviest);
  if (!kernels.isOk()) return kernels.status();
  printQuery("Heaviest kernels of rank " + slow + " in step " + last, heaviest);
  TablePrinter kernel_table({"kernel", "launches", "total", "p50", "p99"});
  for (const Json& r : *kernels) {
    std::string name = r[0].is_string() ? r[0].get<std::string>() : "?";
    if (name.size() > 60) name = name.substr(0, 57) + "...";
    kernel_table.addRow({name, std::to_string(static_cast<int64_t>(num(r[1]))), formatDurationNs(num(r[2])), formatDurationNs(num(r[3])),
                         formatDurationNs(num(r[4]))});
  }
  kernel_table.print(stdout);
  return Status::ok();
}

int runDemo(const DemoOptions& o) {
  cli::ArgusdProcess argusd(o.keep_dir);
  argusd.setHttp(true);
  setenv("ARGUSD_BIN", siblingArgusd().c_str(), /*overwrite=*/0);
  if (Status s = argusd.start(); !s.isOk()) {
    std::fprintf(stderr, "argus demo: cannot start argusd: %s\n", s.toString().c_str());
    return 1;
  }
  std::printf("argusd is up: data %s, ingest 127.0.0.1:%u, http 127.0.0.1:%u\n", argusd.dataDir().c_str(),
              argusd.ingestPort(), argusd.httpPort());
  std::printf("Streaming %u steps from each of %u ranks (%d kernel signatures per step, rank %u slows down at step %u)...\n",
              o.steps, o.ranks, o.signatures, o.slow_rank, o.steps / 2);
  auto t0 = std::chrono::steady_clock::now();
  uint64_t record_bytes = 0;
  if (Status s = streamCluster(o, argusd.ingestPort(), &record_bytes); !s.isOk()) {
    std::fprintf(stderr, "argus demo: sending failed: %s\n", s.toString().c_str());
    return 1;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t records = static_cast<uint64_t>(o.ranks) * o.steps;
  std::printf("%llu step records acknowledged durable in %.2f s; %.0f bytes per rank-step on the wire.\n",
              static_cast<unsigned long long>(records), secs, static_cast<double>(record_bytes) / records);

  Status shown = printFindings(o, argusd.httpPort());
  if (!shown.isOk()) std::fprintf(stderr, "argus demo: query failed: %s\n", shown.toString().c_str());

  int rc = argusd.stop();
  std::printf("\nargusd stopped (exit %d).\n", rc);
  if (!o.keep_dir.empty()) {
    const std::string dir = argusd.dataDir();  // a temporary: its c_str() would dangle
    const char* data = dir.c_str();
    std::printf("The data stays in %s. Ask it more in SQL (\\tables lists the tables, docs/query/language.md the language):\n"
                "  argus shell --data %s\n"
                "or serve it again, for the HTTP API and Grafana (docs/http/grafana.md):\n"
                "  argusd --data %s --ingest 127.0.0.1:0 --http 127.0.0.1:7080\n"
                "  curl -s --data '{\"q\": \"SELECT step, max(iter_ns) FROM steps GROUP BY step\"}' http://127.0.0.1:7080/api/v1/query\n",
                data, data, data);
  } else {
    std::printf("Run `argus demo --keep DIR` to keep the data and ask it more with `argus shell --data DIR/data` (SQL),\n"
                "or serve it with argusd for its HTTP API and the Grafana datasource.\n");
  }
  return shown.isOk() && rc == 0 ? 0 : 1;
}

}  // namespace

void addDemoCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* demo = app.add_subcommand("demo", "Run a local argusd, stream a simulated cluster into it, query it back");
  demo->add_option("--ranks", options->ranks, "ranks in the simulated cluster")->check(CLI::Range(1, 4096))->capture_default_str();
  demo->add_option("--steps", options->steps, "training steps per rank")->check(CLI::Range(2, 100000))->capture_default_str();
  demo->add_option("--signatures", options->signatures, "kernel signatures per step")->check(CLI::Range(1, 4096))->capture_default_str();
  demo->add_option("--keep", options->keep_dir, "keep argusd's data in this directory (created if missing)");
  demo->callback([options, exit_code] {
    if (options->slow_rank >= options->ranks) options->slow_rank = options->ranks - 1;
    if (!options->keep_dir.empty()) std::filesystem::create_directories(options->keep_dir);
    *exit_code = runDemo(*options);
  });
}

}  // namespace argus::cli
