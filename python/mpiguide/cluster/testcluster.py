"""The test cluster: a real Slurm cluster on this one Linux machine.

Each node is a network namespace with its own address on a bridge and a UTS namespace with its own host
name, running its own slurmd; munged and slurmctld run in the root namespace. Everything a cluster
creates is named after it (namespaces, bridge, links, ports, its directory under <home>/clusters/), and
recorded in <directory>/cluster.json *before* it is created, so that `down` finds what an `up` left
even after a crash, and never touches anything else.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mpiguide.cluster import system
from mpiguide.cluster.system import Process
from mpiguide.core import packages
from mpiguide.core.errors import MpiguideError
from mpiguide.core.paths import data_home
from mpiguide.core.stacks import Stack

NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,8}$")  # 9 characters: link names have at most 15
MAX_NODES = 99
READY_WAIT = 90.0  # seconds for the daemons to come up: far beyond what they take on a loaded machine
NETNS_DIR = "/run/netns"

Say = Callable[[str], None]


def clusters_dir() -> Path:
    return data_home() / "clusters"


def _current_file() -> Path:
    return clusters_dir() / "current"


@dataclass
class Node:
    name: str  # the Slurm node name and the host name inside its UTS namespace
    netns: str
    veth: str  # the root namespace's end of its link to the bridge
    addr: str


@dataclass
class TestCluster:
    name: str
    hostname: str  # this machine's, which slurmctld insists on
    subnet: str  # "10.A.B": the bridge is .1, node k is .(k+1)
    bridge: str
    ctld_port: int
    slurmd_port: int
    cpus: int
    nodes: list[Node]
    state: str = "starting"  # starting | up
    daemons: dict[str, dict] = field(default_factory=dict)  # munged, slurmctld and node name -> Process

    @property
    def directory(self) -> Path:
        return clusters_dir() / self.name

    @property
    def conf(self) -> Path:
        return self.directory / "slurm.conf"

    def env(self) -> dict[str, str]:
        """What Slurm's commands need to talk to this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def launch_env(self, stack: Stack) -> dict[str, str]:
        """Its nodes are namespaces of one machine: without these settings a stack would take shared memory
        between them."""
        return stack.network_between_nodes_env()

    def daemon(self, name: str) -> Process | None:
        d = self.daemons.get(name)
        return Process(d["pid"], d["start"]) if d else None

    def save(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self.directory / "cluster.json.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=1))
        tmp.replace(self.directory / "cluster.json")

    @classmethod
    def load(cls, name: str) -> TestCluster:
        path = clusters_dir() / name / "cluster.json"
        try:
            d = json.loads(path.read_text())
            d["nodes"] = [Node(**n) for n in d["nodes"]]
            return cls(**d)
        except FileNotFoundError:
            raise MpiguideError(f"there is no test cluster '{name}' ({path} is missing); "
                                "mpiguide cluster status lists them") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise MpiguideError(f"{path}: not a test cluster record ({exc})") from None


# ---------------------------------------------------------------- which cluster

def names() -> list[str]:
    d = clusters_dir()
    return sorted(p.name for p in d.iterdir() if (p / "cluster.json").is_file()) if d.is_dir() else []


def current() -> TestCluster | None:
    """The cluster the last `up` started, if it is still there."""
    try:
        name = _current_file().read_text().strip()
    except OSError:
        return None
    try:
        return TestCluster.load(name) if name else None
    except MpiguideError:
        return None


class Sites:
    """The test clusters as core.slurm's SiteFinder (registered by mpiguide.cluster)."""

    def current(self) -> TestCluster | None:
        c = current()
        return c if c and c.state == "up" else None

    def of_env(self, env: Mapping[str, str]) -> TestCluster | None:
        conf = env.get("SLURM_CONF")
        if not conf:
            return None
        for name in names():
            try:
                c = TestCluster.load(name)
            except MpiguideError:
                continue
            if Path(conf) == c.conf:
                return c
        return None


SITES = Sites()


def resolve(name: str | None) -> TestCluster:
    if name:
        return TestCluster.load(name)
    c = current()
    if c:
        return c
    known = names()
    if len(known) == 1:
        return TestCluster.load(known[0])
    if not known:
        raise MpiguideError("no test cluster is recorded; start one with: mpiguide cluster up --nodes 2")
    raise MpiguideError(f"several test clusters are recorded ({', '.join(known)}): name one")


# ---------------------------------------------------------------- planning

def _used_networks() -> list[ipaddress.IPv4Network]:
    nets = []
    for cmd in (["ip", "-4", "-o", "addr", "show"], ["ip", "-4", "route", "show", "table", "all"]):
        res = system.run(cmd, "reading this machine's networks", check=False)
        for word in res.stdout.split():
            if re.fullmatch(r"\d+\.\d+\.\d+\.\d+(/\d+)?", word):
                nets.append(ipaddress.ip_network(word, strict=False))
    return nets


def choose_subnet() -> str:
    """A 10.x.y.0/24 that no address or route of this machine overlaps."""
    used = _used_networks()
    for _ in range(1000):
        net = ipaddress.ip_network(f"10.{secrets.randbelow(150) + 100}.{secrets.randbelow(256)}.0/24")
        if not any(net.overlaps(u) for u in used if u.prefixlen > 0):
            return str(net.network_address).rsplit(".", 1)[0]
    raise MpiguideError("found no free 10.x.y.0/24 network for the test cluster's bridge")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def plan(nodes: int, name: str | None, cpus: int | None) -> TestCluster:
    if not 1 <= nodes <= MAX_NODES:
        raise MpiguideError(f"bad --nodes {nodes}: a test cluster has 1 to {MAX_NODES} nodes")
    if cpus is not None and cpus < 1:
        raise MpiguideError(f"bad --cpus {cpus}: at least 1")
    if name is None:
        name = "mg" + secrets.token_hex(3)
    elif not NAME_RE.match(name):
        raise MpiguideError(f"bad cluster name '{name}': 1 to 9 lowercase letters and digits, starting with a "
                            "letter (it becomes part of network link names)")
    if (clusters_dir() / name).exists():
        raise MpiguideError(f"a test cluster '{name}' is already recorded ({clusters_dir() / name}); "
                            f"remove it first: mpiguide cluster down {name}")
    subnet = choose_subnet()
    ctld_port = free_port()
    slurmd_port = free_port()
    while slurmd_port == ctld_port:
        slurmd_port = free_port()
    return TestCluster(
        name=name, hostname=socket.gethostname().split(".")[0], subnet=subnet, bridge=f"mgb-{name}",
        ctld_port=ctld_port, slurmd_port=slurmd_port, cpus=cpus or os.cpu_count() or 1,
        nodes=[Node(name=f"{name}-n{k}", netns=f"mpiguide-{name}-n{k}", veth=f"mgv{k}-{name}", addr=f"{subnet}.{k + 1}")
               for k in range(1, nodes + 1)],
    )


# ---------------------------------------------------------------- configuration

def cgroup_plugin() -> str:
    """cgroup/v2 on a unified hierarchy; cgroup/v1 on legacy and hybrid ones (which Slurm's autodetection
    gets wrong in a namespace)."""
    return "cgroup/v2" if Path("/sys/fs/cgroup/cgroup.controllers").exists() else "cgroup/v1"


def slurm_conf(c: TestCluster) -> str:
    d = c.directory
    lines = [
        f"# mpiguide test cluster '{c.name}' (mpiguide cluster down {c.name} removes it)",
        f"ClusterName={c.name}",
        f"SlurmctldHost={c.hostname}({c.subnet}.1)",
        f"SlurmctldPort={c.ctld_port}",
        f"SlurmdPort={c.slurmd_port}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={d}/munge/munge.socket",
        f"StateSaveLocation={d}/ctld",
        f"SlurmdSpoolDir={d}/nodes/%n",
        f"SlurmctldPidFile={d}/slurmctld.pid",
        f"SlurmdPidFile={d}/nodes/%n/slurmd.pid",
        f"SlurmctldLogFile={d}/logs/slurmctld.log",
        f"SlurmdLogFile={d}/logs/slurmd-%n.log",
        f"PlugStackConfig={d}/plugstack.conf",
        # the nodes share one /tmp: Slurm's PMIx plugin names its directories there by job, not by node
        f"TmpFS={d}/nodes/%n/tmp",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "MpiDefault=none",
        "MailProg=/bin/true",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        # the nodes offer the CPUs they are told to: they all share this machine's cores
        "SlurmdParameters=config_overrides",
        "ReturnToService=2",
        # a node that stops answering is noticed within seconds, not minutes
        "SlurmdTimeout=10",
        "MessageTimeout=5",
        # a job's time limit is a hard limit (the tests' batch job must reach it), and the job's processes have 5 s
        # after SIGTERM (30 by default)
        "OverTimeLimit=0",
        "KillWait=5",
        "InactiveLimit=0",
    ]
    lines += [f"NodeName={n.name} NodeAddr={n.addr} NodeHostname={n.name} CPUs={c.cpus} State=UNKNOWN"
              for n in c.nodes]
    lines.append("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def write_config(c: TestCluster) -> None:
    d = c.directory
    for sub in ("logs", "ctld", "munge", *(f"nodes/{n.name}/tmp" for n in c.nodes)):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "munge").chmod(0o700)
    key = d / "munge" / "munge.key"
    key.write_bytes(secrets.token_bytes(1024))
    key.chmod(0o400)
    c.conf.write_text(slurm_conf(c))
    (d / "cgroup.conf").write_text(f"CgroupPlugin={cgroup_plugin()}\n")
    (d / "plugstack.conf").write_text("")


# ---------------------------------------------------------------- bringing it up

def _spawn(c: TestCluster, key: str, argv: list[str]) -> None:
    """Starts a daemon in the foreground of its own session, output to logs/<key>.out, and records it."""
    with open(c.directory / "logs" / f"{key}.out", "ab") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True)
    p = Process.of(proc.pid)
    if p is None:
        raise MpiguideError(f"{argv[0]} exited at once; see {c.directory / 'logs' / (key + '.out')}")
    c.daemons[key] = p.to_dict()
    c.save()


