"""The checkout's ``ext_tables.sql`` read the way TYPO3's schema migrator reads it.

TYPO3 parses the MySQL-flavoured CREATE TABLE statements into Doctrine table objects
and lets the target platform emit the DDL. This module does the parsing half for the two
tables the runtime writes (column type, length, precision/scale, unsigned, NOT NULL,
default, auto_increment, primary key, plain indexes); the PHP harness builds the Doctrine
``Table`` from it and executes ``platform->getCreateTableSQL`` (InnoDB, utf8mb4,
utf8mb4_unicode_ci on MariaDB, as TYPO3's installer configures it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from model.errors import LeaselabError

TABLES = ("tx_nrllm_agentrun", "tx_nrllm_agentrun_event")

_COLUMN = re.compile(
    r"^(?P<name>\w+)\s+(?P<type>\w+)(?:\((?P<args>[\d,\s]+)\))?(?P<rest>.*)$",
    re.IGNORECASE,
)
_TYPES = {
    "int": "integer",
    "smallint": "smallint",
    "tinyint": "smallint",
    "bigint": "bigint",
    "varchar": "string",
    "text": "text",
    "mediumtext": "text",
    "longtext": "text",
    "decimal": "decimal",
}
_TEXT_LENGTH = {"mediumtext": 16777215, "longtext": 4294967295}


def _statement(sql: str, table: str) -> str:
    match = re.search(rf"CREATE TABLE {table}\s*\((.*?)\n\);", sql, re.DOTALL)
    if match is None:
        raise LeaselabError(f"table {table} not found in ext_tables.sql", field="runtime-src")
    return match.group(1)


def parse_table(sql: str, table: str) -> dict[str, Any]:
    columns: list[dict[str, Any]] = []
    primary: list[str] = []
    indexes: list[dict[str, Any]] = []
    for raw in _statement(sql, table).splitlines():
        line = raw.split("--", 1)[0].strip().rstrip(",").strip()
        if not line:
            continue
        upper = line.upper()
        if upper.startswith("PRIMARY KEY"):
            primary = [c.strip() for c in line[line.index("(") + 1 : line.rindex(")")].split(",")]
            continue
        if upper.startswith(("KEY ", "INDEX ")):
            name = line.split()[1]
            cols = [c.strip() for c in line[line.index("(") + 1 : line.rindex(")")].split(",")]
            indexes.append({"name": name, "columns": cols})
            continue
        m = _COLUMN.match(line)
        if m is None:
            raise LeaselabError(f"unreadable column line in {table}: {line!r}", field="runtime-src")
        mysql_type = m.group("type").lower()
        if mysql_type not in _TYPES:
            raise LeaselabError(f"unsupported column type {mysql_type} in {table}", field="runtime-src")
        rest = m.group("rest")
        rest_upper = rest.upper()
        col: dict[str, Any] = {
            "name": m.group("name"),
            "type": _TYPES[mysql_type],
            "unsigned": "UNSIGNED" in rest_upper,
            "notnull": "NOT NULL" in rest_upper,
            "autoincrement": "AUTO_INCREMENT" in rest_upper,
        }
        args = [a.strip() for a in (m.group("args") or "").split(",") if a.strip()]
        if mysql_type == "varchar" and args:
            col["length"] = int(args[0])
        if mysql_type == "decimal" and args:
            col["precision"], col["scale"] = int(args[0]), int(args[1]) if len(args) > 1 else 0
        if mysql_type in _TEXT_LENGTH:
            col["length"] = _TEXT_LENGTH[mysql_type]
        default = re.search(r"DEFAULT\s+'([^']*)'", rest, re.IGNORECASE)
        col["default"] = default.group(1) if default else None
        columns.append(col)
    return {"name": table, "columns": columns, "primary": primary, "indexes": indexes}


def read_schema(runtime_src: Path) -> list[dict[str, Any]]:
    """The runtime's two tables as column specs, from ``<runtime_src>/ext_tables.sql``."""
    path = runtime_src / "ext_tables.sql"
    try:
        sql = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LeaselabError(f"cannot read {path}: {exc.strerror}", field="runtime-src") from exc
    return [parse_table(sql, t) for t in TABLES]
