//! Parsing one CSV field (bytes, untrimmed) into a score, a 0/1 label, a class value or a
//! class id, and the wording of every refusal.
//!
//! Each parser has a fast path for the common spelling (ASCII whitespace trimmed by
//! hand, plain decimals read exactly by [`plain_decimal`], other numbers by
//! `fast_float2`, `0`/`1` compared as bytes) and falls back, only when
//! that fails, to the slow path that decides: Unicode whitespace trimmed and the
//! standard library's parser, which accept exactly what the reader always accepted.
//! So the fast path changes speed, never verdicts (a unit test compares the two
//! parsers on every spelling we could think of).

use std::borrow::Cow;

use tce::PushError;

use super::excerpt;

/// The field as text, trimmed as the slow path trims it (Unicode whitespace).
fn text(field: &[u8]) -> Cow<'_, str> {
    match String::from_utf8_lossy(field) {
        Cow::Borrowed(s) => Cow::Borrowed(s.trim()),
        Cow::Owned(s) => Cow::Owned(s.trim().to_owned()),
    }
}

/// The reading of a field trimmed of ASCII whitespace: a plain decimal's own, else
/// `fast_float2`'s, if it has one.
#[inline(always)]
fn fast(field: &[u8]) -> Option<f64> {
    let trimmed = field.trim_ascii();
    match plain_decimal(trimmed) {
        Some(x) => Some(x),
        None => general(trimmed),
    }
}

/// `fast_float2`'s reading of a trimmed field (out of line: most fields are plain).
#[inline(never)]
fn general(trimmed: &[u8]) -> Option<f64> {
    fast_float2::parse::<f64, _>(trimmed).ok()
}

/// 10^0 to 10^18, each exact in f64 (every power up to 10^22 is).
const POW10: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18,
];

/// The value of `digits[.digits]` (either part may be empty, not both) of at most 19
/// bytes whose digits, as an integer m, are at most 2^53; else `None`. Then m and 10^k
/// (k fraction digits, k ≤ 18) are both exact in f64, and the one division m / 10^k is
/// correctly rounded: the value `str::parse` returns, bit for bit (Clinger's fast
/// path). Scores written by `%.13f` and the like, most of a CSV, take this path: it
/// skips `fast_float2`'s general machinery (sign, exponent, long mantissas).
#[inline(always)]
fn plain_decimal(text: &[u8]) -> Option<f64> {
    let n = text.len();
    // At most 19 digits: m < 10^19 < 2^64, no overflow below.
    if n > 19 {
        return None;
    }
    let mut m = 0u64;
    let mut i = 0;
    while i < n && text[i].is_ascii_digit() {
        m = m * 10 + u64::from(text[i] - b'0');
        i += 1;
    }
    let whole_digits = i;
    let mut fraction_digits = 0;
    if i < n {
        if text[i] != b'.' {
            return None;
        }
        i += 1;
        let start = i;
        while n - i >= 8 {
            let word = u64::from_le_bytes(text[i..i + 8].try_into().ok()?);
            if !eight_digits(word) {
                break;
            }
            m = m * 100_000_000 + eight_digits_value(word);
            i += 8;
        }
        while i < n && text[i].is_ascii_digit() {
            m = m * 10 + u64::from(text[i] - b'0');
            i += 1;
        }
        if i != n {
            return None;
        }
        fraction_digits = n - start;
    }
    if whole_digits + fraction_digits == 0 || m > 1 << 53 {
        return None;
    }
    Some(m as f64 / POW10[fraction_digits])
}

/// Whether the 8 bytes of `word` (little-endian) are all ASCII digits.
#[inline(always)]
fn eight_digits(word: u64) -> bool {
    // Each byte 0x30..=0x3f, and still 0x3_ after adding 6 (so at most 0x39); a byte
    // of 0x3_ plus 6 carries into no other.
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    const THIRTY: u64 = 0x3030_3030_3030_3030;
    word & HIGH == THIRTY && word.wrapping_add(0x0606_0606_0606_0606) & HIGH == THIRTY
}

/// The number the 8 ASCII digits of `word` (little-endian: the first digit lowest)
/// spell, by three multiplications instead of eight (the SWAR reading fast_float uses).
#[inline(always)]
fn eight_digits_value(word: u64) -> u64 {
    const MASK: u64 = 0x0000_00ff_0000_00ff;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let mut v = word - 0x3030_3030_3030_3030;
    // Pairs of digits: each byte pair now holds 10·first + second in its low byte.
    v = v * 10 + (v >> 8);
    let v1 = (v & MASK).wrapping_mul(MUL1);
    let v2 = ((v >> 16) & MASK).wrapping_mul(MUL2);
    u64::from((v1.wrapping_add(v2) >> 32) as u32)
}

/// Whether a field is empty once trimmed (a blank line's only field).
#[inline(always)]
pub fn is_blank(field: &[u8]) -> bool {
    let ascii = field.trim_ascii();
    ascii.is_empty() || (!ascii.is_ascii() && text(ascii).is_empty())
}

