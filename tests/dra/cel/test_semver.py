"""Semver follows blang/semver/v4 v4.0.0 (semver_test.go) and the apiserver CEL SemverLib v1
(cel/library/semver_test.go), translated from CEL calls to Python calls."""

from __future__ import annotations

import copy
import pickle

import pytest

from dradash.dra.cel.semver import Semver, SemverError, is_semver

S = Semver.parse


# --- apiserver cel/library semver_test.go ----------------------------------------------------


def test_cel_semver_parses_1_2_3() -> None:
    v = S("1.2.3")

    assert v == Semver(1, 2, 3)
    assert (v.major(), v.minor(), v.patch()) == (1, 2, 3)


def test_cel_semver_rejects_a_v_prefix_without_normalize() -> None:
    with pytest.raises(SemverError, match="No Major.Minor.Patch elements found"):
        S("v1.0")


@pytest.mark.parametrize(
    ("text", "normalize", "expected"),
    [
        ("1.2.3-beta.1+build.1", False, True),
        ("", False, False),
        ("v1.0.0", False, False),
        (" 1.0.0", False, False),
        ("1. 0.0", False, False),
        ("1.0.0 ", False, False),
        ("01.01.01", False, False),
        ("1", False, False),
        ("1.1", False, False),
        ("", True, False),
        (" 1.0.0", True, False),
        ("1. 0.0", True, False),
        ("1.0.0 ", True, False),
        ("v1.0.0", True, True),
        ("01.01.01", True, True),
        ("1", True, True),
        ("1.1", True, True),
        ("v1.0", True, True),  # the library doc examples
        ("hello", False, False),
        ("1.0.0", False, True),
    ],
)
def test_cel_is_semver(text: str, normalize: bool, expected: bool) -> None:
    assert is_semver(text, normalize) is expected
    if not normalize:
        assert is_semver(text) is expected


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (S("v01.01", normalize=True), S("1.1.0"), True),  # equality_normalize
        (S("1.2.3"), S("1.2.3"), True),  # equality_reflexivity
        (S("1.2.3"), S("1.0.0"), False),  # inequality
        (S("1.0.0+a"), S("1.0.0+b"), True),  # Version.EQ ignores build metadata
        (S("1.0.0-a"), S("1.0.0-b"), False),
        (S("1.0", normalize=True), S("1.0.0"), True),
        (S("01.01.01", normalize=True), S("1.1.1"), True),
    ],
)
def test_cel_equality_is_version_eq(a: Semver, b: Semver, equal: bool) -> None:
    assert (a == b) is equal
    assert (b == a) is equal
    if equal:
        assert hash(a) == hash(b)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("1.0.0", "1.2.3", -1),  # semver_less / compare_less
        ("1.0.0", "1.0.0", 0),  # semver_less_false / semver_greater_false
        ("1.2.3", "1.0.0", 1),  # semver_greater / compare_greater
        ("1.2.3", "1.2.3", 0),  # compare_equal
        ("1.2.3", "2.0.0", -1),  # library doc examples
        ("1.2.3", "0.1.2", 1),
    ],
)
def test_cel_compare_to(a: str, b: str, expected: int) -> None:
    assert S(a).compare(S(b)) == expected


# --- DRA compile_test.go cases `version`, `version_v` ----------------------------------------


def test_dra_version_attribute_is_greater_than_0_0_1() -> None:
    assert S("1.0.0").compare(S("0.0.1")) == 1


def test_dra_version_v_case_normalizes_both_arguments() -> None:
    assert S("1.0.0").compare(S("v0.0.1", True)) == 1
    assert is_semver("v1.0.0", True)


# --- blang/semver v4 semver_test.go ---------------------------------------------------------

FORMAT_TABLE = [
    (Semver(1, 2, 3), "1.2.3"),
    (Semver(0, 0, 1), "0.0.1"),
    (Semver(0, 0, 1, ("alpha", "preview"), ("123", "456")), "0.0.1-alpha.preview+123.456"),
    (Semver(1, 2, 3, ("alpha", 1), ("123", "456")), "1.2.3-alpha.1+123.456"),
    (Semver(1, 2, 3, ("alpha", 1)), "1.2.3-alpha.1"),
    (Semver(1, 2, 3, (), ("123", "456")), "1.2.3+123.456"),
    # Prereleases and build metadata hyphens
    (Semver(1, 2, 3, ("alpha", "b-eta"), ("123", "b-uild")), "1.2.3-alpha.b-eta+123.b-uild"),
    (Semver(1, 2, 3, (), ("123", "b-uild")), "1.2.3+123.b-uild"),
    (Semver(1, 2, 3, ("alpha", "b-eta")), "1.2.3-alpha.b-eta"),
]


