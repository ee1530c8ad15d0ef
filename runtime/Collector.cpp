//===- Collector.cpp - ddscript's CUPTI collector (injection library) -----===//
//
// Loaded into an unmodified CUDA process through CUDA_INJECTION64_PATH: the
// CUDA driver calls InitializeInjection() while it initialises. The
// collector enables CUPTI activity tracing inside a recording window and
// writes every record to a run.cupti file (see docs/trace-format.md).
//
// Environment (`ddscript record` sets it):
//   DDSCRIPT_CUPTI_OUTPUT      the file to write; "%p" becomes the pid
//                              (default ddscript-%p.cupti)
//   DDSCRIPT_CUPTI_SKIP        iteration window: skip N ProfilerStep#N NVTX
//   DDSCRIPT_CUPTI_ITERATIONS  ranges, then record K (0: until exit)
//   DDSCRIPT_CUPTI_PROFILER_API  "1": record between cuProfilerStart and
//                              cuProfilerStop instead
//   DDSCRIPT_CUPTI_QUIET       "1": no messages on stderr
// Without any of the window settings the whole run is recorded.
//
// The window: host-side kinds (API calls, synchronisation, CUDA events,
// memory, overhead, external correlation) are on exactly inside it. GPU
// kinds (kernels, copies, sets) stay on until the next boundary after it
// (the next ProfilerStep#N, profiler start/stop, or exit), so that work
// queued inside the window but run after it is still recorded; the reader
// drops GPU work whose launching call is not in the file. NVTX markers,
// devices and contexts are on from the start; markers are kept only when
// they begin inside a window.
//
// Only InitializeInjection is exported; the library links nothing but
// libcupti and the C runtime (libstdc++ is linked in statically and
// hidden), so it cannot clash with what the profiled process loads.
//
//===----------------------------------------------------------------------===//

#include "ActivityEncoder.h"
#include "RecordWriter.h"

#include <cupti.h>
#include <generated_nvtx_meta.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <iterator>
#include <memory>
#include <mutex>
#include <sys/syscall.h>
#include <unistd.h>

using namespace dd;
using namespace dd::cupti;
namespace cf = dd::cuptifmt;

namespace {

constexpr CUpti_ActivityKind HostKinds[] = {
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_CUDA_EVENT,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_OVERHEAD};
constexpr CUpti_ActivityKind DeviceKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};
// Allocations are recorded from the start, like NVTX ranges: a program's
// allocator reserves most of its memory in its first iterations, before a
// recording window opens, and the memory model needs those blocks to know
// the level the window starts from.
constexpr CUpti_ActivityKind AlwaysKinds[] = {
    CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
    CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_MEMORY2};
constexpr size_t BufferSize = 8 << 20;

const char *kindName(CUpti_ActivityKind K) {
  switch (K) {
  case CUPTI_ACTIVITY_KIND_RUNTIME:
    return "RUNTIME";
  case CUPTI_ACTIVITY_KIND_DRIVER:
    return "DRIVER";
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    return "SYNCHRONIZATION";
  case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
    return "CUDA_EVENT";
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    return "EXTERNAL_CORRELATION";
  case CUPTI_ACTIVITY_KIND_MEMORY2:
    return "MEMORY2";
  case CUPTI_ACTIVITY_KIND_OVERHEAD:
    return "OVERHEAD";
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return "CONCURRENT_KERNEL";
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    return "MEMCPY";
  case CUPTI_ACTIVITY_KIND_MEMCPY2:
    return "MEMCPY2";
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return "MEMSET";
  case CUPTI_ACTIVITY_KIND_DEVICE:
    return "DEVICE";
  case CUPTI_ACTIVITY_KIND_CONTEXT:
    return "CONTEXT";
  case CUPTI_ACTIVITY_KIND_MARKER:
    return "MARKER";
  default:
    return "?";
  }
}

std::string resultName(CUptiResult R) {
  const char *S = nullptr;
  if (cuptiGetResultString(R, &S) != CUPTI_SUCCESS || !S)
    return "CUPTI error " + std::to_string(static_cast<int>(R));
  return S;
}

uint64_t cuptiNow() {
  uint64_t Ts = 0;
  cuptiGetTimestamp(&Ts);
  return Ts;
}

