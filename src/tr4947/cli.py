"""The `tr4947` command: the embedded lab and running commands on targets."""
from __future__ import annotations

import argparse
import json
import sys

from . import __version__
from .usage import Parser

EPILOG = """\
examples:
  tr4947 lab up                         build the ONTAP stand-in and the functional-validation
                                        clusters fv_c1 (NFSv4.1 + preserve-unlink) and fv_c2 (NFSv3)
  tr4947 lab up --cluster das --cluster nfs
                                        the broker-recovery layouts (3 brokers + standby each)
  tr4947 lab status                     every host: address, state, Kafka; leftovers of a crash
  tr4947 lab status --json              the same as one JSON document (for scripts)
  tr4947 lab down                       end every host, remove namespaces and the lab state
  tr4947 run --host fv_c1-broker-1 -- ls -la /demo/broker_demo_1
  tr4947 run --host cluster1 -- volume show -fields is-preserve-unlink-enabled
  tr4947 run --target aff --host brokers --read-only -- df -h
  tr4947 run --target aff --host brokers --confirm -- systemctl restart kafka
  tr4947 runbook                        run every chapter notebook on the lab, embed results
  tr4947 runbook --help                 notebooks, parameters, caching
  tr4947 notebook cpu-utilization       JupyterLab on that chapter, to run it step by step

The lab is a network of hosts on this machine (198.18.0.0/16, reached over SSH like any
site); its state lives in $TR4947_LAB_STATE (default /tmp/tr4947-lab) and its hosts and
clusters are described in playbook/inventory/lab/ (hosts.yml, group_vars/, host_vars/). On
any other target (--target NAME, an inventory under playbook/inventory/) `run` only prints
its plan unless the command is declared --read-only or --confirm is given.
"""


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="tr4947", description="TR-4947 (Apache Kafka on NetApp NFS) as "
                "runbook-as-code: manage the embedded lab and run commands on targets.",
                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=Parser)
    sub.required = True

    lab = sub.add_parser("lab", help="build, inspect or tear down the embedded lab",
                         epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    lsub = lab.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    lsub.required = True
    up = lsub.add_parser("up", help="build the lab's hosts and start Kafka clusters (idempotent)",
                         description="Build the lab from the inventory: the storage hosts "
                         "(ONTAP and AWS stand-ins), the clients and the clusters' hosts, each "
                         "with its own network namespace, root file system and OpenSSH; the "
                         "clusters' volumes, mounts, KRaft controllers and brokers. Running "
                         "hosts are left as they are.")
    up.add_argument("--cluster", "-c", action="append", metavar="NAME",
                    help="Kafka cluster from the inventory (repeatable; default: "
                         "lab_default_clusters, i.e. fv_c1 fv_c2)")
    up.add_argument("--inventory", default="lab", help=argparse.SUPPRESS)
    up.add_argument("--timeout", type=float, default=300,
                    help="seconds to wait for each cluster to be ready (default 300)")
    up.add_argument("--hosts-only", action="store_true",
                    help="hosts with Kafka installed and configured, nothing mounted or started "
                         "(what a chapter that starts Kafka itself needs)")
    down = lsub.add_parser("down", help="stop all lab processes, unmount, remove lab state")
    down.add_argument("--inventory", default="lab", help=argparse.SUPPRESS)
    st = lsub.add_parser("status", help="table of lab components and their state")
    st.add_argument("--inventory", default="lab", help=argparse.SUPPRESS)
    st.add_argument("--json", action="store_true",
                    help="one JSON document instead of the table: state_dir, network {subnet, "
                         "up}, running, hosts [{host, role, address, pid, state}], leftovers")
    pw = lsub.add_parser("password", help="print a login of the lab's ONTAP stand-in (for "
                         "ONTAP_PASSWORD when the lab is used as a remote site)",
                         description="Print the password of an ONTAP stand-in login. The lab "
                         "derives it from its key and stores only its hash; nothing else prints "
                         "it. Use: export ONTAP_PASSWORD=$(tr4947 lab password admin)")
    pw.add_argument("user", choices=["admin", "fsxadmin"])
    pw.add_argument("--inventory", default="lab", help=argparse.SUPPRESS)

    # `runbook` has its own parser (tr4947.runbook.__main__); main() hands it the arguments.
    sub.add_parser("notebook", add_help=False,
                   help="JupyterLab on 127.0.0.1 to run a chapter step by step "
                        "(tr4947 notebook --help)")
    sub.add_parser("runbook", add_help=False,
                   help="execute the chapter notebooks with papermill and embed their results")
    run = sub.add_parser("run", help="run a command on a target host or group",
                         description="Run one command through the Target API (the same path "
                         "the notebooks use). On an ONTAP host it is a clustershell command.",
                         epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--target", "-t", default="lab", help="inventory name (default: lab)")
    run.add_argument("--host", "-H", required=True, help="host name, address or group")
    run.add_argument("--timeout", type=float, default=600)
    run.add_argument("--confirm", action="store_true",
                     help="real targets: run a command that changes state (without it, only "
                          "the plan is printed)")
    run.add_argument("--read-only", action="store_true",
                     help="declare the command read-only: it runs without --confirm (a "
                          "clustershell command that is not a read is refused)")
    run.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["runbook"]:
        from .runbook.__main__ import main as runbook_main
        return runbook_main(argv[1:])
    if argv[:1] == ["notebook"]:
        from .runbook.jupyter import main as notebook_main
        return notebook_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.cmd == "lab":
        return _lab(args, parser)
    if args.cmd == "run":
        cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
        if not cmd:
            parser.error("run: no command given (put it after --)")
        return _run(args, cmd)
    return 2


def _lab(args, parser) -> int:
    from .inventory import InventoryError
    from .lab.lab import Lab, LabError, LabInterrupted
    try:
        lab = Lab(args.inventory, echo=lambda m: print(m, flush=True))
        if args.action == "up":
            lab.up(args.cluster, timeout=args.timeout,
                   kafka_state="installed" if args.hosts_only else "started")
            print(lab.format_status())
        elif args.action == "down":
            lab.down()
        elif args.action == "password":
            print(lab.credentials()["ontap_passwords"].get(args.user) or lab.secret(
                f"ontap:{args.user}"))
        elif getattr(args, "json", False):
            print(json.dumps(lab.status_document(), indent=2))
        else:
            print(lab.format_status())
        return 0
    except LabInterrupted as exc:
        print(f"tr4947 lab: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        return 130
    except (LabError, InventoryError) as exc:
        print(f"tr4947 lab {args.action}: error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, InventoryError) or "unknown cluster" in str(exc) else 1
    except (TimeoutError, RuntimeError) as exc:
        print(f"tr4947 lab {args.action}: failed: {exc}", file=sys.stderr)
        print("The lab may be half up: `tr4947 lab status`, then `tr4947 lab down`.",
              file=sys.stderr)
        return 1


def _run(args, cmd: list[str]) -> int:
    from . import targets
    from .inventory import InventoryError
    try:
        t = targets.open(args.target, confirm=args.confirm, echo=False)
    except InventoryError as exc:
        print(f"tr4947 run: error: {exc}", file=sys.stderr)
        return 2
    command = cmd[0] if len(cmd) == 1 else " ".join(cmd)
    try:
        res = t.run(command, args.host, timeout=args.timeout, read_only=args.read_only)
    except (InventoryError, ValueError) as exc:
        print(f"tr4947 run: error: {exc}", file=sys.stderr)
        return 2
    finally:
        t.close()
    results = res if isinstance(res, list) else [res]
    code = 0
    for r in results:
        if len(results) > 1:
            print(f"[{r.host}]")
        sys.stdout.write(r.stdout if r.stdout.endswith("\n") or not r.stdout else r.stdout + "\n")
        if r.stderr:
            sys.stderr.write(r.stderr if r.stderr.endswith("\n") else r.stderr + "\n")
        if r.exit_code is None and not r.planned:
            code = code or 124
        elif r.exit_code:
            code = code or r.exit_code
    return code


if __name__ == "__main__":
    sys.exit(main())
