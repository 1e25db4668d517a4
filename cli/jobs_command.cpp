#include "cli/jobs_command.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>

#include "cli/duration_text.h"
#include "cli/table_printer.h"
#include "storage/store.h"

namespace argus::cli {

namespace {

struct JobsOptions {
  std::string data_dir;
  std::string retention;  // "JOB=DURATION"
  std::string drop;
};

std::string formatTime(int64_t unix_ns) {
  if (unix_ns <= 0) return "-";
  std::time_t secs = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

int fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "argus jobs: %s: %s\n", what.c_str(), s.toString().c_str());
  return 1;
}

int runJobs(const JobsOptions& o) {
  storage::StoreOptions options;
  options.create_if_missing = false;
  options.read_only = o.retention.empty() && o.drop.empty();
  Result<std::unique_ptr<storage::Store>> store = storage::Store::open(o.data_dir, options);
  if (!store.isOk()) return fail("cannot open " + o.data_dir, store.status());

  if (!o.retention.empty()) {
    size_t eq = o.retention.find('=');
    if (eq == std::string::npos) return fail("--retention", Status::invalidArgument("expected JOB=DURATION, e.g. llama-70b=30d"));
    std::string job = o.retention.substr(0, eq);
    Result<int64_t> ns = parseDurationNs(o.retention.substr(eq + 1));
    if (!ns.isOk()) return fail("--retention", ns.status());
    if (Status s = (*store)->setRetention(job, *ns); !s.isOk()) return fail("--retention", s);
    std::printf("job %s: retention %s\n", job.c_str(), *ns == 0 ? "forever" : formatDurationNs(static_cast<double>(*ns)).c_str());
  }
  if (!o.drop.empty()) {
    if (Status s = (*store)->dropJob(o.drop); !s.isOk()) return fail("--drop", s);
    std::printf("job %s dropped\n", o.drop.c_str());
  }

  TablePrinter table({"job", "created", "last write", "retention"});
  for (const storage::JobInfo& job : (*store)->listJobs()) {
    table.addRow({job.name, formatTime(job.created_ns), formatTime(job.last_write_ns),
                  job.retention_ns == 0 ? "forever" : formatDurationNs(static_cast<double>(job.retention_ns))});
  }
  table.print(stdout);
  return 0;
}

}  // namespace

void addJobsCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<JobsOptions>();
  CLI::App* jobs = app.add_subcommand("jobs", "List the jobs of a data directory; set retention or drop one (argusd must be stopped)");
  jobs->add_option("--data", o->data_dir, "data directory")->required();
  jobs->add_option("--retention", o->retention, "JOB=DURATION: drop JOB once its last write is older (30d, 12h; 0 keeps forever)");
  jobs->add_option("--drop", o->drop, "JOB to delete with all its data");
  jobs->callback([o, exit_code] { *exit_code = runJobs(*o); });
}

}  // namespace argus::cli
