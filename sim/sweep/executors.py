"""Where sweeps run: a local process pool, or a Dask cluster given its scheduler address."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from model.errors import LeaselabError

CONNECT_TIMEOUT = "15s"


@contextmanager
def executor_for(scheduler: str | None, workers: int | None) -> Iterator[Executor]:
    if scheduler is None:
        pool = ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1)
        try:
            yield pool
        finally:
            pool.shutdown(cancel_futures=True)
        return
    try:
        distributed: Any = importlib.import_module("distributed")  # untyped: keep mypy --strict quiet
    except ImportError:
        raise LeaselabError(
            "dask.distributed is not installed", field="--scheduler", hint="pip install 'leaselab[dask]'"
        ) from None
    try:
        client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as error:
        raise LeaselabError(
            f"cannot reach the Dask scheduler at {scheduler}: {error}",
            field="--scheduler",
            hint="start one with `dask scheduler` and workers with `dask worker ADDRESS`",
        ) from None
    try:
        yield client.get_executor(pure=False)  # a resubmitted task must run again, not hit a cache
    finally:
        client.close()
