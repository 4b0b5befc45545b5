"""``python -m leaselab``: the same CLI as the ``leaselab`` console script."""

from __future__ import annotations

from leaselab.cli import main

if __name__ == "__main__":
    main()
