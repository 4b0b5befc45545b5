"""The long-lived PHP harness process of one engine: JSON lines in, JSON lines out."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

from model.errors import LeaselabError

HARNESS = Path(__file__).with_name("php") / "harness.php"

STOP = threading.Event()
"""Set by ``leaselab conform``'s signal handler: every request raises KeyboardInterrupt until cleared,
so an interrupt whose exception Python dropped (raised inside a finalizer) still stops the run."""


class PhpError(Exception):
    """The harness answered a request with an error (a harness or setup bug, not a divergence)."""


class PhpProcess:
    """One ``php harness.php <runtime-src>``; requests are answered strictly in order."""

    def __init__(self, runtime_src: Path) -> None:
        self.proc = subprocess.Popen(
            ["php", "-d", "memory_limit=512M", str(HARNESS), str(runtime_src)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.requests = 0
        pong = self.ask({"op": "ping"})
        if not pong.get("pong"):
            raise LeaselabError("the PHP harness did not answer")

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        if STOP.is_set():
            raise KeyboardInterrupt
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise LeaselabError(f"the PHP harness died: {err.strip()[-400:]}")
        self.requests += 1
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise PhpError(f"{answer.get('error')} at {answer.get('where')} (request {request.get('op')})")
        return answer

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> PhpProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
