#!/usr/bin/env python3
"""ddscript installed: `cmake --install` into a fresh prefix, run from
another directory, and the Debian package.

usage: check_install.py BUILD_DIR TRACE

- `cmake --install BUILD_DIR --prefix P` lays out P/bin/ddscript,
  P/share/ddscript/stdlib and (where CUPTI was found) the collector;
- `P/bin/ddscript run amp --trace TRACE`, run from a directory that is
  neither the source nor the build tree, finds amp in P's stdlib (a moved
  prefix included) and predicts;
- the Python module, where it was built, installs under
  P/lib/python3/dist-packages and predicts what the command does;
- `--version` names the commit it was built from;
- `cpack` writes a .deb holding usr/bin/ddscript and the stdlib, whose
  Depends names Debian's runtime packages.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(cmd, cwd=None, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       cwd=cwd, env=env)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def main(argv):
    build, trace = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    # The source tree the build came from (its stdlib/ beside tests/).
    src_root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(trace))))
    env = {k: v for k, v in os.environ.items() if k != "DDSCRIPT_PATH"}
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "prefix")
        run(["cmake", "--install", build, "--prefix", prefix])
        for rel in ("bin/ddscript", "share/ddscript/stdlib/amp.dd"):
            if not os.path.exists(os.path.join(prefix, rel)):
                sys.exit(f"FAIL: {rel} not installed")
        # A moved prefix still finds its stdlib.
        moved = os.path.join(tmp, "moved")
        shutil.move(prefix, moved)
        elsewhere = os.path.join(tmp, "work")
        os.mkdir(elsewhere)
        out = json.loads(run([os.path.join(moved, "bin/ddscript"), "run",
                              "amp", "--trace", trace, "--format", "json"],
                             cwd=elsewhere, env=env))
        want = os.path.join(moved, "share/ddscript/stdlib/amp.dd")
        if os.path.realpath(out["model"]) != os.path.realpath(want):
            sys.exit(f"FAIL: amp found at {out['model']}, not {want}")
        if not out.get("predicted_ns"):
            sys.exit("FAIL: no prediction from the installed ddscript")
        # The models the docs run by name, from models/, installed too.
        for name in ("checkpointing", "save_on_cpu", "what_bounds",
                     "rank_layers"):
            got = json.loads(run([os.path.join(moved, "bin/ddscript"), "run",
                                  name, "--trace", trace, "--format",
                                  "json"], cwd=elsewhere, env=env))
            want_m = os.path.join(moved, f"share/ddscript/models/{name}.dd")
            if os.path.realpath(got["model"]) != os.path.realpath(want_m):
                sys.exit(f"FAIL: {name} found at {got['model']}, not "
                         f"{want_m}")
        # The search path names no source tree.
        listed = run([os.path.join(moved, "bin/ddscript"), "models"],
                     cwd=elsewhere, env=env)
        if src_root and src_root in listed:
            sys.exit(f"FAIL: the installed search path names the source "
                     f"tree {src_root}")
        # The Python module, where it was built: installed beside the
        # command, it finds the same stdlib and predicts the same.
        site = os.path.join(moved, "lib/python3/dist-packages")
        if os.path.isdir(os.path.join(build, "python/ddscript")):
            if not os.path.isdir(os.path.join(site, "ddscript")):
                sys.exit("FAIL: the Python module was built, not installed")
            code = ("import ddscript, sys; r = ddscript.load(sys.argv[1])"
                    ".run('amp'); print(r['model']); "
                    "print(r['predicted_ns'])")
            py = run([sys.executable, "-c", code, trace], cwd=elsewhere,
                     env={**env, "PYTHONPATH": site}).split()
            if os.path.realpath(py[0]) != os.path.realpath(want) or \
                    int(py[1]) != out["predicted_ns"]:
                sys.exit(f"FAIL: the installed module ran {py}, the command "
                         f"{want} {out['predicted_ns']}")
        version = run([os.path.join(moved, "bin/ddscript"), "--version"])
        if "commit" not in version and "not built from a git" not in version:
            sys.exit(f"FAIL: --version names no commit: {version!r}")

        debs = os.path.join(tmp, "debs")
        run(["cpack", "--config", os.path.join(build, "CPackConfig.cmake"),
             "-B", debs])
        deb = [f for f in os.listdir(debs) if f.endswith(".deb")]
        if len(deb) != 1:
            sys.exit(f"FAIL: cpack wrote {deb}")
        path = os.path.join(debs, deb[0])
        if shutil.which("dpkg-deb"):
            files = run(["dpkg-deb", "-c", path])
            for rel in ("./usr/bin/ddscript",
                        "./usr/share/ddscript/stdlib/amp.dd"):
                if rel not in files:
                    sys.exit(f"FAIL: {rel} not in {deb[0]}")
            info = run(["dpkg-deb", "-I", path])
            if "Depends: libantlr4-runtime4.9" not in info:
                sys.exit(f"FAIL: {deb[0]} depends on:\n{info}")
    print(f"ok: installed, moved and run; {deb[0]}; {version.strip()}")


if __name__ == "__main__":
    main(sys.argv[1:])
