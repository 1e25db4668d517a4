// sql_test_runner FILE.test: runs one sqllogictest-style file against a real store
// (tests/sql/README.md has the format). The store lives in a fresh temp directory per file
// (RocksDB, block_steps 16); `load` blocks write records through Store::write (head entries)
// and `seal` moves them into column chunks, the same paths ingest and the sealer take.
// Every `query` runs twice, with predicate pushdown and without, and both must give the
// expected rows. Exit code 0 when every record passes; failures name file:line.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "model/step_record.h"
#include "query/common/errors.h"
#include "query/engine.h"
#include "simulate/synthetic_steps.h"
#include "../simulated_job.h"
#include "storage/store.h"

using namespace argus;

namespace {

struct Block {
  size_t line = 0;  // 1-based line of the block's first line
  std::vector<std::string> lines;
};

std::vector<std::string> splitWords(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::string trimRight(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
  return s;
}

// Blocks are separated by blank lines; lines starting with '#' are comments.
std::vector<Block> readBlocks(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    std::exit(2);
  }
  std::vector<Block> blocks;
  Block cur;
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    line = trimRight(line);
    if (line.empty()) {
      if (!cur.lines.empty()) blocks.push_back(std::move(cur));
      cur = Block{};
      continue;
    }
    if (line[0] == '#' && cur.lines.empty()) continue;
    if (cur.lines.empty()) cur.line = n;
    cur.lines.push_back(line);
  }
  if (!cur.lines.empty()) blocks.push_back(std::move(cur));
  return blocks;
}

class Runner {
 public:
  Runner(std::string path) : path_(std::move(path)) {}

  int run() {
    char tmpl[] = "/tmp/argus-sql-test-XXXXXX";
    char* dir = mkdtemp(tmpl);
    if (!dir) return fail(0, "cannot create a temp dir");
    dir_ = dir;
    storage::StoreOptions o;
    o.block_steps = 16;
    o.sync_wal = false;
    auto store = storage::Store::open(dir_, o);
    if (!store.isOk()) return fail(0, "cannot open store: " + store.status().toString());
    store_ = std::move(store).value();
    for (const Block& b : readBlocks(path_)) runBlock(b);
    store_.reset();
    std::filesystem::remove_all(dir_);
    std::printf("%s: %d records, %d failed\n", path_.c_str(), records_, failures_);
    return failures_ == 0 ? 0 : 1;
  }

 private:
  int fail(size_t line, const std::string& what) {
    ++failures_;
    std::fprintf(stderr, "%s:%zu: FAILED: %s\n", path_.c_str(), line, what.c_str());
    return 1;
  }

  void runBlock(const Block& b) {
    ++records_;
    std::vector<std::string> head = splitWords(b.lines[0]);
    const std::string& kind = head[0];
    if (kind == "load") {
      load(b);
    } else if (kind == "statement") {
      statement(b, head);
    } else if (kind == "query") {
      query(b, head);
    } else if (kind == "option") {
      option(b, head);
    } else {
      fail(b.line, "unknown record '" + kind + "'");
    }
  }

  // --- load ---
  using Key = std::tuple<std::string, uint32_t, uint64_t, uint16_t>;  // job, rank, step, attempt

  static std::map<std::string, std::string> fields(const std::vector<std::string>& words) {
    std::map<std::string, std::string> f;
    for (size_t i = 1; i < words.size(); ++i) {
      size_t eq = words[i].find('=');
      f[words[i].substr(0, eq)] = eq == std::string::npos ? "" : words[i].substr(eq + 1);
    }
    return f;
  }

  static int64_t num(const std::map<std::string, std::string>& f, const char* name, int64_t def) {
    auto it = f.find(name);
    return it == f.end() ? def : std::strtoll(it->second.c_str(), nullptr, 0);
  }
  static uint64_t unum(const std::map<std::string, std::string>& f, const char* name, uint64_t def) {
    auto it = f.find(name);
    return it == f.end() ? def : std::strtoull(it->second.c_str(), nullptr, 0);
  }

