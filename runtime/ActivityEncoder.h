//===- ActivityEncoder.h - CUPTI activity records to run.cupti --*- C++ -*-===//
//
// Converts the records CUPTI hands the collector (CUpti_ActivityKernel10,
// CUpti_ActivityAPI, CUpti_ActivityMarker2...) into run.cupti records. It
// pairs NVTX START/END markers into ranges and keeps only the ranges begun
// inside a recording window; every other kind is recorded only while the
// collector has it enabled, so it is converted as it comes.
//
// Independent of the collector's global state, so that ddscript's tests
// can feed it records they build themselves, through walkBuffer(), the
// code path real CUPTI buffers take.
//
//===----------------------------------------------------------------------===//
#ifndef DD_RUNTIME_ACTIVITYENCODER_H
#define DD_RUNTIME_ACTIVITYENCODER_H

#include "RecordWriter.h"

#include <cupti_activity.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace dd::cupti {

class ActivityEncoder {
public:
  /// Returns the name of thread \p Tid of process \p Pid, or "".
  using ThreadNameFn = std::string (*)(uint32_t Pid, uint32_t Tid);

  /// \p Pid is the recording process (its threads get Thread records).
  ActivityEncoder(RecordWriter &W, uint32_t Pid);

  /// Names threads with \p F instead of reading /proc/self/task/TID/comm.
  void setThreadNamer(ThreadNameFn F) { ThreadName = F; }

  /// A recording window opens at CUPTI time \p Ts. When an NVTX range opened
  /// it (a ProfilerStep#N push), \p Tid and \p Name identify that range's
  /// START marker, which is kept whether CUPTI stamped it just before or
  /// just after \p Ts.
  void openWindow(uint64_t Ts, uint32_t Mode, uint32_t Tid = 0,
                  std::string Name = "", int64_t FirstIteration = -1);
  /// The open window closes at \p Ts; the range begun by \p Tid / \p Name
  /// at that moment (the next iteration) is not part of it.
  void closeWindow(uint64_t Ts, uint32_t Tid = 0, std::string Name = "");
  /// A ProfilerStep#N range began inside the open window.
  void countIteration();
  bool windowOpen() const { return !Windows.empty() && !Windows.back().Closed; }
  unsigned windows() const { return static_cast<unsigned>(Windows.size()); }

  /// Converts one CUPTI record.
  void add(const CUpti_Activity *R);
  /// Records that CUPTI dropped \p N records.
  void dropped(uint64_t N);
  /// A message for the reader (see NoteRecord).
  void note(uint32_t Severity, const std::string &Text);
  /// Writes the NVTX ranges still open (as unfinished) and the window
  /// records. Call once, before RecordWriter::finish().
  void finish();

  /// Records of kinds the encoder does not convert, so far.
  uint64_t unknownRecords() const { return Unknown; }

private:
  struct Window {
    cuptifmt::WindowRecord Rec;
    bool Closed = false;
    uint32_t OpenTid = 0, CloseTid = 0;
    std::string OpenName, CloseName;
    bool OpenMatched = false, CloseMatched = false;
  };

  RecordWriter &W;
  uint32_t Pid;
  ThreadNameFn ThreadName;
  std::vector<Window> Windows;
  std::map<uint32_t, cuptifmt::MarkerRecord> OpenRanges; ///< by marker id
  std::unordered_map<uint64_t, uint32_t> ApiNames;       ///< (domain, cbid)
  std::unordered_map<uint64_t, bool> Threads;            ///< (pid, tid) seen
  uint64_t Unknown = 0;

  bool keepRangeStart(uint64_t Ts, uint32_t Tid, const std::string &Name);
  void sawThread(uint32_t ProcessId, uint32_t Tid);
  uint32_t apiName(uint8_t Domain, uint32_t Cbid);
  void addApi(const CUpti_ActivityAPI *A, uint8_t Domain);
  void addMarker(const CUpti_ActivityMarker2 *M);
};

/// Converts every record in the first \p ValidSize bytes of a CUPTI activity
/// buffer, walking it with cuptiActivityGetNextRecord. Returns the number
/// of records.
size_t walkBuffer(uint8_t *Buffer, size_t ValidSize, ActivityEncoder &E);

/// The name of a thread of this process, from /proc ("" when gone).
std::string procThreadName(uint32_t Pid, uint32_t Tid);

} // namespace dd::cupti

#endif
