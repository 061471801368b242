"""Downtime calendar."""

from __future__ import annotations

import gzip

import pytest

from hpcsched.exceptions import InputError, OptionError
from hpcsched.workload.calendar import (
    DEFAULT_ANNOUNCE_LEAD,
    Downtime,
    DowntimeCalendar,
    parse_calendar,
    read_calendar,
)

SAMPLE = """\
# maintenance plan for the test machine
  # indented comment

200000 203600 U 16 PDU failure, rack 3   # trailing comment
86400  93600  S                           # whole machine, no note
100000 100500 s - 2024 upgrade of the fabric
86400  90000  u 1
300000.5 300100.25 S all
"""


def test_parse_sample():
    cal = parse_calendar(SAMPLE, "plan.txt")
    assert cal.source == "plan.txt"
    assert cal.announce_lead == 172800.0 == DEFAULT_ANNOUNCE_LEAD
    assert len(cal) == 5
    # sorted by start; the two windows starting at 86400 stay in file order
    assert [(w.start, w.end, w.kind, w.nodes, w.note, w.line) for w in cal] == [
        (86400.0, 93600.0, "scheduled", None, "", 5),
        (86400.0, 90000.0, "unscheduled", 1, "", 7),
        (100000.0, 100500.0, "scheduled", None, "2024 upgrade of the fabric", 6),
        (200000.0, 203600.0, "unscheduled", 16, "PDU failure, rack 3", 4),
        (300000.5, 300100.25, "scheduled", None, "", 8),
    ]


def test_note_without_nodes_and_inner_spacing():
    cal = parse_calendar("0 10 U   disk   array  died\n", "p")
    (w,) = cal.windows
    assert w.nodes is None
    assert w.note == "disk   array  died"


def test_empty_calendar():
    cal = parse_calendar("# nothing planned\n\n", "p")
    assert cal.windows == () and len(cal) == 0


def test_overlapping_windows_are_kept():
    cal = parse_calendar("0 100 S\n50 150 U 4\n", "p")
    assert [(w.start, w.end) for w in cal] == [(0.0, 100.0), (50.0, 150.0)]


def test_shifted_subtracts_origin():
    cal = parse_calendar("1000 2000 S 8 a\n1500 1600 U\n", "p", announce_lead=3600)
    shifted = cal.shifted(250.0)
    assert [(w.start, w.end, w.kind, w.nodes, w.note) for w in shifted] == [
        (750.0, 1750.0, "scheduled", 8, "a"),
        (1250.0, 1350.0, "unscheduled", None, ""),
    ]
    assert shifted.announce_lead == 3600.0
    assert shifted.source == "p"
    # the original is unchanged (frozen)
    assert cal.windows[0].start == 1000.0
    with pytest.raises(AttributeError):
        cal.announce_lead = 1.0  # type: ignore[misc]


def test_validate_against_machine_size():
    cal = parse_calendar("0 10 S 64\n20 30 U\n40 50 U 65\n", "plan.txt")
    cal.validate_against(65)
    with pytest.raises(InputError) as info:
        cal.validate_against(64)
    assert (info.value.path, info.value.line, info.value.field) == ("plan.txt", 3, "nodes")


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("abc 10 S", "start"),
        ("0 ten S", "end"),
        ("nan 10 S", "start"),
        ("0 inf S", "end"),
        ("10 10 S", "end"),
        ("10 5 U", "end"),
        ("0 10 X", "kind"),
        ("0 10 maintenance", "kind"),
        ("0 10 S 0", "nodes"),
        ("0 10 S -3", "nodes"),
        ("0 10 S 2.5", "nodes"),
        ("0 10", "kind"),
        ("0", "end"),
    ],
)
def test_errors_name_line_and_field(line, field):
    text = "# header\n0 5 S\n" + line + "  # the bad one\n"
    with pytest.raises(InputError) as info:
        parse_calendar(text, "bad.txt")
    assert (info.value.path, info.value.line, info.value.field) == ("bad.txt", 3, field)


def test_read_plain_and_gzip(tmp_path):
    plain = tmp_path / "cal.txt"
    plain.write_text(SAMPLE)
    packed = tmp_path / "cal.txt.gz"
    packed.write_bytes(gzip.compress(SAMPLE.encode()))
    a = read_calendar(plain)
    b = read_calendar(packed, announce_lead=0)
    assert a.windows == b.windows
    assert a.source == str(plain) and b.source == str(packed)
    assert b.announce_lead == 0.0


def test_read_missing_file(tmp_path):
    with pytest.raises(InputError):
        read_calendar(tmp_path / "none.txt")


def test_negative_announce_lead_is_an_option_error():
    with pytest.raises(OptionError):
        parse_calendar("0 1 S\n", "p", announce_lead=-1)


def test_direct_construction_sorts_and_validates():
    late = Downtime(50.0, 60.0, "scheduled")
    early = Downtime(10.0, 20.0, "unscheduled", 4, "x")
    cal = DowntimeCalendar((late, early))
    assert cal.windows == (early, late)
    assert Downtime(1.0, 2.0, "scheduled", line=3) == Downtime(1.0, 2.0, "scheduled", line=9)
    with pytest.raises(InputError):
        Downtime(5.0, 5.0, "scheduled")
    with pytest.raises(InputError):
        Downtime(0.0, 5.0, "S")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        Downtime(0.0, 5.0, "scheduled", nodes=0)
