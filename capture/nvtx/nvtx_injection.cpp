// Types only: the shim implements NVTX's callbacks, it does not contain an NVTX instance.
#define NVTX_NO_IMPL
#include "capture/nvtx/nvtx_injection.h"

#include <cstddef>
#include <cstdio>
#include <string_view>

#include "capture/nvtx/nvtx_recorder.h"
#include "capture/nvtx/utf8.h"

// Every call into NVTX goes through this: on failure it names the call on stderr and makes
// the enclosing initialization fail (NVTX then leaves every API function a no-op).
#define ARGUS_NVTX_CHECK(call)                                                             \
  do {                                                                                     \
    if (!(call)) {                                                                         \
      std::fprintf(stderr, "argus: NVTX injection: %s failed; NVTX capture off\n", #call); \
      return 0;                                                                            \
    }                                                                                      \
  } while (0)

namespace argus::capture::nvtx {

namespace {

Recorder& rec() {
  return Recorder::instance();
}

// Our handles are small integers: index or id cast to the opaque pointer (Registry).
uint32_t domainIndex(nvtxDomainHandle_t d) {
  uintptr_t v = reinterpret_cast<uintptr_t>(d);
  return v < Registry::kMaxDomains ? static_cast<uint32_t>(v) : Registry::kMaxDomains;
}
template <typename Handle>
Handle handleOf(uint32_t value) {
  return reinterpret_cast<Handle>(static_cast<uintptr_t>(value));
}

struct Attributes {
  Message message;
  Payload payload;
};

// Reads an event-attributes struct, trusting only the fields its `size` covers (NVTX lets
// older callers pass a smaller struct).
Attributes parse(const nvtxEventAttributes_t* a) {
  Attributes out;
  if (a == nullptr) return out;
  constexpr size_t kPayloadEnd = offsetof(nvtxEventAttributes_t, payload) + sizeof(a->payload);
  constexpr size_t kMessageEnd = offsetof(nvtxEventAttributes_t, message) + sizeof(a->message);
  if (a->size >= kPayloadEnd) {
    switch (a->payloadType) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        out.payload = {PayloadType::kUint64, a->payload.ullValue};
        break;
      case NVTX_PAYLOAD_TYPE_INT64:
        out.payload = {PayloadType::kInt64, static_cast<uint64_t>(a->payload.llValue)};
        break;
      case NVTX_PAYLOAD_TYPE_DOUBLE:
        out.payload = {PayloadType::kDouble, a->payload.ullValue};
        break;
      // 32-bit values use the union's first 4 bytes; the rest is garbage.
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        out.payload = {PayloadType::kUint32, a->payload.uiValue};
        break;
      case NVTX_PAYLOAD_TYPE_INT32:
        out.payload = {PayloadType::kInt32, a->payload.uiValue};
        break;
      case NVTX_PAYLOAD_TYPE_FLOAT:
        out.payload = {PayloadType::kFloat, a->payload.uiValue};
        break;
      default:
        break;  // none, or an extension payload (nvToolsExtPayload.h): not kept
    }
  }
  if (a->size >= kMessageEnd) {
    switch (a->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII:
        out.message = Message::ofAscii(a->message.ascii);
        break;
      case NVTX_MESSAGE_TYPE_UNICODE:
        out.message = Message::ofWide(a->message.unicode);
        break;
      case NVTX_MESSAGE_TYPE_REGISTERED:
        out.message = Message::ofRegistered(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(a->message.registered) & 0xFFFFFFFFu));
        break;
      default:
        break;
    }
  }
  return out;
}

// Registration names (domains, registered strings): cut like event names. Rare, so the
// wide conversion uses a stack buffer.
struct RegistrationText {
  char buffer[Registry::kMaxTextBytes];
  std::string_view text;
  RegistrationText(const char* s) {
    bool truncated = false;
    if (s != nullptr) text = std::string_view(s, boundedUtf8Length(s, sizeof(buffer), &truncated));
  }
  RegistrationText(const wchar_t* s) {
    bool truncated = false;
    if (s != nullptr) text = std::string_view(buffer, wideToUtf8(s, buffer, sizeof(buffer), &truncated));
  }
};

}  // namespace