  model::StepRecord& record(const std::map<std::string, std::string>& f) {
    Key k{job_, static_cast<uint32_t>(num(f, "rank", 0)), static_cast<uint64_t>(num(f, "step", 0)), static_cast<uint16_t>(num(f, "attempt", 0))};
    auto [it, fresh] = pending_.try_emplace(k);
    model::StepRecord& r = it->second;
    if (fresh) {
      r.rank = std::get<1>(k);
      r.step = std::get<2>(k);
      r.attempt = std::get<3>(k);
      r.start_ns = static_cast<int64_t>(r.step) * 1'000'000;
      r.end_ns = r.start_ns;
    }
    return r;
  }

  // Writes one dictionary entry (`fill` points the request at it) for the current job, at once.
  template <typename Fill>
  void writeDictionary(size_t line, const std::string& what, Fill fill) {
    auto id = store_->ensureJob(job_);
    storage::WriteRequest w;
    w.job = id.isOk() ? *id : 0;
    fill(w);
    Status s = id.isOk() ? store_->write(w) : id.status();
    if (!s.isOk()) fail(line, what + ": " + s.toString());
  }

  void flush(size_t line) {
    std::map<std::string, std::vector<model::StepRecord>> by_job;
    for (auto& [k, r] : pending_) {
      r.canonicalize();
      by_job[std::get<0>(k)].push_back(std::move(r));
    }
    pending_.clear();
    for (auto& [job, recs] : by_job) {
      auto id = store_->ensureJob(job);
      if (!id.isOk()) {
        fail(line, "ensureJob: " + id.status().toString());
        continue;
      }
      storage::WriteRequest w;
      w.job = *id;
      w.records = recs;
      Status s = store_->write(w);
      if (!s.isOk()) fail(line, "write: " + s.toString());
    }
  }

