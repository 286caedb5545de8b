"""`table`: the kernels, ops, memory, input-pipeline or idle table of one host."""

from __future__ import annotations

import argparse
import sys
from typing import Iterator

from tb_gpu_advisor.cli.common import EXIT_ERROR, EXIT_FAILED, EXIT_OK, RUN_HELP, load, one_host, write_json
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.serve.selection import UsageError

TABLE_TEXT_WIDTH = 60  # a text cell longer than this is cut (csv and json keep it whole)


def _cell(v: object, csv: bool = False) -> str:
    from tb_gpu_advisor.present import render

    if v is None:
        return "" if csv else "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.6g}" if csv else f"{v:,.2f}".rstrip("0").rstrip(".")
    text = render.name_safe(str(v))  # names come from the profile: no control characters
    if csv and text[:1] in ("=", "+", "-", "@"):
        text = "'" + text  # not a formula in a spreadsheet
    if not csv and len(text) > TABLE_TEXT_WIDTH:  # cut in the middle: a kernel's distinctive end stays
        head = (TABLE_TEXT_WIDTH - 1) * 2 // 5
        text = text[:head] + "…" + text[len(text) - (TABLE_TEXT_WIDTH - 1 - head) :]
    return text


def table_lines(doc: dict) -> list[str]:
    """A table answer as aligned text: the columns people read (the full kernel name only in csv and json)."""
    cols = [c for c in doc["columns"] if c["key"] != "name" or doc["table"] != "kernels"]
    head = [c["label"] for c in cols]
    body = [[_cell(r.get(c["key"])) for c in cols] for r in doc["rows"]]
    width = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return "  ".join(x.rjust(w) if c["numeric"] else x.ljust(w) for x, w, c in zip(cells, width, cols)).rstrip()

    out = [line(head)] + [line(b) for b in body]
    shown = f"{len(doc['rows'])} of {doc['total']} rows"
    if doc["total"] != doc["all"]:
        shown += f", {doc['all']} before the filter"
    out.append(f"({shown}, by {doc['sort']} {doc['order']})")
    out += [f"note: {n}" for n in doc["notes"]]
    return out


class TableNames:
    """The tables' names for `table`'s choices, from the tables' registry, read when the command is
    parsed or its help shown: importing the tables at start would import NumPy and the analysis
    before `analyze` starts reading (see the top of this module)."""

    def _names(self) -> tuple[str, ...]:
        from tb_gpu_advisor.tables import names

        return names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()


def cmd_table(args: argparse.Namespace) -> int:
    import csv

    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.present import render
    from tb_gpu_advisor.report.engine import failure_message
    from tb_gpu_advisor.serve.questions import table_answer

    f = one_host(args.logdir, args.run, args.host, "a table")
    try:
        from tb_gpu_advisor import tables

        tables.build_check(args.table, args.group, args.step)  # a wrong table or grouping before reading
        m = Measures(load(f))
        doc = table_answer(m, args.table, args.group, args.step, args.sort, args.order, args.limit, args.q, args.name)
    except tables.TableError as e:
        raise UsageError(str(e)) from None
    except ProfileReadError as e:
        print(render.terminal_safe(f"error: {e}"), file=sys.stderr)
        return EXIT_ERROR
    except UsageError:
        raise
    except Exception as e:  # noqa: BLE001  a bug: said in one line, not a traceback
        print(render.terminal_safe(f"error: {f.path}: {failure_message(e)}"), file=sys.stderr)
        return EXIT_FAILED
    if args.format == "json":
        write_json(doc)
    elif args.format == "csv":
        w = csv.writer(sys.stdout, lineterminator="\n")
        keys = [c["key"] for c in doc["columns"]]
        w.writerow(keys)
        for r in doc["rows"]:
            w.writerow([_cell(r.get(k), csv=True) for k in keys])
    else:
        print("\n".join(table_lines(doc)))
    return EXIT_OK


def add(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser("table", help="a table of one host (kernels, ops, memory, ...: `table --help` lists them)")
    t.add_argument("table", metavar="TABLE", choices=TableNames(), help="one of: %(choices)s")
    t.add_argument("logdir", help="a logdir, a run folder at any depth, or one profile file")
    t.add_argument("--run", help=RUN_HELP)
    t.add_argument("--host")
    t.add_argument("--group", help="how rows are grouped, one of the table's groupings (its first by default)")
    t.add_argument(
        "--step", type=int, metavar="N", help="only the step numbered N, as the report numbers steps (kernels)"
    )
    t.add_argument("--sort", metavar="COLUMN", help="the column to sort by (default: the table's main time)")
    t.add_argument("--order", choices=("asc", "desc"), help="default: desc for numbers, asc for names")
    t.add_argument("--limit", type=int, default=50, help="rows shown, at most 1000 (default: %(default)s)")
    t.add_argument("-q", "--filter", dest="q", metavar="TEXT", help="only rows whose name contains TEXT")
    t.add_argument(
        "--name",
        action="append",
        metavar="NAME",
        help="only the rows named exactly NAME (repeatable): a finding's rows",
    )
    t.add_argument("--format", choices=("text", "csv", "json"), default="text")
    t.set_defaults(func=cmd_table)
