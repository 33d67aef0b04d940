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
//!
//! The row scanner's simple path reads scores and labels before a field is cut out:
//! [`score_prefix`] and [`label_prefix`] read a plain decimal where it starts and say
//! where it ends (the same reading as [`plain_decimal`]'s, which is it on a whole
//! field), and take only what [`score`] and [`label`] would take, with the same value.

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
    match plain_decimal_prefix(text) {
        Some((x, length)) if length == text.len() => Some(x),
        _ => None,
    }
}

/// The longest plain decimal (`digits[.digits]`, as [`plain_decimal`] reads it) at
/// the start of `bytes`, and its length in bytes; `None` if there is none, or if it
/// is one `plain_decimal` would not read (over 19 bytes, digits over 2^53). The CSV
/// scanner reads fields with it straight from its buffer, up to the byte after (which
/// it checks is a delimiter), and [`plain_decimal`] is it on a whole field: one reading.
#[inline(always)]
pub fn plain_decimal_prefix(bytes: &[u8]) -> Option<(f64, usize)> {
    plain_parts(bytes).map(|(m, k, length)| (m as f64 / POW10[k], length))
}

/// The plain decimal at the start of `bytes` as [`plain_decimal_prefix`] reads it, in
/// parts: its digits as an integer m (at most 2^53), the number k of fraction digits
/// (at most 18; the value is m / 10^k) and its length.
#[inline(always)]
fn plain_parts(bytes: &[u8]) -> Option<(u64, usize, usize)> {
    let (m, whole_digits) = match bytes {
        // One whole digit, as scores have: without the 8-byte reading.
        [digit, b'.', ..] if digit.is_ascii_digit() => (u64::from(digit - b'0'), 1),
        _ => digit_run(bytes, 0, PLAIN_BYTES)?,
    };
    let (m, length, fraction_digits) = if bytes.get(whole_digits) == Some(&b'.') {
        let rest = &bytes[whole_digits + 1..];
        let limit = PLAIN_BYTES.checked_sub(whole_digits + 1)?;
        let (m, fraction_digits) = digit_run(rest, m, limit)?;
        (m, whole_digits + 1 + fraction_digits, fraction_digits)
    } else {
        (m, whole_digits, 0)
    };
    if whole_digits + fraction_digits == 0 || m > 1 << 53 {
        return None;
    }
    // k ≤ 18: the length is at most 19 and includes the point.
    Some((m, fraction_digits, length))
}

/// The most bytes of a plain decimal: its digits stay under 10^19 < 2^64.
const PLAIN_BYTES: usize = 19;

/// 10^0 to 10^18 as integers.
const POW10_U64: [u64; 19] = {
    let mut powers = [1u64; 19];
    let mut i = 1;
    while i < 19 {
        powers[i] = powers[i - 1] * 10;
        i += 1;
    }
    powers
};

/// Appends the run of ASCII digits at the start of `bytes` to `m` (as decimal digits),
/// returning the new `m` and the run's length; `None` if the run is longer than
/// `limit` (≤ 19 minus the digits already in `m`, so no overflow). Eight bytes at a
/// time: the run ends at the first byte flagged by [`non_digits`] (exact up to it).
#[inline(always)]
fn digit_run(bytes: &[u8], mut m: u64, limit: usize) -> Option<(u64, usize)> {
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let flags = non_digits(word);
        if flags == 0 {
            // Eight digits, and the run goes on. A branch rather than a select, so
            // that the next word's address does not wait on this word's digits.
            if i + 8 > limit {
                return None;
            }
            m = m * POW10_U64[8] + digit_values(word.wrapping_sub(0x3030_3030_3030_3030));
            i += 8;
            continue;
        }
        let run = (flags.trailing_zeros() / 8) as usize;
        if i + run > limit {
            return None;
        }
        if run > 0 {
            // The run's digit values moved to the word's top bytes: leading zeros below.
            let values = word.wrapping_sub(0x3030_3030_3030_3030) << (8 * (8 - run));
            m = m * POW10_U64[run] + digit_values(values);
        }
        return Some((m, i + run));
    }
    // Fewer than 8 bytes left.
    while let Some(&byte) = bytes.get(i) {
        if !byte.is_ascii_digit() {
            break;
        }
        if i + 1 > limit {
            return None;
        }
        m = m * 10 + u64::from(byte - b'0');
        i += 1;
    }
    Some((m, i))
}