def _wait(what: str, ready: Callable[[], bool], c: TestCluster, log: str) -> None:
    deadline = time.monotonic() + READY_WAIT
    while not ready():
        if time.monotonic() > deadline:
            path = c.directory / "logs" / log
            tail = "\n".join(path.read_text(errors="replace").splitlines()[-8:]) if path.exists() else "(no log)"
            raise MpiguideError(f"{what} did not come up within {READY_WAIT:g} s; {path} ends with:\n{tail}")
        time.sleep(0.2)


def slurm_command(c: TestCluster, argv: list[str], timeout: float = 30) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env={**os.environ, **c.env()})
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"{argv[0]} timed out")


def node_states(c: TestCluster) -> dict[str, str]:
    res = slurm_command(c, ["sinfo", "-h", "-N", "-o", "%N %T"])
    if res.returncode != 0:
        return {}
    return dict(line.split(None, 1) for line in res.stdout.splitlines() if line.strip())


def _network(c: TestCluster) -> None:
    if not system.is_mountpoint(NETNS_DIR):
        # `ip netns add` will make it a mount point: whichever test cluster goes last unmounts it
        _netns_mount_marker().touch()
    system.run(["ip", "link", "add", c.bridge, "type", "bridge"], "creating the bridge")
    system.run(["ip", "addr", "add", f"{c.subnet}.1/24", "dev", c.bridge], "addressing the bridge")
    system.run(["ip", "link", "set", c.bridge, "up"], "starting the bridge")
    for n in c.nodes:
        what = f"making node {n.name}"
        system.run(["ip", "netns", "add", n.netns], what)
        system.run(["ip", "link", "add", n.veth, "type", "veth", "peer", "name", "eth0", "netns", n.netns], what)
        system.run(["ip", "link", "set", n.veth, "master", c.bridge, "up"], what)
        for cmd in (["addr", "add", f"{n.addr}/24", "dev", "eth0"], ["link", "set", "eth0", "up"],
                    ["link", "set", "lo", "up"], ["route", "add", "default", "via", f"{c.subnet}.1"]):
            system.run(["ip", "-n", n.netns, *cmd], what)


