# Argus wire protocol, version 2 (docs/wire/protocol.md).
# Every message travels in a frame: a 4-byte little-endian length, then one Cap'n Proto
# message in the standard (unpacked) serialization. Field numbers are never reused;
# retired fields stay in the schema, marked as such.
@0xcd3c8c10853717d2;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("argus::wire::schema");

const protocolVersion :UInt16 = 2;

# --- client -> server -------------------------------------------------------------------

struct ClientMessage {
  union {
    hello @0 :Hello;            # must be the first message of a session, exactly once
    dictionary @1 :Dictionary;  # text behind ids; before the records that use them
    steps @2 :StepBatch;
    goodbye @3 :Void;           # client is done; server acks what is durable and closes
  }
}

struct Hello {
  protocolVersion @0 :UInt16;
  job @1 :Text;                 # 1-128 bytes of [A-Za-z0-9._-]
  authToken @2 :Text;           # empty when the server runs without auth
  topology @3 :Topology;
  clock @4 :ClockInfo;
  encoding @5 :UInt8;           # StepRecord encoding version (docs/wire/step-record.md)
  client @6 :Text;              # "argus-capture/0.1", "argus-import/0.1" ... for logs
}

struct Topology {
  rank @0 :UInt32;
  worldSize @1 :UInt32;
  host @2 :Text;
  localRank @3 :UInt32;
  device @4 :UInt32;
  tpRank @5 :UInt32;
  tpSize @6 :UInt32;
  ppRank @7 :UInt32;
  ppSize @8 :UInt32;
  dpRank @9 :UInt32;
  dpSize @10 :UInt32;
  cpRank @11 :UInt32;
  cpSize @12 :UInt32;
  epRank @13 :UInt32;
  epSize @14 :UInt32;
}

struct ClockInfo {
  unixNs @0 :Int64;             # client's Unix clock when Hello was built
  monotonicNs @1 :Int64;        # its monotonic clock at the same moment
}

struct Dictionary {
  kernels @0 :List(KernelEntry);
  stacks @1 :List(StackEntry);
  strings @2 :List(StringEntry);
}

struct KernelEntry {
  signature @0 :UInt64;
  name @1 :Text;
  gridX @2 :UInt32;
  gridY @3 :UInt32;
  gridZ @4 :UInt32;
  blockX @5 :UInt32;
  blockY @6 :UInt32;
  blockZ @7 :UInt32;
}

struct StackEntry {
  stackId @0 :UInt64;
  frames @1 :List(Text);        # leaf first
}

struct StringEntry {
  id @0 :UInt64;
  text @1 :Text;
}

# Records numbered firstSeq, firstSeq+1, ...; sequence numbers start at 1 in each session
# and never skip. Each record is one StepEncoder output (delta against the previous record
# of the session, keyframe first).
struct StepBatch {
  firstSeq @0 :UInt64;
  records @1 :List(Data);
}

# --- server -> client -------------------------------------------------------------------

struct ServerMessage {
  union {
    welcome @0 :Welcome;
    ack @1 :Ack;
    control @2 :Control;
    close @3 :Close;
  }
}

struct Welcome {
  protocolVersion @0 :UInt16;
  sessionId @1 :UInt64;         # for matching logs on both sides
  maxFrameBytes @2 :UInt32;     # the server's frame limit; larger frames close the session
  blockSteps @3 :UInt32;        # delta chains restart at every multiple of this step (a power of two)
}

# Every record with seq <= upTo is durable (docs/wire/protocol.md, "Durability").
struct Ack {
  upTo @0 :UInt64;
}

struct Control {
  union {
    dumpFlightRecorder @0 :StepRange;  # write raw events of these steps to a trace file
    draining @1 :UInt32;               # server is shutting down: reconnect after this many ms
  }
}

struct StepRange {
  fromStep @0 :UInt64;
  toStep @1 :UInt64;            # inclusive
}

# The server closes the session after sending this. code is argus::Status::Code.
struct Close {
  code @0 :UInt8;
  reason @1 :Text;
}
