#!/usr/bin/env python3
"""Opens a --report page in headless Chromium, as a person would, and checks it.

usage: check_page.py [options] -- COMMAND ARGS...

COMMAND is `ddscript replay|run|opportunities|compare ...`, run twice, with
--format json and --report TMP appended; a run may sweep parameters (--set
NAME=V1,V2).

With --no-browser only the static checks run. Without a browser they still
run, and the test then exits 77, which CTest reports as skipped. The browser
is $DD_BROWSER, else chromium, chromium-browser or google-chrome on PATH.

Always: the two runs wrote the same bytes; the page loads nothing (no src or
href to fetch, no url(), @import, fetch or XMLHttpRequest); the summary holds
the command's numbers (measured, replayed, predicted and speedup for run;
measured, replayed, error, GPU busy and the critical path for replay), exact in data-ns
and as ddscript prints them; for opportunities, the ranked table and the page's
data hold each what-if, its predicted time and gain as the command lists them;
for compare, the before, after and predicted times, the errors, and each row of
the breakdown.

  --threads A,B
           the two runs with DDSCRIPT_THREADS=A and =B: the page must not
           depend on the threads.

In the browser: no console message and no uncaught error; the script ran to
its end (body data-dd-rendered); the timeline canvas was drawn; and

  (replay) the critical-path bars by phase and by layer show what
           `ddscript replay --format json` reports (critical_path_phases,
           critical_path_layers);
  (opportunities) one bar per what-if, at its gain;
  (compare) a bar for before, after and (with a model) predicted, at the
           command's times;
  --sweep  the sweep plot has one point per result the command printed, at
           its predicted time, titled with its parameters;
  --roofline MODEL
           (run/replay) the roofline table has, per kernel class, as many
           kernels with work from shapes as `ddscript run MODEL` on the
           same trace prints ("roofline CLASS COUNT NS", from the
           language's k.flops and k.bytes_moved), the page's data as many
           points (when none are left out), and in the browser one dot per
           point and one roof per peak of the trace's GPU;
  --screenshot FILE
           a 1400x1000 screenshot is a PNG of that size with a drawn page
           (many colours, not mostly white); kept at FILE.
"""
import html as htmllib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ddcheck import fail, fmt_duration, run  # noqa: E402

SKIP = 77


def browser():
    b = os.environ.get("DD_BROWSER")
    if b:
        return b if shutil.which(b) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def chromium(exe, page, *args):
    profile = tempfile.mkdtemp()
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
           "--enable-logging=stderr", "--v=0", *args, "file://" + page]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    shutil.rmtree(profile, ignore_errors=True)
    if p.returncode != 0:
        fail(f"chromium exited {p.returncode}\n{p.stderr[-2000:]}")
    return p.stdout, p.stderr


def cell(html, ident):
    m = re.search(r'<td id="%s"[^>]*data-ns="(-?\d+)">([^<]*)</td>' % ident, html)
    if not m:
        fail(f"the page has no cell #{ident}")
    return int(m.group(1)), m.group(2)


def expect_cell(html, ident, ns):
    got, text = cell(html, ident)
    if got != ns or text != fmt_duration(ns):
        fail(f"#{ident} shows {text!r} ({got} ns), the command says "
             f"{fmt_duration(ns)!r} ({ns} ns)")


def expect_replayed(html, rep):
    """One trace's run page: the replayed cell (the replay with the
    profiler's cost where it was taken out, and then an unprofiled cell,
    the baseline the speedup is against)."""
    if "profiled_replay_ns" in rep:
        expect_cell(html, "replayed", rep["profiled_replay_ns"])
        expect_cell(html, "unprofiled", rep["baseline_ns"])
    else:
        expect_cell(html, "replayed", rep["baseline_ns"])


def page_data(html):
    """The JSON the page's script draws from."""
    m = re.search(r'<script type="application/json" id="dd-data">(.*?)</script>',
                  html, re.S)
    if not m:
        fail("the page has no data")
    return json.loads(m.group(1))


def row_numbers(row):
    return [int(v) for v in re.findall(r'data-ns="(-?\d+)"', row)]


def expect_span(html, ident, text):
    m = re.search(r'<span id="%s">([^<]*)</span>' % ident, html)
    if not m or m.group(1) != text:
        fail(f"#{ident} shows {m and m.group(1)!r}, the command says {text!r}")