def _netns_mount_marker() -> Path:
    """Exists while /run/netns is a mount point that a test cluster's `ip netns add` made."""
    return clusters_dir() / "netns-mounted-by-mpiguide"


def _daemons(c: TestCluster) -> None:
    d = c.directory
    munge = d / "munge"
    _spawn(c, "munged", ["munged", "--foreground", "--force", f"--socket={munge}/munge.socket",
                         f"--key-file={munge}/munge.key", f"--pid-file={munge}/munged.pid",
                         f"--log-file={d}/logs/munged.log", f"--seed-file={munge}/munge.seed"])
    _wait("munged", lambda: (munge / "munge.socket").exists(), c, "munged.log")
    _spawn(c, "slurmctld", ["slurmctld", "-D", "-f", str(c.conf)])
    _wait("slurmctld", lambda: slurm_command(c, ["scontrol", "ping"]).stdout.count("is UP") > 0, c,
          "slurmctld.log")
    for n in c.nodes:
        _start_slurmd(c, n)
    _wait("the nodes", lambda: (s := node_states(c)) and len(s) == len(c.nodes) and all(
        v.startswith("idle") for v in s.values()), c, f"slurmd-{c.nodes[-1].name}.log")


def _start_slurmd(c: TestCluster, n: Node) -> None:
    # nsenter, not `ip netns exec`: that one remounts /sys, which hides the cgroup mounts from slurmd
    _spawn(c, n.name, ["nsenter", f"--net={NETNS_DIR}/{n.netns}", "unshare", "--uts", "sh", "-c",
                       'hostname "$0" && exec slurmd -D -f "$1" -N "$0"', n.name, str(c.conf)])


