#!/usr/bin/env python3
"""strip_trace.py [--drop-memory] IN OUT - keep only what ddscript reads of a
Kineto trace.

Reads a PyTorch-profiler (Kineto) JSON trace, plain or gzip, and writes a
gzip (level 9, mtime 0: the same input gives the same bytes) that holds only
the fields ddscript's reader (src/trace/KinetoReader.cpp, KinetoEvent.cpp,
Survey.cpp) looks at, in their original order, each kept key and value as
its exact original text (numbers are never re-formatted: the value's bytes
are copied). Only the blanks between tokens change (compact separators).

Dropped:
  * top-level keys other than traceEvents, deviceProperties,
    distributedInfo, baseTimeNanoseconds, schemaVersion, ddscriptCollector
    (inside deviceProperties / distributedInfo: the keys not read);
  * event keys other than ph cat name pid tid ts dur id bp args;
  * "args" keys the reader does not look up (ARG_KEYS below), and "args"
    values that are not objects (the reader ignores them);
Every event is kept (the reader counts those it does not model), only its
fields are cut; with --drop-memory, but for the allocator's records
("[memory]" instant events): for a trace no test reads memory from (a
variant of a with/without pair, read for its time only). Its times are the
same without them (they are no tasks of the graph); the file then says how
many were taken out (a top-level "ddscriptDroppedMemoryRecords"), so that
ddscript still knows the run was recorded with profile_memory (the
profiler's cost per event depends on it) and its memory commands say why
there are no records.

The keep-lists are the reader's: a change to src/trace/ that reads another
field adds it here, and the traces stripped before lack it (their originals
are in git's history: `git log --diff-filter=M -- PATH`).

Compression: libdeflate at level 12 where its library loads (smaller, and
standard gzip), else zlib at level 9; either way the same input gives the
same bytes.

IN may be OUT (written to a temporary file, then renamed). Exit status 2,
with a message, for input that is not a Kineto JSON trace.
"""
import gzip
import json
import json.decoder
import json.scanner
import os
import re
import sys
import tempfile
import zlib

TOP_KEYS = {"traceEvents", "deviceProperties", "distributedInfo",
            "baseTimeNanoseconds", "schemaVersion", "ddscriptCollector",
            "ddscriptDroppedMemoryRecords"}
DROPPED_KEY = '"ddscriptDroppedMemoryRecords"'
DEVICE_KEYS = {"id", "name", "totalGlobalMem", "computeMajor", "computeMinor",
               "numSms"}
DIST_KEYS = {"backend", "rank", "world_size", "nccl_version"}
EVENT_KEYS = {"ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "bp",
              "args"}
# KinetoEvent.cpp, Reader::parseArgs.
ARG_KEYS = {
    "Addr", "cbid", "name", "bytes", "Bytes", "dtype", "stream", "device",
    "event_id", "graph id", "Device Id", "Input Dims", "Input dims",
    "Input type", "Group size", "correlation", "External id", "external id",
    "Device Type", "In msg size", "Out msg size", "Fwd thread id",
    "In msg nelems", "cuda_sync_kind", "Out msg nelems", "Total Reserved",
    "wait_on_stream", "Sequence number", "Total Allocated", "Collective name",
    "Concrete Inputs", "Module Hierarchy", "Process Group Name",
    "Record function id", "Process Group Ranks", "wait_on_cuda_event_id",
    "wait_on_cuda_event_record_corr_id",
}
# KinetoEvent.cpp, classifyCategory: a trace with none of these (and no
# [memory] record) is one ddscript refuses.
KINETO_CATS = {
    "cpu_op", "Operator", "user_annotation", "python_function",
    "cuda_runtime", "Runtime", "cuda_driver", "marker", "kernel", "Kernel",
    "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "gpu_user_annotation",
    "cuda_sync", "cuda_event", "overhead", "Overhead",
}


class Refused(Exception):
    pass


_WS = re.compile(r"[ \t\n\r]*")
_ws = _WS.match
_decoder = json.JSONDecoder(strict=False)
_scan = json.scanner.make_scanner(_decoder)
_scanstring = json.decoder.scanstring


def ws(s, i):
    return _ws(s, i).end()


def value(s, i):
    """(parsed value, end) of the JSON value at s[i]."""
    try:
        return _scan(s, i)
    except StopIteration:
        raise Refused("not valid JSON at character %d" % i) from None
    except ValueError as e:  # json.JSONDecodeError
        raise Refused("not valid JSON: %s" % e) from None


def key(s, i):
    """(unescaped key, end) of the string at s[i] == '"'."""
    if s[i:i + 1] != '"':
        raise Refused("not valid JSON: expected a key at character %d" % i)
    try:
        return _scanstring(s, i + 1, False)
    except ValueError as e:
        raise Refused("not valid JSON: %s" % e) from None


