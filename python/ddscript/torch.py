"""A torch.profiler hook: predict from the trace the profiler just wrote.

    import torch, ddscript.torch
    with torch.profiler.profile(
            schedule=torch.profiler.schedule(wait=1, warmup=2, active=5),
            on_trace_ready=ddscript.torch.on_trace_ready("amp", "t.json.gz"),
    ) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

This module does not import torch: the hook only calls the profiler's
export_chrome_trace(path).
"""

import os

from . import load

__all__ = ["on_trace_ready", "summary"]


def _ms(ns):
    return "{:.3f} ms".format(ns / 1e6)


def summary(result):
    """One line of a run's result: the iteration, measured, replayed (as
    `ddscript replay` replays it), without the profiler's cost where that
    was taken out (what the speedup is against), predicted, the speedup
    (the numbers of its JSON, as `run` prints them)."""
    job = "job_measured_ns" in result  # a job's: one result per iteration
    key = "job_{}_ns" if job else "{}_ns"
    measured = result[key.format("measured")]
    baseline = result[key.format("baseline")]
    profiled = result.get(key.format("profiled_replay"))
    replayed = "replayed {}".format(_ms(baseline)) if profiled is None else \
        "replayed {}, unprofiled {}".format(_ms(profiled), _ms(baseline))
    predicted = result[key.format("predicted")]
    speedup = result.get("speedup")
    return ("ddscript: {} on {} ({}): measured {}, {}, predicted {}, "
            "speedup {}".format(
                result["model"], result.get("trace", "the job"),
                result["label"], _ms(measured), replayed, _ms(predicted),
                "-" if speedup is None else "{:.3f}x".format(speedup)))


def on_trace_ready(model="amp", out="trace.json.gz", *, quiet=False,
                   **params):
    """A callable for torch.profiler.profile(on_trace_ready=...): it writes
    the trace to out (gzip-compressed when it ends in .gz; "{step}" in it is
    replaced by the profiler's step number, for a schedule that repeats),
    runs model on it with params (as Trace.run takes them), prints one line
    of the prediction (unless quiet) and returns the result."""

    def handler(prof):
        path = out.format(step=getattr(prof, "step_num", 0)) \
            if "{step}" in out else out
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        prof.export_chrome_trace(path)
        result = load(path).run(model, **params)
        if not quiet:
            for r in result if isinstance(result, list) else [result]:
                print(summary(r) if "sweep" not in r else
                      "ddscript: {} on {}: a sweep of {} runs".format(
                          r["model"], r["trace"], len(r["sweep"]["points"])))
        return result

    return handler
