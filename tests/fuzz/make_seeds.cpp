// Writes the seed corpora of the fuzz targets: small, valid inputs built with the real
// encoders, in each target's input layout (see the comment at the top of each target).
//
//   make_seeds OUT_DIR      writes OUT_DIR/<target>/<seed name>
//
// scripts/fuzz.sh --seeds runs it into tests/fuzz/corpus; rerun it when a format changes.
// Output is deterministic (synthetic records with fixed seeds).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "model/step_chain.h"
#include "model/step_codec.h"
#include "storage/chunk_format.h"
#include "storage/chunk_writer.h"
#include "storage/column_codec.h"
#include "storage/head_entry.h"
#include "storage/hist_codec.h"
#include "storage/keys.h"
#include "storage/meta_records.h"
#include "storage/table_block.h"
#include "tests/fuzz/codec_context.h"
#include "tests/fuzz/fuzz_util.h"
#include "simulate/synthetic_steps.h"
#include "wire/messages.h"

namespace fs = std::filesystem;
using namespace argus;
using argus::fuzz::joinPieces;
using argus::fuzz::putParam;
using model::DurationHistogram;
using model::StepRecord;

namespace {

fs::path g_out;
size_t g_files = 0, g_bytes = 0;

void put(const std::string& target, const std::string& name, const std::string& bytes) {
  fs::path dir = g_out / target;
  fs::create_directories(dir);
  std::ofstream f(dir / name, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) {
    std::fprintf(stderr, "make_seeds: cannot write %s\n", (dir / name).c_str());
    std::exit(1);
  }
  ++g_files;
  g_bytes += bytes.size();
}

// Small synthetic sessions keep the seeds small.
simulate::SyntheticOptions smallOptions(uint64_t seed) {
  simulate::SyntheticOptions o;
  o.signatures = 6;
  o.collectives = 2;
  o.stacks = 3;
  o.seed = seed;
  return o;
}

std::vector<StepRecord> synthRecords(uint32_t rank, int n, uint64_t seed = 1) {
  simulate::SyntheticSteps gen(rank, smallOptions(seed));
  std::vector<StepRecord> out;
  for (int i = 0; i < n; ++i) out.push_back(gen.next());
  return out;
}

void stepSeeds() {
  auto records = synthRecords(3, 4);
  for (bool zstd : {false, true}) {
    model::StepEncoder enc({.delta = true, .zstd = zstd});
    std::vector<std::string> pieces;
    for (const auto& r : records) {
      std::string b;
      enc.encode(r, &b);
      pieces.push_back(b);
    }
    put("step_decoder_fuzz", zstd ? "delta_stream_zstd" : "delta_stream", joinPieces(pieces));
  }
  model::StepEncoder keyframes({.delta = false});
  std::vector<std::string> pieces;
  for (const auto& r : records) {
    std::string b;
    keyframes.encode(r, &b);
    pieces.push_back(b);
  }
  put("step_decoder_fuzz", "keyframe_stream", joinPieces(pieces));
  put("step_decoder_fuzz", "standalone", model::encodeStandalone(records[0]));
  put("step_decoder_fuzz", "empty_record", model::encodeStandalone(StepRecord{}));
}

void histogramSeeds() {
  auto write = [](const std::string& name, const DurationHistogram& h) {
    std::string b;
    ByteWriter w(&b);
    h.serialize(w);
    put("duration_histogram_fuzz", name, b);
  };
  write("empty", DurationHistogram{});
  DurationHistogram one;
  one.add(1500);
  write("one", one);
  DurationHistogram many;
  for (int64_t d = 1; d < 10'000'000; d = d * 3 + 7) many.add(d, static_cast<uint32_t>(d % 5 + 1));
  write("many", many);
  DurationHistogram edges;
  edges.add(0, UINT32_MAX);
  edges.add(INT64_MAX, 1);
  write("edges", edges);
}

void wireSeeds() {
  auto records = synthRecords(1, 2);
  simulate::SyntheticSteps gen(1, smallOptions(1));
  (void)gen.next();
  wire::Hello hello;
  hello.job = "llama-70b.run_3";
  hello.auth_token = "s3cret";
  hello.topology = {.rank = 1, .world_size = 8, .host = "node-a", .local_rank = 1, .device = 1, .tp_rank = 1, .tp_size = 2};
  hello.clock_unix_ns = 1'700'000'000'000'000'000;
  hello.clock_monotonic_ns = 123'456'789;
  hello.client = "argus-capture/0.1";
  put("wire_client_fuzz", "hello", wire::encodeHello(hello));
  wire::Dictionary dict;
  dict.kernels = gen.dictionary().kernels;
  dict.stacks = gen.dictionary().stacks;
  dict.strings = gen.dictionary().strings;
  if (dict.kernels.size() > 3) dict.kernels.resize(3);
  if (dict.stacks.size() > 2) dict.stacks.resize(2);
  put("wire_client_fuzz", "dictionary", wire::encodeDictionary(dict));
  model::StepEncoder enc;
  std::vector<std::string> encoded;
  for (const auto& r : records) {
    std::string b;
    enc.encode(r, &b);
    encoded.push_back(b);
  }
  put("wire_client_fuzz", "steps", wire::encodeStepBatch(1, encoded));
  put("wire_client_fuzz", "goodbye", wire::encodeGoodbye());

  put("wire_server_fuzz", "welcome", wire::encodeWelcome({.protocol_version = 2, .session_id = 77, .max_frame_bytes = 1 << 20, .block_steps = 256}));
  put("wire_server_fuzz", "ack", wire::encodeAck(12345));
  put("wire_server_fuzz", "control_dump",
      wire::encodeControl({.kind = wire::Control::Kind::kDumpFlightRecorder, .from_step = 10, .to_step = 20}));
  put("wire_server_fuzz", "control_draining", wire::encodeControl({.kind = wire::Control::Kind::kDraining, .draining_ms = 500}));
  put("wire_server_fuzz", "close", wire::encodeClose(Status::Code::kPermissionDenied, "wrong token for job x"));
}

// One TableBlock per table from a few synthetic steps.
void blocksOf(const std::vector<StepRecord>& records, storage::TableBlock (&blocks)[storage::kTableCount]) {
  for (storage::Table t : storage::kAllTables) blocks[storage::tableIndex(t)].reset(t);
  for (const auto& r : records) {
    for (auto& b : blocks) b.append(r);
  }
}

void chunkSeeds() {
  using namespace storage;
  std::vector<int64_t> steps = {0, 1, 2, 3};
  std::vector<int64_t> varied = {-5, 17, INT64_MAX, INT64_MIN, 0, 3};
  auto withMode = [](const std::string& value) { return std::string(1, '\1') + value; };
  put("chunk_format_fuzz", "steps", withMode(ChunkWriter::encodeIntColumn(ColumnType::kUInt64, steps, nullptr, 0, 3)));
  put("chunk_format_fuzz", "varied", withMode(ChunkWriter::encodeIntColumn(ColumnType::kInt64, varied, nullptr, 0, 5)));
  std::vector<int64_t> constant(50, 7);
  put("chunk_format_fuzz", "constant", withMode(ChunkWriter::encodeIntColumn(ColumnType::kInt64, constant, nullptr, 0, 49)));
  std::vector<DurationHistogram> hists(5);
  for (size_t i = 0; i < hists.size(); ++i) hists[i].add(static_cast<int64_t>(1000 * (i + 1)), static_cast<uint32_t>(i + 1));
  put("chunk_format_fuzz", "hists", withMode(ChunkWriter::encodeHistColumn(hists, nullptr, 0, 4)));
  ChunkStats nan_sum{.rows = 0, .has_min_max = true, .sum = std::numeric_limits<double>::quiet_NaN()};
  put("chunk_format_fuzz", "nan_sum", withMode(encodeChunk(StoredType::kInt64, static_cast<uint8_t>(CodecId::kPlain), nan_sum, "")));
}

std::string codecHeader(uint8_t codec, size_t rows, uint8_t flags, uint32_t groups, uint32_t run) {
  std::string h;
  putParam(&h, codec, 1);
  putParam(&h, rows, 2);
  putParam(&h, flags, 1);
  putParam(&h, groups - 1, 1);
  putParam(&h, run - 1, 1);
  return h;
}

void codecSeeds() {
  using namespace storage;
  using fuzz::SynthContext;
  const size_t rows = 24;
  const uint32_t groups = 4, run = 1;
  const uint8_t flags = fuzz::kCtxGroups | fuzz::kCtxCounts | fuzz::kCtxHists | fuzz::kCtxPrediction;
  SynthContext synth(rows, flags, groups, run);
  // Values each codec likes: near its context, so every codec applies somewhere.
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int64_t> v;
  for (size_t i = 0; i < rows; ++i) v.push_back(static_cast<int64_t>(i) * 1'000'003 + static_cast<int64_t>(i % 3));
  shapes.push_back(v);  // near the prediction, near-linear
  v.clear();
  for (size_t i = 0; i < rows; ++i) v.push_back(histPrediction(synth.hists[i]) + static_cast<int64_t>(i % 2));
  shapes.push_back(v);  // near the histogram totals
  shapes.push_back(std::vector<int64_t>(rows, -42));
  v.clear();
  for (size_t i = 0; i < rows; ++i) v.push_back(static_cast<int64_t>(i % 3) * 1000);
  shapes.push_back(v);  // few distinct values
  for (uint8_t codec = 1; codec <= static_cast<uint8_t>(CodecId::kPeriodic); ++codec) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      std::string payload;
      if (!encodeIntsWith(static_cast<CodecId>(codec), shapes[s], synth.get(), &payload)) continue;
      put("column_codec_fuzz", "codec" + std::to_string(codec) + "_shape" + std::to_string(s),
          codecHeader(codec, rows, flags, groups, run) + payload);
    }
  }
  // zstd over a plain coding of a repetitive column (large enough for zstd to pay).
  std::vector<int64_t> repetitive;
  for (size_t i = 0; i < 400; ++i) repetitive.push_back(static_cast<int64_t>(i % 7) * 1'000'000'007);
  EncodedPayload zp{static_cast<uint8_t>(CodecId::kPlain), {}};
  encodeIntsWith(CodecId::kPlain, repetitive, nullptr, &zp.bytes);
  applyZstdIfSmaller(&zp);
  put("column_codec_fuzz", "plain_zstd", codecHeader(zp.codec, repetitive.size(), fuzz::kCtxNone, 1, 1) + zp.bytes);
  EncodedPayload best = encodeInts(repetitive, nullptr);
  put("column_codec_fuzz", "analysis_no_ctx", codecHeader(best.codec, repetitive.size(), fuzz::kCtxNone, 1, 1) + best.bytes);

  // Histograms: counts as the synthesized count column says, so implied counts apply.
  auto histsFor = [](const SynthContext& synth, size_t n) {
    std::vector<DurationHistogram> out(n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t c = static_cast<uint32_t>(synth.counts[i]);
      if (c == 0) continue;
      out[i].add(static_cast<int64_t>(2000 + 37 * (i % 4)), c - c / 3);
      if (c / 3 > 0) out[i].add(static_cast<int64_t>(9000 * (i % 4 + 1)), c / 3);
    }
    return out;
  };
  SynthContext hsynth(rows, fuzz::kCtxGroups | fuzz::kCtxCounts, groups, run);
  std::vector<DurationHistogram> hists = histsFor(hsynth, rows);
  // More rows than a hist-window segment holds: the segmented layout.
  const size_t long_rows = 2 * histWindowSegmentRows(groups) + 5;
  SynthContext lsynth(long_rows, fuzz::kCtxGroups | fuzz::kCtxCounts, groups, run);
  std::string segmented;
  encodeHistWindow(histsFor(lsynth, long_rows), lsynth.get(), &segmented);
  put("hist_codec_fuzz", "window_segments",
      codecHeader(static_cast<uint8_t>(CodecId::kHistWindow), long_rows, fuzz::kCtxGroups | fuzz::kCtxCounts, groups, run) + segmented);
  for (CodecId codec : {CodecId::kHistSparse, CodecId::kHistSparseGrouped, CodecId::kHistWindow}) {
    std::string payload;
    if (!encodeHistsWith(codec, hists, hsynth.get(), &payload)) continue;
    put("hist_codec_fuzz", std::string("codec") + std::to_string(static_cast<int>(codec)),
        codecHeader(static_cast<uint8_t>(codec), rows, fuzz::kCtxGroups | fuzz::kCtxCounts, groups, run) + payload);
  }
  EncodedPayload hbest = encodeHists(hists, hsynth.get());
  put("hist_codec_fuzz", "analysis", codecHeader(hbest.codec, rows, fuzz::kCtxGroups | fuzz::kCtxCounts, groups, run) + hbest.bytes);
  EncodedPayload alone = encodeHists(hists, nullptr);
  put("hist_codec_fuzz", "analysis_no_ctx", codecHeader(alone.codec, rows, fuzz::kCtxNone, 1, 1) + alone.bytes);
}

