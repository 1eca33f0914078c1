"""python -m tr4947.runbook: run the chapter notebooks and render their results.

Also reachable as `tr4947 runbook`; see `--help`.
"""
from __future__ import annotations

import argparse
import sys

EPILOG = """examples:
  python -m tr4947.runbook                      run every notebook on the lab (cached)
  python -m tr4947.runbook sizing --force       re-run one notebook even if unchanged
  python -m tr4947.runbook --target aff -p confirm=False
                                                plan the procedures on a real target (dry run)
  python -m tr4947.runbook --render-only        re-render committed results into the site
"""


def parse_param(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"parameter {text!r} is not NAME=VALUE")
    name, raw = text.split("=", 1)
    import yaml          # YAML gives 3 -> int, 0.5 -> float, true -> bool, [1,2] -> list
    return name.strip(), yaml.safe_load(raw)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tr4947 runbook", description="Execute the TR-4947 notebooks against a target "
        "with papermill and embed their results in the guide.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("notebooks", nargs="*", metavar="NOTEBOOK",
                   help="notebook names (default: all in notebooks/)")
    p.add_argument("--target", default=None,
                   help="inventory name under playbook/inventory/ (default: lab; with "
                        "--render-only: every target that has results)")
    p.add_argument("-p", "--parameter", action="append", type=parse_param, default=[],
                   metavar="NAME=VALUE", help="papermill parameter, repeatable")
    p.add_argument("--force", action="store_true", help="run even if nothing changed")
    p.add_argument("--render-only", action="store_true",
                   help="only render existing results (build/results/) into the site")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from . import execute
    from ..results import render
    if args.render_only:
        written = render.render_all(args.target)
        print(f"rendered {len(written)} result partial(s)")
        return 0
    outcomes = execute.run(args.target or "lab", args.notebooks or None, force=args.force,
                           parameters=dict(args.parameter))
    failed = [o for o in outcomes if o.status == "failed"]
    total = sum(o.seconds for o in outcomes)
    print(f"runbook: {len(outcomes)} notebook(s), "
          f"{sum(o.status == 'ran' for o in outcomes)} ran, "
          f"{sum(o.status == 'cached' for o in outcomes)} cached, {len(failed)} failed "
          f"in {total:.0f}s", file=sys.stderr)
    for o in failed:
        lines = [l for l in o.error.splitlines() if l.strip() and not set(l.strip()) <= set("-")]
        print(f"  FAILED {o.notebook}: {lines[-1] if lines else 'see the executed notebook'}",
              file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