def _node(c: TestCluster, name: str) -> Node:
    for n in c.nodes:
        if n.name == name:
            return n
    raise MpiguideError(f"test cluster '{c.name}' has no node '{name}' (it has {', '.join(n.name for n in c.nodes)})")


def stop_node(c: TestCluster, name: str, link: bool = False) -> None:
    """A node failure: its slurmd and everything running on it are killed at once (SIGKILL), or (link) its
    network link goes down and it keeps running, cut off."""
    n = _node(c, name)
    if link:
        system.run(["ip", "link", "set", n.veth, "down"], f"cutting node {name} off")
        return
    survivors = system.kill(system.netns_members(n.netns))
    if survivors:
        raise MpiguideError(f"node {name}: processes {', '.join(str(p.pid) for p in survivors)} survived SIGKILL")


def start_node(c: TestCluster, name: str) -> None:
    """Brings a stopped node back (its link up, its slurmd started if it is not running); it returns to
    service when its slurmd registers."""
    n = _node(c, name)
    system.run(["ip", "link", "set", n.veth, "up"], f"connecting node {name}")
    p = c.daemon(n.name)
    if not (p and p.alive()):
        _start_slurmd(c, n)
    _wait(f"node {name}", lambda: node_states(c).get(name, "").startswith("idle"), c, f"slurmd-{name}.log")


def up(nodes: int, name: str | None = None, cpus: int | None = None, say: Say = print,
       make_current: bool = True) -> TestCluster:
    """Starts a test cluster (the one mpiguide's commands use, unless make_current is False); on any failure
    removes what it made and raises."""
    system.check_machine()
    missing = system.missing_packages()
    if missing:
        packages.apt_install(missing, "the test cluster", say)
    c = plan(nodes, name, cpus)
    c.save()  # from here on `down` can find everything
    try:
        _network(c)
        write_config(c)
        _daemons(c)
    except BaseException:
        try:
            teardown(c)
            shutil.rmtree(c.directory, ignore_errors=True)  # the error carries the log's end
        except MpiguideError as exc:
            say(f"cleanup after the failed start left something behind ({exc}); "
                f"mpiguide cluster down {c.name} retries it")
        raise
    c.state = "up"
    c.save()
    if make_current:
        _current_file().write_text(c.name + "\n")
    return c