/// The high bit of every byte of `word` that is not an ASCII digit, exact from the
/// lowest byte up to and including the first such byte (carries and borrows only move
/// up, and digit bytes make none), so its lowest set bit marks where a run of digits
/// ends: a byte below `0` borrows in the subtraction, one above `9` (below 0xba) sets
/// its high bit in the addition, and one of 0xba or more keeps it in the subtraction.
#[inline(always)]
fn non_digits(word: u64) -> u64 {
    (word.wrapping_add(0x4646_4646_4646_4646) | word.wrapping_sub(0x3030_3030_3030_3030))
        & 0x8080_8080_8080_8080
}

/// Whether the 8 bytes of `word` (little-endian) are all ASCII digits.
#[cfg(test)]
fn eight_digits(word: u64) -> bool {
    non_digits(word) == 0
}

/// The number the 8 ASCII digits of `word` (little-endian: the first digit lowest)
/// spell.
#[cfg(test)]
fn eight_digits_value(word: u64) -> u64 {
    digit_values(word - 0x3030_3030_3030_3030)
}

/// The number spelled by 8 digit values (0 to 9, one a byte, little-endian: the first
/// digit lowest), by three multiplications instead of eight (the SWAR reading
/// fast_float uses).
#[inline(always)]
fn digit_values(values: u64) -> u64 {
    const MASK: u64 = 0x0000_00ff_0000_00ff;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    // Pairs of digits: each byte pair now holds 10·first + second in its low byte.
    let v = values * 10 + (values >> 8);
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

/// A score at the start of `bytes`, spelled as a plain decimal, and its length: the
/// row scanner's reading of a field it has not cut out yet (the caller checks that a
/// delimiter follows). `None` leaves the verdict to [`score`] on the whole field, which
/// reads every score this reads as this does (the plain decimal path, then the same
/// range rule).
#[inline(always)]
pub fn score_prefix(bytes: &[u8]) -> Option<(f64, usize)> {
    let (m, k, length) = plain_parts(bytes)?;
    // The library's rule, in [0, 1], decided on the integers (off the division's
    // latency): m / 10^k ≥ 0, and m ≤ 10^k exactly when m / 10^k ≤ 1 before rounding,
    // so also after it. The few m just above 10^k whose quotient rounds to 1.0 are left
    // to `score`, which accepts them.
    (m <= POW10_U64[k]).then(|| (m as f64 / POW10[k], length))
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

/// A label at the start of `bytes` and its length, as [`score_prefix`] reads a score:
/// `0` or `1`, or a plain decimal equal to one of them (`1.0`), whose value is
/// `str::parse`'s as [`slow_label`] reads it.
#[inline(always)]
pub fn label_prefix(bytes: &[u8]) -> Option<(u8, usize)> {
    match bytes {
        [digit @ (b'0' | b'1'), next, ..] if !next.is_ascii_digit() && *next != b'.' => {
            Some((digit - b'0', 1))
        }
        _ => match plain_decimal_prefix(bytes)? {
            (x, length) if x == 0.0 || x == 1.0 => Some((u8::from(x == 1.0), length)),
            _ => None,
        },
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

/// A row's weight: a finite number ≥ 0 (frequency weights, docs/estimators.md, Weights).
#[inline]
pub fn weight(field: &[u8], column: &str) -> Result<f64, String> {
    match fast(field) {
        Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => slow_weight(field, column),
    }
}

#[cold]
fn slow_weight(field: &[u8], column: &str) -> Result<f64, String> {
    let text = text(field);
    let quoted = excerpt(&text);
    let x: f64 = text
        .parse()
        .map_err(|_| format!("cannot parse `{quoted}` in column `{column}` as a weight"))?;
    weight_problem(x, &format!("`{column}`")).map_or(Ok(x), Err)
}

/// Why `x` is not a weight (`None` if it is one): NaN, infinite or negative, the weight
/// called `name` (a quoted column, or `the weight`).
pub fn weight_problem(x: f64, name: &str) -> Option<String> {
    let what = if x.is_nan() {
        format!("{name} is NaN")
    } else if x.is_infinite() {
        format!("{name} {x} is infinite")
    } else if x < 0.0 {
        format!("{name} {x} is negative")
    } else {
        return None;
    };
    Some(format!("{what}; weights must be finite numbers ≥ 0"))
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

    /// The naive reading of a plain decimal at the start of `bytes`: the longest
    /// `digits[.digits]` prefix, and `str::parse`'s value of it.
    fn naive_prefix(bytes: &[u8]) -> (usize, Option<f64>) {
        let digits = |from: usize| {
            bytes[from..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count()
        };
        let whole = digits(0);
        let length = if bytes.get(whole) == Some(&b'.') {
            whole + 1 + digits(whole + 1)
        } else {
            whole
        };
        let text = std::str::from_utf8(&bytes[..length]).unwrap();
        (length, text.parse().ok())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        /// The prefix reader, on a decimal followed by any bytes (the bytes of the row
        /// after a field): its value is `str::parse`'s of the longest plain prefix and
        /// its length that prefix's; it reads every prefix of at most 19 bytes with at
        /// most 15 digits, and none over 19 bytes.
        #[test]
        fn prefixes_are_read_as_std_reads_them(
            number in "[0-9]{0,21}(\\.[0-9]{0,21})?",
            tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12),
        ) {
            let mut bytes = number.into_bytes();
            bytes.extend_from_slice(&tail);
            let (length, std) = naive_prefix(&bytes);
            let digits = bytes[..length].iter().filter(|b| b.is_ascii_digit()).count();
            match plain_decimal_prefix(&bytes) {
                Some((x, got)) => {
                    proptest::prop_assert_eq!(got, length, "{:?}", bytes);
                    proptest::prop_assert!(length <= 19, "{:?}", bytes);
                    proptest::prop_assert_eq!(Some(x.to_bits()), std.map(f64::to_bits), "{:?}", bytes);
                }
                None => proptest::prop_assert!(
                    length > 19 || digits > 15 || digits == 0,
                    "{:?} not read", bytes
                ),
            }
            // On the whole field it is `plain_decimal`.
            let whole = plain_decimal(&bytes);
            let expected = (length == bytes.len()).then_some(()).and(plain_decimal_prefix(&bytes));
            proptest::prop_assert_eq!(whole.map(f64::to_bits), expected.map(|(x, _)| x.to_bits()));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        /// What the row scanner's readers take from a field followed by a delimiter,
        /// the field parsers give for that field alone: the same score bit for bit, the
        /// same label; and they take every plain score of at most 15 digits in [0, 1]
        /// and every `0` and `1`.
        #[test]
        fn prefix_readers_agree_with_the_field_parsers(
            field in "[0-9]{0,3}(\\.[0-9]{0,20})?|[01]\\.[0-9]{0,14}|1\\.0{0,19}1?",
            delimiter in proptest::prelude::prop_oneof![
                proptest::prelude::Just(b','), proptest::prelude::Just(b'\n'),
                proptest::prelude::Just(b'\r'), proptest::prelude::any::<u8>(),
            ],
        ) {
            let mut bytes = field.clone().into_bytes();
            bytes.push(delimiter);
            bytes.extend_from_slice(b"0.5,1\n");
            let digits = field.bytes().filter(u8::is_ascii_digit).count();
            if let Some((x, length)) = score_prefix(&bytes) {
                if length == field.len() {
                    proptest::prop_assert_eq!(score(field.as_bytes(), "c").map(f64::to_bits), Ok(x.to_bits()));
                }
            } else if !delimiter.is_ascii_digit() && delimiter != b'.' && digits <= 15 && digits > 0 {
                // Not read: then out of range, or not a plain decimal.
                let std: Result<f64, _> = field.parse();
                proptest::prop_assert!(std.map_or(true, |x| x > 1.0), "{:?} not read", field);
            }
            if let Some((y, length)) = label_prefix(&bytes) {
                if length == field.len() {
                    proptest::prop_assert_eq!(label(field.as_bytes(), "y"), Ok(y));
                }
            } else if (field == "0" || field == "1") && !delimiter.is_ascii_digit() && delimiter != b'.' {
                proptest::prop_assert!(false, "{:?} not read as a label", field);
            }
        }
    }

    #[test]
    fn non_digits_flag_the_first_non_digit() {
        // Every byte value at every position after a run of digits.
        for byte in 0..=255u8 {
            for run in 0..8 {
                let mut bytes = *b"98765432";
                bytes[run] = byte;
                let flags = non_digits(u64::from_le_bytes(bytes));
                let first = if flags == 0 {
                    8
                } else {
                    flags.trailing_zeros() as usize / 8
                };
                let expected = if byte.is_ascii_digit() { 8 } else { run };
                assert_eq!(first, expected, "{byte:#x} at {run}");
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