def members(s, i):
    """Yields (key, raw key, value, raw value start, end) of the object at
    s[i] == '{'; the last item is (None, None, None, None, end)."""
    i = ws(s, i + 1)
    if s[i:i + 1] == "}":
        yield None, None, None, None, i + 1
        return
    while True:
        k, j = key(s, i)
        rk = s[i:j]
        j = ws(s, j)
        if s[j:j + 1] != ":":
            raise Refused("not valid JSON: expected ':' at character %d" % j)
        j = ws(s, j + 1)
        v, e = value(s, j)
        yield k, rk, v, j, e
        i = ws(s, e)
        c = s[i:i + 1]
        if c == "}":
            yield None, None, None, None, i + 1
            return
        if c != ",":
            raise Refused("not valid JSON: expected ',' or '}' at %d" % i)
        i = ws(s, i + 1)


def text_of(v, raw):
    """The text the reader takes of a value (textOf): a string's contents,
    any other value's raw JSON."""
    return v if isinstance(v, str) else raw


def filtered_object(s, i, keep):
    """The object at s[i] with only the keys in keep, as text, and its end."""
    out = []
    for k, rk, v, j, e in members(s, i):
        if k is None:
            return "{" + ",".join(out) + "}", e
        if k in keep:
            out.append(rk + ":" + s[j:e])


class Stats:
    def __init__(self, drop_memory=False):
        self.events = 0
        self.dropped = 0
        self.kineto = False
        self.drop_memory = drop_memory


def event(s, i, st):
    """The stripped text of the element at s[i], and its end."""
    if s[i:i + 1] != "{":
        v, e = value(s, i)
        return s[i:e], e  # ddscript refuses it; kept as it is
    fields = []
    ph = None
    name = cat = None
    for k, rk, v, j, e in members(s, i):
        if k is None:
            end = e
            break
        if k not in EVENT_KEYS:
            continue
        if k == "args":
            if s[j] != "{":
                continue  # not an object: ignored by the reader
            kept = []
            for ak, rak, av, aj, ae in members(s, j):
                if ak is None:
                    break
                if ak in ARG_KEYS:
                    kept.append(rak + ":" + s[aj:ae])
            fields.append(rk + ":{" + ",".join(kept) + "}")
            continue
        raw = s[j:e]
        fields.append(rk + ":" + raw)
        if k == "ph":
            t = text_of(v, raw)
            ph = t[0] if t else None
        elif k == "name":
            name = text_of(v, raw)
        elif k == "cat":
            cat = text_of(v, raw)
    st.events += 1
    memory = name == "[memory]" and ph in ("i", "I")
    if cat in KINETO_CATS or memory:
        st.kineto = True
    if memory and st.drop_memory:
        st.dropped += 1
        return None, end
    return "{" + ",".join(fields) + "}", end


def events_array(s, i, st, out):
    """Appends the stripped array at s[i] == '[' to out; returns its end."""
    i = ws(s, i + 1)
    out.append("[")
    if s[i:i + 1] == "]":
        out.append("]")
        return i + 1
    first = True
    while True:
        t, e = event(s, i, st)
        if t is not None:
            if not first:
                out.append(",\n")
            out.append(t)
            first = False
        i = ws(s, e)
        c = s[i:i + 1]
        if c == "]":
            out.append("]")
            return i + 1
        if c != ",":
            raise Refused("not valid JSON: expected ',' or ']' at %d" % i)
        i = ws(s, i + 1)


