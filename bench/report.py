"""The benchmark's outputs: one row per kernel and size, written as results.csv, results.md and ratios.png, and
appended to history.csv, one row per measured commit, kernel and size."""
from __future__ import annotations

import csv
import io
import json
import math
import re
import subprocess
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path

from bench.anchor import H200

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Row:
    kernel: str
    group: str
    size_label: str                 # "default", "100x", ...
    size: int                       # RAJAPerf's problem size
    factor: float = 1.0             # size factor actually used (capped for a few kernels)
    rust: str = ""
    status: str = ""  # ok | MISMATCH: | not translated: | not a kernel: | not written: | error: | skipped:
    check: str = ""                 # how the two sides agreed: bitwise, or within which bound
    hand_us: float | None = None    # one launch between CUDA events, cold L2, median
    gen_us: float | None = None
    cupy_us: float | None = None
    hand_rep_us: float | None = None  # back-to-back, host clock / count (RAJAPerf's way)
    gen_rep_us: float | None = None
    cupy_rep_us: float | None = None
    event_reps: int = 0
    rep_count: int = 0
    bytes_per_rep: int = 0
    flops_per_rep: int = 0
    regs_hand: str = ""             # registers per launch, "/"-separated for several launches
    regs_gen: str = ""
    frame_hand: int = 0             # stack frame bytes (local memory), the largest of the launches
    frame_gen: int = 0
    rajaperf_base_us: float | None = None
    rajaperf_raja_us: float | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        return _ratio(self.gen_us, self.hand_us)

    @property
    def rep_ratio(self) -> float | None:
        return _ratio(self.gen_rep_us, self.hand_rep_us)


def _ratio(a, b):
    return a / b if a and b else None


def percent_of_copy(row: Row, micros: float | None, copy_bytes_per_s: float | None) -> float | None:
    if not micros or not copy_bytes_per_s or not row.bytes_per_rep:
        return None
    return 100.0 * row.bytes_per_rep / (micros * 1e-6) / copy_bytes_per_s


def attach_anchor(row: Row) -> None:
    """RAJAPerf's own H200 figures, for the default size only."""
    anchor = H200.get(row.kernel)
    if anchor is not None and row.size_label == "default" and row.size == anchor.size:
        row.rajaperf_base_us = anchor.base_us
        row.rajaperf_raja_us = anchor.raja_us


CSV_COLUMNS = [f.name for f in fields(Row) if f.name != "extra"] + ["ratio", "rep_ratio", "pct_copy_hand",
                                                                      "pct_copy_gen"]


def write_csv(rows: list[Row], copy_bytes_per_s: float | None) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        record = {k: v for k, v in asdict(row).items() if k != "extra"}
        record.update(ratio=row.ratio, rep_ratio=row.rep_ratio,
                      pct_copy_hand=percent_of_copy(row, row.hand_us, copy_bytes_per_s),
                      pct_copy_gen=percent_of_copy(row, row.gen_us, copy_bytes_per_s))
        writer.writerow({k: _csv_value(v) for k, v in record.items()})
    return out.getvalue()


