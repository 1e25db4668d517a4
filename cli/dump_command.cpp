#include "cli/dump_command.h"

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "cli/record_text.h"
#include "model/step_codec.h"
#include "storage/chunk_dump.h"
#include "storage/keys.h"
#include "storage/rocks_store.h"
#include "wire/frame.h"
#include "wire/messages.h"

namespace argus::cli {

namespace {

struct StoreDumpOptions {
  std::string data_dir;
  std::string cf = "all";
  uint64_t limit = 0;  // 0: everything
};

int dumpStore(const StoreDumpOptions& o) {
  Result<std::unique_ptr<storage::RocksStore>> store = storage::RocksStore::openReadOnly(o.data_dir);
  if (!store.isOk()) {
    std::fprintf(stderr, "argus dump: cannot open %s: %s\n", o.data_dir.c_str(), store.status().toString().c_str());
    return 1;
  }
  int rc = 0;
  for (const char* cf : {"meta", "head", "chunk"}) {
    if (o.cf != "all" && o.cf != cf) continue;
    uint64_t shown = 0;
    Status s = (*store)->forEachRaw(cf, [&](std::string_view key, std::string_view value) {
      std::string text = storage::describeValue(cf, key, value);
      std::printf("%s %s\n", storage::describeKey(cf, key).c_str(), text.c_str());
      return o.limit == 0 || ++shown < o.limit;
    });
    if (!s.isOk()) {
      std::fprintf(stderr, "argus dump: %s: %s\n", cf, s.toString().c_str());
      rc = 1;
    }
  }
  return rc;
}

std::string describeClientMessage(const wire::ClientMessage& m, model::StepDecoder& decoder) {
  std::string out = std::string("client ") + wire::clientMessageKindName(m.kind);
  switch (m.kind) {
    case wire::ClientMessage::Kind::kHello:
      out += " protocol=" + std::to_string(m.hello.protocol_version) + " job=" + m.hello.job +
             " token=" + (m.hello.auth_token.empty() ? "none" : "(set)") + " encoding=" + std::to_string(m.hello.encoding) +
             " client=" + m.hello.client + " " + describeTopology(m.hello.topology) + "\n";
      decoder.reset();
      break;
    case wire::ClientMessage::Kind::kDictionary:
      out += " kernels=" + std::to_string(m.dictionary.kernels.size()) + " stacks=" + std::to_string(m.dictionary.stacks.size()) +
             " strings=" + std::to_string(m.dictionary.strings.size()) + "\n";
      for (const auto& k : m.dictionary.kernels) {
        char sig[24];
        std::snprintf(sig, sizeof sig, "%016" PRIx64, k.signature);
        out += std::string("  kernel sig=") + sig + " name=" + k.name + "\n";
      }
      for (const auto& s : m.dictionary.strings) out += "  string id=" + std::to_string(s.id) + " text=" + s.text + "\n";
      break;
    case wire::ClientMessage::Kind::kSteps: {
      out += " first_seq=" + std::to_string(m.steps.first_seq) + " records=" + std::to_string(m.steps.records.size()) + "\n";
      uint64_t seq = m.steps.first_seq;
      for (std::string_view bytes : m.steps.records) {
        model::StepRecord rec;
        Status s = decoder.decode(bytes, &rec);
        out += "  seq=" + std::to_string(seq++) + " bytes=" + std::to_string(bytes.size()) + " ";
        out += s.isOk() ? describeStepRecord(rec) : "CORRUPT: " + s.toString() + "\n";
      }
      break;
    }
    case wire::ClientMessage::Kind::kGoodbye:
      out += "\n";
      break;
  }
  return out;
}

std::string describeServerMessage(const wire::ServerMessage& m) {
  switch (m.kind) {
    case wire::ServerMessage::Kind::kWelcome:
      return "server welcome protocol=" + std::to_string(m.welcome.protocol_version) + " session=" + std::to_string(m.welcome.session_id) +
             " max_frame_bytes=" + std::to_string(m.welcome.max_frame_bytes) +
             " block_steps=" + std::to_string(m.welcome.block_steps) + "\n";
    case wire::ServerMessage::Kind::kAck:
      return "server ack up_to=" + std::to_string(m.ack_up_to) + "\n";
    case wire::ServerMessage::Kind::kControl:
      if (m.control.kind == wire::Control::Kind::kDraining) return "server control draining_ms=" + std::to_string(m.control.draining_ms) + "\n";
      return "server control dump_flight_recorder steps=" + std::to_string(m.control.from_step) + ".." + std::to_string(m.control.to_step) + "\n";
    case wire::ServerMessage::Kind::kClose:
      return "server close " + m.close.toStatus().toString() + "\n";
  }
  return "server unknown\n";
}

// Reads frames back to back from `path` (as they travel on a socket) and prints each.
int dumpWire(const std::string& path, bool from_server) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "argus dump: cannot read %s\n", path.c_str());
    return 1;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  wire::FrameLimits limits;
  model::StepDecoder decoder;
  size_t offset = 0;
  wire::FrameBody body;
  while (offset < bytes.size()) {
    if (bytes.size() - offset < wire::kFrameHeaderBytes) {
      std::fprintf(stderr, "argus dump: %s: truncated frame header at offset %zu\n", path.c_str(), offset);
      return 1;
    }
    uint32_t body_bytes = 0;
    Status s = wire::parseFrameHeader(reinterpret_cast<const uint8_t*>(bytes.data() + offset), limits, &body_bytes);
    if (s.isOk() && bytes.size() - offset - wire::kFrameHeaderBytes < body_bytes) {
      s = Status::corruption("frame body truncated: " + std::to_string(body_bytes) + " bytes announced");
    }
    if (!s.isOk()) {
      std::fprintf(stderr, "argus dump: %s: frame at offset %zu: %s\n", path.c_str(), offset, s.toString().c_str());
      return 1;
    }
    body.assign(bytes.data() + offset + wire::kFrameHeaderBytes, body_bytes);
    std::printf("frame offset=%zu bytes=%u ", offset, body_bytes);
    if (from_server) {
      wire::ServerMessage m;
      s = wire::decodeServerMessage(body, limits, &m);
      if (s.isOk()) std::printf("%s", describeServerMessage(m).c_str());
    } else {
      wire::ClientMessage m;
      s = wire::decodeClientMessage(body, limits, &m);
      if (s.isOk()) std::printf("%s", describeClientMessage(m, decoder).c_str());
    }
    if (!s.isOk()) {
      std::printf("CORRUPT: %s\n", s.toString().c_str());
      return 1;
    }
    offset += wire::kFrameHeaderBytes + body_bytes;
  }
  return 0;
}

}  // namespace

