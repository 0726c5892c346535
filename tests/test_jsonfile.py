"""The one reader of user-named JSON files (launchprof/fileio/jsonfile.py): each bad file gets the
one-line error that names what is wrong with it."""

from __future__ import annotations

import pytest

from launchprof.errors import UsageError
from launchprof.fileio.jsonfile import read_json_object


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"  \n", "the file is empty"),
        (b"# a markdown file\n", "it is not JSON"),
        (b"\x00\xff\xfe", "not a text JSON file"),
        (b'{"schema_version": 3, "eag', "not valid JSON (truncated?)"),
        (b"42", "top level is not an object"),
        (b"[1, 2]", "top level is not an object"),
    ],
)
def test_each_bad_file_says_what_is_wrong(tmp_path, content, message):
    path = tmp_path / "r.json"
    path.write_bytes(content)
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        read_json_object(path, "a launchprof report")


def test_a_byte_order_mark_and_leading_space_are_fine(tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(b'\xef\xbb\xbf \n{"schema_version": 3}')
    assert read_json_object(path, "a launchprof report") == {"schema_version": 3}


def test_a_message_that_ends_in_at_is_not_doubled(tmp_path):
    """json says "Unterminated string starting at"; the line number follows with one "at"."""
    path = tmp_path / "r.json"
    path.write_bytes(b'{"schema_version": 3,\n "script": "decode')
    with pytest.raises(UsageError) as caught:
        read_json_object(path, "a launchprof report")
    assert str(caught.value).endswith("not valid JSON (truncated?): Unterminated string starting at line 2")
