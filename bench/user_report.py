"""The user-style suite's outputs: its rows, the table (user-suite.md), user-suite.json, the issue's goals read
off the rows, and the rows in history.csv."""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.user_cases import Case


@dataclass
class Row:
    case: str
    size_label: str
    elements: int
    status: str = ""                 # ok | MISMATCH: ... | error: ... | skipped: ...
    check: str = ""                  # rs2gpu against rustc: bitwise, or within the case's bound
    rs2gpu_us: float | None = None
    alternatives: dict = field(default_factory=dict)   # name → µs, or why it has none
    best: str = ""                   # the fastest alternative that agreed
    best_us: float | None = None
    bytes: int = 0
    flops: int = 0
    flops_rate: bool = False
    reps: int = 0

    @property
    def ratio(self) -> float | None:
        if self.rs2gpu_us and self.best_us:
            return self.rs2gpu_us / self.best_us
        return None


def micros(value) -> str:
    """µs as the table and the progress lines show them, – where there is no figure."""
    return f"{value:,.1f}" if isinstance(value, (int, float)) else "–"


def rate(row: Row, us: float | None) -> str:
    if not us:
        return "–"
    if row.flops_rate:
        return f"{row.flops / us / 1e6:.2f} TFLOP/s"
    return f"{row.bytes / us / 1e3:,.0f} GB/s"


def others(row: Row) -> str:
    return "; ".join(f"{name} {micros(value)}" if isinstance(value, float) else f"{name}: {value}"
                     for name, value in row.alternatives.items() if name != row.best) or "–"


def table(rows: list[Row]) -> str:
    lines = ["| case | size | elements | check | rs2gpu µs | fastest alternative | its µs | rs2gpu / fastest "
             "| rs2gpu rate | its rate | the other alternatives (µs) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.rs2gpu_us is None:
            lines.append(f"| {r.case} | {r.size_label} | {r.elements:,} | {r.status[:300]} | | | | | | | "
                         f"{others(r)} |")
            continue
        ratio = f"**{r.ratio:.2f}**" if r.ratio else "–"
        check = r.check if r.status == "ok" else r.status[:300]
        lines.append(f"| {r.case} | {r.size_label} | {r.elements:,} | {check} | {micros(r.rs2gpu_us)} | "
                     f"{r.best or 'none agreed or imported'} | {micros(r.best_us)} | {ratio} | "
                     f"{rate(r, r.rs2gpu_us)} | {rate(r, r.best_us)} | {others(r)} |")
    return "\n".join(lines) + "\n"


def goals(rows: list[Row]) -> list[str]:
    """The issue's goals, read off the rows: geometric mean ≤ 1.0, no row above 1.5 (products: `mul_add`
    ≤ 1.25 and plain ≤ 2.0 against cuBLAS, TF32 off)."""
    ratios = [r for r in rows if r.ratio]
    if not ratios:
        return ["no row has a ratio"]
    geomean = math.exp(sum(math.log(r.ratio) for r in ratios) / len(ratios))

    def limit(r: Row) -> float:
        if r.case.startswith("matmul"):
            return 1.25 if "fma" in r.case else 2.0
        return 1.5
    over = [r for r in ratios if r.ratio > limit(r)]
    out = [f"geometric mean rs2gpu / fastest alternative: {geomean:.3f} over {len(ratios)} rows (goal ≤ 1.0)",
           f"rows above their limit (1.5; products: 1.25 with `mul_add`, 2.0 plain): {len(over)}"
           + (": " + ", ".join(f"{r.case} {r.size_label} {r.ratio:.2f}" for r in over) if over else "")]
    failed = [r for r in rows if not r.ratio]
    if failed:
        out.append(f"rows without a ratio: {len(failed)} ("
                   + ", ".join(f"{r.case} {r.size_label}: {r.status.split(':')[0]}" for r in failed) + ")")
    unchecked = [r for r in ratios if r.status != "ok"]
    if unchecked:
        out.append(f"rows timed without the check against rustc: {len(unchecked)}")
    return out


def notes(cases: list[Case], missing: dict) -> str:
    lines = []
    for case in cases:
        alts = ", ".join(f"{a.name}: {a.note}" for a in case.alternatives)
        lines.append(f"- **{case.name}** (`{case.kernel}`): check {case.bound_reason}. Alternatives: {alts}.")
    for name, why in missing.items():
        lines.append(f"- {name} is absent here: {why}.")
    return "\n".join(lines) + "\n"


HOW_TO_READ = """\
- **check**: rs2gpu's result on the device against the same Rust built by rustc (the cpu backend): `bitwise`,
  or `bound` with the largest difference as a share of the case's bound (the bounds and their reasons are under
  Notes). The products are checked on their first and last 8 rows, the other cases whole. Every
  alternative's result is checked against rs2gpu's too; one that disagrees is named and not timed.
- **µs**: one call between CUDA events on one stream, after a 256 MB read that leaves no input in the L2
  and a short spin that keeps the GPU busy while the host queues the call (so host launch costs are not in
  the figure); the median of the reps, the sides taking their reps in turn. A call that allocates its result
  (torch.softmax, the cupy expressions) pays for the allocation as its users do.
- **fastest alternative**: the quickest library call that agreed, named per row; **rs2gpu / fastest** is
  the ratio of the medians. The rate columns are compulsory bytes (each input read once, each output
  written once) or the product's 2·m·k·n flops over the time.
- The histogram's rs2gpu call zeroes its counts first (one memset), as the libraries' calls start from zero.
"""


def write_outputs(out: Path, rows: list[Row], info: dict, cases: list[Case], missing: dict,
                  history: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    header = "".join(f"- {key}: {value}\n" for key, value in info.items())
    summary = goals(rows)
    text = ("# The user-style suite: rs2gpu against the libraries a user would call\n\n" + header
            + "\n## How to read this\n\n" + HOW_TO_READ + "\n## Results\n\n" + table(rows) + "\n"
            + "".join(f"{line}\n\n" for line in summary) + "## Notes\n\n" + notes(cases, missing))
    (out / "user-suite.md").write_text(text, encoding="utf-8")
    payload = {"info": info, "summary": summary, "missing": missing,
               "rows": [{**asdict(r), "ratio": r.ratio} for r in rows]}
    (out / "user-suite.json").write_text(json.dumps(payload, indent=1, default=str), encoding="utf-8")
    if history:
        from bench import report

        commit = info["commit"]
        dated = report.commit_date(commit)
        records = [{"commit": commit, "commit_date": dated, "run_date": info["date"], "bench": "user_suite.py",
                    "kernel": r.case, "size_label": r.size_label, "size": r.elements,
                    "check": report.check_word(r.status, r.check), "hand_us": r.best_us, "gen_us": r.rs2gpu_us,
                    "ratio": r.ratio} for r in rows]
        report.update_history(out / "history.csv", records)