void blockSeeds() {
  using namespace storage;
  for (int variant = 0; variant < 2; ++variant) {
    auto records = synthRecords(0, variant == 0 ? 3 : 1, 5 + variant);
    for (auto& r : records) r.rank = 0;
    TableBlock blocks[kTableCount];
    blocksOf(records, blocks);
    std::vector<std::string> pieces;
    for (const TableBlock& b : blocks) {
      std::vector<ChunkKV> kvs;
      ChunkWriter::writeBlock(1, 0, 0, 0, b, &kvs);
      for (const auto& kv : kvs) {
        ChunkKey k;
        if (!decodeChunkKey(kv.key, &k)) {
          std::fprintf(stderr, "make_seeds: writeBlock wrote an undecodable key\n");
          std::exit(1);
        }
        pieces.push_back(std::string(1, static_cast<char>(k.table)) + std::string(1, static_cast<char>(k.column)) + kv.value);
      }
    }
    // Flags byte 0: the target recomputes checksums.
    put("sealed_block_fuzz", variant == 0 ? "three_steps" : "one_step", std::string(1, '\0') + joinPieces(pieces));
  }
}

void metaSeeds() {
  using namespace storage;
  auto sel = [](int s, const std::string& v) { return std::string(1, static_cast<char>(s)) + v; };
  JobInfo info{.id = 3, .name = "llama-70b", .created_ns = 1'700'000'000'000'000'000, .last_write_ns = 1'700'000'100'000'000'000, .retention_ns = 0};
  put("meta_records_fuzz", "job_info", sel(0, encodeJobInfo(info)));
  model::RankTopology topo{.rank = 5, .world_size = 16, .host = "gpu-node-07", .local_rank = 5, .device = 5, .tp_rank = 1, .tp_size = 8,
                           .pp_rank = 0, .pp_size = 2};
  put("meta_records_fuzz", "topology", sel(1, encodeTopology(topo)));
  simulate::SyntheticSteps gen(0, smallOptions(1));
  put("meta_records_fuzz", "kernel_dict", sel(2, encodeKernelDict(gen.dictionary().kernels.at(0))));
  if (!gen.dictionary().stacks.empty()) put("meta_records_fuzz", "stack_dict", sel(3, encodeStackDict(gen.dictionary().stacks.at(0))));
  put("meta_records_fuzz", "string_dict", sel(4, encodeStringDict({.id = 9, .text = "checkpoint"})));
  put("meta_records_fuzz", "u32", sel(5, encodeU32(1024)));
  put("meta_records_fuzz", "standalone_record", sel(6, model::encodeStandalone(gen.next())));

  // dump_fuzz: selector (family), key, separator, value.
  auto dump = [](int cf, const std::string& key, const std::string& value) {
    return std::string(1, static_cast<char>(cf)) + joinPieces({key, value});
  };
  put("dump_fuzz", "meta_format_version", dump(0, metaKey(MetaTag::kFormatVersion), encodeU32(1)));
  put("dump_fuzz", "meta_job", dump(0, jobByNameKey("llama-70b"), encodeJobInfo(info)));
  put("dump_fuzz", "meta_topology", dump(0, jobDataKey(3, JobDataKind::kTopology, 5), encodeTopology(topo)));
  put("dump_fuzz", "meta_kernel", dump(0, jobDataKey(3, JobDataKind::kKernelDict, gen.dictionary().kernels.at(0).signature),
                                       encodeKernelDict(gen.dictionary().kernels.at(0))));
  {
    // A keyframe and a delta of one chain, as an ingest session stores them; and as a build
    // before head entry version 2 did (no steps rows).
    model::ChainedStepEncoder encoder({}, 16);
    std::string entry, entry_v1 = "\x01", encoded;
    beginHeadEntry(&entry);
    for (int i = 0; i < 2; ++i) {
      model::StepRecord rec = gen.next();
      rec.step = 16 + static_cast<uint64_t>(i);
      encoded.clear();
      encoder.encode(rec, &encoded);
      appendHeadRecord(&entry, encoded, rec);
      ByteWriter v1(&entry_v1);
      v1.putVarint(rec.step);
      v1.putVarint(rec.attempt);
      v1.putString(encoded);
    }
    const std::string key = encodeHeadKey({.job = 3, .rank = 0, .block_base = 16, .session = 5, .first_seq = 1});
    put("dump_fuzz", "head_entry", dump(1, key, entry));
    put("dump_fuzz", "head_entry_v1", dump(1, key, entry_v1));
  }
  std::vector<int64_t> steps = {0, 1, 2};
  put("dump_fuzz", "chunk_steps",
      dump(2, encodeChunkKey({.job = 3, .table = Table::kSteps, .column = kStepsColumnId}),
           ChunkWriter::encodeIntColumn(ColumnType::kUInt64, steps, nullptr, 0, 2)));
  std::vector<DurationHistogram> hists(2);
  hists[0].add(1234, 3);
  hists[1].add(99999, 1);
  put("dump_fuzz", "chunk_hists",
      dump(2, encodeChunkKey({.job = 3, .table = Table::kKernels, .column = 7}), ChunkWriter::encodeHistColumn(hists, nullptr, 0, 1)));
}

void authSeeds() {
  put("auth_fuzz", "basic", "# tokens for argusd --auth\nllama-70b s3cret\nllama-70b n3w-s3cret   # rotation\n\n* fallback\n");
  put("auth_fuzz", "crlf", "job.a\ttok1\r\njob_b tok2\r\n");
  put("auth_fuzz", "bad_line", "job only\nthree fields here\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds OUT_DIR\n");
    return 2;
  }
  g_out = argv[1];
  stepSeeds();
  histogramSeeds();
  wireSeeds();
  chunkSeeds();
  codecSeeds();
  blockSeeds();
  metaSeeds();
  authSeeds();
  std::printf("make_seeds: wrote %zu files, %zu bytes, under %s\n", g_files, g_bytes, g_out.c_str());
  return 0;
}