namespace handlers {

void NVTX_API markEx(const nvtxEventAttributes_t* attr) {
  Attributes a = parse(attr);
  rec().mark(0, a.message, a.payload);
}
void NVTX_API markA(const char* message) {
  rec().mark(0, Message::ofAscii(message), {});
}
void NVTX_API markW(const wchar_t* message) {
  rec().mark(0, Message::ofWide(message), {});
}

nvtxRangeId_t NVTX_API rangeStartEx(const nvtxEventAttributes_t* attr) {
  Attributes a = parse(attr);
  return rec().start(0, a.message, a.payload);
}
nvtxRangeId_t NVTX_API rangeStartA(const char* message) {
  return rec().start(0, Message::ofAscii(message), {});
}
nvtxRangeId_t NVTX_API rangeStartW(const wchar_t* message) {
  return rec().start(0, Message::ofWide(message), {});
}
void NVTX_API rangeEnd(nvtxRangeId_t id) {
  rec().end(id);
}

int NVTX_API rangePushEx(const nvtxEventAttributes_t* attr) {
  Attributes a = parse(attr);
  return rec().push(0, a.message, a.payload);
}
int NVTX_API rangePushA(const char* message) {
  return rec().push(0, Message::ofAscii(message), {});
}
int NVTX_API rangePushW(const wchar_t* message) {
  return rec().push(0, Message::ofWide(message), {});
}
int NVTX_API rangePop() {
  return rec().pop(0);
}

void NVTX_API nameOsThreadA(uint32_t thread_id, const char* name) {
  rec().nameOsThread(thread_id, Message::ofAscii(name));
}
void NVTX_API nameOsThreadW(uint32_t thread_id, const wchar_t* name) {
  rec().nameOsThread(thread_id, Message::ofWide(name));
}

void NVTX_API domainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  Attributes a = parse(attr);
  rec().mark(domainIndex(domain), a.message, a.payload);
}
nvtxRangeId_t NVTX_API domainRangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  Attributes a = parse(attr);
  return rec().start(domainIndex(domain), a.message, a.payload);
}
// The range id knows its start (and domain): the end needs neither.
void NVTX_API domainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) {
  rec().end(id);
}
int NVTX_API domainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  Attributes a = parse(attr);
  return rec().push(domainIndex(domain), a.message, a.payload);
}
int NVTX_API domainRangePop(nvtxDomainHandle_t domain) {
  return rec().pop(domainIndex(domain));
}

nvtxStringHandle_t NVTX_API domainRegisterStringA(nvtxDomainHandle_t domain, const char* text) {
  RegistrationText t(text);
  return handleOf<nvtxStringHandle_t>(rec().registry().registerString(domainIndex(domain), t.text));
}
nvtxStringHandle_t NVTX_API domainRegisterStringW(nvtxDomainHandle_t domain, const wchar_t* text) {
  RegistrationText t(text);
  return handleOf<nvtxStringHandle_t>(rec().registry().registerString(domainIndex(domain), t.text));
}
nvtxDomainHandle_t NVTX_API domainCreateA(const char* name) {
  RegistrationText t(name);
  return handleOf<nvtxDomainHandle_t>(rec().registry().createDomain(t.text));
}
nvtxDomainHandle_t NVTX_API domainCreateW(const wchar_t* name) {
  RegistrationText t(name);
  return handleOf<nvtxDomainHandle_t>(rec().registry().createDomain(t.text));
}
// Domains live as long as the process: events recorded before the destroy still name
// them when the drain reads them later, and a domain re-created by name gets its old index.
void NVTX_API domainDestroy(nvtxDomainHandle_t) {}

}  // namespace handlers

