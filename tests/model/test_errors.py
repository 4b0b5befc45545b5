"""``model.errors``: the whole message in ``str(error)``, and a CLI line that always fits under 200
characters while naming the file (its end when long), the field and what is wrong, in that order of
importance; lists of choices and echoed values stay short."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from model.errors import (
    MAX_FILE_CHARS,
    MAX_LINE_CHARS,
    MAX_MESSAGE_CHARS,
    LeaselabError,
    choices,
    clamp,
    shown,
    unknown_name,
)

SHARD = "/tmp/run/out/shards/" + "main__single_run__adr-111__x1__r0__as__3__8bb3bad17fcbefb7" * 2 + ".parquet"


def test_the_cli_line_fits_under_200_characters_with_its_prefix() -> None:
    assert MAX_MESSAGE_CHARS + len("leaselab: ") == MAX_LINE_CHARS < 200


def test_str_keeps_the_whole_message_for_a_library_caller() -> None:
    error = LeaselabError("cannot write: disk full", file=SHARD, hint="finished shards are kept; " * 5)
    assert str(error).startswith(f"{SHARD}: cannot write: disk full (finished shards are kept;")
    assert len(str(error)) > MAX_MESSAGE_CHARS


def test_a_short_message_is_the_same_in_one_line_and_str() -> None:
    error = LeaselabError("must be >= 0", file="s.toml", field="world.workers", hint="see scenarios/schema.py")
    assert error.one_line() == str(error) == "s.toml: world.workers: must be >= 0 (see scenarios/schema.py)"


def test_a_path_a_user_typed_is_kept_whole_and_the_hint_goes_first() -> None:
    path = "/home/someone/reviews/2024/" + "q" * 50 + ".toml"
    assert len(path) <= MAX_FILE_CHARS
    error = LeaselabError("w" * 70, file=path, field="runs.0.count", hint="see scenarios/schema.py " * 2)
    line = error.one_line()
    assert line == f"{path}: runs.0.count: {'w' * 70}"


def test_a_long_path_keeps_its_end_to_make_room_for_the_hint() -> None:
    error = LeaselabError("cannot write: No space left on device", file=SHARD, hint="finished shards are kept")
    line = error.one_line()
    assert len(line) <= MAX_MESSAGE_CHARS
    assert line.startswith("...")
    assert line.endswith(".parquet: cannot write: No space left on device (finished shards are kept)")


def test_without_room_for_the_whole_path_what_is_wrong_stays_whole() -> None:
    path = "/tmp/" + "p" * 90 + "/in.toml"
    what = "must be one of: connection, rateLimit, serverError, circuitOpen, auth, ... (9 in all)"
    line = LeaselabError(what, file=path, field="faults.provider.classes.0").one_line()
    assert line.endswith(f"/in.toml: faults.provider.classes.0: {what}") and line.startswith("...")
    assert len(line) <= MAX_MESSAGE_CHARS


@given(
    what=st.text(max_size=600),
    file=st.text(max_size=400),
    field=st.text(max_size=300),
    hint=st.text(max_size=300),
)
def test_any_error_is_one_line_that_fits(what: str, file: str, field: str, hint: str) -> None:
    line = LeaselabError(what, file=file, field=field, hint=hint).one_line()
    assert len(line) <= MAX_MESSAGE_CHARS
    assert line == " ".join(line.split())  # one line, whitespace collapsed
    if len(" ".join(what.split())) <= 100 and len(" ".join(field.split())) <= 40 and len(" ".join(file.split())) <= 40:
        assert " ".join(what.split()) in line


def test_clamp_and_shown_cut_long_text_with_dots() -> None:
    assert clamp("a  b\n c", 10) == "a b c"
    assert clamp("x" * 50, 10) == "xxxxxxx..."
    assert shown("t" * 100) == "'" + "t" * 28 + "..."
    assert (shown(True), shown(1.5), shown("ok")) == ("true", "1.5", "'ok'")


def test_choices_lists_all_that_fit_and_says_how_many_and_where_the_rest_are() -> None:
    assert choices(["a", "b"]) == "a, b"
    names = [f"name_{i:02d}" for i in range(30)]
    text = choices(names, limit=60, see="`leaselab policies`")
    assert len(text) <= 60 and text.startswith("name_00, name_01") and text.endswith("(30 in all; `leaselab policies`)")


def test_an_unknown_name_names_the_nearest_and_where_all_are() -> None:
    assert unknown_name("flag", "write_fences", ["write_fence", "typed_effects"], see="X") == (
        "unknown flag 'write_fences'; did you mean 'write_fence'?",
        "2 in all: X",
    )
    assert unknown_name("flag", "zzz", ["write_fence"], see="X")[0] == "unknown flag 'zzz'"
