// HeadDecoder: head entries decode a (session, block) chain at a time, keep one record per
// (step, attempt) with the latest delivery winning, and refuse what contradicts its key.
#include "storage/head_entry.h"

#include <doctest/doctest.h>

#include "model/step_chain.h"
#include "simulate/synthetic_steps.h"

using namespace argus;
using namespace argus::storage;

namespace {

constexpr uint32_t kBlock = 16;

std::vector<model::StepRecord> synth(uint32_t rank, uint64_t from, uint64_t to, int64_t start = 0) {
  simulate::SyntheticSteps gen(rank, 8);
  std::vector<model::StepRecord> out;
  for (uint64_t s = from; s < to; ++s) {
    model::StepRecord r = gen.next();
    r.step = s;
    r.start_ns = start + static_cast<int64_t>(s);
    out.push_back(r);
  }
  return out;
}

// The records of one session as entries of at most `per_entry` records, split at blocks.
std::vector<std::pair<HeadKey, std::string>> entries(const std::vector<model::StepRecord>& recs, uint64_t session, size_t per_entry,
                                                     uint32_t block = kBlock) {
  model::ChainedStepEncoder encoder({}, block);
  std::vector<std::pair<HeadKey, std::string>> out;
  std::string encoded;
  for (size_t i = 0; i < recs.size(); ++i) {
    uint64_t base = recs[i].step - recs[i].step % block;
    if (out.empty() || out.back().first.block_base != base || i % per_entry == 0) {
      out.push_back({HeadKey{1, recs[i].rank, base, session, i + 1}, ""});
      beginHeadEntry(&out.back().second);
    }
    encoded.clear();
    encoder.encode(recs[i], &encoded);
    appendHeadRecord(&out.back().second, encoded, recs[i]);
  }
  return out;
}

}  // namespace

TEST_CASE("entries of one session decode across entry boundaries; a step range keeps its records only") {
  auto recs = synth(2, 3, 40);
  HeadDecoder head(kBlock);
  for (const auto& [key, value] : entries(recs, 7, 5)) REQUIRE(head.add(key, value, 10, 35).isOk());
  CHECK(head.decoded() == recs.size() - 5);  // steps 35-39 are after the range: never needed
  auto& rows = head.sorted();
  REQUIRE(rows.size() == 25);
  for (size_t i = 0; i < rows.size(); ++i) CHECK(*rows[i] == recs[10 - 3 + i]);
}

TEST_CASE("a range late in a block decodes from the last keyframe before it, not from the block's start") {
  constexpr uint32_t kBigBlock = 256;  // chains of model::kChainSteps (32) steps within it
  auto recs = synth(2, 0, 120);
  const auto all = entries(recs, 7, 1, kBigBlock);  // one record per entry, as a live job sends them
  HeadDecoder head(kBigBlock);
  for (const auto& [key, value] : all) REQUIRE(head.add(key, value, 70, 80).isOk());
  CHECK(head.decoded() == 80 - 64);  // the chain of steps 64-95, up to the range's end
  auto& rows = head.sorted();
  REQUIRE(rows.size() == 10);
  for (size_t i = 0; i < rows.size(); ++i) CHECK(*rows[i] == recs[70 + i]);
  // The whole block still decodes, every record.
  head.clear();
  for (const auto& [key, value] : all) REQUIRE(head.add(key, value).isOk());
  CHECK(head.decoded() == recs.size());
  CHECK(head.sorted().size() == recs.size());
}

TEST_CASE("a damaged record is Corruption naming its own entry when a later record needs it, and unread when none does") {
  constexpr uint32_t kBigBlock = 256;
  auto recs = synth(2, 64, 67);  // a keyframe at 64, deltas at 65 and 66
  auto all = entries(recs, 7, 1, kBigBlock);
  REQUIRE(all.size() == 3);
  // Entry of step 65: its record's version nibble made unknown (still not a keyframe).
  std::string& damaged = all[1].second;
  HeadEntryReader reader(damaged);
  REQUIRE(reader.begin().isOk());
  HeadEntryReader::Record rec;
  REQUIRE(reader.next(&rec).isOk());
  damaged[static_cast<size_t>(rec.encoded.data() - damaged.data())] = static_cast<char>(0xF0);
  {
    HeadDecoder head(kBigBlock);
    for (const auto& [key, value] : all) REQUIRE(head.add(key, value, 64, 65).isOk());  // 65 and 66 never needed
    REQUIRE(head.sorted().size() == 1);
    CHECK(head.decoded() == 1);
  }
  HeadDecoder head(kBigBlock);
  REQUIRE(head.add(all[0].first, all[0].second, 66, 67).isOk());
  REQUIRE(head.add(all[1].first, all[1].second, 66, 67).isOk());  // deferred, not read yet
  Status s = head.add(all[2].first, all[2].second, 66, 67);
  CHECK(s.isCorruption());
  CHECK(s.message().find(describeKey(kHeadCf, encodeHeadKey(all[1].first))) != std::string::npos);
  CHECK(s.message().find("step 65") != std::string::npos);
}