  void load(const Block& b) {
    job_ = "test";
    for (size_t i = 1; i < b.lines.size(); ++i) {
      std::vector<std::string> w = splitWords(b.lines[i]);
      auto f = fields(w);
      const std::string& what = w[0];
      size_t line = b.line + i;
      if (what == "job") {
        if (w.size() != 2) fail(line, "job NAME");
        job_ = w.size() > 1 ? w[1] : "test";
        auto id = store_->ensureJob(job_);
        if (!id.isOk()) fail(line, id.status().toString());
      } else if (what == "step") {
        model::StepRecord& r = record(f);
        r.start_ns = num(f, "start_ns", r.start_ns);
        r.iter_ns = num(f, "iter_ns", r.iter_ns);
        r.end_ns = num(f, "end_ns", r.start_ns + r.iter_ns);
        r.flags = static_cast<uint32_t>(num(f, "flags", r.flags));
        for (int p = 0; p < model::kPhaseColumnCount; ++p) {
          r.phase_ns[p] = num(f, model::phaseColumnName(static_cast<model::PhaseColumn>(p)), r.phase_ns[p]);
        }
      } else if (what == "kernel") {
        model::StepRecord& r = record(f);
        model::KernelStat k;
        k.signature = unum(f, "signature", 1);
        k.phase = static_cast<model::Phase>(num(f, "phase", 0));
        if (f.count("durations")) {
          std::stringstream ds(f["durations"]);
          std::string d;
          int64_t total = 0;
          while (std::getline(ds, d, ',')) {
            int64_t v = std::strtoll(d.c_str(), nullptr, 10);
            k.hist.add(v);
            total += v;
            ++k.count;
          }
          k.total_ns = num(f, "total_ns", total);
        } else {
          k.count = static_cast<uint32_t>(num(f, "count", 1));
          k.total_ns = num(f, "total_ns", 1000);
          if (k.count > 0) k.hist.add(k.total_ns / k.count, k.count);
        }
        r.kernels.push_back(std::move(k));
      } else if (what == "collective") {
        model::StepRecord& r = record(f);
        model::CollectiveStat c;
        c.op = static_cast<model::CollectiveOp>(num(f, "op", 1));
        c.communicator = unum(f, "communicator", 1);
        c.bytes = unum(f, "bytes", 0);
        c.size_class = static_cast<uint8_t>(num(f, "size_class", model::sizeClassOf(c.bytes)));
        c.peer_rank = static_cast<uint32_t>(unum(f, "peer", model::CollectiveStat::kNoPeer));
        c.count = static_cast<uint32_t>(num(f, "count", 1));
        c.total_ns = num(f, "total_ns", 0);
        c.wait_ns = num(f, "wait_ns", -1);
        r.collectives.push_back(c);
      } else if (what == "stack") {
        model::StepRecord& r = record(f);
        r.stacks.push_back(model::StackStat{unum(f, "stack_id", 1), static_cast<uint32_t>(num(f, "samples", 1))});
      } else if (what == "event") {
        model::StepRecord& r = record(f);
        model::EventRecord e;
        e.kind = static_cast<model::EventKind>(num(f, "kind", 0));
        e.ts_ns = num(f, "ts_ns", 0);
        e.value = unum(f, "value", 0);
        e.name_id = unum(f, "name_id", 0);
        r.events.push_back(e);
      } else if (what == "synthetic") {
        int ranks = static_cast<int>(num(f, "ranks", 2));
        int steps = static_cast<int>(num(f, "steps", 16));
        simulate::SyntheticOptions o;
        o.signatures = static_cast<int>(num(f, "signatures", 8));
        o.seed = unum(f, "seed", 1);
        o.first_step = unum(f, "first_step", 0);
        o.recompile_rate = 0;
        for (int rk = 0; rk < ranks; ++rk) {
          simulate::SyntheticSteps gen(static_cast<uint32_t>(rk), o);
          for (int s = 0; s < steps; ++s) {
            model::StepRecord rec = gen.next();
            pending_[Key{job_, rec.rank, rec.step, rec.attempt}] = std::move(rec);
          }
        }
      } else if (what == "cluster") {
        // A simulated job (simulate/cluster_simulator.h) with topology and dictionaries:
        // cluster tp=2 pp=4 dp=4 gpus_per_host=4 steps=140 seed=1 checkpoint_every=50 faults=SPEC;SPEC
        flush(line);
        simulate::ClusterOptions o;
        o.layout = simulate::ClusterLayout{static_cast<uint32_t>(num(f, "tp", 2)), static_cast<uint32_t>(num(f, "pp", 4)), static_cast<uint32_t>(num(f, "dp", 4)),
                                           static_cast<uint32_t>(num(f, "gpus_per_host", 4))};
        o.seed = unum(f, "seed", 1);
        o.checkpoint_every = unum(f, "checkpoint_every", 0);
        std::vector<std::string> faults;
        const std::string specs = f.count("faults") ? f["faults"] : "";
        for (size_t at = 0; at < specs.size();) {
          const size_t end = std::min(specs.find(';', at), specs.size());
          faults.push_back(specs.substr(at, end - at));
          at = end + 1;
        }
        auto sim = testing::writeSimulatedJob(*store_, job_, o, faults, static_cast<uint32_t>(num(f, "steps", 100)));
        if (!sim.isOk()) fail(line, "cluster: " + sim.status().toString());
      } else if (what == "topology") {
        model::RankTopology t;
        t.rank = static_cast<uint32_t>(num(f, "rank", 0));
        t.world_size = static_cast<uint32_t>(num(f, "world_size", 0));
        t.host = f.count("host") ? f["host"] : "";
        t.local_rank = static_cast<uint32_t>(num(f, "local_rank", 0));
        t.device = static_cast<uint32_t>(num(f, "device", 0));
        for (auto [name, field] : {std::pair{"tp_rank", &t.tp_rank}, {"tp_size", &t.tp_size}, {"pp_rank", &t.pp_rank}, {"pp_size", &t.pp_size},
                                   {"dp_rank", &t.dp_rank}, {"dp_size", &t.dp_size}, {"cp_rank", &t.cp_rank}, {"cp_size", &t.cp_size},
                                   {"ep_rank", &t.ep_rank}, {"ep_size", &t.ep_size}}) {
          *field = static_cast<uint32_t>(num(f, name, 0));
        }
        auto id = store_->ensureJob(job_);
        storage::WriteRequest w;
        w.job = id.isOk() ? *id : 0;
        w.topology = &t;
        Status s = id.isOk() ? store_->write(w) : id.status();
        if (!s.isOk()) fail(line, "topology: " + s.toString());
      } else if (what == "kernel_name") {
        model::KernelDictEntry e;
        e.signature = unum(f, "signature", 0);
        e.name = f.count("name") ? f["name"] : "";
        model::LaunchGeometry& g = e.geometry;
        for (auto [name, field] : {std::pair{"grid_x", &g.grid_x}, {"grid_y", &g.grid_y}, {"grid_z", &g.grid_z}, {"block_x", &g.block_x},
                                   {"block_y", &g.block_y}, {"block_z", &g.block_z}}) {
          *field = static_cast<uint32_t>(num(f, name, 1));
        }
        writeDictionary(line, what, [&](storage::WriteRequest& w) { w.kernels = std::span(&e, 1); });
      } else if (what == "stack_name") {
        model::StackDictEntry e;
        e.stack_id = unum(f, "stack_id", 0);
        // Given folded, root first; stored leaf first.
        std::string folded = f.count("frames") ? f["frames"] : "";
        for (size_t at = 0; at <= folded.size() && !folded.empty();) {
          size_t end = std::min(folded.find(';', at), folded.size());
          e.frames.insert(e.frames.begin(), folded.substr(at, end - at));
          at = end + 1;
        }
        writeDictionary(line, what, [&](storage::WriteRequest& w) { w.stacks = std::span(&e, 1); });
      } else if (what == "name") {
        model::StringDictEntry e;
        e.id = unum(f, "name_id", 0);
        e.text = f.count("text") ? f["text"] : "";
        writeDictionary(line, what, [&](storage::WriteRequest& w) { w.strings = std::span(&e, 1); });
      } else if (what == "write") {
        flush(line);
      } else if (what == "seal") {
        flush(line);
        Status s = store_->sealAll();
        if (!s.isOk()) fail(line, "seal: " + s.toString());
      } else {
        fail(line, "unknown load line '" + what + "'");
      }
    }
    flush(b.line);
  }

