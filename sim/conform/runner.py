"""Run the checks on each engine, explain divergences from the known table, shrink and report."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, find, given, seed, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from model.collation import unicode_ci_key
from model.errors import LeaselabError
from sim.conform import cases as C
from sim.conform import ddl, engines
from sim.conform.checks import ENGINE_PROPERTIES, Check, ModelEnv, all_checks, diff
from sim.conform.php_process import PhpProcess

KNOWN = Path(__file__).with_name("known_divergences.toml")


# ---- shapes: named predicates the known-divergence table refers to ------------------------------


def _near_identical(a: str | None, b: str | None) -> bool:
    if a is None or b is None or a == b:
        return False
    return unicode_ci_key(a) == unicode_ci_key(b)


def _identity_collation(case: dict[str, Any], php: dict[str, Any], model: dict[str, Any]) -> bool:
    row = case.get("row", {})
    held = row.get("claimed_by")
    return any(_near_identical(held, case.get(k)) for k in ("me", "owned_by", "worker"))


def _error_class_fqcn(case: dict[str, Any], php: dict[str, Any], model: dict[str, Any]) -> bool:
    keys = [k for k in diff(php, model)]
    return bool(keys) and all(k.endswith(".error_class") and str(php[k]).rsplit("\\", 1)[-1] == model[k] for k in keys)


def _always(case: dict[str, Any], php: dict[str, Any], model: dict[str, Any]) -> bool:
    return True


def _empty_request(case: dict[str, Any], php: dict[str, Any], model: dict[str, Any]) -> bool:
    return case.get("request") == ""


def _write_clock(case: dict[str, Any], php: dict[str, Any], model: dict[str, Any]) -> bool:
    return case.get("clock") != case.get("now")


def _lease_ties(case: dict[str, Any], php: dict[str, Any], model: dict[str, Any]) -> bool:
    rows = {r["uuid"]: r for r in case.get("rows", [])}
    p, m = php.get("selected", []), model.get("selected", [])
    return sorted(p) == sorted(m) and [rows[u]["lease_expires"] for u in p] == [rows[u]["lease_expires"] for u in m]


SHAPES: dict[str, Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], bool]] = {
    "always": _always,
    "identity_collation": _identity_collation,
    "error_class_fqcn": _error_class_fqcn,
    "empty_request": _empty_request,
    "write_clock": _write_clock,
    "lease_ties": _lease_ties,
}


@dataclass(frozen=True)
class Known:
    check: str
    engines: tuple[str, ...]
    fields: tuple[str, ...]
    shape: str
    reason: str

    def explains(
        self,
        check: str,
        engine: str,
        keys: Sequence[str],
        case: dict[str, Any],
        php: dict[str, Any],
        model: dict[str, Any],
    ) -> bool:
        if self.check not in ("*", check) or ("*" not in self.engines and engine not in self.engines):
            return False
        if self.fields and not all(any(k == f or k.endswith("." + f) for f in self.fields) for k in keys):
            return False
        return SHAPES[self.shape](case, php, model)


def load_known(path: Path = KNOWN) -> list[Known]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for d in data.get("divergence", []):
        if d["shape"] not in SHAPES:
            raise LeaselabError(f"unknown shape '{d['shape']}'", file=str(path), field="shape")
        out.append(
            Known(d["check"], tuple(d.get("engines", ["*"])), tuple(d.get("fields", [])), d["shape"], d["reason"])
        )
    return out


# ---- results --------------------------------------------------------------------------------


@dataclass
class Divergence:
    reason: str | None  # None = unexplained
    keys: tuple[str, ...]
    case: dict[str, Any]
    php: dict[str, Any]
    model: dict[str, Any]
    cases: int = 1


@dataclass
class CheckResult:
    check: str
    engine: str
    cases: int = 0
    divergences: int = 0
    unexplained: int = 0
    groups: dict[tuple[str | None, tuple[str, ...]], Divergence] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        reasons: dict[str, int] = {}
        for (reason, _keys), d in self.groups.items():
            if reason is not None:
                reasons[reason] = reasons.get(reason, 0) + d.cases
        return {
            "check": self.check,
            "engine": self.engine,
            "cases": self.cases,
            "divergences": self.divergences,
            "unexplained": self.unexplained,
            "explanations": [{"reason": r, "cases": n} for r, n in sorted(reasons.items())],
        }


@dataclass
class Options:
    runtime_src: Path
    engines: tuple[str, ...] = ("sqlite",)
    examples: int = 200
    seed: int = 0
    dsn: str | None = None
    env_overrides: dict[str, Any] = field(default_factory=dict)
    checks: tuple[str, ...] = ()
    shrink: bool = True
    shrink_explained: bool = False
    known: list[Known] | None = None


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
        report_multiple_bugs=False,
    )


def model_env(engine: str, overrides: dict[str, Any]) -> ModelEnv:
    props = dict(ENGINE_PROPERTIES[engine])
    props.update({k: v for k, v in overrides.items() if k in ("collation", "affected")})
    return ModelEnv(
        policy=overrides.get("policy", ModelEnv().policy), collation=props["collation"], affected=props["affected"]
    )


def run_check(
    check: Check, php: PhpProcess, engine: str, env: ModelEnv, opts: Options, known: list[Known]
) -> CheckResult:
    result = CheckResult(check.name, engine)

    def observe(case: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, Any], dict[str, Any], str | None]:
        p = check.php(php, case)
        m = check.model(case, env)
        keys = diff(p, m)
        reason = None
        if keys:
            for k in known:
                if k.explains(check.name, engine, keys, case, p, m):
                    reason = k.reason
                    break
        return keys, p, m, reason

    @seed(opts.seed)
    @_settings(opts.examples)
    @given(check.strategy)
    def body(case: dict[str, Any]) -> None:
        result.cases += 1
        keys, p, m, reason = observe(case)
        if not keys:
            return
        result.divergences += 1
        if reason is None:
            result.unexplained += 1
        group = (reason, keys if reason is None else ())
        if group in result.groups:
            result.groups[group].cases += 1
        else:
            result.groups[group] = Divergence(reason, keys, case, p, m)

    body()
    if opts.shrink:
        for group, d in result.groups.items():
            if d.reason is not None and not opts.shrink_explained:
                continue
            try:

                def same_group(c: dict[str, Any], g: tuple[str | None, tuple[str, ...]] = group) -> bool:
                    keys, _p, _m, reason = observe(c)
                    return bool(keys) and (reason, keys if reason is None else ()) == g

                minimal = find(
                    check.strategy,
                    same_group,
                    settings=settings(
                        max_examples=300, database=None, deadline=None, suppress_health_check=list(HealthCheck)
                    ),
                    random=__import__("random").Random(opts.seed),
                )
            except (NoSuchExample, Unsatisfiable):
                continue
            keys, p, m, _reason = observe(minimal)
            d.case, d.php, d.model, d.keys = minimal, p, m, keys
    return result


@contextmanager
def engine_session(name: str, opts: Options) -> Iterator[PhpProcess]:
    schema = ddl.read_schema(opts.runtime_src)
    if opts.dsn is not None:
        engine = engines.from_dsn(opts.dsn)
        with PhpProcess(opts.runtime_src) as php:
            php.ask({"op": "connect", "params": engine.params})
            php.ask({"op": "schema", "tables": schema})
            yield php
        return
    with engines.start(name) as engine, PhpProcess(opts.runtime_src) as php:
        php.ask({"op": "connect", "params": engine.params})
        php.ask({"op": "schema", "tables": schema})
        yield php


def selected_checks(opts: Options) -> list[Check]:
    checks = all_checks()
    if not opts.checks:
        return checks
    picked = [c for c in checks if c.name in opts.checks or c.name.split()[0] in opts.checks]
    if not picked:
        raise LeaselabError(
            f"no check named {', '.join(opts.checks)}",
            field="check",
            hint="valid checks: " + ", ".join(c.name for c in checks),
        )
    return picked


def run(opts: Options, progress: Callable[[str], None] | None = None) -> list[CheckResult]:
    known = opts.known if opts.known is not None else load_known()
    checks = selected_checks(opts)
    results: list[CheckResult] = []
    names = [engines.from_dsn(opts.dsn).name] if opts.dsn else list(opts.engines)
    for name in names:
        env = model_env(name, opts.env_overrides)
        with engine_session(name, opts) as php:
            for check in checks:
                r = run_check(check, php, name, env, opts, known)
                results.append(r)
                if progress:
                    progress(
                        f"{name:8} {check.name:28} {r.cases:5} cases {r.divergences:5} divergences {r.unexplained:5} unexplained"  # noqa: E501
                    )
    return results


def validate_checkout(path: Path) -> None:
    if (
        not (path / "Classes" / "Service" / "Tool" / "AgentRunRepository.php").is_file()
        or not (path / "ext_tables.sql").is_file()
    ):
        raise LeaselabError(
            f"{path} is not a checkout of the nr-llm runtime (no Classes/Service/Tool/AgentRunRepository.php or ext_tables.sql)",  # noqa: E501
            field="runtime-src",
            hint="pass the root of a netresearch/t3x-nr-llm checkout",
        )


__all__ = ["C", "CheckResult", "Divergence", "Known", "Options", "load_known", "run", "validate_checkout"]