/// A score: a finite number in [0, 1], by the library's own rule.
#[inline(always)]
pub fn score(field: &[u8], column: &str) -> Result<f64, String> {
    match fast(field) {
        Some(x) if tce::sample::check(x, 0, 0).is_ok() => Ok(x),
        _ => slow_score(field, column),
    }
}

#[cold]
fn slow_score(field: &[u8], column: &str) -> Result<f64, String> {
    let text = text(field);
    let quoted = excerpt(&text);
    let score: f64 = text
        .parse()
        .map_err(|_| format!("cannot parse `{quoted}` in column `{column}` as a number"))?;
    // The library's own rule decides; this only words its verdict for a file, in the
    // library's terms (NaN and ±inf are non-finite, finite numbers off [0, 1] out of
    // range).
    match tce::sample::check(score, 0, 0) {
        Ok(()) => Ok(score),
        Err(PushError::NonFiniteScore { .. }) if score.is_nan() => Err(format!(
            "`{column}` is NaN, a non-finite score; scores must be finite numbers in [0, 1]"
        )),
        Err(PushError::NonFiniteScore { .. }) => Err(format!(
            "`{column}` {quoted} is a non-finite score; scores must be finite numbers in [0, 1]"
        )),
        Err(_) => Err(format!(
            "`{column}` {quoted} is out of range; scores must be in [0, 1]"
        )),
    }
}

/// A label 0 or 1, also as written by tools that store labels as floats (`1.0`).
#[inline(always)]
pub fn label(field: &[u8], column: &str) -> Result<u8, String> {
    match field.trim_ascii() {
        b"0" => Ok(0),
        b"1" => Ok(1),
        _ => slow_label(field, column),
    }
}

#[cold]
fn slow_label(field: &[u8], column: &str) -> Result<u8, String> {
    let text = text(field);
    let quoted = excerpt(&text);
    match text.parse::<f64>() {
        Ok(x) if x == 0.0 || x == 1.0 => Ok(u8::from(x == 1.0)),
        Ok(_) => Err(format!(
            "`{column}` {quoted} is not a label; labels must be 0 or 1"
        )),
        Err(_) => Err(format!(
            "cannot parse `{quoted}` in column `{column}` as a label 0 or 1"
        )),
    }
}

/// A class probability or logit: any finite number (the range and the row's sum are
/// the reduction's to check).
#[inline]
pub fn value(field: &[u8], column: &str) -> Result<f64, String> {
    match fast(field) {
        Some(x) if x.is_finite() => Ok(x),
        _ => slow_value(field, column),
    }
}

#[cold]
fn slow_value(field: &[u8], column: &str) -> Result<f64, String> {
    let text = text(field);
    let quoted = excerpt(&text);
    let x: f64 = text
        .parse()
        .map_err(|_| format!("cannot parse `{quoted}` in column `{column}` as a number"))?;
    non_finite(x, column, &quoted).map(|()| x)
}

/// The refusal of a NaN or infinite class value, else `Ok`.
pub fn non_finite(x: f64, column: &str, shown: &str) -> Result<(), String> {
    if x.is_nan() {
        Err(format!(
            "`{column}` is NaN, a non-finite value; class probabilities and logits must be finite"
        ))
    } else if x.is_infinite() {
        Err(format!(
            "`{column}` {shown} is a non-finite value; class probabilities and logits must be finite"
        ))
    } else {
        Ok(())
    }
}

/// A true class id: a whole number in 0..classes (`2.0` is read as 2).
#[inline]
pub fn class_id(field: &[u8], column: &str, classes: usize) -> Result<usize, String> {
    let digits = field.trim_ascii();
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        let id = digits
            .iter()
            .fold(0usize, |id, &d| id * 10 + usize::from(d - b'0'));
        if id < classes {
            return Ok(id);
        }
    }
    slow_class_id(field, column, classes)
}

#[cold]
fn slow_class_id(field: &[u8], column: &str, classes: usize) -> Result<usize, String> {
    let text = text(field);
    let quoted = excerpt(&text);
    let x: f64 = text
        .parse()
        .map_err(|_| format!("cannot parse `{quoted}` in column `{column}` as a class id"))?;
    // `x < classes` in f64 is exact for every class count a header can hold.
    if x.fract() == 0.0 && x >= 0.0 && x < classes as f64 {
        Ok(x as usize)
    } else {
        Err(out_of_classes(&quoted, column, classes))
    }
}

