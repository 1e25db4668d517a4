// NVTX v3 injection: the functions NVTX calls instead of its no-ops once Argus is attached
// (docs/capture/nvtx.md, "Injection"). NVTX loads the library named by NVTX_INJECTION64_PATH
// on the first NVTX call of each NVTX instance (every shared object compiled with the nvtx3
// headers has its own) and calls its InitializeInjectionNvtx2(getExportTable); that entry
// point belongs to the shim (or a test library) and calls initializeInjection() below.
//
// This header includes the toolkit's nvToolsExt.h for the types. Library files define
// NVTX_NO_IMPL before it (types only, no NVTX implementation in the shim); a test or a
// program may include it with the implementation and call the NVTX API as well.
#pragma once

#include <nvtx3/nvToolsExt.h>

namespace argus::capture::nvtx {

// Installs the handlers below into the NVTX instance that calls with `getExportTable`
// (CORE: marks, ranges, push/pop, thread names; CORE2: the domain variants, domains and
// registered strings) and returns 1, or returns 0 (with one line on stderr) when the
// instance offers no callback table. Safe to call once per NVTX instance, from any thread.
int initializeInjection(NvtxGetExportTableFunc_t getExportTable);

// The handlers, for tests that call them as NVTX would. Each records into
// Recorder::instance() on the calling thread and never throws.
namespace handlers {
void NVTX_API markEx(const nvtxEventAttributes_t* attr);
void NVTX_API markA(const char* message);
void NVTX_API markW(const wchar_t* message);
nvtxRangeId_t NVTX_API rangeStartEx(const nvtxEventAttributes_t* attr);
nvtxRangeId_t NVTX_API rangeStartA(const char* message);
nvtxRangeId_t NVTX_API rangeStartW(const wchar_t* message);
void NVTX_API rangeEnd(nvtxRangeId_t id);
int NVTX_API rangePushEx(const nvtxEventAttributes_t* attr);
int NVTX_API rangePushA(const char* message);
int NVTX_API rangePushW(const wchar_t* message);
int NVTX_API rangePop();
void NVTX_API nameOsThreadA(uint32_t thread_id, const char* name);
void NVTX_API nameOsThreadW(uint32_t thread_id, const wchar_t* name);
void NVTX_API domainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr);
nvtxRangeId_t NVTX_API domainRangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr);
void NVTX_API domainRangeEnd(nvtxDomainHandle_t domain, nvtxRangeId_t id);
int NVTX_API domainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr);
int NVTX_API domainRangePop(nvtxDomainHandle_t domain);
nvtxStringHandle_t NVTX_API domainRegisterStringA(nvtxDomainHandle_t domain, const char* text);
nvtxStringHandle_t NVTX_API domainRegisterStringW(nvtxDomainHandle_t domain, const wchar_t* text);
nvtxDomainHandle_t NVTX_API domainCreateA(const char* name);
nvtxDomainHandle_t NVTX_API domainCreateW(const wchar_t* name);
void NVTX_API domainDestroy(nvtxDomainHandle_t domain);
}  // namespace handlers

}  // namespace argus::capture::nvtx
