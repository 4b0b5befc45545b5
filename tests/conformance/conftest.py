"""Shared setup of the conformance tests: the runtime checkout beside the project, and skips.

Without PHP, DBAL or an engine a test is skipped with a one-line reason, unless
``LEASELAB_REQUIRE_CONFORMANCE=1`` (CI), where it fails instead.
"""

from __future__ import annotations

import os
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


def leftovers() -> list[str]:
    """Our temporary directories still in the temp dir (there must be none after any run)."""
    import tempfile

    tmp = Path(tempfile.gettempdir())
    return sorted(p.name for p in tmp.glob(engines.TMP_PREFIX + "*"))


def server_pids() -> list[int]:
    """Pids of database servers whose command line names one of our temporary directories."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if engines.TMP_PREFIX in cmd and ("mariadbd" in cmd or "postgres" in cmd):
            out.append(int(proc.name))
    return out