@pytest.mark.parametrize(("version", "text"), FORMAT_TABLE)
def test_str_and_parse_round_trip(version: Semver, text: str) -> None:
    parsed = S(text)

    assert str(version) == text
    assert str(parsed) == text
    assert parsed.compare(version) == 0
    assert (parsed.pre, parsed.build) == (version.pre, version.build)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("v1.2.3", Semver(1, 2, 3)),
        ("1.2.0-alpha", Semver(1, 2, 0, ("alpha",))),
        ("1.2.00", Semver(1, 2, 0)),
        ("01.02.03", Semver(1, 2, 3)),
        ("00.0.03", Semver(0, 0, 3)),
        ("000.0.03", Semver(0, 0, 3)),
        ("1.2", Semver(1, 2, 0)),
        ("1", Semver(1, 0, 0)),
    ],
)
def test_normalize_accepts_blangs_tolerant_formats(text: str, expected: Semver) -> None:
    assert S(text, normalize=True) == expected
    assert str(S(text, normalize=True)) == str(expected)


def test_normalize_keeps_whitespace_unlike_parse_tolerant() -> None:
    with pytest.raises(SemverError):
        S("\t1.2.3 ", normalize=True)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("1.0+abc", "short version cannot contain PreRelease/Build meta data"),
        ("1.0-rc.1", 'Invalid character(s) found in minor number "0-rc"'),
        ("1-rc", "short version cannot contain PreRelease/Build meta data"),
    ],
)
def test_normalize_rejects_short_versions_with_metadata(text: str, error: str) -> None:
    with pytest.raises(SemverError) as exc:
        S(text, normalize=True)

    assert str(exc.value) == error


def pre(*ids: int | str) -> Semver:
    return Semver(1, 0, 0, ids)


COMPARE_TABLE = [
    (Semver(1, 0, 0), Semver(1, 0, 0), 0),
    (Semver(2, 0, 0), Semver(1, 0, 0), 1),
    (Semver(0, 1, 0), Semver(0, 1, 0), 0),
    (Semver(0, 2, 0), Semver(0, 1, 0), 1),
    (Semver(0, 0, 1), Semver(0, 0, 1), 0),
    (Semver(0, 0, 2), Semver(0, 0, 1), 1),
    (Semver(1, 2, 3), Semver(1, 2, 3), 0),
    (Semver(2, 2, 4), Semver(1, 2, 4), 1),
    (Semver(1, 3, 3), Semver(1, 2, 3), 1),
    (Semver(1, 2, 4), Semver(1, 2, 3), 1),
    # Spec Examples #11
    (Semver(1, 0, 0), Semver(2, 0, 0), -1),
    (Semver(2, 0, 0), Semver(2, 1, 0), -1),
    (Semver(2, 1, 0), Semver(2, 1, 1), -1),
    # Spec Examples #9
    (Semver(1, 0, 0), pre("alpha"), 1),
    (pre("alpha"), pre("alpha", 1), -1),
    (pre("alpha", 1), pre("alpha", "beta"), -1),
    (pre("alpha", "beta"), pre("beta"), -1),
    (pre("beta"), pre("beta", 2), -1),
    (pre("beta", 2), pre("beta", 11), -1),
    (pre("beta", 11), pre("rc", 1), -1),
    (pre("rc", 1), Semver(1, 0, 0), -1),
    # Ignore Build metadata
    (Semver(1, 0, 0, (), ("1", "2", "3")), Semver(1, 0, 0), 0),
]


@pytest.mark.parametrize(("a", "b", "expected"), COMPARE_TABLE)
def test_compare_follows_semver_precedence_both_ways(a: Semver, b: Semver, expected: int) -> None:
    assert a.compare(b) == expected
    assert b.compare(a) == -expected
    assert (a == b) is (expected == 0)


def test_parsed_prerelease_identifiers_compare_numerically_and_before_alphanumerics() -> None:
    assert S("1.0.0-beta.2").compare(S("1.0.0-beta.11")) == -1
    assert S("1.0.0-1").compare(S("1.0.0-a")) == -1
    assert S("1.0.0-B").compare(S("1.0.0-a")) == -1  # ASCII order


