"""Make the repository root importable for these tests.

``tests/`` has no ``__init__.py`` and pytest (prepend import mode) puts the test
directories, not the repository root, on ``sys.path``; ``tests/model`` would then even
shadow the real :mod:`model` package as a namespace package. Redundant (and harmless)
once the project sets ``pythonpath = ["."]`` for pytest.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
