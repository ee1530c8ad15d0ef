"""ddscript from Python: predict what an optimization does to DNN training
time, from one profiled run.

    import ddscript
    t = ddscript.load("run.json.gz")          # or a list of rank traces: a job
    t.replay()                               # measured vs replayed
    r = t.run("amp", tensor_core_speedup=3)  # a model: the prediction
    t.run("amp", memory_speedup=[2, 3])      # a list sweeps the parameter

Results are the JSON objects the ddscript command prints with --format json,
as dicts with the same keys and numbers (Result; built as values, with no
JSON text written or read), with to_pandas() and, in
Jupyter, the HTML report. Errors raise ddscript.Error. The work is done by
the same libraries as the command's; see docs/python.md.
"""

import html
import math
import numbers
import os
import tempfile
import warnings

from . import _ddscript

__all__ = ["Error", "Result", "Results", "Table", "Trace", "check", "convert",
           "disasm", "load", "models", "record", "reduce"]


class Error(Exception):
    """What ddscript reports as an error: a trace it cannot read, a model
    that does not compile or fails, a parameter it does not take.

    file, line and column say where (line and column are 0 when the error is
    not at a place in a .dd file); message is the error alone, and str() the
    error as the command prints it (with the source line and a caret)."""

    def __init__(self, message, file="", line=0, column=0, text=None):
        super().__init__(text if text is not None else message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column


def _check(reply):
    """The values of a call's reply (what the command writes as JSON, one
    per document); its warnings as Python warnings; its
    errors as Error."""
    ok, out, messages = reply[:3]
    errors = []
    for level, file, line, column, message, rendered in messages:
        if level == "warning":
            warnings.warn(rendered.rstrip("\n"), stacklevel=3)
        else:
            errors.append((file, line, column, message, rendered))
    if ok:
        return out
    if not errors:
        raise Error("ddscript failed without saying why")
    # The error with a place in a file, where one has it (a sweep's failed
    # run is told in a line, then the model's diagnostic).
    at = next((e for e in errors if e[1]), errors[0])
    text = "".join(e[4] for e in errors).rstrip("\n")
    raise Error(at[3], file=at[0], line=at[1], column=at[2], text=text)


class _Table:
    """to_pandas() and the HTML report, shared by Result and Results."""

    _rows = None
    _report = None
    _html = None

    def to_pandas(self):
        """The result as a pandas DataFrame: a row per sweep point, what-if
        or iteration, else one row; nested objects become dotted columns."""
        import pandas  # only when asked: pandas is not needed otherwise

        rows = self._rows if self._rows is not None else self
        if isinstance(rows, dict):
            rows = [rows]
        return pandas.json_normalize([dict(r) for r in rows])

    def report_html(self):
        """The HTML report the command writes with --report, for this
        result (the command runs again, writing it); None where the command
        writes none (inspect)."""
        if self._report is None:
            return None
        if self._html is None:
            with tempfile.TemporaryDirectory(prefix="ddscript-") as d:
                path = os.path.join(d, "report.html")
                self._report(path)
                with open(path, encoding="utf-8") as f:
                    self._html = f.read()
        return self._html

    def __reduce__(self):
        # Pickled as its data and rows, without the calls that would run
        # the command again (the report, a run's tables: they hold the
        # Trace), so results cross processes (multiprocessing, dask).
        data = dict(self) if isinstance(self, dict) else list(self)
        return (self.__class__, (data,), {"_rows": self._rows})

    def _repr_html_(self):
        page = self.report_html()
        if page is None:
            return None
        # In a frame of its own: the page's styles and scripts stay in it.
        return ('<iframe srcdoc="{}" style="width:100%;height:640px;'
                'border:1px solid #ddd"></iframe>'.format(html.escape(page)))


class Table(dict):
    """Columns of equal length, by name (a dict of lists): t.kernels()["name"]
    is every kernel's name. len() is the number of rows; rows() gives each
    as a dict; to_pandas() the DataFrame (pandas imported only then)."""

    def __len__(self):
        # The rows: a column's length (dict's own len counts the columns).
        return len(next(iter(self.values()))) if dict.__len__(self) else 0

    def rows(self):
        names = list(self.keys())
        for values in zip(*(self[n] for n in names)):
            yield dict(zip(names, values))

    def to_pandas(self):
        import pandas  # only when asked: pandas is not needed otherwise

        return pandas.DataFrame(dict(self))

    def __repr__(self):
        return "<ddscript.Table of {} rows: {}>".format(
            len(self), ", ".join(self.keys()))


class _Predicted:
    """A run's tables of the changed graph: tasks(), kernels() and ops()
    (the model runs again: on a copy of one trace's graph, or on a job's
    ranks, joined), with predicted_* times where a trace's table has
    replayed_* ones, and a job's rank; a task the model inserted has no
    measured start or duration."""

    _tables = None

    def tasks(self):
        return self._table("all")

    def kernels(self):
        return self._table("kernels")

    def ops(self):
        return self._table("ops")

    def _table(self, which):
        if self._tables is None:
            raise ValueError("ddscript: tables come with a run's result (not "
                             "a sweep's or another command's)")
        return self._tables(which)


class Result(_Predicted, _Table, dict):
    """One JSON object of the command's output, as a dict; a run's also
    gives the changed graph's tables (see _Predicted)."""


class Results(_Predicted, _Table, list):
    """Several: one JSON object per reported iteration (replay with
    iteration="all", a run on a job); a run's also gives the changed
    graph's tables (see _Predicted)."""


def _results(objects, rows=None, report=None):
    if len(objects) == 1:
        r = Result(objects[0])
        r._rows = rows(r) if rows else None
    else:
        r = Results(Result(o) for o in objects)
    r._report = report
    return r


def _setting(name, value):
    """A keyword as `--set NAME=VALUE`; a list or tuple sweeps."""

    def text(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, numbers.Integral):  # numpy's too
            return str(int(v))
        if isinstance(v, numbers.Real):
            if not math.isfinite(float(v)):
                raise ValueError("ddscript: parameter {} is {}: give a "
                                 "finite number".format(name, float(v)))
            return repr(float(v))
        if isinstance(v, str):
            return v.replace(",", "\\,")
        raise TypeError("ddscript: parameter {} takes numbers, booleans and "
                        "strings like '10Gbps', not {}".format(
                            name, type(v).__name__))

    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError("ddscript: parameter {} is given no values to "
                             "sweep".format(name))
        return "{}={}".format(name, ",".join(text(v) for v in value))
    return "{}={}".format(name, text(value))


def _path(p):
    return os.fspath(p) if p is not None else ""


def _paths(trace, what):
    """One path (str, bytes or os.PathLike) or a list of them, as strs."""
    if isinstance(trace, (str, bytes, os.PathLike)):
        trace = [trace]
    elif not isinstance(trace, (list, tuple)):
        raise TypeError("ddscript: {} takes a path or a list of paths, not "
                        "{}".format(what, type(trace).__name__))
    out = []
    for p in trace:
        if not isinstance(p, (str, bytes, os.PathLike)):
            raise TypeError("ddscript: {} takes paths, not {}".format(
                what, type(p).__name__))
        out.append(os.fsdecode(p))
    return out


def _text(name, value):
    """An optional keyword that takes text: None, or a str."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError("ddscript: {} takes a str, not {}".format(
            name, type(value).__name__))
    return value


def _whole(name, value, low, high, spelled=None):
    """\p value, a whole number (numpy's too, not a bool) from low to high,
    as an int; else ValueError naming it."""
    if (not isinstance(value, numbers.Integral) or isinstance(value, bool)
            or not low <= value <= high):
        raise ValueError("ddscript: {} is a whole number from {} to "
                         "{}".format(name, low, spelled or high))
    return int(value)


def _check_max_steps(max_steps):
    return _whole("max_steps", max_steps, 1, 2**64 - 1, "2**64 - 1")


class Trace:
    """A trace (or a job's traces, one per rank), loaded by ddscript.load."""

    def __init__(self, handle):
        self._t = handle

    @property
    def paths(self):
        """The trace files, as --trace would expand them."""
        return list(self._t.paths)

    @property
    def is_job(self):
        return self._t.is_job

    def __repr__(self):
        if self.is_job:
            return "<ddscript.Trace job of {} ranks: {} ...>".format(
                len(self.paths), self.paths[0])
        return "<ddscript.Trace {}>".format(self.paths[0])

    def inspect(self):
        """`ddscript inspect`: iterations, threads, streams, GPU busy time,
        top kernels, layers (one trace, not a job)."""
        return _results(_check(self._t.inspect()))

    def replay(self, *, timeline=None, report=None):
        """`ddscript replay`: measured against replayed time of the reported
        iteration (a Results per iteration with iteration="all"); for a job,
        the job's and each rank's. timeline and report write the command's
        --timeline and --report files."""
        out = _check(self._t.replay(_path(timeline), _path(report)))
        return _results(out, report=lambda p: _check(self._t.replay("", p)))

    def run(self, model, *, max_steps=50_000_000, timeline=None, report=None,
            **params):
        """`ddscript run MODEL --set NAME=VALUE ...`: the model (a .dd file
        or a standard model's name) on this trace, the prediction. A list
        of values sweeps a parameter: the result is then the sweep's (one
        point per combination, each its own run on the unchanged trace)."""
        model = os.fspath(model)
        max_steps = _check_max_steps(max_steps)
        settings = [_setting(k, v) for k, v in params.items()]

        def call(timeline_path, report_path):
            return _check(self._t.run(model, settings, max_steps,
                                      timeline_path, report_path))

        def rows(r):  # a sweep's points, or iteration="all"'s iterations
            if "sweep" in r:
                return r["sweep"]["points"]
            return r.get("iterations")

        out = call(_path(timeline), _path(report))
        r = _results(out, rows=rows, report=lambda p: call("", p))
        if isinstance(r, (Result, Results)) and "sweep" not in r:
            def tables(which):
                reply = self._t.predicted_tasks(model, settings, max_steps,
                                                which)
                _check(reply)
                return Table(reply[3])
            r._tables = tables
        return r

    def tasks(self):
        """Every task of the graph as a Table: one row per task (CPU calls
        and operators, GPU kernels, copies, sets, communication), with
        id, name, kind, class (GPU work's kernel class), layer, phase,
        resource (thread or stream), iteration, rank (a job's),
        start_ns and duration_ns (as measured, on the trace's clock),
        replayed_start_ns and replayed_duration_ns (the replay, on the same
        clock), flops and bytes (from recorded shapes: an operator's, a
        kernel's share of its operator's) and container (a call that
        encloses others). None where a value is unknown."""
        return self._table("all")

    def kernels(self):
        """tasks() of the GPU work: kernels, copies, sets, communication."""
        return self._table("kernels")

    def ops(self):
        """tasks() of the CPU operators (aten::, autograd), containers
        included."""
        return self._table("ops")

    def critical_path(self):
        """The replay's critical path through the reported iteration (on a
        job, the job's, across ranks) as a Table in time order: each row a
        segment, kind "run" (a task running), "gap" (the time before it on
        its thread or stream) or "delay" (a dependency's: launch latency,
        a wake-up), with the task, its name and resource, the dependency's
        kind for a delay, its rank on a job, and start_ns, end_ns and
        duration_ns on the trace's clock. Its durations sum to the
        iteration's replayed time."""
        reply = self._t.critical_path()
        _check(reply)
        return Table(reply[3])

    def _table(self, which):
        reply = self._t.tasks(which)
        _check(reply)
        return Table(reply[3])

    def memory(self, *, top=10):
        """`ddscript memory`: peak device memory of the reported iteration
        (iteration="all": of the whole window), measured and replayed,
        where it happens, the top live blocks, each iteration's peak and
        allocation pattern (one trace, not a job)."""
        if not isinstance(top, int) or not 0 <= top <= 1_000_000:
            raise ValueError("ddscript: top is a whole number from 0 to "
                             "1000000")
        return _results(_check(self._t.memory(top)))

    def compare(self, after, *, model=None, report=None, **params):
        """`ddscript compare THIS AFTER`: this trace (before a change)
        against after, a trace of the run with it; with model, what the
        model predicts from this one and its error against after's
        (back-testing); where the time went, side by side."""
        settings = [_setting(k, v) for k, v in params.items()]
        if settings and model is None:
            raise ValueError("ddscript: parameters take a model")
        after = os.fspath(after)
        model = "" if model is None else os.fspath(model)

        def call(report_path):
            return _check(self._t.compare(after, model, settings,
                                          report_path))

        return _results(call(_path(report)), report=call)

    def export(self, output, *, model=None, max_steps=50_000_000, **params):
        """`ddscript export --format chakra -o OUTPUT`: the reported
        iteration of each rank, as the model (if any) leaves it, as Chakra
        execution traces for ASTRA-sim, written into the folder output.
        Returns what was written."""
        max_steps = _check_max_steps(max_steps)
        settings = [_setting(k, v) for k, v in params.items()]
        if settings and model is None:
            raise ValueError("ddscript: parameters take a model")
        return _results(_check(self._t.export_chakra(
            os.fspath(output), "" if model is None else os.fspath(model),
            settings, max_steps)))

    def opportunities(self, *, factor=2, top=10, report=None):
        """`ddscript opportunities`: simulated what-ifs (each kernel class,
        phase and top layer factor times faster, ...), ranked."""
        if not isinstance(top, int) or not 1 <= top <= 1000:
            raise ValueError("ddscript: top is a whole number from 1 to 1000")

        def call(report_path):
            return _check(self._t.opportunities(float(factor), top,
                                                report_path))

        out = call(_path(report))
        return _results(out, rows=lambda r: r["opportunities"],
                        report=call)


def check(*models):
    """`ddscript check`: compiles each model (a .dd file or a shipped
    model's name) without running it. A Result whose "models" holds, per
    model, its "model", "path", "ok" and "diagnostics" (file, line, column,
    severity, message); a model with errors is no Error, so that an editor
    can show them all."""
    if not models:
        raise ValueError("ddscript: check takes one or more models")
    reply = _ddscript.check([os.fspath(m) for m in models])
    # A model with errors ends the command with exit status 2, and its
    # diagnostics are the result: only a reply without JSON is an error.
    if not reply[1]:
        _check(reply)
    return _results(reply[1])


def load(trace, *, iteration=None, window=None, calibration="exact",
         clock="collectives", unprofiled=None, profiled=False):
    """Loads a trace: a path (PyTorch profiler JSON, .json.gz, or run.cupti),
    or a list of paths, a directory or a glob: a job, one trace per rank.

    One trace is read, its graph built and replayed here, once for all its
    runs; a job's ranks are read by each call, as the command reads them.
    iteration ("all", or a number as the trace numbers it; default a
    steady-state one), window ("START:END" in microseconds), calibration
    ("exact" or "typical"), clock ("collectives" or "trace", for a job) and
    unprofiled ("per-event=4us": the profiler's cost per recorded event
    taken out, by default 5.5us; or "35.5ms": the iteration time measured
    without the profiler) are the command's --iteration, --window,
    --calibration, --clock and --unprofiled; profiled=True is --profiled
    (the profiler's cost kept: predictions for the profiled run)."""
    paths = _paths(trace, "load")
    if not paths:
        raise ValueError("ddscript: load takes a trace, or a job's traces")
    if iteration is not None and (isinstance(iteration, bool) or
                                  not isinstance(iteration, (numbers.Integral, str))):
        raise TypeError("ddscript: iteration is a number or 'all', not "
                        "{}".format(type(iteration).__name__))
    window = _text("window", window)
    unprofiled = _text("unprofiled", unprofiled)
    if calibration not in ("exact", "typical"):
        raise ValueError("ddscript: calibration is 'exact' or 'typical'")
    if clock not in ("collectives", "trace"):
        raise ValueError("ddscript: clock is 'collectives' or 'trace'")
    if profiled and unprofiled:
        raise ValueError("ddscript: profiled=True keeps the profiler's cost "
                         "and unprofiled takes it out: give one of them")
    if profiled:
        unprofiled = "profiled"
    reply = _ddscript.load(paths,
                           "" if iteration is None else str(iteration),
                           window, calibration, clock, unprofiled)
    _check(reply)
    return Trace(reply[3])


def reduce(trace, output, *, iteration=None, calibration="exact"):
    """`ddscript reduce`: reads a job's rank (a trace path) as the job's
    commands read it and writes its graph to output (a .ddg), which load()
    and every command on a job take in place of the trace; a list of traces
    (a group of ranks) is written into output, a folder, one .ddg each.
    Each call is independent work: map it over the ranks on a cluster
    (dask.distributed, a Slurm array), then load the folder of .ddg files
    in one process (docs/multirank.md). iteration and calibration are the
    job's --iteration and --calibration: the job must be read with the same.
    Returns what was written: output, trace, rank, world_size, tasks,
    iterations, trace_iterations, bytes and trace_bytes (a Results, one per
    rank, for several)."""
    paths = _paths(trace, "reduce")
    if not paths:
        raise ValueError("ddscript: reduce takes a trace, or a group of "
                         "ranks' traces")
    if calibration not in ("exact", "typical"):
        raise ValueError("ddscript: calibration is 'exact' or 'typical'")
    out = _check(_ddscript.reduce(paths,
                                  os.fspath(output),
                                  "" if iteration is None else str(iteration),
                                  calibration))
    return _results(out)


def models():
    """`ddscript models`: the models `run` finds by name, with their
    descriptions and parameters, and the search path."""
    ok, out, messages = _ddscript.models()
    # A model that does not compile is listed with its error, not raised.
    return _results(out)


def convert(trace, output):
    """`ddscript convert TRACE -o OUTPUT`: the trace (run.cupti or Kineto
    JSON) written as Chrome-trace JSON for Perfetto, gzip-compressed when
    output ends in .gz. Returns what was written: trace, output, events,
    records (with thread names, memory and flows) and bytes."""
    return _results(_check(_ddscript.convert(os.fsdecode(trace),
                                             os.fsdecode(output))))


def disasm(model):
    """`ddscript disasm MODEL`: the bytecode a model (a .dd file or a
    shipped model's name) compiles to, as text."""
    ok, listing, messages = _ddscript.disasm(os.fsdecode(model))
    _check((ok, listing, messages))
    return listing


def record(command, *, output="run.cupti", skip=None, iterations=None,
           profiler_api=False):
    """`ddscript record -o OUTPUT -- COMMAND...`: runs command (a list of
    words, or a string split at blanks: give a list for arguments with
    spaces) under ddscript's CUPTI collector and describes
    the trace it wrote: output, command, exit_status, events, kernels,
    iterations, first_step and last_step (ProfilerStep#N) and bytes. skip
    and iterations are --skip and --iterations (ProfilerStep#N ranges),
    profiler_api --profiler-api. A command that fails after writing a
    trace gives its result with a warning (exit_status says how it ended);
    one that writes none raises Error."""
    if isinstance(command, (str, bytes, os.PathLike)):
        command = os.fsdecode(command).split()
    command = _paths(command, "record")
    if not command:
        raise ValueError("ddscript: record takes a command to run")
    skip = -1 if skip is None else _whole("skip", skip, 0, 2**31 - 1)
    iterations = -1 if iterations is None else _whole(
        "iterations", iterations, 1, 2**31 - 1)
    reply = _ddscript.record(command, os.fsdecode(output), skip, iterations,
                             bool(profiler_api))
    if not reply[0] and reply[1]:  # the command failed; its trace is there
        _check((True, reply[1], reply[2]))
        return _results(reply[1])
    return _results(_check(reply))