def strip_text(s, drop_memory=False):
    """The stripped document of Kineto JSON text s, and its Stats."""
    st = Stats(drop_memory)
    out = []
    i = ws(s, 0)
    if s[i:i + 1] == "\ufeff":
        i = ws(s, i + 1)
    c = s[i:i + 1]
    saw_events = False
    dropped_before = 0
    if c == "[":
        if drop_memory:
            raise Refused("a trace that is a bare array of events has no "
                          "place to say its memory records were dropped")
        i = events_array(s, i, st, out)
        saw_events = True
    elif c == "{":
        out.append("{")
        seen = set()
        first = True
        for k, rk, v, j, e in members(s, i):
            if k is None:
                i = e
                break
            if rk in seen:
                raise Refused("the key %s appears twice in the top-level "
                              "object (ddscript refuses it)" % rk)
            seen.add(rk)
            bare = rk[1:-1]  # the reader compares the raw key
            if bare not in TOP_KEYS:
                continue
            if rk == DROPPED_KEY:
                # Written again below, with what this pass drops added.
                dropped_before = v if isinstance(v, int) and v > 0 else 0
                continue
            if not first:
                out.append(",\n")
            first = False
            out.append(rk + ":")
            if bare == "traceEvents":
                if s[j] != "[":
                    raise Refused('"traceEvents" is not an array')
                events_array(s, j, st, out)
                saw_events = True
            elif bare == "deviceProperties" and s[j] == "[":
                items = []
                k2 = ws(s, j + 1)
                while s[k2] != "]":
                    if s[k2] == "{":
                        t, k2 = filtered_object(s, k2, DEVICE_KEYS)
                        items.append(t)
                    else:
                        _, k2 = value(s, k2)  # not an object: skipped
                    k2 = ws(s, k2)
                    if s[k2] == ",":
                        k2 = ws(s, k2 + 1)
                out.append("[" + ",".join(items) + "]")
            elif bare == "distributedInfo" and s[j] == "{":
                out.append(filtered_object(s, j, DIST_KEYS)[0])
            else:
                out.append(s[j:e])
        if dropped_before + st.dropped:
            out.append(",\n%s:%d" % (DROPPED_KEY,
                                      dropped_before + st.dropped))
        out.append("}")
    else:
        raise Refused("not JSON: does not start with '{' or '['")
    if s[ws(s, i):].strip(" \t\n\r"):
        raise Refused("the file goes on after the JSON document ends")
    if not saw_events:
        raise Refused('not a Chrome/Kineto trace: no "traceEvents" array')
    if not st.kineto:
        raise Refused("not a Kineto trace: no PyTorch-profiler event "
                      "categories (nor [memory] records)")
    return "".join(out), st


def read_input(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise Refused("not a whole gzip file: %s" % e) from None
        if data[:2] == b"\x1f\x8b":
            raise Refused("gzip inside gzip")
    if data[:4] == b"DDCU":
        raise Refused("a run.cupti file (ddscript's collector), not Kineto JSON")
    if b"\0" in data[:4096]:
        raise Refused("a binary file, not JSON")
    return data.decode("utf-8", "surrogateescape")


def _libdeflate():
    try:
        import ctypes
        lib = ctypes.CDLL("libdeflate.so.0")
    except OSError:
        return None
    lib.libdeflate_alloc_compressor.restype = ctypes.c_void_p
    lib.libdeflate_alloc_compressor.argtypes = [ctypes.c_int]
    lib.libdeflate_free_compressor.argtypes = [ctypes.c_void_p]
    lib.libdeflate_gzip_compress_bound.restype = ctypes.c_size_t
    lib.libdeflate_gzip_compress_bound.argtypes = [ctypes.c_void_p,
                                                   ctypes.c_size_t]
    lib.libdeflate_gzip_compress.restype = ctypes.c_size_t
    lib.libdeflate_gzip_compress.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
        ctypes.c_size_t]

    def compress(data):
        c = lib.libdeflate_alloc_compressor(12)
        try:
            n = lib.libdeflate_gzip_compress_bound(c, len(data))
            buf = ctypes.create_string_buffer(n)
            m = lib.libdeflate_gzip_compress(c, data, len(data), buf, n)
            if m == 0:
                raise OSError("libdeflate could not compress")
            return buf.raw[:m]
        finally:
            lib.libdeflate_free_compressor(c)
    return compress


def compress(data):
    """gzip of data: libdeflate level 12 where it loads, else zlib 9."""
    fast = _libdeflate()
    if fast:
        out = fast(data)
        if gzip.decompress(out) == data:
            return out
    return gzip.compress(data, 9, mtime=0)


def strip_file(src, dst, drop_memory=False):
    s = read_input(src)
    text, st = strip_text(s, drop_memory)
    out = compress(text.encode("utf-8", "surrogateescape"))
    d = os.path.dirname(os.path.abspath(dst))
    fd, tmp = tempfile.mkstemp(prefix=".strip_trace.", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(out)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dst)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return st, len(out)


def main(argv):
    args = argv[1:]
    drop_memory = "--drop-memory" in args
    args = [a for a in args if a != "--drop-memory"]
    if len(args) != 2 or any(a.startswith("--") for a in args):
        print("usage: strip_trace.py [--drop-memory] IN OUT", file=sys.stderr)
        return 2
    src, dst = args
    try:
        before = os.path.getsize(src)
        st, after = strip_file(src, dst, drop_memory)
    except Refused as e:
        print("strip_trace.py: %s: %s" % (src, e), file=sys.stderr)
        return 2
    except (IndexError, RecursionError):
        print("strip_trace.py: %s: not valid JSON (it ends early?)" % src,
              file=sys.stderr)
        return 2
    except (OSError, UnicodeError) as e:
        print("strip_trace.py: %s" % e, file=sys.stderr)
        return 2
    dropped = (", %d memory records dropped" % st.dropped
               if drop_memory else "")
    print("%s: %d -> %d bytes (%d events%s)" % (dst, before, after, st.events,
                                                dropped), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