def check_opportunities(html, rep):
    """The ranked what-ifs, in the table and in the page's data."""
    want = [(o["what"], o["model"], o["predicted_ns"], o["gain_ns"])
            for o in rep["opportunities"]]
    data = page_data(html)["opportunities"]
    if data["baseline"] != rep["baseline_ns"]:
        fail(f"the page's baseline is {data['baseline']}, the command's "
             f"{rep['baseline_ns']}")
    got = [(e["what"], e["model"], e["ns"], e["gain"]) for e in data["entries"]]
    if got != want:
        fail(f"the page's data has {got[:2]}..., the command {want[:2]}...")
    rows = re.findall(r'<tr data-opportunity="(\d+)"><td[^>]*>\d+</td>'
                      r'<td>([^<]*)</td>(.*?)</tr>', html)
    got = [(int(k), htmllib.unescape(what), row_numbers(row))
           for k, what, row in rows]
    want = [(k + 1, w[0], [w[2], w[3]]) for k, w in enumerate(want)]
    if got != want:
        fail(f"the table has {got[:2]}..., the command {want[:2]}...")


def check_compare(html, rep):
    """Before, after, predicted and the errors; the breakdown row by row."""
    expect_cell(html, "compare-before", rep["before"]["measured_ns"])
    expect_cell(html, "compare-after", rep["after"]["measured_ns"])
    expect_span(html, "compare-change", f"{rep['measured_change'] * 100:+.2f}%")
    model = "predicted_ns" in rep
    if model:
        expect_cell(html, "compare-predicted", rep["predicted_ns"])
        expect_span(html, "compare-error", f"{rep['error'] * 100:+.2f}%")
        expect_span(html, "compare-same-error",
                    f"{rep['same_time_error'] * 100:+.2f}%")
    elif 'id="compare-predicted"' in html:
        fail("a plain diff's page has a prediction")
    rows = re.findall(r'<tr class="(?:total|part)" data-what="([^"]*)">(.*?)</tr>',
                      html)
    got = [(htmllib.unescape(w), row_numbers(r)) for w, r in rows]
    want = []
    for b in rep["breakdown"]:
        ns = [b["before_ns"], b["after_ns"], b["after_ns"] - b["before_ns"]]
        if model:
            ns += [b["predicted_ns"], b["predicted_ns"] - b["after_ns"]]
        want.append((b["what"], ns))
    if got != want:
        fail(f"the breakdown has {got[:3]}..., the command {want[:3]}...")
    data = page_data(html)["compare"]
    got = [(r["what"], [r["before"], r["after"]] +
            ([r["predicted"]] if model else []))
           for r in data["rows"] if r["kind"] != "heading"]
    want = [(w, ns[:2] + ns[3:4]) for w, ns in want]
    if got != want:
        fail(f"the page's data has {got[:3]}..., the command {want[:3]}...")


def check_job_ranks(html, rep, pick, keys):
    """A job's page: the job's measured and replayed cells (a run's replay
    with the profiler's cost where it was taken out, and its unprofiled
    baseline), and a row per rank whose picked duration cells are the
    command's \p keys."""
    expect_cell(html, "measured", rep["job_measured_ns"])
    if "job_baseline_ns" not in rep:  # replay's
        expect_cell(html, "replayed", rep["job_replayed_ns"])
    elif rep.get("job_profiled_replay_ns") is None:
        expect_cell(html, "replayed", rep["job_baseline_ns"])
    else:
        expect_cell(html, "replayed", rep["job_profiled_replay_ns"])
        expect_cell(html, "unprofiled", rep["job_baseline_ns"])
    rows = dict(re.findall(r'<tr data-rank="(\d+)">(.*?)</tr>', html))
    if len(rows) != len(rep["ranks"]):
        fail(f"the page has {len(rows)} rank rows, the command "
             f"{len(rep['ranks'])} ranks")
    for r in rep["ranks"]:
        ns = [int(v) for v in re.findall(r'data-ns="(-?\d+)"',
                                        rows.get(str(r["rank"]), ""))]
        got, want = pick(ns), [r[k] for k in keys]
        if got != want:
            fail(f"rank {r['rank']}: the page has {got}, the command "
                 f"says {want}")


