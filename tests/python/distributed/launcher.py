"""Starts the ranks of a distributed test as local processes and collects what they report.

Every rank runs worker.py (or any script) with the rendezvous in its environment (loopback only) and prints
one `CHECK {json}` line per check; the launcher returns them by name, with each rank's exit code and output,
after at most `timeout` seconds (ranks still running then are killed, and the result says so).
"""

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def loopback_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ)
    # Gloo binds to the interface of the machine's host name unless told otherwise: stay on loopback.
    env["GLOO_SOCKET_IFNAME"] = "lo"
    env["MASTER_ADDR"] = "127.0.0.1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


@dataclass
class RankResult:
    returncode: Optional[int]  # None: killed at the timeout
    output: str
    checks: Dict[str, dict] = field(default_factory=dict)


def parse_checks(output: str) -> Dict[str, dict]:
    checks = {}
    for line in output.splitlines():
        if line.startswith("CHECK "):
            record = json.loads(line[len("CHECK "):])
            checks[record["name"]] = record
    return checks


def run_ranks(scenario: str, world_size: int = 2, timeout: float = 90,
              env: Optional[Dict[str, str]] = None) -> List[RankResult]:
    port = free_port()
    processes = []
    for rank in range(world_size):
        rank_env = loopback_env(env)
        rank_env.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                        LOCAL_WORLD_SIZE=str(world_size), MASTER_PORT=str(port))
        processes.append(subprocess.Popen([sys.executable, WORKER, scenario], env=rank_env,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    return [collect(process, timeout) for process in processes]


def collect(process: subprocess.Popen, timeout: float) -> RankResult:
    try:
        output, _ = process.communicate(timeout=timeout)
        returncode = process.returncode
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        returncode = None
    return RankResult(returncode, output, parse_checks(output))
