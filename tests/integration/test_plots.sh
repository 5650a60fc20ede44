#!/bin/sh
# test_plots.sh - plot capture and artifacts as a user meets them, against
# the real dockerd: matplotlib, seaborn, fig.savefig, plotly, R base and
# ggplot2 figures come back as artifacts; the program's stdout, stderr and
# traceback line numbers are the same with plots on and off; plots of one
# job never reach the next; artifact globs, caps and symlinks.
B=${LLMSB_BIN:-bin/llm-sandbox}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0

ok() { echo "ok   plots.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL plots.$1: $2"; [ -f "$T/err" ] && sed 's/^/  | /' "$T/err" | head -8; fail=$((fail + 1)); }

# py_check NAME FILE EXPR: EXPR (Python, over the result object r) must hold
py_check() {
    if python3 - "$2" "$3" >"$T/check" 2>&1 <<'PY'
import base64, json, sys
r = json.load(open(sys.argv[1]))
arts = [a for a in r.get("artifacts", []) if "base64" in a]
def data(a): return base64.b64decode(a["base64"])
def png(a): return data(a)[:8] == b"\x89PNG\r\n\x1a\n" and a["mime"] == "image/png" and a["size"] == len(data(a))
ok = eval(sys.argv[2])
if not ok:
    print("result:", json.dumps({k: v for k, v in r.items() if k != "artifacts"})[:600])
    print("artifacts:", [(a.get("name"), a.get("mime"), a.get("size"), a.get("skipped")) for a in r.get("artifacts", [])])
sys.exit(0 if ok else 1)
PY
    then ok "$1"; else bad "$1" "$(cat "$T/check")"; fi
}

# --- matplotlib: plt.show() and fig.savefig, two PNGs, output untouched
cat > "$T/two.py" <<'PY'
import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [3, 1, 2])
plt.show()
fig, ax = plt.subplots()
ax.bar(["a", "b"], [2, 5])
fig.savefig("mine.svg")
print("done")
PY
$B run --json "$T/two.py" </dev/null >"$T/two.json" 2>"$T/err"
py_check matplotlib_show_and_savefig "$T/two.json" \
  'r["status"] == "ok" and r["stdout"] == "done\n" and r["stderr"] == "" and sorted(a["name"] for a in arts) == ["plot-001.png", "plot-002.png"] and all(png(a) for a in arts)'

# --- a figure saved twice, unchanged, is captured once; open at exit too
cat > "$T/once.py" <<'PY'
import matplotlib.pyplot as plt
fig = plt.figure()
plt.plot([1, 2])
fig.savefig("a.png")
fig.savefig("b.pdf")
plt.figure()
plt.plot([2, 1])
PY
$B run --json "$T/once.py" </dev/null >"$T/once.json" 2>"$T/err"
py_check savefig_twice_once_plus_open_at_exit "$T/once.json" \
  'r["status"] == "ok" and len(arts) == 2 and all(png(a) for a in arts)'

# --- seaborn draws through matplotlib
cat > "$T/sns.py" <<'PY'
import seaborn as sns, matplotlib.pyplot as plt
sns.histplot([1, 2, 2, 3, 3, 3, 4])
plt.show()
PY
$B run --json "$T/sns.py" </dev/null >"$T/sns.json" 2>"$T/err"
py_check seaborn "$T/sns.json" 'r["status"] == "ok" and len(arts) == 1 and png(arts[0])'

# --- plotly: no exporter in the image, so a self-contained HTML page
cat > "$T/pl.py" <<'PY'
import plotly.express as px
px.line(x=[1, 2, 3], y=[1, 4, 9]).show()
PY
$B run --json "$T/pl.py" </dev/null >"$T/pl.json" 2>"$T/err"
py_check plotly_html "$T/pl.json" \
  'r["status"] == "ok" and len(arts) == 1 and arts[0]["mime"] == "text/html" and b"<html" in data(arts[0]) and b"plotly" in data(arts[0]) and b"<script src=\"http" not in data(arts[0])'

# --- stdout, stderr and a traceback's line number are the same with plots off
cat > "$T/tb.py" <<'PY'
import sys
import matplotlib.pyplot as plt
print("before", flush=True)
print("to stderr", file=sys.stderr)
plt.plot([1, 2]); plt.show()
raise ValueError("boom")
PY
$B run "$T/tb.py" </dev/null >"$T/on.out" 2>"$T/on.err"; rc_on=$?
$B run --no-plots "$T/tb.py" </dev/null >"$T/off.out" 2>"$T/off.err"; rc_off=$?
if [ $rc_on = 1 ] && [ $rc_off = 1 ] && cmp -s "$T/on.out" "$T/off.out" && cmp -s "$T/on.err" "$T/off.err" &&
   grep -q 'main.py", line 6, in <module>' "$T/on.err"; then
    ok output_and_line_numbers_unchanged