def check_roofline(html, cmd, model):
    """The roofline's kernels by class against the language's; the number
    of points in the page's data."""
    trace = cmd[cmd.index("--trace") + 1]
    out = run([cmd[0], "run", model, "--trace", trace])
    want = {}
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "roofline":
            want[f[1]] = (int(f[2]), int(f[3]))
    if not want:
        fail(f"{model} found no kernel with work from shapes")
    got = {}
    for m in re.finditer(r'<tr data-class="(\w+)" data-sized="(\d+)">.*?'
                         r'</td><td class="num" data-ns="(\d+)"', html):
        if int(m.group(2)):
            got[m.group(1)] = int(m.group(2))
    if got != {c: n for c, (n, _) in want.items()}:
        fail(f"roofline table: kernels with shapes {got}, the language "
             f"finds {want}")
    data = page_data(html)["roofline"]
    total = sum(n for n, _ in want.values())
    if data["sized"] != total:
        fail(f"roofline data: {data['sized']} sized kernels, want {total}")
    if len(data["points"]) != min(total, 2000):
        fail(f"roofline data: {len(data['points'])} points of {total}")
    ns = sorted((p[2] for p in data["points"]), reverse=True)
    if [p[2] for p in data["points"]] != ns:
        fail("roofline points are not longest first")
    if total <= 2000 and sum(ns) != sum(t for _, t in want.values()):
        fail(f"roofline points last {sum(ns)} ns, the language's "
             f"{sum(t for _, t in want.values())} ns")
    return len(data["points"])


def static_checks(html, command, out):
    for pat, what in ((r'\s(src|href)\s*=', "a src or href"),
                      (r'url\(', "a CSS url()"), (r'@import', "an @import"),
                      (r'\bfetch\(|XMLHttpRequest|import\(', "a fetch")):
        if re.search(pat, html):
            fail(f"the page is not self-contained: it has {what}")
    if command == "run" and '"job_measured_ns"' in out:
        # A job's run: the job's numbers and a row per rank, predicted too.
        rep = json.loads(out.splitlines()[0])
        expect_cell(html, "predicted", rep["job_predicted_ns"])
        # Cells: measured, replayed, error, [unprofiled,] late, predicted,
        # speedup.
        if rep.get("job_profiled_replay_ns") is None:
            check_job_ranks(html, rep, lambda ns: ns[:2] + ns[3:4],
                            ("measured_ns", "baseline_ns", "predicted_ns"))
        else:
            check_job_ranks(html, rep, lambda ns: ns[:3] + ns[4:5],
                            ("measured_ns", "profiled_replay_ns",
                             "baseline_ns", "predicted_ns"))
        if "data-straggler" in html:
            fail("a job's run ranks no stragglers, yet the page has some")
        return None
    if command == "run":
        rep = json.loads(out)
        if "sweep" in rep:
            # A sweep's page: the replayed iteration, and the plot of the
            # runs, which the browser check compares with these points.
            expect_cell(html, "measured", rep["measured_ns"])
            expect_replayed(html, rep)
            names = rep["sweep"]["params"]
            # Out-of-memory points say so in the table, as the command does.
            oom = sum(1 for p in rep["sweep"]["points"] if p.get("fits") is False)
            rows = len(re.findall(r'<td class="fits">NO: out of memory</td>', html))
            if rows != oom:
                fail(f"the sweep table marks {rows} runs out of memory, the "
                     f"command {oom}")
            return {"params": names,
                    "points": [{"values": [p["params"][k] for k in names],
                                "ns": p["predicted_ns"],
                                "oom": p.get("fits") is False}
                               for p in rep["sweep"]["points"]]}
        its = rep.get("iterations", [rep])
        keys = ["measured_ns", "baseline_ns", "predicted_ns"]
        if "profiled_replay_ns" in its[0]:
            keys.insert(1, "profiled_replay_ns")
        total = {k: sum(it[k] for it in its) for k in keys}
        expect_cell(html, "measured", total["measured_ns"])
        expect_replayed(html, total)
        expect_cell(html, "predicted", total["predicted_ns"])
        speedup = total["baseline_ns"] / total["predicted_ns"]
        m = re.search(r'<span id="speedup">([^<]*)</span>', html)
        if not m or m.group(1) != f"{speedup:.3f}x":
            fail(f"speedup shows {m and m.group(1)!r}, the command says "
                 f"{speedup:.3f}x")
        if len(its) > 1:
            rows = dict(re.findall(r'<tr data-iteration="(\d+)">(.*?)</tr>', html))
            for it in its:
                got = [int(v) for v in re.findall(r'data-ns="(-?\d+)"',
                                                  rows.get(str(it["iteration"]), ""))]
                want = [it[k] for k in keys]
                if got != want:
                    fail(f"iteration {it['label']}: the page has {got}, the "
                         f"command says {want}")
    elif command == "replay" and '"job_measured_ns"' in out:
        # A job: the first reported iteration's numbers, a row per rank and
        # per straggler, and the job's critical path.
        rep = json.loads(out.splitlines()[0])
        check_job_ranks(html, rep, lambda ns: ns,
                        ("measured_ns", "replayed_ns", "late_ns"))
        rows = re.findall(r'<tr data-straggler="(\d+)">(.*?)</tr>', html)
        want = [(str(x["rank"]), [x["late_ns"], x["job_without_ns"]])
                for x in rep["stragglers"]]
        got = [(k, [int(v) for v in re.findall(r'data-ns="(-?\d+)"', row)])
               for k, row in rows]
        if got != want:
            fail(f"stragglers: the page has {got}, the command says {want}")
        expect_cell(html, "critical-after", rep["critical_path_ns"])
        return None
    elif command == "replay":
        # One line per iteration; the summary adds the iterations up.
        reps = [json.loads(line) for line in out.splitlines()]
        total = {k: sum(r[k] for r in reps)
                 for k in ("measured_ns", "replayed_ns", "critical_path_ns",
                           "replayed_gpu_busy_ns")}
        expect_cell(html, "measured", total["measured_ns"])
        expect_cell(html, "replayed", total["replayed_ns"])
        error = (total["replayed_ns"] - total["measured_ns"]) / total["measured_ns"]
        m = re.search(r'<td id="replay-error">error ([^<]*)</td>', html)
        if not m or m.group(1) != f"{error * 100:+.2f}%":
            fail(f"replay error shows {m and m.group(1)!r}, the command "
                 f"says {error * 100:+.2f}%")
        expect_cell(html, "critical-after", total["critical_path_ns"])
        expect_cell(html, "gpu-busy", total["replayed_gpu_busy_ns"])
        return reps[0] if len(reps) == 1 else None
    elif command == "opportunities":
        rep = json.loads(out)
        check_opportunities(html, rep)
        # The summary names its replays as the command does: the replay
        # with the profiler's cost where it was taken out, then unprofiled.
        expect_replayed(html, rep)
        return rep
    elif command == "compare":
        rep = json.loads(out)
        check_compare(html, rep)
        return rep
    elif command != "run":
        fail(f"unknown command {command}")
    return json.loads(out)