def _csv_value(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


MD_COLUMNS = ["kernel", "size", "hand µs", "gen µs", "gen/hand", "hand µs/rep", "gen µs/rep", "gen/hand (rep)",
              "cupy µs", "% copy BW hand/gen", "regs hand/gen", "RAJAPerf Base_CUDA µs/rep", "RAJA_CUDA µs/rep",
              "check"]


def _fmt(v, digits: int = 1) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        if v >= 1000:
            return f"{v:,.0f}"
        return f"{v:.{digits}f}"
    return str(v)


def _size_note(row: Row) -> str:
    if row.size_label == "default":
        return ""
    try:
        asked = float(row.size_label.rstrip("x"))
    except ValueError:
        return f" ({row.size_label})"
    capped = f", capped at {row.factor:g}x" if row.factor and abs(row.factor - asked) > 1e-9 else ""
    return f" ({row.size_label}{capped})"


def short_status(row: Row) -> str:
    return check_word(row.status, row.check)


def check_word(status: str, check: str) -> str:
    """How a row's two sides agreed, in a word: bitwise, bound (within a stated bound) or ok; for a row that
    was not compared, its status's first word (MISMATCH, error, skipped, ...)."""
    if status == "ok":
        return "bitwise" if check == "bitwise" else "bound" if check else "ok"
    return status.split(":", 1)[0]


def markdown_table(rows: list[Row], copy_bytes_per_s: float | None) -> str:
    lines = ["| " + " | ".join(MD_COLUMNS) + " |", "|" + "---|" * len(MD_COLUMNS)]
    for row in rows:
        pct_h = percent_of_copy(row, row.hand_us, copy_bytes_per_s)
        pct_g = percent_of_copy(row, row.gen_us, copy_bytes_per_s)
        cells = [row.kernel, f"{row.size:,}" + _size_note(row),
                 _fmt(row.hand_us), _fmt(row.gen_us), _fmt(row.ratio, 2), _fmt(row.hand_rep_us),
                 _fmt(row.gen_rep_us), _fmt(row.rep_ratio, 2), _fmt(row.cupy_us),
                 f"{_fmt(pct_h, 0)}/{_fmt(pct_g, 0)}", f"{row.regs_hand or '–'}/{row.regs_gen or '–'}",
                 _fmt(row.rajaperf_base_us, 2), _fmt(row.rajaperf_raja_us, 2), short_status(row)]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def compact_table(rows: list[Row]) -> str:
    """One line per kernel, the sizes side by side: what the end of the run's output shows (the whole table
    is in results.md)."""
    labels = list(dict.fromkeys(r.size_label for r in rows))
    by_kernel: dict[str, dict[str, Row]] = {}
    for r in rows:
        by_kernel.setdefault(r.kernel, {})[r.size_label] = r
    header = ["kernel"]
    for label in labels:
        header += [f"{label}: hand µs", "gen µs", "gen/hand", "rep gen/hand"]
    header += ["regs hand/gen", "check"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for kernel, sized in by_kernel.items():
        cells = [kernel]
        for label in labels:
            r = sized.get(label)
            cells += [_fmt(r.hand_us), _fmt(r.gen_us), _fmt(r.ratio, 2), _fmt(r.rep_ratio, 2)] if r else ["–"] * 4
        first = next(iter(sized.values()))
        checks = list(dict.fromkeys(short_status(r) for r in sized.values()))
        cells += [f"{first.regs_hand or '–'}/{first.regs_gen or '–'}", ", ".join(checks)]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def notes_section(rows: list[Row]) -> str:
    """Every row that is not a plain 'ok', with its whole status, and the kernels' notes."""
    out = []
    seen = set()
    for row in rows:
        if row.status != "ok":
            out.append(f"- **{row.kernel}** ({row.size_label}): {row.status}")
        if row.check and row.check != "bitwise" and row.status == "ok":
            out.append(f"- **{row.kernel}** ({row.size_label}): results agree {row.check}")
        if str(row.extra.get("cupy_check", "")).startswith("cupy disagrees"):
            out.append(f"- **{row.kernel}** ({row.size_label}): {row.extra['cupy_check']}")
        if row.note and row.kernel not in seen:
            seen.add(row.kernel)
            out.append(f"- {row.kernel}: {row.note}")
    return "\n".join(out) + ("\n" if out else "")


def summary(rows: list[Row]) -> str:
    counted = [r for r in rows if r.ratio]
    status = {}
    for r in rows:
        key = r.status.split(":", 1)[0]
        status[key] = status.get(key, 0) + 1
    parts = [", ".join(f"{v} {k}" for k, v in sorted(status.items()))]
    if counted:
        logs = [math.log(r.ratio) for r in counted]
        parts.append(f"geometric mean gen/hand (events) {math.exp(sum(logs) / len(logs)):.3f} over {len(counted)} rows")
        worst = max(counted, key=lambda r: r.ratio)
        parts.append(f"largest {worst.ratio:.2f} ({worst.kernel}, {worst.size_label})")
    return "; ".join(parts)


def header_lines(info: dict) -> str:
    return "\n".join(f"- {k}: {v}" for k, v in info.items()) + "\n"


def ratio_chart_data(rows: list[Row]) -> tuple[list[str], dict[str, list[float | None]]]:
    """Kernels in table order and, per size label, the events ratio of each (None where there is none)."""
    kernels: list[str] = []
    for r in rows:
        if r.kernel not in kernels:
            kernels.append(r.kernel)
    series: dict[str, list[float | None]] = {}
    for r in rows:
        series.setdefault(r.size_label, [None] * len(kernels))[kernels.index(r.kernel)] = r.ratio
    return kernels, series


def plot_ratios(rows: list[Row], path, title: str) -> str:
    """ratios.png: generated/hand time per kernel (one-launch events), one marker series per size, a line at
    1.0. Uses matplotlib when it is installed, the built-in PNG writer otherwise; returns which."""
    kernels, series = ratio_chart_data(rows)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        from bench.png import bar_chart_png

        path.write_bytes(bar_chart_png(kernels, series, title))
        return "built-in PNG writer"
    fig, ax = plt.subplots(figsize=(max(8.0, 0.32 * len(kernels) + 2), 5.0))
    width = 0.8 / max(1, len(series))
    for s, (label, values) in enumerate(series.items()):
        xs = [k + (s - (len(series) - 1) / 2) * width for k, v in enumerate(values) if v]
        ys = [v - 1.0 for v in values if v]
        ax.bar(xs, ys, width=width, label=label, bottom=1.0)
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_yscale("log")
    values = [v for vs in series.values() for v in vs if v] or [1.0]
    low, high = math.floor(math.log2(min(values + [0.5]))), math.ceil(math.log2(max(values + [2.0])))
    ax.set_yticks([2.0 ** e for e in range(low, high + 1)])
    ax.set_yticklabels([f"{2.0 ** e:g}" for e in range(low, high + 1)])
    ax.minorticks_off()
    ax.set_xticks(range(len(kernels)))
    ax.set_xticklabels(kernels, rotation=90, fontsize=7)
    ax.set_ylabel("generated / hand-written time")
    ax.set_title(title, fontsize=9)
    ax.legend(title="size")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return "matplotlib"


# history.csv: one row per measured commit, bench, kernel and size (the columns are described at the top of
# bench/results/NOTES.md). bench/run.py's rows carry the events and back-to-back figures of results.csv;
# bench/rust_reps.py's the Rust API's µs per rep and, where RAJAPerf's executable ran beside it, RAJAPerf's.
HISTORY_COLUMNS = ["commit", "commit_date", "run_date", "bench", "kernel", "size_label", "size", "check",
                   "hand_us", "gen_us", "ratio", "hand_rep_us", "gen_rep_us", "rep_ratio", "pct_copy_hand",
                   "pct_copy_gen", "regs_hand", "regs_gen", "rust_rep_us", "rajaperf_base_rep_us",
                   "rajaperf_raja_rep_us"]
HISTORY_KEY = ("commit", "bench", "kernel", "size_label")
RESULTS_IN_HISTORY = ["kernel", "size_label", "size", "hand_us", "gen_us", "ratio", "hand_rep_us", "gen_rep_us",
                      "rep_ratio", "pct_copy_hand", "pct_copy_gen", "regs_hand", "regs_gen"]


def commit_date(commit: str) -> str:
    """The committer date (UTC, ISO 8601) of the commit a table names ("0ed6c18", "16f9923 with local
    changes"), or "" where this checkout's git does not know it."""
    words = commit.split()
    if not words or not re.fullmatch(r"[0-9a-f]{4,40}", words[0]):
        return ""
    try:
        shown = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%cI", words[0], "--"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    if shown.returncode != 0 or not shown.stdout.strip():
        return ""
    return datetime.fromisoformat(shown.stdout.strip()).astimezone(timezone.utc).isoformat(timespec="seconds")


def history_from_results(results_csv: str, commit: str, run_date: str) -> list[dict]:
    """history.csv's rows of one run of bench/run.py, read from the results.csv it wrote."""
    dated = commit_date(commit)
    records = []
    for row in csv.DictReader(io.StringIO(results_csv)):
        record = {"commit": commit, "commit_date": dated, "run_date": run_date, "bench": "run.py",
                  "check": check_word(row["status"], row["check"])}
        record.update((column, row[column]) for column in RESULTS_IN_HISTORY)
        records.append(record)
    return records


def _history_key(record: dict) -> tuple[str, ...]:
    return tuple(str(record[column]) for column in HISTORY_KEY)


def update_history(path: Path, records: list[dict]) -> None:
    """Appends a run's records to the history file at `path`, first dropping the rows they measure again (the
    same commit, bench, kernel and size), so that a commit run twice keeps its latest figures once."""
    remeasured = {_history_key(record) for record in records}
    kept = []
    if path.exists():
        kept = [record for record in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")))
                if _history_key(record) not in remeasured]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=HISTORY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in kept + records:
        writer.writerow({column: _csv_value(record.get(column)) for column in HISTORY_COLUMNS})
    path.write_text(out.getvalue(), encoding="utf-8")


HOW_TO_READ = """\
- **hand µs / gen µs**: one call between CUDA events (all launches of a multi-loop kernel; for kernels that
  return a value, the result's round trip to the host too), median over the reps. Before each rep a 256 MB
  buffer is read, so the inputs come from DRAM and the L2 holds no dirty lines, and a short spin kernel
  keeps the GPU busy until the call is queued, so the host's launch cost is not in the figure. **gen/hand**
  is the ratio of the two.
- **µs/rep**: RAJAPerf's way (see the RAJAPerf columns): many calls back to back between two
  synchronizations, host clock divided by the count, the best of a few passes. At the default size most
  kernels' data stays in the 60 MB L2 from one call to the next, and for kernels of a few µs the Python
  launch cost (cupy's and rs2gpu's) sets the pace.
- **cupy µs**: cupy's own routine where one exists (`cupy.dot`, `sum`/`min`/`max`, `argmin`, `bincount`,
  `flatnonzero`), host result included, timed like the hand column.
- **% copy BW**: RAJAPerf's bytes per rep over the one-call time, as a share of the measured device copy rate.
- **regs**: registers per thread, hand-written/generated, read from the cubins ("," between the launches of a
  kernel with several loops).
- **RAJAPerf columns**: RAJAPerf's own Base_CUDA and RAJA_CUDA figures on an H200 at the default size
  (bench/anchor.py), per rep of back-to-back launches; compare them with the µs/rep columns. Base_CUDA's
  reductions keep their accumulator in managed memory that the host reads every rep (600-1000 µs);
  RAJA_CUDA's (about 16 µs) are the realistic reference there. The hand-written reductions here use device
  memory and read the result back every rep, as the generated ones do.
- **check**: how the two sides' results agreed before timing: `bitwise`, or `bound` (within the bound
  given under Notes: reductions add in another order, `exp` is not correctly rounded); other entries are
  explained under Notes.
"""


def write_outputs(out: Path, rows: list[Row], info: dict, extras: dict, dry: bool, not_in_suite=(), *,
                  commit: str) -> None:
    """results.md, results.csv, results.json and ratios.png under `out`, and, for a run that timed (not a dry
    run), the rows in `out`/history.csv under `commit`, the measured tree's; then the table on stdout, last."""
    out.mkdir(parents=True, exist_ok=True)
    copy_bw = extras.get("copy")
    table = markdown_table(rows, copy_bw)
    heading = "RAJAPerf kernels: rs2gpu-generated CUDA against hand-written CUDA"
    parts = [f"# {heading}\n\n", header_lines(info), "\n## How to read this\n\n", HOW_TO_READ,
             "\n## Results\n\n", table, "\n" + summary(rows) + "\n"]
    if extras.get("transfers"):
        parts.append("\n## Transfers\n\n| what | bytes | ms | GB/s |\n|---|---|---|---|\n")
        for t in extras["transfers"]:
            if "error" in t:
                parts.append(f"| {t['what']} | – | – | {t['error']} |\n")
            else:
                parts.append(f"| {t['what']} | {t['bytes']:,} | {t['ms']:.2f} | {t['GB/s']:.1f} |\n")
        details = [t["detail"] for t in extras["transfers"] if t.get("detail")]
        if details:
            parts.append(f"\nPer transfer of the last `k.triad` call: {details[0]}.\n")
    parts.append("\n## Notes\n\n" + notes_section(rows))
    if not_in_suite:
        parts.append(f"- Not in the suite: {', '.join(not_in_suite)} (RAJAPerf Apps kernels without a baseline "
                     "here).\n")
    (out / "results.md").write_text("".join(parts), encoding="utf-8")
    results_csv = write_csv(rows, copy_bw)
    (out / "results.csv").write_text(results_csv, encoding="utf-8")
    (out / "results.json").write_text(json.dumps({"info": info, "extras": extras, "rows": [asdict(r) for r in rows]},
                                                 indent=1, default=str), encoding="utf-8")
    title = "dry run: no timings" if dry else \
        f"{info.get('gpu', '')}: generated / hand-written time per kernel, one call (CUDA events)"
    plotted = plot_ratios(rows, out / "ratios.png", title)
    print(f"wrote {out / 'results.md'}, results.csv, results.json, ratios.png ({plotted})", flush=True)
    if not dry:
        update_history(out / "history.csv", history_from_results(results_csv, commit, info.get("date", "")))
        print(f"history.csv: {len(rows)} rows of {commit}, replacing any it had of the same kernel and size",
              flush=True)
    print(f"\nThe whole table is in {out / 'results.md'}; by kernel, the sizes side by side:\n", flush=True)
    print(compact_table(rows), flush=True)
    if copy_bw:
        print(f"device copy bandwidth: {copy_bw / 1e12:.2f} TB/s", flush=True)
    print(summary(rows), flush=True)