  // --- options ---
  void option(const Block& b, const std::vector<std::string>& head) {
    if (head.size() == 2 && head[1] == "reset") {
      options_ = query::QueryOptions{};
      both_ = true;
      return;
    }
    if (head.size() != 3) {
      fail(b.line, "option NAME VALUE, or option reset");
      return;
    }
    if (head[1] == "deadline_ms") {
      options_.deadline = std::chrono::milliseconds(std::strtoll(head[2].c_str(), nullptr, 10));
    } else if (head[1] == "memory_limit") {
      options_.memory_limit_bytes = std::strtoull(head[2].c_str(), nullptr, 10);
    } else if (head[1] == "pushdown") {
      both_ = head[2] == "both";
      options_.pushdown = head[2] != "off";
    } else {
      fail(b.line, "unknown option '" + head[1] + "'");
    }
  }

  // --- statements and queries ---
  static std::string sqlOf(const Block& b, size_t* end) {
    std::string sql;
    size_t i = 1;
    for (; i < b.lines.size() && b.lines[i] != "----"; ++i) sql += (sql.empty() ? "" : "\n") + b.lines[i];
    *end = i;
    return sql;
  }

  void statement(const Block& b, const std::vector<std::string>& head) {
    size_t sep;
    std::string sql = sqlOf(b, &sep);
    bool expect_error = head.size() > 1 && head[1] == "error";
    std::string expected_message;
    for (size_t i = sep + 1; i < b.lines.size(); ++i) expected_message += (expected_message.empty() ? "" : "\n") + b.lines[i];
    try {
      query::QueryEngine(*store_).run(sql, options_);
      if (expect_error) fail(b.line, "expected an error, the statement succeeded:\n" + sql);
    } catch (const query::QueryError& e) {
      if (!expect_error) {
        fail(b.line, std::string("unexpected error: ") + e.what() + "\n" + sql);
      } else if (e.what() != nullptr && std::string(e.what()).find(expected_message) == std::string::npos) {
        fail(b.line, "error message\n  " + std::string(e.what()) + "\ndoes not contain\n  " + expected_message);
      }
    }
  }

  static std::string cell(const query::QueryResult& r, size_t row, size_t col) {
    const query::Vector& v = r.columns[col];
    if (!v.isValid(row)) return "NULL";
    switch (v.type) {
      case query::LogicalType::kNull: return "NULL";
      case query::LogicalType::kBoolean: return v.b8[row] ? "true" : "false";
      case query::LogicalType::kBigInt: return std::to_string(v.i64[row]);
      case query::LogicalType::kId: return std::to_string(static_cast<uint64_t>(v.i64[row]));
      case query::LogicalType::kDouble: {
        double d = v.f64[row];
        if (std::isnan(d)) return "nan";
        if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3f", d);
        std::string s = buf;
        return s == "-0.000" ? "0.000" : s;
      }
      case query::LogicalType::kVarchar: return v.str[row].empty() ? "(empty)" : std::string(v.str[row]);
      case query::LogicalType::kHistogram: return "hist(count=" + std::to_string(v.hist[row]->count()) + ")";
    }
    return "?";
  }