else
    bad output_and_line_numbers_unchanged "rc $rc_on/$rc_off; $(diff "$T/on.err" "$T/off.err" | head -5)"
fi
$B run --json --no-plots "$T/two.py" </dev/null >"$T/off.json" 2>"$T/err"
py_check plots_off_captures_nothing "$T/off.json" 'r["status"] == "ok" and arts == []'

# --- R: a base plot and a printed ggplot, one PNG each; nothing printed
cat > "$T/p.R" <<'RS'
library(ggplot2)
plot(1:10, main = "base")
print(ggplot(data.frame(x = 1:5, y = c(2, 4, 3, 5, 1)), aes(x, y)) + geom_line())
cat("done\n")
RS
$B run --json "$T/p.R" </dev/null >"$T/r.json" 2>"$T/err"
py_check r_base_and_ggplot2 "$T/r.json" \
  'r["status"] == "ok" and r["stdout"] == "done\n" and sorted(a["name"] for a in arts) == ["plot-001.png", "plot-002.png"] and all(png(a) for a in arts)'
cat > "$T/e.R" <<'RS'
x <- 1
plot(1:3)
stop("broken on line 3")
RS
$B run "$T/e.R" </dev/null >"$T/on.out" 2>"$T/on.err"; rc_on=$?
$B run --no-plots "$T/e.R" </dev/null >"$T/off.out" 2>"$T/off.err"; rc_off=$?
if [ $rc_on = $rc_off ] && [ $rc_on != 0 ] && cmp -s "$T/on.out" "$T/off.out" && cmp -s "$T/on.err" "$T/off.err"; then
    ok r_output_unchanged
else
    bad r_output_unchanged "rc $rc_on/$rc_off; $(diff "$T/on.err" "$T/off.err" | head -5)"
fi

# --- plots of one job never reach the next (one container, two jobs)
cat > "$T/seq.yaml" <<'YAML'
jobs:
  - id: first
    lang: python
    code: |
      import matplotlib.pyplot as plt
      plt.plot([1, 2]); plt.show()
  - id: second
    lang: python
    code: |
      import matplotlib.pyplot as plt
      print("no plot")
YAML
$B submit "$T/seq.yaml" --local --slots 1 --out "$T/seq.jsonl" </dev/null >/dev/null 2>"$T/err"
head -1 "$T/seq.jsonl" > "$T/seq1.json"; sed -n 2p "$T/seq.jsonl" > "$T/seq2.json"
py_check plots_do_not_leak_first "$T/seq1.json" 'r["status"] == "ok" and len(arts) == 1'
py_check plots_do_not_leak_second "$T/seq2.json" 'r["status"] == "ok" and arts == []'

# --- run --artifacts DIR saves the PNGs; submit --artifacts DIR per id
rm -rf "$T/out"
$B run --artifacts "$T/out" examples/plot.py </dev/null >"$T/o" 2>"$T/err"
if [ -s "$T/out/plot-001.png" ] && [ -s "$T/out/plot-002.png" ] && [ -s "$T/out/histogram.png" ] &&
   [ "$(head -c 4 "$T/out/plot-001.png" | od -An -c | tr -d ' ')" = '211PNG' ]; then
    ok run_artifacts_dir
else
    bad run_artifacts_dir "$(ls -la "$T/out" 2>&1 | head)"
fi
$B submit examples/plots.yaml --local --artifacts "$T/sub" </dev/null >/dev/null 2>"$T/err"
if [ -s "$T/sub/py-plot/plot-001.png" ] && [ -s "$T/sub/py-plotly/plot-001.html" ] &&
   [ -s "$T/sub/r-plot/plot-001.png" ] && [ -s "$T/sub/files/report/squares.csv" ]; then
    ok submit_artifacts_dir
else
    bad submit_artifacts_dir "$(find "$T/sub" 2>&1 | head)"
fi

# --- caps: count and per-file size from the config; what was left out is listed
cat > "$T/caps.yaml" <<'YAML'
artifacts:
  max_count: 2
  max_file: 1
YAML
cat > "$T/many.py" <<'PY'
import os
for i in range(4):
    open("f%d.txt" % i, "w").write("x")
open("big.bin", "wb").write(b"\0" * (2 << 20))
os.symlink("/etc/passwd", "link.txt")
PY
$B run --config "$T/caps.yaml" --json --artifact '*.txt' --artifact '*.bin' "$T/many.py" </dev/null >"$T/caps.json" 2>"$T/err"
py_check artifact_caps_and_symlink "$T/caps.json" \
  'r["status"] == "ok" and len(arts) == 2 and any("over the count cap" in a.get("skipped", "") for a in r["artifacts"]) and any(a["name"] == "big.bin" and "per-file cap" in a.get("skipped", "") for a in r["artifacts"]) and any(a["name"] == "link.txt" and "symbolic link" in a.get("skipped", "") for a in r["artifacts"])'

echo "plots: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
