"""python -m tr4947.runbook (also `tr4947 runbook`): run the chapter notebooks on a target.

See `--help`. Usage errors (an unknown notebook or parameter) exit 2 with nothing run; a
failed chapter exits 1 after the others have run.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..usage import FAILED, Parser, refuse

EPILOG = """\
Which chapters run: a chapter whose inputs (its notebook, the snippets and package modules
it uses, the target's inventory, the environment's pins, the parameters) are the ones its
committed results were made from is up to date and does not run; the others run. Naming
chapters, or --force, runs them anyway.

examples:
  tr4947 runbook                               every chapter whose inputs changed, on the lab
  tr4947 runbook --force                       every chapter, on the lab
  tr4947 runbook sizing                        one chapter, even if it is up to date
  tr4947 runbook functional-validation.kafka-3.2.3
                                               one variant of a chapter (the same notebook
                                               with other parameters; on the lab a
                                               notebook's name runs it with all its
                                               variants, elsewhere only named ones run)
  tr4947 runbook --status                      what would run, and why (runs nothing)
  tr4947 runbook --status --json               the same as one JSON document (for scripts)
  tr4947 runbook aws-cvo-storage --target my-cvo
                                               on your own Cloud Volumes ONTAP (dry run: only
                                               read-only steps run, the rest is printed)
  tr4947 runbook aws-cvo-storage --target my-cvo --confirm
                                               the same, making the changes
  tr4947 runbook sizing -p measure_storage=false -p brokers=6
                                               with notebook parameters (YAML values)

Results go to results/<target>/<chapter>.json (one run record per chapter and variant, with
provenance);
on the lab with default parameters the executed notebook replaces notebooks/<chapter>.ipynb.
"""


def parse_param(text: str) -> tuple[str, object]:
    import argparse
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"parameter {text!r} is not NAME=VALUE")
    name, raw = text.split("=", 1)
    import yaml          # YAML gives 3 -> int, 0.5 -> float, true -> bool, [1,2] -> list
    return name.strip(), yaml.safe_load(raw)


def build_parser() -> Parser:
    p = Parser(prog="tr4947 runbook", description="Execute the TR-4947 chapter notebooks "
               "against a target with papermill, and record their results for the guide.",
               epilog=EPILOG)
    p.add_argument("notebooks", nargs="*", metavar="CHAPTER",
                   help="notebook names, or NOTEBOOK.VARIANT (default: every chapter whose "
                        "inputs changed)")
    p.add_argument("--target", default="lab",
                   help="inventory name under playbook/inventory/ (default: lab)")
    p.add_argument("--confirm", action="store_true",
                   help="let state-changing steps run on a real target (without it they are "
                        "printed as plans; the lab always runs them)")
    p.add_argument("-p", "--parameter", action="append", type=parse_param, default=[],
                   metavar="NAME=VALUE", help="notebook parameter, repeatable")
    p.add_argument("--force", action="store_true", help="run even if up to date")
    p.add_argument("--status", action="store_true",
                   help="say which chapters are up to date and why the others would run")
    p.add_argument("--json", action="store_true",
                   help="with --status: one JSON document {target, results, chapters: [{chapter, "
                        "up_to_date, why, run}]}")
    p.add_argument("--results", type=Path, default=None, metavar="DIR",
                   help="where run records go (default: results/ in the repository)")
    return p


def _sigterm_as_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    import signal
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.json and not args.status:
        parser.error("--json goes with --status (a run prints its progress, not JSON)")
    # A terminated runner cleans up as one interrupted with Ctrl-C does.
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    from . import execute
    params = dict(args.parameter)
    for reserved in ("target", "results_dir"):
        if reserved in params:
            return refuse("tr4947 runbook", f"-p {reserved}=...: use --target for the target; "
                          "results_dir is the runner's")
    if args.confirm:
        params["confirm"] = True
    results = args.results or execute.RESULTS
    from ..inventory import InventoryError, load
    try:
        inventory = load(args.target)         # an unknown or broken inventory stops here
    except InventoryError as exc:
        return refuse("tr4947 runbook", f"--target {args.target}: {exc}")
    try:
        if args.status:
            chs = execute.chapters(args.notebooks or None, lab=inventory.kind == "lab")
            for ch in chs:
                execute.check_parameters(ch.path, {**ch.parameters, **params,
                                                   "target": args.target})
            rows = []
            for ch in chs:
                _inputs, why = execute.freshness(ch, args.target, params, results)
                rec = execute.committed(args.target, ch.name, results)
                rows.append({"chapter": ch.name, "up_to_date": why is None, "why": why,
                             "run": rec["run"]["id"] if rec else None})
            if args.json:
                print(json.dumps({"target": args.target, "results": str(results),
                                  "chapters": rows}, indent=2))
                return 0
            width = max(24, *(len(ch.name) + 1 for ch in chs))
            for r in rows:
                print(f"{r['chapter']:<{width}} " + (f"up to date (run {r['run']})"
                                                    if r["up_to_date"] else f"would run: {r['why']}"))
            return 0
        outcomes = execute.run(args.target, args.notebooks or None, force=args.force,
                               parameters=params, results=results)
    except execute.RunbookError as exc:
        return refuse("tr4947 runbook", str(exc)) if "\n" not in str(exc) else _multi(exc)
    except KeyboardInterrupt:
        return 130
    failed = [o for o in outcomes if o.status == "failed"]
    total = sum(o.seconds for o in outcomes)
    print(f"runbook on {args.target}: {len(outcomes)} chapter(s), "
          f"{sum(o.status == 'ran' for o in outcomes)} ran, "
          f"{sum(o.status == 'up-to-date' for o in outcomes)} up to date, {len(failed)} failed "
          f"in {total:.0f}s", file=sys.stderr)
    for o in failed:
        print(f"  FAILED {o.notebook}: {o.error}", file=sys.stderr)
    return FAILED if failed else 0


def _multi(exc) -> int:
    print(f"tr4947 runbook: error: {exc}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
