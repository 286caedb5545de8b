"""`summary`: runs, hosts, GPUs, steps, breakdown and headline numbers, without the checks."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from tb_gpu_advisor.cli.common import EXIT_ERROR, EXIT_FAILED, EXIT_OK, RUN_HELP, load
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.discovery import HostFile
from tb_gpu_advisor.serve.selection import select

if TYPE_CHECKING:
    from tb_gpu_advisor.model.analysis import Analysis


def summary_text(f: HostFile, a: Analysis) -> str:
    from tb_gpu_advisor.common.units import fmt_pct
    from tb_gpu_advisor.model.steps import CATEGORIES
    from tb_gpu_advisor.present import render
    from tb_gpu_advisor.present.render import kernel_figures

    lines = [f"run {f.run}  host {f.host}  ({f.size / 1e6:.2f} MB, {a.profile.event_count} events)"]
    if a.profile.devices:
        for d in a.profile.devices:
            lines.append(f"  {render.device_line(d.to_json())}")
    else:
        lines.append("  no GPU in this profile (host-side capture)")
    s = a.steps.summary()
    marker = f' ("{s["marker"]}")' if s["marker"] else ""
    lines.append(
        f"  steps: {s['count']} from {s['source']}{marker}; mean {s['mean_ms']:.3f} ms, "
        f"stdev {s['stdev_ms']:.3f}, min {s['min_ms']:.3f}, max {s['max_ms']:.3f}"
    )
    h = a.headline()
    lines.append(
        f"  device busy {fmt_pct(h['device_busy_pct'])} of step time | op time on device "
        f"{fmt_pct(h['device_op_time_pct'])} | 16-bit compute {fmt_pct(h['fp16_compute_pct'])} "
        f"({h['fp16_kernels']} of {h['kernels']} kernels)"
    )
    for g in h["per_gpu"] if len(h["per_gpu"]) > 1 else []:
        lines.append(
            f"    GPU {g['device_id']}: busy {fmt_pct(g['device_busy_pct'])}, "
            f"16-bit {fmt_pct(g['fp16_compute_pct'])}, {g['kernels']} kernels"
        )
    for g in h["per_gpu"]:
        lines.append(f"    GPU {g['device_id']}: {kernel_figures(g, a.profile.framework)}")
    b = a.breakdown_ms()
    lines.append("  per step (ms): " + ", ".join(f"{c.replace('_', ' ')} {b[c]:.3f}" for c in CATEGORIES))
    return "\n".join(lines)


def cmd_summary(args: argparse.Namespace) -> int:
    from tb_gpu_advisor.present import render
    from tb_gpu_advisor.report.engine import failure_message

    files = select(args.logdir, args.run, args.host)
    reports, status = [], EXIT_OK
    for f in files:
        try:
            a = load(f)
        except ProfileReadError as e:
            print(render.terminal_safe(f"error: {e}"), file=sys.stderr)
            status = max(status, EXIT_ERROR)
            continue
        except Exception as e:  # noqa: BLE001  a bug on one run: the others are still summarised
            print(render.terminal_safe(f"error: {f.path}: {failure_message(e)}"), file=sys.stderr)
            status = EXIT_FAILED
            continue
        if args.json:
            reports.append({"run": f.run, "host": f.host, **a.summary(), "errors": []})
        else:
            print(render.terminal_safe(summary_text(f, a)))
    if args.json:
        json.dump({"reports": reports}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return status


def add(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("summary", help="runs, hosts, GPUs, steps, breakdown and headline numbers")
    s.add_argument("logdir")
    s.add_argument("--run", help=RUN_HELP)
    s.add_argument("--host")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=cmd_summary)