TEST_CASE("re-deliveries in a later session win; attempts are kept apart") {
  auto first = synth(0, 0, 16, 1000);
  auto again = synth(0, 8, 16, 2000);  // same steps, other content, later session
  auto retry = synth(0, 4, 6, 3000);
  for (auto& r : retry) r.attempt = 1;
  HeadDecoder head(kBlock);
  for (const auto& [key, value] : entries(first, 5, 100)) REQUIRE(head.add(key, value).isOk());
  for (const auto& [key, value] : entries(again, 9, 3)) REQUIRE(head.add(key, value).isOk());
  for (const auto& [key, value] : entries(retry, 11, 100)) REQUIRE(head.add(key, value).isOk());
  auto& rows = head.sorted();
  REQUIRE(rows.size() == 18);
  size_t i = 0;
  for (uint64_t s = 0; s < 16; ++s) {
    CHECK(rows[i]->step == s);
    CHECK(rows[i]->attempt == 0);
    CHECK(rows[i]->start_ns == (s < 8 ? 1000 : 2000) + static_cast<int64_t>(s));
    ++i;
    if (s == 4 || s == 5) {
      CHECK(rows[i]->step == s);
      CHECK(rows[i]->attempt == 1);
      ++i;
    }
  }
}

TEST_CASE("an entry that contradicts its key, breaks its chain or is cut short is Corruption naming the key") {
  auto recs = synth(4, 0, 20);
  auto good = entries(recs, 3, 6);  // block 0: steps 0-5, 6-11, 12-15; block 16: 16-17, 18-19
  REQUIRE(good.size() == 5);
  // Records, and rows of a light table: the block is checked without decoding too.
  auto expectCorrupt = [](const HeadKey& key, const std::string& value, const char* why, bool rows_too = true) {
    std::vector<HeadDecoder> decoders;
    decoders.emplace_back(kBlock);
    if (rows_too) decoders.emplace_back(kBlock, Table::kSteps);
    for (HeadDecoder& head : decoders) {
      Status s = head.add(key, value);
      CAPTURE(why);
      CHECK(s.isCorruption());
      CHECK(s.message().find(describeKey(kHeadCf, encodeHeadKey(key))) != std::string::npos);
    }
  };
  // The key says another rank, another block.
  HeadKey k = good[0].first;
  k.rank = 5;
  expectCorrupt(k, good[0].second, "rank", false);  // a read of rows trusts the key's rank
  k = good[0].first;
  k.block_base = 16;
  expectCorrupt(k, good[0].second, "block");
  // The entry header says another step than the record.
  std::string value;
  beginHeadEntry(&value);
  model::ChainedStepEncoder encoder({}, kBlock);
  std::string bytes;
  encoder.encode(recs[0], &bytes);
  model::StepRecord header = recs[0];
  header.step = 1;
  appendHeadRecord(&value, bytes, header);
  expectCorrupt(good[0].first, value, "header step", false);  // within the block: rows trust it
  // Truncated; unknown version; empty.
  expectCorrupt(good[0].first, good[0].second.substr(0, good[0].second.size() - 1), "truncated");
  expectCorrupt(good[0].first, "\x09" + good[0].second.substr(1), "version");
  expectCorrupt(good[0].first, "", "empty");
}

