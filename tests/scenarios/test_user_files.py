"""``scenarios.user_files``: the byte-level read of every TOML input and the ``--out`` check, on
hand-built files and directories (the CLI cases are in ``tests/leaselab/test_cli_bad_input.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from model.errors import LeaselabError
from scenarios.user_files import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    check_output_directory,
    deepest_beyond,
    loads_toml,
    read_toml,
)


def refusal(path: Path) -> LeaselabError:
    with pytest.raises(LeaselabError) as caught:
        read_toml(path, what="test file")
    assert caught.value.file == str(path)
    return caught.value


def test_utf8_with_or_without_a_byte_order_mark_reads(tmp_path: Path) -> None:
    plain, marked = tmp_path / "a.toml", tmp_path / "b.toml"
    plain.write_bytes('x = "caf\u00e9"\n'.encode())
    marked.write_bytes(b"\xef\xbb\xbf" + 'x = "caf\u00e9"\n'.encode())
    assert read_toml(plain, what="test file") == read_toml(marked, what="test file") == {"x": "caf\u00e9"}


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("x = 1\n".encode("utf-16"), "is UTF-16 or UTF-32 text"),
        ("x = 1\n".encode("utf-32"), "is UTF-16 or UTF-32 text"),
        ("x = 1\n".encode("utf-16-be"), "has a NUL byte at offset 0"),
        (b"x = 1\n\xc3", "is not UTF-8 text (byte 0xc3 at offset 6)"),
        (b"x = '\xe9'\n", "is not UTF-8 text (byte 0xe9 at offset 5)"),
    ],
)
def test_bytes_that_are_not_utf8_are_refused_saying_what_they_look_like(tmp_path: Path, data: bytes, says: str) -> None:
    path = tmp_path / "x.toml"
    path.write_bytes(data)
    assert says in refusal(path).what


def test_a_file_one_byte_over_the_limit_is_refused_and_one_at_it_reads(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_bytes(b"x = 1\n" + b"#" * (MAX_FILE_BYTES - 7) + b"\n")
    assert path.stat().st_size == MAX_FILE_BYTES and read_toml(path, what="test file") == {"x": 1}
    path.write_bytes(b"x = 1\n" + b"#" * (MAX_FILE_BYTES - 6) + b"\n")
    assert refusal(path).what == "larger than 1 MiB: not a test file"


def test_missing_directory_and_nul_names_are_one_line(tmp_path: Path) -> None:
    assert refusal(tmp_path / "absent.toml").what == "no such test file"
    assert refusal(tmp_path).what == "is a directory, not a test file"
    assert refusal(tmp_path / "a\x00b.toml").what == "is not a usable file name"


def test_nesting_up_to_the_limit_reads_and_one_more_level_is_refused() -> None:
    inner = MAX_DEPTH - 1  # the top-level table is the first level
    assert loads_toml("x = " + "[" * inner + "]" * inner, source="s")
    with pytest.raises(LeaselabError) as caught:
        loads_toml("x = " + "[" * (inner + 1) + "]" * (inner + 1), source="s")
    assert caught.value.field == "x" + ".0" * inner  # the innermost array, at depth MAX_DEPTH + 1
    assert caught.value.what == f"nested deeper than {MAX_DEPTH} levels of arrays and tables"


def test_nesting_that_tomllib_cannot_parse_is_the_same_refusal() -> None:
    with pytest.raises(LeaselabError, match=f"nested deeper than {MAX_DEPTH} levels"):
        loads_toml("x = " + "{a = " * 2000 + "1" + "}" * 2000, source="s")


def test_deepest_beyond_names_the_first_value_too_deep_and_never_recurses() -> None:
    deep: dict[str, object] = {}
    node = deep
    for _ in range(5000):  # far past Python's recursion limit
        child: dict[str, object] = {}
        node["k"] = child
        node = child
    assert deepest_beyond(deep, 3) == "k.k.k"
    assert deepest_beyond({"a": [1, [2]]}, 3) is None  # scalars are no level
    assert deepest_beyond({"a": [1, [[2]]]}, 3) == "a.1.0"


def test_an_integer_too_long_for_python_is_bad_toml_not_a_traceback() -> None:
    with pytest.raises(LeaselabError, match="bad TOML"):
        loads_toml("x = " + "9" * 5000, source="s")


def test_an_output_directory_may_exist_or_be_made(tmp_path: Path) -> None:
    check_output_directory(tmp_path)
    check_output_directory(tmp_path / "new" / "deeper")
    check_output_directory(Path("relative-not-yet-made"))
    assert sorted(tmp_path.iterdir()) == []  # nothing is created


def test_an_output_path_through_a_file_or_a_broken_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("kept", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    cases = {
        tmp_path / "f": "is a file, not a directory",
        tmp_path / "f" / "a" / "b": "'f' in this path is a file",
        tmp_path / "link": "is a broken symbolic link",
    }
    for path, says in cases.items():
        with pytest.raises(LeaselabError) as caught:
            check_output_directory(path)
        assert says in caught.value.what and caught.value.field == "--out" and caught.value.file == str(path)
    assert (tmp_path / "f").read_text(encoding="utf-8") == "kept"


def test_an_output_directory_this_process_may_not_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path)
    with pytest.raises(LeaselabError, match="permission denied"):
        check_output_directory(tmp_path / "out")