# ---------------------------------------------------------------- taking it down

def _existing_netns() -> set[str]:
    res = system.run(["ip", "netns", "list"], "listing network namespaces", check=False)
    return {line.split()[0] for line in res.stdout.splitlines() if line.strip()}


def _link_exists(name: str) -> bool:
    return Path("/sys/class/net", name).exists() or system.run(
        ["ip", "link", "show", name], "looking for a link", check=False).returncode == 0


def leftovers(c: TestCluster) -> list[str]:
    """What of c still exists."""
    left = []
    for key in c.daemons:
        p = c.daemon(key)
        if p and (p.alive() or system.session_members(p)):
            left.append(f"process {p.pid} ({key})")
    netns = _existing_netns()
    left += [f"network namespace {n.netns}" for n in c.nodes if n.netns in netns]
    left += [f"link {x}" for x in [c.bridge, *(n.veth for n in c.nodes)] if _link_exists(x)]
    return left


def teardown(c: TestCluster) -> None:
    """Stops every process of c and removes its namespaces and links; raises listing what survived."""
    netns = _existing_netns()
    # the nodes first: slurmd, its job steps and their MPI processes all live in the node's namespace
    victims = [p for n in c.nodes if n.netns in netns for p in system.netns_members(n.netns)]
    # clients still waiting for it would wait forever
    victims += system.slurm_clients(str(c.conf))
    for key in c.daemons:
        p = c.daemon(key)
        if p:
            victims += system.session_members(p)  # the daemon itself, a session leader, included
    system.stop(list(dict.fromkeys(victims)))
    for n in c.nodes:
        if n.netns in netns:
            system.run(["ip", "netns", "del", n.netns], f"removing node {n.name}", check=False)
    for link in [*(n.veth for n in c.nodes), c.bridge]:
        if _link_exists(link):
            system.run(["ip", "link", "del", link], f"removing link {link}", check=False)
    marker = _netns_mount_marker()
    if marker.exists() and system.is_mountpoint(NETNS_DIR) and not any(Path(NETNS_DIR).iterdir()):
        system.run(["umount", NETNS_DIR], f"unmounting {NETNS_DIR}", check=False)
    if not system.is_mountpoint(NETNS_DIR):
        marker.unlink(missing_ok=True)
    left = leftovers(c)
    if left:
        raise MpiguideError(f"test cluster '{c.name}': could not remove {', '.join(left)}")


def down(name: str | None = None, say: Say = print) -> TestCluster:
    """Removes a test cluster: processes, namespaces, links, mounts and its directory."""
    c = resolve(name)
    teardown(c)
    shutil.rmtree(c.directory, ignore_errors=True)
    try:
        if _current_file().read_text().strip() == c.name:
            _current_file().unlink()
    except OSError:
        pass
    say(f"test cluster '{c.name}' removed")
    return c


# ---------------------------------------------------------------- status

def status(c: TestCluster) -> str:
    out = [f"test cluster '{c.name}' ({c.state}): {len(c.nodes)} node(s) on {c.bridge} {c.subnet}.0/24, "
           f"SLURM_CONF={c.conf}"]
    for key in ("munged", "slurmctld", *(n.name for n in c.nodes)):
        p = c.daemon(key)
        state = "not started" if p is None else f"pid {p.pid} running" if p.alive() else f"pid {p.pid} gone"
        out.append(f"  {key:<16} {state}")
    states = node_states(c) if (p := c.daemon("slurmctld")) and p.alive() else {}
    for n in c.nodes:
        out.append(f"  node {n.name:<11} {n.addr:<15} {states.get(n.name, 'unknown (slurmctld does not answer)')}")
    return "\n".join(out)