TEST_CASE("orphans: deltas whose chain start was never written are skipped and counted, up to the next keyframe") {
  auto recs = synth(4, 0, 20);
  auto good = entries(recs, 3, 6);  // block 0: steps 0-5, 6-11, 12-15; block 16: 16-17, 18-19
  {
    INFO("the first entry of a chain is missing (a later group commit reached the WAL first)");
    HeadDecoder head(kBlock);
    for (size_t i = 1; i < good.size(); ++i) REQUIRE(head.add(good[i].first, good[i].second).isOk());
    CHECK(head.orphaned() == 10);  // steps 6-15; block 16 starts with a keyframe
    REQUIRE(head.sorted().size() == 4);
    CHECK(head.sorted()[0]->step == 16);
  }
  {
    INFO("a gap inside a chain: the entry after it is orphaned, the keyframe of the next block is not");
    HeadDecoder head(kBlock);
    REQUIRE(head.add(good[0].first, good[0].second).isOk());
    REQUIRE(head.add(good[2].first, good[2].second).isOk());
    REQUIRE(head.add(good[3].first, good[3].second).isOk());
    CHECK(head.orphaned() == 4);  // steps 12-15
    CHECK(head.sorted().size() == 6 + 2);
  }
  {
    INFO("another session's entry never continues a chain");
    HeadDecoder head(kBlock);
    REQUIRE(head.add(good[0].first, good[0].second).isOk());
    HeadKey k = good[1].first;
    k.session = 4;
    REQUIRE(head.add(k, good[1].second).isOk());
    CHECK(head.orphaned() == 6);
  }
}

namespace {

// Records with events on some steps (none on others), so that the events rows vary.
std::vector<model::StepRecord> withEvents(std::vector<model::StepRecord> recs) {
  for (size_t i = 0; i < recs.size(); ++i) {
    for (size_t e = 0; e < i % 3; ++e) {
      recs[i].events.push_back(model::EventRecord{model::EventKind::kMarker, recs[i].start_ns + static_cast<int64_t>(e), e, 7 + e});
    }
  }
  return recs;
}

// Entries as a build before head entry version 2 wrote them: no light rows.
std::vector<std::pair<HeadKey, std::string>> version1Entries(const std::vector<model::StepRecord>& recs, uint64_t session, size_t per_entry) {
  model::ChainedStepEncoder encoder({}, kBlock);
  std::vector<std::pair<HeadKey, std::string>> out;
  std::string encoded;
  for (size_t i = 0; i < recs.size(); ++i) {
    uint64_t base = recs[i].step - recs[i].step % kBlock;
    if (out.empty() || out.back().first.block_base != base || i % per_entry == 0) out.push_back({HeadKey{1, recs[i].rank, base, session, i + 1}, "\x01"});
    encoded.clear();
    encoder.encode(recs[i], &encoded);
    ByteWriter w(&out.back().second);
    w.putVarint(recs[i].step);
    w.putVarint(recs[i].attempt);
    w.putString(encoded);
  }
  return out;
}

// The decoder's rows are those of `expected`, a record at a time.
void checkRows(HeadDecoder& head, Table t, const std::vector<model::StepRecord>& expected) {
  const auto& rows = head.sortedRows();
  REQUIRE(rows.size() == expected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].step == expected[i].step);
    CHECK(rows[i].attempt == expected[i].attempt);
    std::vector<int64_t> want;
    CHECK(rows[i].rows == lightRowsOf(t, expected[i], &want));
    std::span<const int64_t> got = head.valuesOf(rows[i]);
    CHECK(std::vector<int64_t>(got.begin(), got.end()) == want);
  }
}

}  // namespace

TEST_CASE("a light-rows decoder takes version-2 rows without decoding; version-1 records are decoded for theirs") {
  auto recs = withEvents(synth(2, 3, 40));
  const std::vector<model::StepRecord> in_range(recs.begin() + 7, recs.begin() + 32);  // steps 10-34
  for (Table t : kLightTables) {
    CAPTURE(tableName(t));
    {
      HeadDecoder head(kBlock, t);
      for (const auto& [key, value] : entries(recs, 7, 5)) REQUIRE(head.add(key, value, 10, 35).isOk());
      CHECK(head.decoded() == 0);
      checkRows(head, t, in_range);
    }
    HeadDecoder head(kBlock, t);
    for (const auto& [key, value] : version1Entries(recs, 7, 5)) REQUIRE(head.add(key, value, 10, 35).isOk());
    CHECK(head.decoded() == recs.size() - 5);
    checkRows(head, t, in_range);
  }
  // The records of version 1 read as before.
  HeadDecoder records(kBlock);
  for (const auto& [key, value] : version1Entries(recs, 7, 5)) REQUIRE(records.add(key, value, 10, 35).isOk());
  REQUIRE(records.sorted().size() == in_range.size());
  for (size_t i = 0; i < in_range.size(); ++i) CHECK(*records.sorted()[i] == in_range[i]);
}