void addDumpCommand(CLI::App& app, int* exit_code) {
  CLI::App* dump = app.add_subcommand("dump", "Decode stored objects and wire frames to text");
  dump->group("");  // hidden from `argus --help`: a tool for tests and people who debug formats
  dump->require_subcommand(1);

  auto store_options = std::make_shared<StoreDumpOptions>();
  CLI::App* store = dump->add_subcommand("store", "Decode a data directory's meta entries, head entries and chunks");
  store->add_option("--data", store_options->data_dir, "argusd data directory")->required();
  store->add_option("--cf", store_options->cf, "column family")->check(CLI::IsMember({"all", "meta", "head", "chunk"}))->capture_default_str();
  store->add_option("--limit", store_options->limit, "most entries per column family (0: all)");
  store->group("Subcommands");  // subcommands inherit dump's hidden group; `argus dump --help` lists them
  store->callback([store_options, exit_code] { *exit_code = dumpStore(*store_options); });

  auto wire_path = std::make_shared<std::string>();
  auto from_server = std::make_shared<bool>(false);
  CLI::App* wire_cmd = dump->add_subcommand("wire", "Decode a file of wire frames (as sent on an ingest socket)");
  wire_cmd->add_option("file", *wire_path, "file holding frames back to back")->required();
  wire_cmd->add_flag("--server", *from_server, "the frames were sent by argusd (Welcome, Ack, Close ...)");
  wire_cmd->group("Subcommands");
  wire_cmd->callback([wire_path, from_server, exit_code] { *exit_code = dumpWire(*wire_path, *from_server); });
}

}  // namespace argus::cli