/// The refusal of a label that is not a class id.
pub fn out_of_classes(shown: &str, column: &str, classes: usize) -> String {
    format!(
        "`{column}` {shown} is not a class id: labels must be whole numbers in 0..{classes} (one per class, {classes} classes)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spelling: the fast parser agrees with the standard library's, bit for bit,
    /// or leaves the verdict to it.
    #[test]
    fn fast_path_agrees_with_std() {
        let spellings = [
            "0",
            "1",
            "0.5",
            "1.0",
            "1.",
            ".5",
            "+.5",
            "-0",
            "-0.0",
            "+0",
            "0e0",
            "1e-3",
            "1E-3",
            "5e-324",
            "2.5e-308",
            "1e308",
            "1e309",
            "-1e309",
            "0.1234567890123456789",
            "00.25",
            "inf",
            "-inf",
            "+inf",
            "Infinity",
            "+Infinity",
            "-INFINITY",
            "infinit",
            "nan",
            "NaN",
            "-nan",
            "+NAN",
            "",
            ".",
            "e5",
            "1e",
            "1e+",
            "0x10",
            "1_0",
            "1,5",
            "--1",
            "+-1",
            " 0.5",
            "0.5 ",
            "\t0.5",
            "1.5",
            "-0.25",
            "0.999999999999999999999",
            "1.0000000000000001",
            "9007199254740993",
            "0.30000000000000004",
        ];
        for s in spellings {
            let std: Option<f64> = s.trim().parse().ok();
            if let Ok(fast) = fast_float2::parse::<f64, _>(s.trim().as_bytes()) {
                let std = std.unwrap_or_else(|| panic!("fast-float accepts {s:?}, std does not"));
                assert!(
                    fast.to_bits() == std.to_bits() || (fast.is_nan() && std.is_nan()),
                    "{s:?}: {fast} vs {std}"
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]

        /// Plain decimals of every shape (leading zeros, no whole part, no fraction, up
        /// to 19 bytes and past it) read as `str::parse` reads them, bit for bit.
        #[test]
        fn plain_decimals_are_read_as_std_reads_them(
            text in "[0-9]{0,12}(\\.[0-9]{0,12})?",
        ) {
            let std: Option<f64> = text.parse().ok();
            if let Some(x) = plain_decimal(text.as_bytes()) {
                proptest::prop_assert_eq!(Some(x.to_bits()), std.map(f64::to_bits), "{}", text);
            }
            proptest::prop_assert_eq!(fast(text.as_bytes()).map(f64::to_bits), std.map(f64::to_bits));
        }

        /// Scores as programs write them: `{:.k}` of a number in [0, 1].
        #[test]
        fn written_scores_are_read_as_std_reads_them(x in 0.0..=1.0f64, k in 0..20usize) {
            let text = format!("{x:.k$}");
            let std: f64 = text.parse().unwrap();
            proptest::prop_assert_eq!(fast(text.as_bytes()).map(f64::to_bits), Some(std.to_bits()), "{}", text);
            // Up to 15 decimals the digits stay under 2^53: the plain path reads them.
            if (1..=15).contains(&k) {
                proptest::prop_assert!(plain_decimal(text.as_bytes()).is_some(), "{}", text);
            }
        }
    }

    #[test]
    fn eight_digits_are_checked_and_read() {
        let word = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap());
        assert!(eight_digits(word(b"01234567")));
        assert_eq!(eight_digits_value(word(b"01234567")), 1_234_567);
        assert_eq!(eight_digits_value(word(b"99999999")), 99_999_999);
        for bad in [
            b"0123456/",
            b"0123456:",
            b"/1234567",
            b"0123 567",
            b"012345\xff7",
        ] {
            assert!(!eight_digits(word(&bad[..8])), "{bad:?}");
        }
    }

    #[test]
    fn random_decimals_parse_alike() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let x = f64::from_bits(state >> 2);
            for s in [
                format!("{x}"),
                format!("{x:e}"),
                format!("{:.13}", x.fract()),
            ] {
                let std: f64 = s.parse().unwrap();
                assert_eq!(
                    fast(s.as_bytes()).map(f64::to_bits),
                    Some(std.to_bits()),
                    "{s}"
                );
            }
        }
    }

    #[test]
    fn verdicts() {
        assert_eq!(score(b" 0.25\r", "c"), Ok(0.25));
        assert_eq!(score("\u{a0}0.25".as_bytes(), "c"), Ok(0.25));
        assert!(score(b"1.5", "c").unwrap_err().contains("out of range"));
        assert!(score(b"nan", "c").unwrap_err().contains("is NaN"));
        assert_eq!(label(b"1.0", "y"), Ok(1));
        assert_eq!(label(b" 0 ", "y"), Ok(0));
        assert!(label(b"2", "y").unwrap_err().contains("not a label"));
        assert_eq!(class_id(b"2", "y", 3), Ok(2));
        assert_eq!(class_id(b"2.0", "y", 3), Ok(2));
        for bad in ["3", "-1", "1.5", "99999999999999999999999"] {
            let e = class_id(bad.as_bytes(), "y", 3).unwrap_err();
            assert!(e.contains("is not a class id") && e.contains("0..3"), "{e}");
        }
        assert!(class_id(b"x", "y", 3).unwrap_err().contains("cannot parse"));
        assert_eq!(value(b"-3.5", "p"), Ok(-3.5));
        assert!(value(b"inf", "p")
            .unwrap_err()
            .contains("inf is a non-finite value"));
        assert!(value(b"NaN", "p").unwrap_err().contains("is NaN"));
    }
}