TEST_CASE("light rows follow the records a records decoder keeps: orphans skipped, later deliveries winning, attempts apart") {
  auto recs = withEvents(synth(2, 3, 40));
  auto again = withEvents(synth(2, 20, 30, 5000));
  auto retry = synth(2, 25, 27, 9000);
  for (auto& r : retry) r.attempt = 1;
  std::vector<std::pair<HeadKey, std::string>> all = entries(recs, 7, 5);
  all.erase(all.begin() + 1);  // steps 8-12 never written: 13-15 lost their chain's start
  for (auto& e : entries(again, 9, 4)) all.push_back(e);
  for (auto& e : entries(retry, 11, 4)) all.push_back(e);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return encodeHeadKey(a.first) < encodeHeadKey(b.first); });
  HeadDecoder records(kBlock);
  for (const auto& [key, value] : all) REQUIRE(records.add(key, value).isOk());
  CHECK(records.orphaned() == 3);
  std::vector<model::StepRecord> expected;
  for (const model::StepRecord* r : records.sorted()) expected.push_back(*r);
  for (Table t : kLightTables) {
    CAPTURE(tableName(t));
    HeadDecoder rows(kBlock, t);
    for (const auto& [key, value] : all) REQUIRE(rows.add(key, value).isOk());
    CHECK(rows.decoded() == 0);
    CHECK(rows.orphaned() == records.orphaned());
    checkRows(rows, t, expected);
  }
}

TEST_CASE("a chain that goes on from version-2 entries into version-1 ones decodes the records whose rows it took") {
  auto recs = withEvents(synth(2, 0, 12));
  auto v2 = entries(recs, 7, 6);
  auto v1 = version1Entries(recs, 7, 6);
  REQUIRE(v2.size() == 2);
  HeadDecoder head(kBlock, Table::kEvents);
  REQUIRE(head.add(v2[0].first, v2[0].second).isOk());
  CHECK(head.decoded() == 0);
  REQUIRE(head.add(v1[1].first, v1[1].second).isOk());  // steps 6-11 are deltas on steps 0-5
  CHECK(head.decoded() == 12);
  checkRows(head, Table::kEvents, recs);
}

