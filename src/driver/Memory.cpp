//===- Memory.cpp - ddscript memory ---------------------------------------===//
//
// Peak device memory of an iteration (or of the whole replayed window) and
// where it happens, what is live there by class and by block, each
// iteration's peak and allocation pattern, the device's capacity and the
// headroom. Measured values come from the trace's memory records; replayed
// ones from the memory model placed on the replay of the unchanged graph.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Session.h"
#include "memory/MemoryModel.h"
#include "whatif/MemoryReport.h"

#include <fmt/format.h>

using namespace dd;
using namespace dd::driver;
using memory::BlockId;
using memory::MemoryModel;
using memory::PoolId;
using whatif::DeviceReport;
using whatif::IterationRow;
using whatif::Span;
using whatif::TopBlock;

namespace {

/// "2.600 GiB": peaks are compared, so three decimals.
std::string peakBytes(int64_t B) {
  double A = static_cast<double>(B < 0 ? -B : B), D = static_cast<double>(B);
  if (A >= 1024.0 * 1024 * 1024)
    return fmt::format("{:.3f} GiB", D / (1024.0 * 1024 * 1024));
  if (A >= 1024.0 * 1024)
    return fmt::format("{:.3f} MiB", D / (1024.0 * 1024));
  return formatBytes(B);
}

std::string startNote(const memory::Pool &P) {
  if (P.HasTotals)
    return "from the records' Total Allocated";
  return "not recorded (no Total Allocated): assumed the least the records "
         "allow";
}

std::string pairingNote(const memory::Pool &P) {
  return P.HasAddresses ? "by address"
                        : "by size (the records carry no address)";
}

void printText(const trace::Trace &T, const graph::Graph &G,
               const MemoryModel &M, const Span &S,
               const std::vector<DeviceReport> &Devices) {
  std::string Out;
  Out += fmt::format("trace      {}\n", T.Path);
  Out += fmt::format("span       {}\n", S.Label);
  for (const DeviceReport &D : Devices) {
    const memory::Pool &P = *D.Pl;
    Out += fmt::format("\n{}{}\n", P.label(),
                       D.Name.empty() ? ""
                                      : fmt::format(" ({}, {})", D.Name,
                                                    formatBytes(D.Capacity)));
    Out += fmt::format(
        "  records    {} in the replayed window ({} before, {} after); "
        "paired {}\n",
        formatCount(P.RecordsInWindow), formatCount(P.RecordsBefore),
        formatCount(P.RecordsAfter), pairingNote(P));
    Out += fmt::format("  start      {} allocated when the window opens, {}\n",
                       peakBytes(P.StartAllocated), startNote(P));
    int64_t Net = P.AllocatedInWindow - P.FreedInWindow;
    int64_t Change = P.EndAllocated - P.StartAllocated;
    Out += fmt::format(
        "  accounting {} allocated - {} freed in the window = {}; {} {}: {}\n",
        peakBytes(P.AllocatedInWindow), peakBytes(P.FreedInWindow),
        peakBytes(Net),
        P.HasTotals ? "Total Allocated moved by" : "the records sum to",
        peakBytes(Change),
        Net == Change ? "every byte accounted for"
                      : fmt::format("{} bytes unaccounted", Change - Net));
    Out += fmt::format("  peak       {} measured, {} replayed (error {})\n",
                       peakBytes(D.Measured.Bytes), peakBytes(D.Replayed.Bytes),
                       formatPercent(D.error(), true));
    if (D.At.Inside) {
      Out += fmt::format("  where      {} into {}, phase {}, layer {}\n",
                         formatDuration(D.At.Time),
                         S.Whole ? "the window (" + D.At.Iteration + ")"
                                 : D.At.Iteration,
                         D.At.Phase, D.At.Layer);
      Out += fmt::format("             allocated by {}\n", D.At.Op);
    } else {
      Out += "  where      the level the span opens with (it only falls "
             "inside it)\n";
    }
    if (D.Capacity > 0)
      Out += fmt::format(
          "  capacity   {}; headroom {} at the peak ({} used){}\n",
          peakBytes(D.Capacity), peakBytes(D.Capacity - D.Measured.Bytes),
          formatPercent(double(D.Measured.Bytes) / double(D.Capacity)),
          P.HasTotals ? ""
                      : "; at most: memory allocated before the trace is "
                        "not recorded");
    else
      Out += "  capacity   unknown (the trace has no deviceProperties)\n";
    if (P.ReservedPeak != trace::NoValue)
      Out += fmt::format("  reserved   peak {} held by the caching allocator "
                         "(measured; not replayed)\n",
                         peakBytes(P.ReservedPeak));

    Out += "\n  live at the peak, by class\n";
    Table C;
    C.alignRight(1);
    C.alignRight(2);
    int64_t Total = std::max<int64_t>(1, D.Replayed.Bytes);
    for (unsigned K = 0; K < memory::NumBlockClasses; ++K)
      C.row({memory::blockClassName(memory::BlockClass(K)),
             peakBytes(D.ByClass[K]),
             formatPercent(double(D.ByClass[K]) / double(Total))});
    if (P.Untracked)
      C.row({"untracked", peakBytes(P.Untracked),
             formatPercent(double(P.Untracked) / double(Total))});
    Out += C.render("    ");
    if (P.Untracked)
      Out += "    (untracked: allocated before the trace and never freed in "
             "it, as weights and optimizer state are)\n";

    if (!D.Top.empty()) {
      Out += "\n  largest blocks live at the peak\n";
      Table B;
      B.alignRight(0);
      // Addresses and streams when the records carry them (run.cupti files
      // have both, Kineto's [memory] events addresses only).
      bool Addresses = false, Streams = false;
      for (const TopBlock &Tb : D.Top) {
        Addresses |= M.Addr[Tb.B] != 0;
        Streams |= M.Stream[Tb.B] != trace::NoValue;
      }
      std::vector<std::string> Head = {"size", "class"};
      if (Addresses)
        Head.push_back("address");
      if (Streams)
        Head.push_back("stream");
      Head.insert(Head.end(), {"allocated", "freed"});
      B.row(Head);
      for (const TopBlock &Tb : D.Top) {
        std::vector<std::string> Row = {peakBytes(M.Size[Tb.B]),
                                        memory::blockClassName(M.Class[Tb.B])};
        if (Addresses)
          Row.push_back(M.Addr[Tb.B] ? fmt::format("{:#x}", M.Addr[Tb.B])
                                     : std::string("-"));
        if (Streams)
          Row.push_back(M.Stream[Tb.B] == trace::NoValue
                            ? std::string("-")
                            : std::to_string(M.Stream[Tb.B]));
        Row.insert(Row.end(), {Tb.Allocated, Tb.Freed});
        B.row(std::move(Row));
      }
      Out += B.render("    ");
    }

    Out += "\n  iterations\n";
    Table I;
    I.row({"iteration", "allocs", "allocated", "peak", "replayed", "pattern"});
    for (size_t K = 1; K < 5; ++K)
      I.alignRight(K);
    for (const IterationRow &Row : D.Iterations)
      I.row({G.Iterations[Row.Index].Label, formatCount(Row.Pat.Allocs),
             peakBytes(Row.Pat.Bytes), peakBytes(Row.Measured.Bytes),
             peakBytes(Row.Replayed.Bytes), Row.Pat.Verdict});
    Out += I.render("    ");
    Out += fmt::format(
        "  steady state: {} allocation pattern; {} allocations and peak {} "
        "per iteration\n",
        D.Periodic ? "the same" : "not the same",
        D.SteadyAllocsMin == D.SteadyAllocsMax
            ? formatCount(D.SteadyAllocsMin)
            : formatCount(D.SteadyAllocsMin) + " to " +
                  formatCount(D.SteadyAllocsMax),
        D.SteadyPeakMin == D.SteadyPeakMax
            ? peakBytes(D.SteadyPeakMin)
            : peakBytes(D.SteadyPeakMin) + " to " + peakBytes(D.SteadyPeakMax));
    std::string Notes;
    auto Note = [&](uint64_t N, const char *What) {
      if (N)
        Notes += fmt::format("{}{} {}", Notes.empty() ? "" : ", ",
                             formatCount(N), What);
    };
    Note(P.UnmatchedFrees, "frees of blocks allocated before the trace");
    Note(P.NeverFreed, "allocations never freed in the trace");
    Note(P.SizeMismatches, "frees of another size than their block");
    Note(P.Reordered, "same-time records reordered by Total Allocated");
    Note(P.TotalMismatches, "records whose Total Allocated disagrees");
    Note(P.Unplaced, "records on threads without tasks");
    Note(P.ZeroSized, "zero-byte records ignored");
    if (!Notes.empty())
      Out += "  records:   " + Notes + "\n";
  }
  for (const memory::Pool &P : M.Pools) {
    if (P.isDevice())
      continue;
    Out += fmt::format("\nhost ({}) memory: {} records in the window, peak {} "
                       "allocated; reported separately, not counted against "
                       "the GPU\n",
                       P.label(), formatCount(P.RecordsInWindow),
                       peakBytes(memory::peakOf(M.measured(static_cast<PoolId>(
                                                    &P - M.Pools.data())))
                                     .Bytes));
  }
  writeOut(Out);
}

void printJson(const trace::Trace &T, const graph::Graph &G,
               const MemoryModel &M, const Span &S,
               const std::vector<DeviceReport> &Devices) {
  writeJson([&](JsonWriter &W) {
    W.beginObject();
    W.field("trace", T.Path);
    if (S.Whole)
      W.key("iteration").value("all");
    else
      W.field("iteration", G.Iterations[S.Iteration].Number);
    W.field("span", S.Label);
    W.key("devices").beginArray();
    for (const DeviceReport &D : Devices) {
      const memory::Pool &P = *D.Pl;
      W.beginObject();
      W.field("device", P.label());
      W.field("device_id", P.DeviceId);
      W.field("name", D.Name);
      W.field("capacity_bytes", D.Capacity);
      W.field("records_in_window", P.RecordsInWindow);
      W.field("paired_by", P.HasAddresses ? "address" : "size");
      W.field("start_allocated_bytes", P.StartAllocated);
      W.field("start_recorded", P.HasTotals);
      W.field("allocated_in_window_bytes", P.AllocatedInWindow);
      W.field("freed_in_window_bytes", P.FreedInWindow);
      W.field("level_change_bytes", P.EndAllocated - P.StartAllocated);
      W.field("peak_measured_bytes", D.Measured.Bytes);
      W.field("peak_replayed_bytes", D.Replayed.Bytes);
      W.field("peak_error", D.error());
      W.key("peak_at")
          .beginObject()
          .field("time_ns", D.At.Time)
          .field("inside", D.At.Inside)
          .field("op", D.At.Op)
          .field("layer", D.At.Layer)
          .field("phase", D.At.Phase)
          .field("iteration", D.At.Iteration)
          .endObject();
      if (D.Capacity > 0)
        W.field("headroom_bytes", D.Capacity - D.Measured.Bytes);
      else
        W.key("headroom_bytes").null();
      if (P.ReservedPeak != trace::NoValue)
        W.field("reserved_peak_bytes", P.ReservedPeak);
      else
        W.key("reserved_peak_bytes").null();
      W.key("by_class").beginObject();
      for (unsigned K = 0; K < memory::NumBlockClasses; ++K)
        W.field(memory::blockClassName(memory::BlockClass(K)), D.ByClass[K]);
      W.field("untracked", P.Untracked);
      W.endObject();
      W.key("top_blocks").beginArray();
      for (const TopBlock &Tb : D.Top) {
        W.beginObject()
            .field("block", Tb.B)
            .field("bytes", M.Size[Tb.B])
            .field("class", memory::blockClassName(M.Class[Tb.B]));
        if (M.Addr[Tb.B])
          W.field("address", fmt::format("{:#x}", M.Addr[Tb.B]));
        else
          W.key("address").null();
        if (M.Stream[Tb.B] != trace::NoValue)
          W.field("stream", M.Stream[Tb.B]);
        else
          W.key("stream").null();
        W.field("allocated", Tb.Allocated).field("freed", Tb.Freed).endObject();
      }
      W.endArray();
      W.key("iterations").beginArray();
      for (const IterationRow &Row : D.Iterations)
        W.beginObject()
            .field("iteration", G.Iterations[Row.Index].Number)
            .field("label", G.Iterations[Row.Index].Label)
            .field("allocs", Row.Pat.Allocs)
            .field("allocated_bytes", Row.Pat.Bytes)
            .field("peak_measured_bytes", Row.Measured.Bytes)
            .field("peak_replayed_bytes", Row.Replayed.Bytes)
            .field("pattern", Row.Pat.Verdict)
            .endObject();
      W.endArray();
      W.field("steady_same_pattern", D.Periodic);
      W.key("records").beginObject();
      W.field("unmatched_frees", P.UnmatchedFrees);
      W.field("never_freed", P.NeverFreed);
      W.field("size_mismatches", P.SizeMismatches);
      W.field("reordered", P.Reordered);
      W.field("total_mismatches", P.TotalMismatches);
      W.field("unplaced", P.Unplaced);
      W.field("zero_sized", P.ZeroSized);
      W.endObject();
      W.endObject();
    }
    W.endArray();
    W.key("host").beginArray();
    for (PoolId P = 0; P < M.Pools.size(); ++P)
      if (!M.Pools[P].isDevice())
        W.beginObject()
            .field("device", M.Pools[P].label())
            .field("records_in_window", M.Pools[P].RecordsInWindow)
            .field("peak_measured_bytes", memory::peakOf(M.measured(P)).Bytes)
            .endObject();
    W.endArray();
    W.endObject();
  });
}

} // namespace

int dd::driver::runMemory(const TraceOptions &O) {
  auto In = loadInputFor(O);
  if (!In)
    return ExitBadInput;
  const trace::Trace *T = &In->Trace;
  // Say first what this command needs, before building a graph for nothing.
  if (T->Memory.empty()) {
    reportError(O.TracePath,
                "no memory records: " + T->noMemoryRecordsReason());
    return ExitBadInput;
  }
  auto G = buildGraphFor(O, *In);
  if (!G)
    return ExitBadInput;
  whatif::MemoryReport Rep =
      whatif::reportMemory(*T, *G, O.TracePath, O.Iteration, O.Top);
  if (Rep.Failed) {
    reportError(Rep.Failed->File, Rep.Failed->Message);
    return exitFor(*Rep.Failed);
  }
  if (O.Format == OutputFormat::Json)
    printJson(*T, *G, *Rep.M, Rep.S, Rep.Devices);
  else
    printText(*T, *G, *Rep.M, Rep.S, Rep.Devices);
  return ExitOk;
}