WRONG_FORMAT = [
    ("", "Version string empty"),
    (".", "No Major.Minor.Patch elements found"),
    ("1.", "No Major.Minor.Patch elements found"),
    (".1", "No Major.Minor.Patch elements found"),
    ("a.b.c", 'Invalid character(s) found in major number "a"'),
    ("1.a.b", 'Invalid character(s) found in minor number "a"'),
    ("1.1.a", 'Invalid character(s) found in patch number "a"'),
    ("1.a.1", 'Invalid character(s) found in minor number "a"'),
    ("a.1.1", 'Invalid character(s) found in major number "a"'),
    ("..", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1..", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1.1.", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1..1", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1.1.+123", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1.1.-beta", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("-1.1.1", 'Invalid character(s) found in major number "-1"'),
    ("1.-1.1", 'Invalid character(s) found in minor number "-1"'),
    ("1.1.-1", 'strconv.ParseUint: parsing "": invalid syntax'),
    # giant numbers
    ("20000000000000000000.1.1", 'parsing "20000000000000000000": value out of range'),
    ("1.20000000000000000000.1", 'parsing "20000000000000000000": value out of range'),
    ("1.1.20000000000000000000", 'parsing "20000000000000000000": value out of range'),
    ("1.1.1-20000000000000000000", 'parsing "20000000000000000000": value out of range'),
    # Leading zeroes
    ("01.1.1", 'Major number must not contain leading zeroes "01"'),
    ("001.1.1", 'Major number must not contain leading zeroes "001"'),
    ("1.01.1", 'Minor number must not contain leading zeroes "01"'),
    ("1.001.1", 'Minor number must not contain leading zeroes "001"'),
    ("1.1.01", 'Patch number must not contain leading zeroes "01"'),
    ("1.1.001", 'Patch number must not contain leading zeroes "001"'),
    ("1.1.1-01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("1.1.1-001", 'Numeric PreRelease version must not contain leading zeroes "001"'),
    ("1.1.1-beta.01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("1.1.1-beta.001", 'Numeric PreRelease version must not contain leading zeroes "001"'),
    ("0.0.0-!", 'Invalid character(s) found in prerelease "!"'),
    ("0.0.0+!", 'Invalid character(s) found in build meta data "!"'),
    # empty prversion
    ("0.0.0-.alpha", "Prerelease is empty"),
    # empty build meta data
    ("0.0.0-alpha+", "Build meta data is empty"),
    ("0.0.0-alpha+test.", "Build meta data is empty"),
    # more than the upstream table
    ("1.0.0+a+b", 'Invalid character(s) found in build meta data "a+b"'),
    ("1.0.0\n", 'Invalid character(s) found in patch number "0\\n"'),
    ("1.0.0-é", 'Invalid character(s) found in prerelease "é"'),
    ("١.0.0", 'Invalid character(s) found in major number "١"'),
]


@pytest.mark.parametrize(("text", "error"), WRONG_FORMAT)
def test_parse_rejects_blangs_wrong_formats_with_its_messages(text: str, error: str) -> None:
    with pytest.raises(SemverError) as exc:
        S(text)

    assert error in str(exc.value)
    assert not is_semver(text)


def test_a_very_long_number_is_out_of_range_not_a_python_conversion_error() -> None:
    digits = "9" * 5000

    with pytest.raises(SemverError, match="value out of range"):
        S(f"{digits}.0.0")
    assert not is_semver(f"1.0.0-{digits}")


def test_numbers_may_use_the_whole_uint64_range() -> None:
    v = S("18446744073709551615.0.0-18446744073709551615")

    assert v.major() == 2**64 - 1
    assert v.pre == (2**64 - 1,)


def test_semvers_are_immutable_hashable_and_copyable() -> None:
    v = S("1.2.3-rc.1+build")

    with pytest.raises(AttributeError):
        v.pre = ()
    assert {v: 1}[S("1.2.3-rc.1")] == 1
    assert str(copy.deepcopy(v)) == "1.2.3-rc.1+build"
    assert str(pickle.loads(pickle.dumps(v))) == "1.2.3-rc.1+build"
    assert repr(v) == "Semver('1.2.3-rc.1+build')"
    assert v != "1.2.3-rc.1+build"