TEST_CASE("light rows that are not their record's, too narrow or cut short are Corruption; extra columns are read past") {
  auto recs = withEvents(synth(4, 0, 3));
  const model::StepRecord& rec = recs[2];  // two events
  model::ChainedStepEncoder encoder({}, kBlock);
  std::string keyframe;
  encoder.encode(rec, &keyframe);
  const HeadKey key{1, 4, 0, 3, 1};
  // An entry of the record with its light rows as given: {columns, rows, values} per table.
  struct Section {
    uint64_t columns, rows;
    std::vector<int64_t> values;
  };
  auto entryStart = [&] {  // the record, its light rows still to come
    std::string value;
    beginHeadEntry(&value);
    ByteWriter w(&value);
    w.putVarint(rec.step);
    w.putVarint(rec.attempt);
    w.putString(keyframe);
    return value;
  };
  auto entryWithPart = [&](const std::string& part) {
    std::string value = entryStart();
    ByteWriter(&value).putString(part);
    return value;
  };
  auto partOf = [](const std::vector<Section>& sections) {
    std::string part;
    ByteWriter w(&part);
    for (const Section& s : sections) {
      w.putVarint(s.columns);
      w.putVarint(s.rows);
      for (int64_t v : s.values) w.putSignedVarint(v);
    }
    return part;
  };
  auto entryWith = [&](const std::vector<Section>& sections) { return entryWithPart(partOf(sections)); };
  std::vector<Section> good;
  for (Table t : kLightTables) {
    Section s{lightColumns(t), 0, {}};
    s.rows = lightRowsOf(t, rec, &s.values);
    good.push_back(s);
  }
  REQUIRE(good[1].rows == 2);
  {
    HeadDecoder verify(kBlock);
    CHECK(verify.check(key, entryWith(good)).isOk());
  }
  for (size_t ix = 0; ix < kLightTableCount; ++ix) {
    const Table t = kLightTables[ix];
    CAPTURE(tableName(t));
    {
      INFO("a wrong value: decoding the record finds it (records reads, argus verify); a read of the rows trusts it");
      auto wrong = good;
      wrong[ix].values[1] += 1;
      const std::string value = entryWith(wrong);
      HeadDecoder records(kBlock);
      Status s = records.add(key, value);
      CHECK(s.isCorruption());
      CHECK(s.message().find(std::string(tableName(t)) + " rows stored with the record of step 2") != std::string::npos);
      CHECK(s.message().find(describeKey(kHeadCf, encodeHeadKey(key))) != std::string::npos);
      HeadDecoder verify(kBlock);
      CHECK(verify.check(key, value).isCorruption());
      HeadDecoder rows(kBlock, t);
      REQUIRE(rows.add(key, value).isOk());
      CHECK(rows.valuesOf(rows.sortedRows().at(0))[1] == good[ix].values[1] + 1);
    }
    {
      INFO("columns past the ones this build knows");
      auto wider = good;
      wider[ix].columns += 1;
      wider[ix].values.clear();
      for (size_t r = 0; r < good[ix].rows; ++r) {
        for (size_t c = 0; c < lightColumns(t); ++c) wider[ix].values.push_back(good[ix].values[r * lightColumns(t) + c]);
        wider[ix].values.push_back(-77);
      }
      HeadDecoder rows(kBlock, t);
      REQUIRE(rows.add(key, entryWith(wider)).isOk());
      std::span<const int64_t> got = rows.valuesOf(rows.sortedRows().at(0));
      CHECK(std::vector<int64_t>(got.begin(), got.end()) == good[ix].values);
      HeadDecoder verify(kBlock);
      CHECK(verify.check(key, entryWith(wider)).isOk());
    }
    {
      INFO("too narrow");
      auto narrow = good;
      narrow[ix].columns -= 1;
      narrow[ix].values.resize(narrow[ix].rows * narrow[ix].columns);
      HeadDecoder rows(kBlock, t);
      Status s = rows.add(key, entryWith(narrow));
      CHECK(s.isCorruption());
      CHECK(s.message().find(std::string(tableName(t)) + " rows of " + std::to_string(lightColumns(t) - 1) + " columns") != std::string::npos);
    }
  }
  {
    INFO("a steps section of two rows; a row count past the bytes; cut short");
    auto two = good;
    two[0].rows = 2;
    two[0].values.insert(two[0].values.end(), good[0].values.begin(), good[0].values.end());
    HeadDecoder head(kBlock, Table::kSteps);
    CHECK(head.add(key, entryWith(two)).isCorruption());
    auto many = good;
    many[1].rows = uint64_t{1} << 40;
    head.clear();
    CHECK(head.add(key, entryWith(many)).isCorruption());
    const std::string full = entryWith(good);
    head.clear();
    CHECK(head.add(key, full.substr(0, full.size() - 1)).isCorruption());
    INFO("an events section that runs past the light part's length");
    const std::string part = partOf(good);
    head.clear();
    Status s = head.add(key, entryWithPart(part.substr(0, part.size() - 1)) + part.back());
    CHECK(s.isCorruption());
    CHECK(s.message().find("events light rows cut short") != std::string::npos);
  }
  {
    INFO("a section after events (a later build's table): read past by rows and records alike");
    const std::string value = entryWithPart(partOf({good[0], good[1], Section{2, 1, {5, -6}}}));
    for (Table t : kLightTables) {
      HeadDecoder rows(kBlock, t);
      REQUIRE(rows.add(key, value).isOk());
      std::span<const int64_t> got = rows.valuesOf(rows.sortedRows().at(0));
      CHECK(std::vector<int64_t>(got.begin(), got.end()) == good[static_cast<size_t>(lightIndex(t))].values);
    }
    HeadDecoder verify(kBlock);
    CHECK(verify.check(key, value).isOk());
  }
  {
    INFO("a varint past 64 bits in a row: Corruption for a read of the rows and for one of the record");
    std::string part;
    ByteWriter w(&part);
    w.putVarint(lightColumns(Table::kSteps));
    w.putVarint(1);
    for (size_t c = 1; c < lightColumns(Table::kSteps); ++c) w.putVarint(0);
    part += std::string(10, '\xff') + '\x01';
    w.putVarint(lightColumns(Table::kEvents));
    w.putVarint(0);
    const std::string value = entryWithPart(part);
    HeadDecoder rows(kBlock, Table::kSteps), records(kBlock);
    Status s = rows.add(key, value);
    CHECK(s.isCorruption());
    CHECK(s.message().find("overflows") != std::string::npos);
    CHECK(records.add(key, value).isCorruption());
  }
}