  static char typeLetter(query::LogicalType t) {
    switch (t) {
      case query::LogicalType::kBigInt: return 'I';
      case query::LogicalType::kId: return 'D';
      case query::LogicalType::kDouble: return 'R';
      case query::LogicalType::kVarchar: return 'T';
      case query::LogicalType::kBoolean: return 'B';
      case query::LogicalType::kHistogram: return 'H';
      case query::LogicalType::kNull: return 'N';
    }
    return '?';
  }

  void query(const Block& b, const std::vector<std::string>& head) {
    if (head.size() < 2) {
      fail(b.line, "query TYPES [rowsort]");
      return;
    }
    const std::string& types = head[1];
    bool rowsort = head.size() > 2 && head[2] == "rowsort";
    size_t sep;
    std::string sql = sqlOf(b, &sep);
    std::vector<std::vector<std::string>> expected;
    for (size_t i = sep + 1; i < b.lines.size(); ++i) {
      const std::string& l = b.lines[i];
      if (types.size() == 1) {
        expected.push_back({l});
      } else if (l.find('\t') != std::string::npos) {
        std::vector<std::string> cells;
        std::stringstream ss(l);
        std::string c;
        while (std::getline(ss, c, '\t')) cells.push_back(c);
        expected.push_back(cells);
      } else {
        expected.push_back(splitWords(l));
      }
    }
    if (rowsort) std::sort(expected.begin(), expected.end());
    bool explain = sql.size() >= 7 && (sql.compare(0, 7, "EXPLAIN") == 0 || sql.compare(0, 7, "explain") == 0);
    std::vector<bool> modes = {options_.pushdown};
    if (both_ && !explain) modes = {true, false};
    for (bool pushdown : modes) {
      query::QueryOptions o = options_;
      o.pushdown = pushdown;
      std::string mode = pushdown ? " (pushdown on)" : " (pushdown off)";
      query::QueryResult r;
      try {
        r = query::QueryEngine(*store_).run(sql, o);
      } catch (const query::QueryError& e) {
        fail(b.line, std::string("query failed") + mode + ": " + e.what() + "\n" + sql);
        return;
      }
      std::string got_types;
      for (query::LogicalType t : r.types) got_types.push_back(typeLetter(t));
      bool types_ok = got_types.size() == types.size();
      for (size_t i = 0; types_ok && i < types.size(); ++i) types_ok = types[i] == '?' || types[i] == got_types[i];
      if (!types_ok) {
        fail(b.line, "result types " + got_types + ", expected " + types + mode + "\n" + sql);
        return;
      }
      std::vector<std::vector<std::string>> got;
      for (size_t row = 0; row < r.rows; ++row) {
        std::vector<std::string> cells;
        for (size_t c = 0; c < r.columns.size(); ++c) cells.push_back(cell(r, row, c));
        got.push_back(std::move(cells));
      }
      if (rowsort) std::sort(got.begin(), got.end());
      if (got != expected) {
        std::string text = "wrong result" + mode + "\n" + sql + "\n---- expected\n";
        for (const auto& row : expected) {
          for (size_t c = 0; c < row.size(); ++c) text += (c ? "\t" : "") + row[c];
          text += "\n";
        }
        text += "---- got\n";
        for (const auto& row : got) {
          for (size_t c = 0; c < row.size(); ++c) text += (c ? "\t" : "") + row[c];
          text += "\n";
        }
        fail(b.line, text);
        return;
      }
    }
  }

  std::string path_;
  std::string dir_;
  std::unique_ptr<storage::Store> store_;
  std::string job_ = "test";
  std::map<Key, model::StepRecord> pending_;
  query::QueryOptions options_;
  bool both_ = true;
  int records_ = 0;
  int failures_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sql_test_runner FILE.test\n");
    return 2;
  }
  return Runner(argv[1]).run();
}
