"""`mpiguide cluster up|down|status|env`: the test cluster from the command line."""

from __future__ import annotations

import argparse
import shlex

from mpiguide.cluster import testcluster
from mpiguide.front.commands import console, out


def cmd_up(args: argparse.Namespace) -> int:
    c = testcluster.up(args.nodes, name=args.name, cpus=args.cpus, say=console.print)
    console.print(f"test cluster '{c.name}' is up: {len(c.nodes)} node(s) "
                  f"({', '.join(n.name for n in c.nodes)}), {c.cpus} CPU(s) each")
    console.print("mpiguide commands use it until `mpiguide cluster down`; for your own shell: "
                  "eval \"$(mpiguide cluster env)\"", highlight=False)
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    targets = testcluster.names() if args.all else [args.name]
    if args.all and not targets:
        console.print("no test cluster is recorded")
    for name in targets:
        testcluster.down(name, say=console.print)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    names = [args.name] if args.name else testcluster.names()
    if not names:
        console.print("no test cluster is recorded; start one with: mpiguide cluster up --nodes 2")
        return 0
    for name in names:
        c = testcluster.TestCluster.load(name)
        out.print(testcluster.status(c), highlight=False, soft_wrap=True)
        left = testcluster.leftovers(c) if c.state != "up" else []
        if left:
            out.print(f"  left from an interrupted start: {', '.join(left)} (mpiguide cluster down {name})",
                      highlight=False, soft_wrap=True)
    return 0


def cmd_env(args: argparse.Namespace) -> int:
    c = testcluster.resolve(args.name)
    for k, v in c.env().items():
        out.print(f"export {k}={shlex.quote(v)}", highlight=False, soft_wrap=True)
    return 0


def cmd_stop_node(args: argparse.Namespace) -> int:
    c = testcluster.resolve(args.cluster)
    testcluster.stop_node(c, args.node, link=args.link)
    how = "its link is down" if args.link else "its slurmd and jobs killed"
    console.print(f"node {args.node} of test cluster '{c.name}' stopped ({how})")
    return 0


def cmd_start_node(args: argparse.Namespace) -> int:
    c = testcluster.resolve(args.cluster)
    testcluster.start_node(c, args.node)
    console.print(f"node {args.node} of test cluster '{c.name}' is back (idle)")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    cl = sub.add_parser("cluster", help="a Slurm test cluster on this machine (root, Linux)",
                        description="A real Slurm cluster on this one machine: one network namespace per node, "
                                    "each with its own address, host name and slurmd.")
    cs = cl.add_subparsers(dest="cluster_command", required=True, metavar="ACTION")
    p = cs.add_parser("up", help="start a test cluster (installs slurm-wlm and munge if missing)")
    p.add_argument("--nodes", type=int, default=2, help="number of nodes (2)")
    p.add_argument("--cpus", type=int, help="CPUs each node offers Slurm (default: this machine's core count)")
    p.add_argument("--name", help="the cluster's name (default: mg + 6 random hex digits)")
    p.set_defaults(func=cmd_up)
    p = cs.add_parser("down", help="stop a test cluster and remove every trace of it")
    p.add_argument("name", nargs="?", help="which cluster (default: the current one)")
    p.add_argument("--all", action="store_true", help="every recorded test cluster")
    p.set_defaults(func=cmd_down)
    p = cs.add_parser("status", help="what runs of each test cluster")
    p.add_argument("name", nargs="?")
    p.set_defaults(func=cmd_status)
    p = cs.add_parser("stop-node", help="make a node fail: kill its slurmd and everything running on it")
    p.add_argument("node")
    p.add_argument("--link", action="store_true", help="set its network link down instead (it keeps running)")
    p.add_argument("--cluster", help="which cluster (default: the current one)")
    p.set_defaults(func=cmd_stop_node)
    p = cs.add_parser("start-node", help="bring a stopped node back")
    p.add_argument("node")
    p.add_argument("--cluster", help="which cluster (default: the current one)")
    p.set_defaults(func=cmd_start_node)
    p = cs.add_parser("env", help="print the shell environment for Slurm's own commands")
    p.add_argument("name", nargs="?")
    p.set_defaults(func=cmd_env)
