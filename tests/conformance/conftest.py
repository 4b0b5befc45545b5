"""Shared setup of the conformance tests: the runtime checkout beside the project, and skips.

Without PHP, DBAL or an engine a test is skipped with a one-line reason, unless
``LEASELAB_REQUIRE_CONFORMANCE=1`` (CI), where it fails instead.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sim.conform import engines

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_SRC = (ROOT.parent / "shared" / "reference" / "nr-llm").resolve()
REQUIRED = os.environ.get("LEASELAB_REQUIRE_CONFORMANCE") == "1"


def need(engine: str = "sqlite") -> Path:
    """The runtime checkout, after making sure ``engine`` can run; skip (or fail under CI) if not."""
    why = None
    if not (RUNTIME_SRC / "Classes" / "Service" / "Tool" / "AgentRunRepository.php").is_file():
        why = f"no runtime checkout at {RUNTIME_SRC}"
    else:
        why = engines.missing(engine)
    if why is not None:
        if REQUIRED:
            pytest.fail(f"conformance required but {why}")
        pytest.skip(why)
    return RUNTIME_SRC


@pytest.fixture
def private_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary directory of this test's own, where the engines it starts put their data (short: a
    unix socket path must stay under about 100 characters). Other tests' servers, in other pytest
    workers, live elsewhere, so what this test leaves behind is told apart from theirs."""
    root = Path(tempfile.mkdtemp(prefix="lc-"))
    root.chmod(0o755)  # PostgreSQL runs as its own user when we are root: it must reach its data
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setenv("TMPDIR", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def leftovers(root: Path) -> list[str]:
    """Our temporary directories still in ``root`` (there must be none after any run)."""
    return sorted(p.name for p in root.glob(engines.TMP_PREFIX + "*"))


def server_pids(root: Path) -> list[int]:
    """Pids of database servers whose command line names one of our temporary directories in ``root``."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"{root}/{engines.TMP_PREFIX}" in cmd and ("mariadbd" in cmd or "postgres" in cmd):
            out.append(int(proc.name))
    return out
