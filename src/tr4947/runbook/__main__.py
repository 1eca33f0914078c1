"""python -m tr4947.runbook (also `tr4947 runbook`): run the chapter notebooks on a target.

See `--help`. Usage errors (an unknown notebook or parameter) exit 2 with nothing run; a
failed chapter exits 1 after the others have run.
"""
from __future__ import annotations

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
  tr4947 runbook --profile                     where the committed runs' time went: per
                                               chapter, provisioning, inside measurement
                                               windows, and the rest (runs nothing)
  tr4947 runbook aws-cvo-storage --target my-cvo
                                               on your own Cloud Volumes ONTAP (dry run: only
                                               read-only steps run, the rest is printed)
  tr4947 runbook aws-cvo-storage --target my-cvo --confirm
                                               the same, making the changes
  tr4947 runbook sizing -p measure_storage=false -p brokers=6
                                               with notebook parameters (YAML values)

  tr4947 runbook sizing --help                 the chapter's parameters and their values
  tr4947 runbook --target playbook/inventory/lab-remote/hosts.yml storage-efficiency
                                               a target given as a path (relative or absolute)

Results go to results/<target>/: <chapter>.json (one run record per chapter and variant, with
provenance) and <chapter>.ipynb (the executed notebook); notebooks/ holds the sources only.
A run that fails or is refused replaces nothing.
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
                        "inputs changed); with --help, the chapter's parameters")
    p.add_argument("--target", default=None,
                   help="inventory name under playbook/inventory/, or a path to an inventory "
                        "file or directory (default: $TR4947_TARGET, else lab)")
    p.add_argument("--confirm", action="store_true",
                   help="let state-changing steps run on a real target (without it they are "
                        "printed as plans; the lab always runs them)")
    p.add_argument("-p", "--parameter", action="append", type=parse_param, default=[],
                   metavar="NAME=VALUE", help="notebook parameter, repeatable (YAML values; "
                   "`tr4947 runbook CHAPTER --help` lists a chapter's)")
    p.add_argument("--force", action="store_true", help="run even if up to date")
    p.add_argument("--status", action="store_true",
                   help="say which chapters are up to date and why the others would run")
    p.add_argument("--json", action="store_true",
                   help="with --status: one JSON document {target, results, chapters: [{chapter, "
                        "up_to_date, why, run, digest}]} (the site build reads it to say on "
                        "each result whether it is current)")
    p.add_argument("--profile", action="store_true",
                   help="where the committed runs' time went (provisioning, measurement "
                        "windows, the rest), per chapter and in all; runs nothing")
    p.add_argument("--results", type=Path, default=None, metavar="DIR",
                   help="where run records go (default: results/ in the repository)")
    return p


def chapter_help(names: list[str]) -> int:
    """`tr4947 runbook CHAPTER --help`: what the chapter's parameters are and take."""
    from .chapters import RunbookError, chapters, describe
    try:
        chs = chapters(names)
    except RunbookError as exc:
        return refuse("tr4947 runbook", str(exc))
    for path in dict.fromkeys(ch.path for ch in chs):
        variants = [ch for ch in chs if ch.path == path and ch.variant]
        print(f"{path.stem}: parameters (-p NAME=VALUE)\n{describe(path)}")
        for v in variants:
            print(f"  variant {v.name}: " + ", ".join(f"{k}={val!r}"
                                                    for k, val in v.parameters.items()))
    return 0


def _sigterm_as_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    import signal
    argv = list(sys.argv[1:] if argv is None else argv)
    names = [a for a in argv if not a.startswith("-")]
    if names and any(a in ("-h", "--help") for a in argv):
        return chapter_help(names)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.json and not args.status:
        parser.error("--json goes with --status (a run prints its progress, not JSON)")
    if args.profile:
        if args.status or args.notebooks or args.force:
            parser.error("--profile reads the committed runs and runs nothing: give it no "
                         "chapter, --status or --force")
        from . import execute, profile
        from ..inventory import InventoryError, load, resolve
        try:
            label = load(resolve(args.target)).name
        except InventoryError as exc:
            return refuse("tr4947 runbook", f"--target {args.target}: {exc}")
        print(profile.report(args.results or execute.RESULTS, label))
        return 0
    # A terminated runner cleans up as one interrupted with Ctrl-C does.
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    from . import execute
    params = dict(args.parameter)
    for reserved in ("target", "results_dir", "confirm"):
        if reserved in params:
            return refuse("tr4947 runbook", f"-p {reserved}=...: use --target for the target "
                          "and --confirm to confirm; results_dir is the runner's")
    from ..inventory import InventoryError
    try:
        runner = execute.Runner(args.target, args.confirm, args.results or execute.RESULTS)
    except InventoryError as exc:            # an unknown or broken inventory stops here
        return refuse("tr4947 runbook", f"--target {args.target}: {exc}")
    try:
        if args.status:
            rows = runner.status(args.notebooks or None, params)
            if args.json:
                import json
                print(json.dumps({"target": runner.label, "kind": runner.kind,
                                  "results": str(runner.results), "chapters": rows}, indent=2))
                return 0
            width = max(24, *(len(r["chapter"]) + 1 for r in rows))
            for r in rows:
                print(f"{r['chapter']:<{width}} " + (f"up to date (run {r['run']})"
                                                     if r["up_to_date"]
                                                     else f"would run: {r['why']}"))
            return 0
        outcomes = runner.run(args.notebooks or None, force=args.force, given=params)
    except execute.RunbookError as exc:
        return refuse("tr4947 runbook", str(exc)) if "\n" not in str(exc) else _multi(exc)
    except KeyboardInterrupt:
        return 130
    failed = [o for o in outcomes if o.status == "failed"]
    total = sum(o.seconds for o in outcomes)
    print(f"runbook on {runner.label}: {len(outcomes)} chapter(s), "
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
