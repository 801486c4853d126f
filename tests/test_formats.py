"""cases/kit/formats.py's ISO-8601 readers: the extended and the basic form
name the same instants through one reader, and a date-time no instant has
(a day of 13 months, an offset of a day or more) is None, never an exception
that would surface as a suite bug in a case."""

from __future__ import annotations

import datetime as dt

import pytest

from cases.kit.formats import basic_instant, instant

UTC = dt.timezone.utc
PLUS_ONE = dt.timezone(dt.timedelta(hours=1))
MINUS_530 = dt.timezone(-dt.timedelta(hours=5, minutes=30))


@pytest.mark.parametrize("extended, basic, named", [
    ("2026-03-02T09:30:00Z", "20260302T093000Z", dt.datetime(2026, 3, 2, 9, 30, tzinfo=UTC)),
    ("2026-03-02T10:30:00+01:00", "20260302T103000+0100",
     dt.datetime(2026, 3, 2, 10, 30, tzinfo=PLUS_ONE)),
    ("2026-03-02T04:00:00.5-05:30", "20260302T040000.5-0530",
     dt.datetime(2026, 3, 2, 4, 0, 0, 500000, tzinfo=MINUS_530)),
    ("2026-03-02T09:30", "20260302T0930", dt.datetime(2026, 3, 2, 9, 30, tzinfo=UTC)),
])
def test_both_forms_name_the_same_instant(extended, basic, named):
    assert instant(extended) == named and instant(extended).utcoffset() == named.utcoffset()
    assert basic_instant(basic) == named and basic_instant(basic).utcoffset() == named.utcoffset()
    assert basic_instant(extended) is None and instant(basic) is None


def test_a_basic_offset_may_leave_out_its_minutes():
    assert basic_instant("20260302T1030+01") == dt.datetime(2026, 3, 2, 10, 30, tzinfo=PLUS_ONE)


@pytest.mark.parametrize("text, named", [
    ("2026-03-02T10:30:00+01", dt.datetime(2026, 3, 2, 10, 30, tzinfo=PLUS_ONE)),
    ("2026-03-02T09:30:00+00", dt.datetime(2026, 3, 2, 9, 30, tzinfo=UTC)),
    ("2026-03-02T04:30:00-05", dt.datetime(2026, 3, 2, 9, 30, tzinfo=UTC)),
])
def test_an_extended_offset_may_leave_out_its_minutes(text, named):
    # ISO 8601's whole-hour time shift (as PostgreSQL prints a timestamptz)
    assert instant(text) == named


@pytest.mark.parametrize("text", ["2026-13-02T09:30:00Z", "2026-03-02T09:30:00+24:00",
                                  "2026-03-02T09:30:00-99:00", "20260302T093000+2500",
                                  "20260230T093000Z", "2026-03-02T09:30:00+1",
                                  "2026-03-02T09:30:00+01:0", "", "yesterday", None,
                                  1772443800])
def test_what_names_no_instant_is_none(text):
    assert instant(text) is None and basic_instant(text) is None