def bars(dom):
    """(metric, side, label) -> ns of each bar the script drew."""
    out = {}
    for m in re.finditer(r'<rect [^>]*>', dom):
        a = dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(0)))
        if "data-metric" in a:
            key = (a["data-metric"], a["data-side"],
                   a["data-label"].replace("&amp;", "&"))
            out[key] = int(a["data-ns"])
    return out


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                fail(f"unexpected PNG format: depth {depth}, colour type {ctype}")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], None
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        prev = prev or bytearray(stride)
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def main(argv):
    sep = argv.index("--")
    opts, cmd = argv[:sep], argv[sep + 1:]
    sweep = no_browser = False
    shot = threads = roofline = None
    i = 0
    while i < len(opts):
        if opts[i] == "--sweep":
            sweep = True; i += 1
        elif opts[i] == "--no-browser":
            no_browser = True; i += 1
        elif opts[i] == "--screenshot":
            shot = opts[i + 1]; i += 2
        elif opts[i] == "--threads":
            threads = opts[i + 1].split(","); i += 2
        elif opts[i] == "--roofline":
            roofline = opts[i + 1]; i += 2
        else:
            sys.exit(f"check_page.py: unknown option {opts[i]}")
    tmp = tempfile.mkdtemp()
    pages = [os.path.join(tmp, f"report{k}.html") for k in range(2)]
    outs = []
    for k, p in enumerate(pages):
        if threads:
            os.environ["DDSCRIPT_THREADS"] = threads[k]
        outs.append(run(cmd + ["--format", "json", "--report", p]))
    html = open(pages[0], encoding="utf-8").read()
    if html != open(pages[1], encoding="utf-8").read():
        fail("two runs wrote different pages")
    command = cmd[1]
    rep = static_checks(html, command, outs[0])
    if roofline:
        points = check_roofline(html, cmd, roofline)

    if no_browser:
        return
    exe = browser()
    if not exe:
        print("no browser (chromium) on PATH: the browser checks are skipped")
        sys.exit(SKIP)
    dom, log = chromium(exe, pages[0], "--dump-dom")
    msgs = [l for l in log.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    if msgs:
        fail("the page logged to the console:\n" + "\n".join(msgs[:10]))
    body = re.search(r"<body[^>]*>", dom).group(0)
    if 'data-dd-rendered="yes"' not in body or "data-dd-error" in body:
        err = re.search(r'data-dd-error="([^"]*)"', body)
        fail(f"the script did not finish: {err and err.group(1)}")
    if not re.search(r'<div id="tl"[^>]*>.*?<canvas ', dom, re.S):
        fail("no timeline canvas")

    drawn = bars(dom)
    # A layer chart that shows the largest layers lists them largest first,
    # as its heading says.
    for part in re.split(r"<h3>By layer(?:: | \()the ", dom)[1:]:
        part = part.split("<h3>")[0]
        sizes, order = {}, []
        for m in re.finditer(r'<rect [^>]*>', part):
            a = dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(0)))
            if "data-label" in a:
                if a["data-label"] not in sizes:
                    order.append(a["data-label"])
                sizes[a["data-label"]] = max(sizes.get(a["data-label"], 0),
                                             int(a["data-ns"]))
        got = [sizes[l] for l in order]
        if got != sorted(got, reverse=True):
            fail(f"the layer chart says largest first and shows {got[:6]}...")
    if command == "replay" and rep:
        if not drawn:
            fail("no bars")
        # The page shows the 25 largest layers; the command lists them all.
        for key, n in (("critical_path_phases", None),
                       ("critical_path_layers", 10)):
            for s in rep[key][:n]:
                got = drawn.get(("critical", "after", s["what"]))
                if got != s["ns"]:
                    fail(f"{key}: the bar for {s['what']!r} shows {got}, "
                         f"the command says {s['ns']}")
    if roofline:
        part = dom.split('id="roofline-plot"')[1].split("</svg>")[0]
        dots = re.findall(r'<circle [^>]*class="point"', part)
        roofs = re.findall(r'<polyline [^>]*class="roof"', part)
        data = page_data(html)["roofline"]
        if len(dots) != points:
            fail(f"the roofline draws {len(dots)} kernels, its data has "
                 f"{points}")
        want = len(data["peaks"]) if data["bandwidth"] else 0
        if len(roofs) != want:
            fail(f"the roofline draws {len(roofs)} roofs, want {want}")
    if command == "opportunities":
        want = [(str(k + 1), str(o["gain_ns"]))
                for k, o in enumerate(rep["opportunities"])]
        got = [(a["data-rank"], a["data-ns"]) for a in
               (dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(0)))
                for m in re.finditer(r'<rect [^>]*>', dom)) if "data-rank" in a]
        if got != want:
            fail(f"opportunity bars {got[:3]}..., want {want[:3]}...")
    if command == "compare":
        want = [("before", str(rep["before"]["measured_ns"]))]
        if "predicted_ns" in rep:
            want.append(("predicted", str(rep["predicted_ns"])))
        want.append(("after", str(rep["after"]["measured_ns"])))
        part = dom.split('id="compare-bars"')[1].split("</svg>")[0]
        got = [(a["data-side"], a["data-ns"]) for a in
               (dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(0)))
                for m in re.finditer(r'<rect [^>]*>', part))]
        if got != want:
            fail(f"compare bars {got}, want {want}")
    if sweep:
        points = rep["points"]
        circles = re.findall(r'<circle [^>]*class="point(?: oom)?"[^>]*data-ns="(\d+)"[^>]*>'
                             r'<title>([^<]*)</title>', dom)
        if len(circles) != len(points):
            fail(f"{len(circles)} sweep points drawn, {len(points)} results")
        want = sorted((str(p["ns"]), ", ".join(f"{k} = {v}" for k, v in
                                              zip(rep["params"], p["values"]))
                       + ": " + fmt_duration(p["ns"])
                       + (", out of memory" if p["oom"] else "")) for p in points)
        drawn_oom = len(re.findall(r'<circle [^>]*class="point oom"', dom))
        if drawn_oom != sum(p["oom"] for p in points):
            fail(f"{drawn_oom} sweep points drawn out of memory, "
                 f"{sum(p['oom'] for p in points)} results")
        if sorted(circles) != want:
            fail(f"sweep points {sorted(circles)[:3]}..., want {want[:3]}...")

    if shot:
        _, log = chromium(exe, pages[0], f"--screenshot={shot}",
                          "--window-size=1400,1000", "--hide-scrollbars")
        if not os.path.exists(shot):
            fail("no screenshot")
        w, h, bpp, rows = png_pixels(shot)
        if (w, h) != (1400, 1000):
            fail(f"screenshot is {w}x{h}")
        colours, ink = set(), 0
        for row in rows[::4]:
            for x in range(0, w * bpp, 4 * bpp):
                px = bytes(row[x:x + 3])
                colours.add(px)
                ink += px != b"\xff\xff\xff"
        share = ink / (len(rows[::4]) * len(range(0, w * bpp, 4 * bpp)))
        if len(colours) < 20 or share < 0.05:
            fail(f"the screenshot looks empty: {len(colours)} colours, "
                 f"{share:.1%} not white")


if __name__ == "__main__":
    main(sys.argv[1:])
