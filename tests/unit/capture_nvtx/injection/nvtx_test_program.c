/* A tiny NVTX application for nvtx_injection_test: plain C against the toolkit's nvtx3
 * headers, nothing from Argus. Run under NVTX_INJECTION64_PATH, its calls reach the
 * injection library; without it they are NVTX's no-ops.
 *
 * What it does (the test checks each):
 *  - three training steps: a push in domain "argus" named "step" with the step number as a
 *    uint64 payload (10, 11, 12), around "forward" (default domain, A), "backward ü中"
 *    (default domain, W), and "optimizer" (a string registered in domain "argus");
 *  - a mark "checkpoint" and a mark in domain "NCCL" named "AllReduce";
 *  - nvtxRangeStartA("data_load") on the main thread, ended on a worker thread;
 *  - the worker names itself "worker" (nvtxNameOsThreadA) and pushes "worker-range";
 *  - a default-domain push crossed with an "NCCL" push (popped in NVTX's per-domain order);
 *  - a pop with nothing open.
 * It prints "main <tid>" and "worker <tid>" on stdout. */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static nvtxRangeId_t g_data_load;
static long g_worker_tid;

static long tid(void) { return (long)syscall(SYS_gettid); }

static void* worker(void* arg) {
  (void)arg;
  g_worker_tid = tid();
  nvtxNameOsThreadA((uint32_t)g_worker_tid, "worker");
  nvtxRangePushA("worker-range");
  nvtxRangeEnd(g_data_load);
  nvtxRangePop();
  return NULL;
}

static nvtxEventAttributes_t attributes(void) {
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof(a));
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

int main(void) {
  nvtxDomainHandle_t argus = nvtxDomainCreateA("argus");
  nvtxDomainHandle_t nccl = nvtxDomainCreateA("NCCL");
  nvtxStringHandle_t optimizer = nvtxDomainRegisterStringA(argus, "optimizer");

  for (uint64_t step = 10; step < 13; ++step) {
    nvtxEventAttributes_t s = attributes();
    s.messageType = NVTX_MESSAGE_TYPE_ASCII;
    s.message.ascii = "step";
    s.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    s.payload.ullValue = step;
    nvtxDomainRangePushEx(argus, &s);

    nvtxRangePushA("forward");
    nvtxRangePop();
    nvtxRangePushW(L"backward \u00fc\u4e2d");
    nvtxRangePop();
    nvtxEventAttributes_t o = attributes();
    o.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    o.message.registered = optimizer;
    nvtxDomainRangePushEx(argus, &o);
    nvtxDomainRangePop(argus);

    nvtxDomainRangePop(argus);
    usleep(1000);
  }

  nvtxMarkA("checkpoint");
  nvtxEventAttributes_t m = attributes();
  m.messageType = NVTX_MESSAGE_TYPE_ASCII;
  m.message.ascii = "AllReduce";
  nvtxDomainMarkEx(nccl, &m);

  g_data_load = nvtxRangeStartA("data_load");
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);

  nvtxRangePushA("outer");
  nvtxDomainRangePushEx(nccl, &m);
  nvtxRangePop();           /* ends "outer" although the NCCL range opened later */
  nvtxDomainRangePop(nccl); /* ends "AllReduce" */
  int unmatched = nvtxRangePop();

  printf("main %ld\nworker %ld\nunmatched %d\n", tid(), g_worker_tid, unmatched);
  return 0;
}
