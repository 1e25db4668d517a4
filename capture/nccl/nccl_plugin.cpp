#include "capture/nccl/nccl_plugin.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "capture/nccl/descriptor_names.h"
#include "capture/nvtx/epoch_clock.h"

namespace argus::capture::nccl {
namespace {

using nvtx::EpochClock;

uint32_t threadId() {
  static thread_local uint32_t tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  return tid;
}

template <typename T>
void atomicMax(std::atomic<T>& a, T v) {
  T cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

template <typename T>
void atomicMin(std::atomic<T>& a, T v) {
  T cur = a.load(std::memory_order_relaxed);
  while (v < cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

void bump(std::atomic<uint64_t>& c) {
  c.fetch_add(1, std::memory_order_relaxed);
}

// A descriptor's type: 8 bits in v4, 64 in v5; Argus knows the low 32.
template <typename Descr>
uint32_t typeOf(const Descr* d) {
  return static_cast<uint32_t>(d->type);
}

}  // namespace

Plugin& Plugin::instance() {
  // Leaked on purpose: NCCL's proxy threads may call while static destructors run.
  static Plugin* p = new Plugin();
  return *p;
}

bool Plugin::configure(const PluginOptions& options) {
  if (queue_ready_.load(std::memory_order_acquire) || alloc_failed_.load()) return false;
  options_ = options;
  period_.store(options.sample_period, std::memory_order_relaxed);
  return true;
}

void Plugin::setEnabled(bool on) {
  enabled_.store(on, std::memory_order_relaxed);
  if (int* m = mask_.load(std::memory_order_acquire)) __atomic_store_n(m, on ? baseMask() : 0, __ATOMIC_RELAXED);
}

abi::Result Plugin::init(void** context, int* activation_mask, uint64_t comm_hash, int nranks, int rank, bool v5) {
  if (context == nullptr || activation_mask == nullptr) return abi::kInternalError;
  *context = nullptr;
  // The first init allocates everything the event path uses; later ones wait for it (init
  // is NCCL's communicator setup, not an event path).
  std::call_once(alloc_once_, [this] {
    try {
      uint32_t q = 2;
      while (q < options_.queue_records && q < (1u << 24)) q <<= 1;
      pool_ = std::make_unique<EventPool>(std::clamp<uint32_t>(options_.pool_events, 16, 1u << 24));
      queue_ = std::make_unique<RecordQueue>(q);
      contexts_ = std::make_unique<Context[]>(kMaxContexts);
      group_event_.kind.store(EventKind::kGroup, std::memory_order_relaxed);
      queue_ready_.store(true, std::memory_order_release);
    } catch (const std::bad_alloc&) {
      alloc_failed_.store(true);
    }
  });
  if (!queue_ready_.load(std::memory_order_acquire)) return abi::kInternalError;
  for (uint32_t i = 0; i < kMaxContexts; ++i) {
    bool expected = false;
    if (contexts_[i].used.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      Context& c = contexts_[i];
      c.comm_hash = comm_hash;
      c.nranks = nranks;
      c.rank = rank;
      *context = &c;
      break;
    }
  }
  // More communicators than contexts: this one runs unprofiled (null context, refused events).
  bump(counters_.contexts);
  if (v5) api_events_.store(true, std::memory_order_relaxed);
  live_inits_.fetch_add(1, std::memory_order_relaxed);
  mask_.store(activation_mask, std::memory_order_release);
  uint32_t period = period_.load(std::memory_order_relaxed);
  int mask = enabled() ? baseMask() | (period == 1 ? kSampledMask : 0) : 0;
  __atomic_store_n(activation_mask, mask, __ATOMIC_RELAXED);
  return abi::kSuccess;
}

abi::Result Plugin::finalize(void* context) {
  if (context != nullptr) static_cast<Context*>(context)->used.store(false, std::memory_order_release);
  // Once every communicator is finalized the mask may be gone with its owner (NCCL's is a
  // global, a harness's need not be): stop writing to it.
  uint32_t live = live_inits_.load(std::memory_order_relaxed);
  while (live > 0 && !live_inits_.compare_exchange_weak(live, live - 1, std::memory_order_acq_rel)) {
  }
  if (live == 1) mask_.store(nullptr, std::memory_order_release);
  return abi::kSuccess;
}

void Plugin::setSamplePeriod(uint32_t period) {
  period_.store(period, std::memory_order_relaxed);
  int* m = mask_.load(std::memory_order_acquire);
  if (m == nullptr || !enabled()) return;
  if (period == 0) __atomic_fetch_and(m, ~kSampledMask, __ATOMIC_RELAXED);
  if (period == 1) __atomic_fetch_or(m, kSampledMask, __ATOMIC_RELAXED);
}

void Plugin::sample() {
  int* m = mask_.load(std::memory_order_relaxed);
  if (m == nullptr) return;
  uint32_t period = period_.load(std::memory_order_relaxed);
  bool on = period == 1 || (period != 0 && (sample_counter_.fetch_add(1, std::memory_order_relaxed) + 1) % period == 0);
  int cur = __atomic_load_n(m, __ATOMIC_RELAXED);
  if (on && (cur & kSampledMask) != kSampledMask) __atomic_fetch_or(m, kSampledMask, __ATOMIC_RELAXED);
  if (!on && (cur & kSampledMask) != 0) __atomic_fetch_and(m, ~kSampledMask, __ATOMIC_RELAXED);
}

template <typename Descr>
abi::Result Plugin::start(void* context, void** handle, const Descr* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;
  if (d == nullptr || !enabled() || !queue_ready_.load(std::memory_order_acquire)) return abi::kSuccess;
  uint32_t type = typeOf(d);
  switch (type) {
    case abi::kGroup:
    case abi::kGroupApi:
    case abi::kCollApi:
    case abi::kP2pApi:
      *handle = &group_event_;
      return abi::kSuccess;
    case abi::kColl:
    case abi::kP2p:
      if (context == nullptr) return abi::kSuccess;
      return startOperation(static_cast<Context*>(context), handle, d);
    case abi::kProxyOp:
    case abi::kProxyStep:
    case abi::kKernelCh:
      return startChild(handle, d, type);
    default:
      bump(counters_.ignored);
      return abi::kSuccess;
  }
}

template <typename Descr>
abi::Result Plugin::startOperation(Context* ctx, void** handle, const Descr* d) {
  bump(counters_.operations);
  // The mask before this operation's sampling decision is the one its group started with.
  int* m = mask_.load(std::memory_order_relaxed);
  int group_mask = m != nullptr ? __atomic_load_n(m, __ATOMIC_RELAXED) : 0;
  sample();
  Event* e = pool_->acquire();
  if (e == nullptr) {
    bump(counters_.lost_operations);
    return abi::kSuccess;
  }
  int64_t now = EpochClock::nowNs();
  CollectiveRecord& r = e->record;
  r = CollectiveRecord{};
  r.comm_hash = ctx->comm_hash;
  r.host_start_ns = now;
  r.thread = threadId();
  uint32_t channels;
  if (typeOf(d) == abi::kColl) {
    r.op = opOfFunc(d->coll.func);
    r.bytes = static_cast<uint64_t>(d->coll.count) * bytesOfDatatype(d->coll.datatype);
    r.algo = algoIndex(d->coll.algo);
    r.proto = protoIndex(d->coll.proto);
    channels = d->coll.nChannels;
  } else {
    r.op = opOfFunc(d->p2p.func);
    r.bytes = static_cast<uint64_t>(d->p2p.count) * bytesOfDatatype(d->p2p.datatype);
    r.peer = d->p2p.peer >= 0 ? static_cast<uint32_t>(d->p2p.peer) : model::CollectiveStat::kNoPeer;
    r.flags = kRecordP2p;
    channels = d->p2p.nChannels;
  }
  e->stopped.store(false, std::memory_order_relaxed);
  e->end_ns.store(now, std::memory_order_relaxed);
  for (auto* a : {&e->peer_wait_ns, &e->send_ns, &e->recv_wait_ns, &e->local_ns}) a->store(0, std::memory_order_relaxed);
  for (auto* a : {&e->send_bytes, &e->recv_bytes, &e->gpu_stop}) a->store(0, std::memory_order_relaxed);
  e->gpu_start.store(UINT64_MAX, std::memory_order_relaxed);
  e->clock_lag_ns.store(INT64_MAX, std::memory_order_relaxed);
  e->steps.store(0, std::memory_order_relaxed);
  e->channels.store(0, std::memory_order_relaxed);
  // NCCL stops the operation once enqueued, before its kernel runs: it stays open until
  // each of its kernel channels has stopped too (when its group has kernel-channel events).
  uint32_t holds = (group_mask & abi::kKernelCh) ? channels : 0;
  e->holds.store(holds, std::memory_order_relaxed);
  e->refs.store(1 + holds, std::memory_order_relaxed);
  // Release: a thread that finds kOperation through a parent pointer sees the fields above.
  e->kind.store(EventKind::kOperation, std::memory_order_release);
  *handle = e;
  return abi::kSuccess;
}

Event* Plugin::parentOf(void* parent, EventKind kind) {
  if (parent == nullptr || !pool_->owns(parent)) return nullptr;
  Event* p = static_cast<Event*>(parent);
  return p->kind.load(std::memory_order_acquire) == kind ? p : nullptr;
}

bool Plugin::attach(Event* op) {
  uint32_t r = op->refs.load(std::memory_order_acquire);
  do {
    if (r == 0) return false;  // published already: the child came late
  } while (!op->refs.compare_exchange_weak(r, r + 1, std::memory_order_acquire, std::memory_order_acquire));
  return true;
}

template <typename Descr>
abi::Result Plugin::startChild(void** handle, const Descr* d, uint32_t type) {
  Event* op = nullptr;
  if (type == abi::kProxyStep) {
    Event* proxy_op = parentOf(d->parentObj, EventKind::kProxyOp);
    op = proxy_op != nullptr ? proxy_op->operation : nullptr;
  } else if (type != abi::kProxyOp || d->proxyOp.pid == ::getpid()) {
    // A ProxyOp made by another process (PXN) carries a parent pointer of that process.
    op = parentOf(d->parentObj, EventKind::kOperation);
  }
  if (op == nullptr) {
    bump(counters_.orphans);
    return abi::kSuccess;
  }
  if (!attach(op)) {
    bump(counters_.late);
    return abi::kSuccess;
  }
  Event* e = pool_->acquire();
  if (e == nullptr) {
    bump(counters_.lost_children);
    unref(op);
    return abi::kSuccess;
  }
  e->operation = op;
  EventKind kind = type == abi::kProxyOp ? EventKind::kProxyOp : type == abi::kProxyStep ? EventKind::kProxyStep : EventKind::kKernelCh;
  if (kind == EventKind::kProxyStep) {
    e->state = -1;
    e->since_ns = 0;
    e->trans_bytes = 0;
    e->peer_wait = e->send = e->recv_wait = e->local = 0;
    e->sent = false;
  } else if (kind == EventKind::kKernelCh) {
    e->ch_start = d->kernelCh.pTimer;
    if (e->ch_start != 0) {
      atomicMin(op->gpu_start, e->ch_start);
      atomicMin(op->clock_lag_ns, EpochClock::nowNs() - static_cast<int64_t>(e->ch_start));
    }
  }
  e->kind.store(kind, std::memory_order_release);
  *handle = e;
  return abi::kSuccess;
}

void Plugin::closeState(Event* s, int64_t now) {
  int64_t dur = now - s->since_ns;
  if (s->state < 0 || dur <= 0) return;
  switch (s->state) {
    case abi::kProxyStepSendPeerWait: s->peer_wait += dur; break;
    case abi::kProxyStepSendWait: s->send += dur; break;
    case abi::kProxyStepRecvWait: s->recv_wait += dur; break;
    default: s->local += dur; break;  // GPU and flush waits, and states Argus does not know
  }
}

abi::Result Plugin::recordState(void* handle, int state, const abi::EventStateArgs* args) {
  if (handle == nullptr) return abi::kSuccess;
  Event* e = static_cast<Event*>(handle);
  EventKind kind = e->kind.load(std::memory_order_relaxed);
  if (kind == EventKind::kProxyStep) {
    int64_t now = EpochClock::nowNs();
    closeState(e, now);
    e->state = state;
    e->since_ns = now;
    if (state == abi::kProxyStepSendWait) e->sent = true;
    if (args != nullptr && args->proxyStep.transSize > e->trans_bytes) e->trans_bytes = args->proxyStep.transSize;
  } else if (kind == EventKind::kKernelCh && state == abi::kKernelChStop && args != nullptr && args->kernelCh.pTimer != 0) {
    Event* op = e->operation;
    uint64_t t = args->kernelCh.pTimer;
    atomicMax(op->gpu_stop, t);
    atomicMin(op->clock_lag_ns, EpochClock::nowNs() - static_cast<int64_t>(t));
    if (e->ch_start != 0) op->channels.fetch_add(1, std::memory_order_relaxed);
  }
  return abi::kSuccess;
}

abi::Result Plugin::stop(void* handle) {
  if (handle == nullptr) return abi::kSuccess;
  Event* e = static_cast<Event*>(handle);
  switch (e->kind.load(std::memory_order_relaxed)) {
    case EventKind::kOperation:
      atomicMax(e->end_ns, EpochClock::nowNs());
      e->stopped.store(true, std::memory_order_release);
      unref(e);
      break;
    case EventKind::kProxyStep: {
      Event* op = e->operation;
      int64_t now = EpochClock::nowNs();
      closeState(e, now);
      op->peer_wait_ns.fetch_add(e->peer_wait, std::memory_order_relaxed);
      op->send_ns.fetch_add(e->send, std::memory_order_relaxed);
      op->recv_wait_ns.fetch_add(e->recv_wait, std::memory_order_relaxed);
      op->local_ns.fetch_add(e->local, std::memory_order_relaxed);
      if (e->sent) op->send_bytes.fetch_add(e->trans_bytes, std::memory_order_relaxed);
      else if (e->recv_wait > 0) op->recv_bytes.fetch_add(e->trans_bytes, std::memory_order_relaxed);
      op->steps.fetch_add(1, std::memory_order_relaxed);
      atomicMax(op->end_ns, now);
      pool_->release(e);
      unref(op);
      break;
    }
    case EventKind::kKernelCh: {
      Event* op = e->operation;
      atomicMax(op->end_ns, EpochClock::nowNs());
      pool_->release(e);
      // One of the channels the operation waits for (more channels than announced: none).
      uint32_t h = op->holds.load(std::memory_order_relaxed);
      while (h != 0 && !op->holds.compare_exchange_weak(h, h - 1, std::memory_order_relaxed)) {
      }
      if (h != 0) unref(op);
      unref(op);
      break;
    }
    case EventKind::kProxyOp: {
      Event* op = e->operation;
      atomicMax(op->end_ns, EpochClock::nowNs());
      pool_->release(e);
      unref(op);
      break;
    }
    default:  // the Group / API handle (nothing to record)
      break;
  }
  return abi::kSuccess;
}

void Plugin::unref(Event* op) {
  // Never below zero: a child that stops after the collector forced its operation out
  // (recycle()) finds 0 and does nothing.
  uint32_t r = op->refs.load(std::memory_order_relaxed);
  do {
    if (r == 0) return;
  } while (!op->refs.compare_exchange_weak(r, r - 1, std::memory_order_acq_rel, std::memory_order_relaxed));
  if (r == 1) publish(op);
}

void Plugin::publish(Event* op) {
  CollectiveRecord& r = op->record;
  r.host_end_ns = op->end_ns.load(std::memory_order_relaxed);
  r.peer_wait_ns = op->peer_wait_ns.load(std::memory_order_relaxed);
  r.send_ns = op->send_ns.load(std::memory_order_relaxed);
  r.recv_wait_ns = op->recv_wait_ns.load(std::memory_order_relaxed);
  r.local_ns = op->local_ns.load(std::memory_order_relaxed);
  r.send_bytes = op->send_bytes.load(std::memory_order_relaxed);
  r.recv_bytes = op->recv_bytes.load(std::memory_order_relaxed);
  uint64_t gpu_start = op->gpu_start.load(std::memory_order_relaxed);
  r.gpu_start = gpu_start == UINT64_MAX ? 0 : gpu_start;
  r.gpu_stop = op->gpu_stop.load(std::memory_order_relaxed);
  r.cpu_clock_lag_ns = op->clock_lag_ns.load(std::memory_order_relaxed);
  r.steps = op->steps.load(std::memory_order_relaxed);
  r.channels = static_cast<uint16_t>(std::min<uint32_t>(op->channels.load(std::memory_order_relaxed), UINT16_MAX));
  if (!queue_->push(r)) bump(counters_.lost_operations);
  pool_->retire(op);
}

void Plugin::recycle(int64_t now_ns, int64_t stuck_ns) {
  if (!queue_ready_.load(std::memory_order_acquire)) return;
  pool_->recycle();
  if (now_ns - last_sweep_ns_ < stuck_ns / 4) return;
  last_sweep_ns_ = now_ns;
  // Operations NCCL stopped long ago that still wait for a child (a kernel channel NCCL
  // never reported): published as they are. The drain is the only recycler, so a slot seen
  // stopped here cannot be freed and reused under this loop.
  for (uint32_t i = 0; i < pool_->capacity(); ++i) {
    Event& e = pool_->at(i);
    if (e.kind.load(std::memory_order_acquire) != EventKind::kOperation || !e.stopped.load(std::memory_order_acquire)) continue;
    if (now_ns - e.record.host_start_ns < stuck_ns) continue;
    uint32_t r = e.refs.load(std::memory_order_acquire);
    while (r != 0 && !e.refs.compare_exchange_weak(r, 0, std::memory_order_acq_rel, std::memory_order_acquire)) {
    }
    if (r == 0) continue;
    bump(counters_.forced);
    publish(&e);
  }
}

PluginCounters Plugin::counters() const {
  PluginCounters c;
  c.operations = counters_.operations.load(std::memory_order_relaxed);
  c.lost_operations = counters_.lost_operations.load(std::memory_order_relaxed);
  c.lost_children = counters_.lost_children.load(std::memory_order_relaxed);
  c.orphans = counters_.orphans.load(std::memory_order_relaxed);
  c.ignored = counters_.ignored.load(std::memory_order_relaxed);
  c.contexts = counters_.contexts.load(std::memory_order_relaxed);
  c.late = counters_.late.load(std::memory_order_relaxed);
  c.forced = counters_.forced.load(std::memory_order_relaxed);
  c.in_use = queue_ready_.load(std::memory_order_acquire) ? pool_->inUse() : 0;
  return c;
}

template abi::Result Plugin::start<abi::EventDescrV5>(void*, void**, const abi::EventDescrV5*);
template abi::Result Plugin::start<abi::EventDescrV4>(void*, void**, const abi::EventDescrV4*);

}  // namespace argus::capture::nccl