namespace {

struct Slot {
  unsigned int id;
  NvtxFunctionPointer fn;
};

template <typename F>
Slot slot(unsigned int id, F* fn) {
  return {id, reinterpret_cast<NvtxFunctionPointer>(fn)};
}

// Writes each handler into the module's table: entry i points at NVTX's function pointer
// for callback id i. Ids the instance does not know (an older NVTX) are skipped.
int install(const NvtxExportTableCallbacks* callbacks, NvtxCallbackModule module, std::initializer_list<Slot> slots) {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  ARGUS_NVTX_CHECK(callbacks->GetModuleFunctionTable(module, &table, &size));
  ARGUS_NVTX_CHECK(table != nullptr);
  for (const Slot& s : slots) {
    if (s.id < size && table[s.id] != nullptr) *table[s.id] = s.fn;
  }
  return 1;
}

}  // namespace

int initializeInjection(NvtxGetExportTableFunc_t getExportTable) {
  using namespace handlers;
  ARGUS_NVTX_CHECK(getExportTable != nullptr);
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(getExportTable(NVTX_ETID_CALLBACKS));
  ARGUS_NVTX_CHECK(callbacks != nullptr);
  ARGUS_NVTX_CHECK(callbacks->struct_size >=
                   offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable) + sizeof(callbacks->GetModuleFunctionTable));
  ARGUS_NVTX_CHECK(install(callbacks, NVTX_CB_MODULE_CORE,
                           {slot(NVTX_CBID_CORE_MarkEx, markEx), slot(NVTX_CBID_CORE_MarkA, markA), slot(NVTX_CBID_CORE_MarkW, markW),
                            slot(NVTX_CBID_CORE_RangeStartEx, rangeStartEx), slot(NVTX_CBID_CORE_RangeStartA, rangeStartA),
                            slot(NVTX_CBID_CORE_RangeStartW, rangeStartW), slot(NVTX_CBID_CORE_RangeEnd, rangeEnd),
                            slot(NVTX_CBID_CORE_RangePushEx, rangePushEx), slot(NVTX_CBID_CORE_RangePushA, rangePushA),
                            slot(NVTX_CBID_CORE_RangePushW, rangePushW), slot(NVTX_CBID_CORE_RangePop, rangePop),
                            slot(NVTX_CBID_CORE_NameOsThreadA, nameOsThreadA), slot(NVTX_CBID_CORE_NameOsThreadW, nameOsThreadW)}));
  ARGUS_NVTX_CHECK(
      install(callbacks, NVTX_CB_MODULE_CORE2,
              {slot(NVTX_CBID_CORE2_DomainMarkEx, domainMarkEx), slot(NVTX_CBID_CORE2_DomainRangeStartEx, domainRangeStartEx),
               slot(NVTX_CBID_CORE2_DomainRangeEnd, domainRangeEnd), slot(NVTX_CBID_CORE2_DomainRangePushEx, domainRangePushEx),
               slot(NVTX_CBID_CORE2_DomainRangePop, domainRangePop), slot(NVTX_CBID_CORE2_DomainRegisterStringA, domainRegisterStringA),
               slot(NVTX_CBID_CORE2_DomainRegisterStringW, domainRegisterStringW), slot(NVTX_CBID_CORE2_DomainCreateA, domainCreateA),
               slot(NVTX_CBID_CORE2_DomainCreateW, domainCreateW), slot(NVTX_CBID_CORE2_DomainDestroy, domainDestroy)}));
  // Optional: tells the application which NVTX version the tool speaks (ignored by NVTX today).
  auto* version = static_cast<const NvtxExportTableVersionInfo*>(getExportTable(NVTX_ETID_VERSIONINFO));
  if (version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) && version->SetInjectionNvtxVersion != nullptr) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  return 1;
}

}  // namespace argus::capture::nvtx
