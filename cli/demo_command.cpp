#include "cli/demo_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/duration_text.h"
#include "cli/http_client.h"
#include "cli/table_printer.h"
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

Result<Json> getJson(uint16_t port, const std::string& target) {
  Result<HttpReply> reply = httpRequest("127.0.0.1", port, "GET", target);
  if (!reply.isOk()) return reply.status();
  Json body = Json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return Status::corruption("GET " + target + ": answer is not JSON");
  if (reply->status != 200) {
    return Status::ioError("GET " + target + ": HTTP " + std::to_string(reply->status) + ": " +
                           body.value("error", std::string("?")));
  }
  return body;
}

// A numeric cell: uint64 ids travel as decimal strings, other numbers as numbers.
double num(const Json& cell) {
  return cell.is_string() ? std::stod(cell.get<std::string>()) : cell.get<double>();
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

Status printFindings(const DemoOptions& o, uint16_t http_port) {
  // 1. Per-rank mean iteration time over the second half: the slow rank stands out.
  uint32_t half = o.steps / 2;
  Result<Json> steps = getJson(http_port, "/api/v1/scan?job=demo&table=steps&columns=rank,step,iter_ns,compute_ns,comm_exposed_ns&from_step=" +
                                              std::to_string(half) + "&limit=1000000");
  if (!steps.isOk()) return steps.status();
  struct RankSums {
    double iter = 0, compute = 0, exposed = 0;
    int n = 0;
  };
  std::map<int64_t, RankSums> by_rank;
  for (const Json& row : (*steps)["rows"]) {
    RankSums& s = by_rank[static_cast<int64_t>(num(row[0]))];
    s.iter += num(row[2]);
    s.compute += num(row[3]);
    s.exposed += num(row[4]);
    s.n++;
  }
  std::vector<std::pair<int64_t, RankSums>> ranked(by_rank.begin(), by_rank.end());
  std::sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.second.iter / a.second.n > b.second.iter / b.second.n; });
  std::printf("\nSlowest ranks, steps %u-%u (GET /api/v1/scan?table=steps):\n", half, o.steps - 1);
  TablePrinter ranks_table({"rank", "steps", "mean iter", "mean compute", "mean exposed comm"});
  for (size_t i = 0; i < ranked.size() && i < 5; ++i) {
    const RankSums& s = ranked[i].second;
    ranks_table.addRow({std::to_string(ranked[i].first), std::to_string(s.n), formatDurationNs(s.iter / s.n), formatDurationNs(s.compute / s.n), formatDurationNs(s.exposed / s.n)});
  }
  ranks_table.print(stdout);

  // 2. The slow rank's heaviest kernels in its last step, with names from the store.
  int64_t slow = ranked.front().first;
  std::string last = std::to_string(o.steps - 1);
  Result<Json> kernels = getJson(http_port, "/api/v1/scan?job=demo&table=kernels&columns=signature,phase,count,total_ns,hist&ranks=" +
                                                std::to_string(slow) + "&from_step=" + last + "&to_step=" + std::to_string(o.steps));
  if (!kernels.isOk()) return kernels.status();
  std::vector<Json> rows((*kernels)["rows"].begin(), (*kernels)["rows"].end());
  std::sort(rows.begin(), rows.end(), [](const Json& a, const Json& b) { return num(a[3]) > num(b[3]); });
  std::printf("\nHeaviest kernels of rank %lld in step %s (GET /api/v1/scan?table=kernels, names from /api/v1/kernels):\n",
              static_cast<long long>(slow), last.c_str());
  TablePrinter kernel_table({"kernel", "launches", "total", "p50", "p99"});
  for (size_t i = 0; i < rows.size() && i < 8; ++i) {
    const Json& r = rows[i];
    Result<Json> name = getJson(http_port, "/api/v1/kernels?job=demo&signature=" + (r[0].is_string() ? r[0].get<std::string>() : r[0].dump()));
    std::string text = name.isOk() ? (*name).value("name", std::string("?")) : name.status().toString();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    kernel_table.addRow({text, std::to_string(static_cast<int64_t>(num(r[2]))), formatDurationNs(num(r[3])),
                         formatDurationNs(r[4]["p50"].get<double>()), formatDurationNs(r[4]["p99"].get<double>())});
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
    std::printf("The data stays in %s. Look inside with:\n  argus dump store --data %s\n"
                "or serve it again with:\n  argusd --data %s --ingest 127.0.0.1:0 --http 127.0.0.1:7080\n"
                "  curl 'http://127.0.0.1:7080/api/v1/scan?job=demo&table=steps&ranks=%u'\n",
                argusd.dataDir().c_str(), argusd.dataDir().c_str(), argusd.dataDir().c_str(), o.slow_rank);
  } else {
    std::printf("Run `argus demo --keep DIR` to keep the data and explore it with `argus dump` and argusd's HTTP API.\n");
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