uint64_t unixNow() {
  timespec T;
  clock_gettime(CLOCK_REALTIME, &T);
  return static_cast<uint64_t>(T.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(T.tv_nsec);
}

/// CUPTI and Unix time read as close together as we can.
void clockPair(uint64_t &Cupti, uint64_t &Unix) {
  uint64_t BestGap = ~0ull;
  for (int I = 0; I < 3; ++I) {
    uint64_t U0 = unixNow(), C = cuptiNow(), U1 = unixNow();
    if (U1 - U0 < BestGap) {
      BestGap = U1 - U0;
      Cupti = C;
      Unix = U0 + (U1 - U0) / 2;
    }
  }
}

uint32_t threadId() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

uint32_t envNumber(const char *Name, uint32_t Default) {
  const char *V = std::getenv(Name);
  if (!V || !*V)
    return Default;
  char *End = nullptr;
  unsigned long N = std::strtoul(V, &End, 10);
  return End && *End == '\0' ? static_cast<uint32_t>(N) : Default;
}

bool envFlag(const char *Name) {
  const char *V = std::getenv(Name);
  return V && V[0] == '1';
}

std::string commandLine() {
  FILE *F = std::fopen("/proc/self/cmdline", "rb");
  if (!F)
    return "";
  char Buf[4096];
  size_t N = std::fread(Buf, 1, sizeof(Buf), F);
  std::fclose(F);
  std::string S(Buf, N);
  while (!S.empty() && S.back() == '\0')
    S.pop_back();
  for (char &C : S)
    if (C == '\0')
      C = ' ';
  return S;
}

/// "ProfilerStep#12" -> 12; -1 when it is no iteration marker.
int64_t stepNumber(const char *Name) {
  static const char Prefix[] = "ProfilerStep#";
  if (!Name || std::strncmp(Name, Prefix, sizeof(Prefix) - 1) != 0)
    return -1;
  const char *P = Name + sizeof(Prefix) - 1;
  if (!*P)
    return -1;
  int64_t N = 0;
  for (; *P; ++P) {
    if (*P < '0' || *P > '9' || N > (INT64_MAX - 9) / 10)
      return -1;
    N = N * 10 + (*P - '0');
  }
  return N;
}

const char *nvtxMessage(const nvtxEventAttributes_t *A) {
  if (!A || A->messageType != NVTX_MESSAGE_TYPE_ASCII)
    return nullptr;
  return A->message.ascii;
}

class Collector {
public:
  /// Reads the environment, opens the file and sets CUPTI up; problems
  /// are reported in the file and on stderr.
  void init();
  void onCallback(CUpti_CallbackDomain Domain, CUpti_CallbackId Cbid,
                  const void *Data);
  void onBuffer(CUcontext Ctx, uint32_t StreamId, uint8_t *Buffer,
                size_t ValidSize);
  /// Flushes CUPTI and completes the file (at exit, or once the last
  /// window has drained).
  void finalize();

private:
  std::mutex Mu;
  pid_t Pid = 0;
  uint32_t Mode = cf::WholeRun, Skip = 0, Iterations = 0;
  bool Quiet = false;
  std::string Path;
  std::unique_ptr<RecordWriter> Writer;
  std::unique_ptr<ActivityEncoder> Encoder;
  CUpti_SubscriberHandle Subscriber = nullptr;
  bool HostOn = false, DeviceOn = false, Draining = false;
  bool Failed = false, Finished = false;
  uint64_t Steps = 0; ///< ProfilerStep#N ranges begun so far

  void message(const char *Severity, const std::string &Text) {
    if (!Quiet)
      std::fprintf(stderr, "ddscript-cupti: %s: %s\n", Severity, Text.c_str());
  }
  /// Records an error in the file and on stderr; recording stops.
  void failLocked(const std::string &Text);
  bool openOutput();
  bool setKinds(const CUpti_ActivityKind *Kinds, size_t N, bool On);
  void setHost(bool On);
  void setDevice(bool On);
  void endDrainLocked();
  void openWindowLocked(uint32_t WindowMode, uint32_t Tid, const char *Name,
                        int64_t Step);
  void closeWindowLocked(uint32_t Tid, const char *Name);
  void onStep(const char *Name, int64_t Step);
  void onProfilerApi(bool Start);
  void finishFileLocked();
};

Collector *TheCollector = nullptr;

void CUPTIAPI bufferRequested(uint8_t **Buffer, size_t *Size,
                              size_t *MaxNumRecords) {
  *Buffer = static_cast<uint8_t *>(std::aligned_alloc(8, BufferSize));
  *Size = *Buffer ? BufferSize : 0;
  *MaxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext Ctx, uint32_t StreamId, uint8_t *Buffer,
                              size_t Size, size_t ValidSize) {
  if (TheCollector)
    TheCollector->onBuffer(Ctx, StreamId, Buffer, ValidSize);
  std::free(Buffer);
}

void CUPTIAPI cuptiCallback(void *, CUpti_CallbackDomain Domain,
                            CUpti_CallbackId Cbid, const void *Data) {
  if (TheCollector)
    TheCollector->onCallback(Domain, Cbid, Data);
}

void atExit() {
  if (TheCollector)
    TheCollector->finalize();
}

bool Collector::openOutput() {
  const char *Env = std::getenv("DDSCRIPT_CUPTI_OUTPUT");
  std::string Pattern = Env && *Env ? Env : "ddscript-%p.cupti";
  std::string PidText = std::to_string(Pid);
  for (size_t At; (At = Pattern.find("%p")) != std::string::npos;)
    Pattern.replace(At, 2, PidText);
  Path = Pattern;
  int Fd = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (Fd < 0 && errno == EEXIST) {
    // Another CUDA process of the same run (a launcher's worker, say) got
    // there first: this one writes NAME.PID.EXT beside it.
    size_t Slash = Path.rfind('/');
    size_t Dot = Path.rfind('.');
    if (Dot == std::string::npos || (Slash != std::string::npos && Dot < Slash))
      Dot = Path.size();
    Path.insert(Dot, "." + PidText);
    Fd = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (Fd < 0) {
    message("error", "cannot write " + Path + ": " + std::strerror(errno) +
                         "; nothing is recorded");
    return false;
  }
  Writer = std::make_unique<RecordWriter>(Fd);
  Encoder =
      std::make_unique<ActivityEncoder>(*Writer, static_cast<uint32_t>(Pid));
  return true;
}

void Collector::failLocked(const std::string &Text) {
  message("error", Text);
  if (Encoder && !Failed)
    Encoder->note(cf::NoteError, Text);
  Failed = true;
}

bool Collector::setKinds(const CUpti_ActivityKind *Kinds, size_t N, bool On) {
  for (size_t I = 0; I < N; ++I) {
    CUptiResult R =
        On ? cuptiActivityEnable(Kinds[I]) : cuptiActivityDisable(Kinds[I]);
    if (R != CUPTI_SUCCESS && On) {
      failLocked(std::string("cannot enable CUPTI activity kind ") +
                 kindName(Kinds[I]) + ": " + resultName(R) +
                 " (is a GPU visible to this process, and may it be "
                 "profiled?)");
      return false;
    }
  }
  return true;
}

void Collector::setHost(bool On) {
  if (HostOn == On || (On && Failed))
    return;
  if (!setKinds(HostKinds, std::size(HostKinds), On))
    return;
  HostOn = On;
  if (On) {
    // Calls made in bulk that never launch or wait for GPU work, as Kineto
    // leaves them out. Enabling the kind above resets these filters.
    for (CUpti_CallbackId Id :
         {CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
          CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
          CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
          CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020})
      cuptiActivityEnableRuntimeApi(Id, 0);
    for (CUpti_CallbackId Id :
         {CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
          CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
          CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState})
      cuptiActivityEnableDriverApi(Id, 0);
  }
}

void Collector::setDevice(bool On) {
  if (DeviceOn == On || (On && Failed))
    return;
  if (setKinds(DeviceKinds, std::size(DeviceKinds), On))
    DeviceOn = On;
}

void Collector::endDrainLocked() {
  if (!Draining)
    return;
  Draining = false;
  setDevice(false);
}

void Collector::openWindowLocked(uint32_t WindowMode, uint32_t Tid,
                                 const char *Name, int64_t Step) {
  endDrainLocked();
  if (Failed || Encoder->windowOpen())
    return;
  Encoder->openWindow(cuptiNow(), WindowMode, Tid, Name ? Name : "", Step);
  setHost(true);
  setDevice(true);
}

void Collector::closeWindowLocked(uint32_t Tid, const char *Name) {
  if (!Encoder->windowOpen())
    return;
  Encoder->closeWindow(cuptiNow(), Tid, Name ? Name : "");
  setHost(false);
  Draining = DeviceOn;
}

void Collector::onStep(const char *Name, int64_t Step) {
  bool Done = false;
  {
    std::lock_guard<std::mutex> Lock(Mu);
    if (Finished)
      return;
    uint64_t Index = Steps++;
    uint32_t Tid = threadId();
    if (Mode == cf::Iteration) {
      if (Index == Skip) {
        openWindowLocked(cf::Iteration, Tid, Name, Step);
      } else if (Iterations && Index == uint64_t(Skip) + Iterations) {
        closeWindowLocked(Tid, Name);
      } else if (Iterations && Index > uint64_t(Skip) + Iterations) {
        // The one window has drained: nothing more will be recorded.
        endDrainLocked();
        Done = true;
      }
    } else {
      endDrainLocked();
    }
    if (Encoder->windowOpen())
      Encoder->countIteration();
  }
  // Completing the file now keeps it whole even if the process is killed
  // later. The flush calls back into onBuffer, so the lock is not held.
  if (Done)
    finalize();
}

void Collector::onProfilerApi(bool Start) {
  std::lock_guard<std::mutex> Lock(Mu);
  if (Finished || Mode != cf::ProfilerApi)
    return;
  if (Start)
    openWindowLocked(cf::ProfilerApi, 0, nullptr, -1);
  else
    closeWindowLocked(0, nullptr);
}

void Collector::onCallback(CUpti_CallbackDomain Domain, CUpti_CallbackId Cbid,
                           const void *Data) {
  if (getpid() != Pid)
    return; // a forked child
  if (Domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto *D = static_cast<const CUpti_CallbackData *>(Data);
    if (Cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart &&
        D->callbackSite == CUPTI_API_EXIT)
      onProfilerApi(true);
    else if (Cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop &&
             D->callbackSite == CUPTI_API_ENTER)
      onProfilerApi(false);
    return;
  }
  if (Domain != CUPTI_CB_DOMAIN_NVTX)
    return;
  const void *Params =
      static_cast<const CUpti_NvtxData *>(Data)->functionParams;
  const char *Name = nullptr;
  switch (Cbid) {
  case CUPTI_CBID_NVTX_nvtxRangePushA:
    Name = static_cast<const nvtxRangePushA_params *>(Params)->message;
    break;
  case CUPTI_CBID_NVTX_nvtxRangePushEx:
    Name = nvtxMessage(
        static_cast<const nvtxRangePushEx_params *>(Params)->eventAttrib);
    break;
  case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
    Name = nvtxMessage(static_cast<const nvtxDomainRangePushEx_params *>(Params)
                           ->core.eventAttrib);
    break;
  default:
    return;
  }
  int64_t Step = stepNumber(Name);
  if (Step >= 0)
    onStep(Name, Step);
}

void Collector::onBuffer(CUcontext Ctx, uint32_t StreamId, uint8_t *Buffer,
                         size_t ValidSize) {
  if (getpid() != Pid)
    return;
  std::lock_guard<std::mutex> Lock(Mu);
  if (Finished)
    return;
  if (ValidSize)
    walkBuffer(Buffer, ValidSize, *Encoder);
  size_t Dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(Ctx, StreamId, &Dropped) ==
          CUPTI_SUCCESS &&
      Dropped) {
    Encoder->dropped(Dropped);
    message("warning",
            "CUPTI dropped " + std::to_string(Dropped) + " activity records");
  }
  if (Writer->failed() && !Failed) {
    Failed = true;
    message("error", "cannot write " + Path + ": " + std::strerror(errno));
  }
}

void Collector::finishFileLocked() {
  if (Finished)
    return;
  Finished = true;
  Encoder->finish();
  cf::EndRecord E;
  clockPair(E.SyncCuptiNs, E.SyncUnixNs);
  Writer->finish(E);
  uint64_t Bytes = Writer->size();
  bool Ok = Writer->close();
  if (!Ok)
    message("error", "cannot write " + Path + ": " + std::strerror(errno));
  else if (Failed)
    message("note", "wrote " + Path + " without activity records");
  else if (!Quiet)
    std::fprintf(stderr, "ddscript-cupti: wrote %s (%llu records, %.1f MiB)\n",
                 Path.c_str(),
                 static_cast<unsigned long long>(Writer->records()),
                 static_cast<double>(Bytes) / (1 << 20));
}

void Collector::finalize() {
  if (getpid() != Pid)
    return;
  {
    std::lock_guard<std::mutex> Lock(Mu);
    if (Finished)
      return;
    if (Encoder->windowOpen())
      Encoder->closeWindow(cuptiNow());
    if (Mode == cf::Iteration && Encoder->windows() == 0 && !Failed) {
      std::string Text = "the recording window never opened: the process "
                         "began " +
                         std::to_string(Steps) +
                         " ProfilerStep#N NVTX ranges, the window opens at "
                         "the start of range " +
                         std::to_string(Skip + 1);
      message("warning", Text);
      Encoder->note(cf::NoteWarning, Text);
    }
    if (!Failed) {
      // Stop tracing first: nothing new while the buffers drain.
      setHost(false);
      setDevice(false);
      setKinds(AlwaysKinds, std::size(AlwaysKinds), false);
    }
  }
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> Lock(Mu);
  finishFileLocked();
}

void Collector::init() {
  Pid = getpid();
  Quiet = envFlag("DDSCRIPT_CUPTI_QUIET");
  Skip = envNumber("DDSCRIPT_CUPTI_SKIP", 0);
  Iterations = envNumber("DDSCRIPT_CUPTI_ITERATIONS", 0);
  bool Iter = std::getenv("DDSCRIPT_CUPTI_SKIP") ||
              std::getenv("DDSCRIPT_CUPTI_ITERATIONS");
  Mode = envFlag("DDSCRIPT_CUPTI_PROFILER_API") ? cf::ProfilerApi
         : Iter                                 ? cf::Iteration
                                                : cf::WholeRun;
  if (!openOutput())
    return;

  std::lock_guard<std::mutex> Lock(Mu);
  cf::ProcessRecord P;
  P.Pid = static_cast<uint32_t>(Pid);
  cuptiGetVersion(&P.CuptiVersion);
  clockPair(P.SyncCuptiNs, P.SyncUnixNs);
  P.WindowMode = Mode;
  P.Skip = Skip;
  P.Iterations = Iterations;
  P.CommandStr = Writer->string(commandLine());
  Writer->add(P);
  std::atexit(atExit);

  auto Fatal = [&](const std::string &Text) {
    failLocked(Text);
    finishFileLocked();
  };
  CUpti_SubscriberParams Params{};
  Params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  Params.subscriberName = "ddscript";
  char Other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {0};
  Params.oldSubscriberName = Other;
  Params.oldSubscriberSize = sizeof(Other);
  CUptiResult R =
      cuptiSubscribe_v2(&Subscriber, cuptiCallback, nullptr, &Params);
  if (R == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    return Fatal("cannot subscribe to CUPTI: another profiler uses it" +
                 (Other[0] ? std::string(" (") + Other + ")" : std::string()) +
                 "; torch.profiler, Nsight and ddscript cannot record at "
                 "once");
  if (R != CUPTI_SUCCESS)
    return Fatal("cannot subscribe to CUPTI: " + resultName(R) +
                 " (is a GPU visible to this process, and may it be "
                 "profiled?)");
  // Thread ids as the OS numbers them, so they match /proc and Kineto.
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  cuptiActivityEnableCudaEventDeviceTimestamps(1);
  R = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
  if (R != CUPTI_SUCCESS)
    return Fatal("cannot register CUPTI activity buffers: " + resultName(R));
  for (CUpti_CallbackId Id :
       {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx,
        CUPTI_CBID_NVTX_nvtxDomainRangePushEx})
    cuptiEnableCallback(1, Subscriber, CUPTI_CB_DOMAIN_NVTX, Id);
  if (Mode == cf::ProfilerApi)
    for (CUpti_CallbackId Id : {CUPTI_DRIVER_TRACE_CBID_cuProfilerStart,
                                CUPTI_DRIVER_TRACE_CBID_cuProfilerStop})
      cuptiEnableCallback(1, Subscriber, CUPTI_CB_DOMAIN_DRIVER_API, Id);
  if (!setKinds(AlwaysKinds, std::size(AlwaysKinds), true))
    return finishFileLocked();
  if (Mode == cf::WholeRun) {
    openWindowLocked(cf::WholeRun, 0, nullptr, -1);
    if (Failed)
      return finishFileLocked();
  }
}

} // namespace

/// Called by the CUDA driver while it initialises (CUDA_INJECTION64_PATH).
/// Returns 1 whatever happens: a collector that cannot record must not
/// stop the profiled process.
extern "C" __attribute__((visibility("default"))) int
InitializeInjection(void) {
  static std::once_flag Once;
  std::call_once(Once, [] {
    TheCollector = new Collector(); // lives until exit, on purpose
    TheCollector->init();
  });
  return 1;
}
