//! Parsing one CSV field (bytes, untrimmed) into a score, a 0/1 label, a class value or a
//! class id, and the wording of every refusal.
//!
//! Each parser has a fast path for the common spelling (ASCII whitespace trimmed by
//! hand, `fast_float2` for numbers, `0`/`1` compared as bytes) and falls back, only when
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

/// `fast_float2`'s reading of a field trimmed of ASCII whitespace, if it has one.
#[inline(always)]
fn fast(field: &[u8]) -> Option<f64> {
    fast_float2::parse::<f64, _>(field.trim_ascii()).ok()
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
