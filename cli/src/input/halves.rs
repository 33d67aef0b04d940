//! A (confidence, correct) CSV file read on two threads: the first reads the header and
//! the rows up to a line end near the middle, the second the rows after it, at the same
//! time; the two halves' samples are joined in order.
//!
//! The cut must fall between records. A line end is one unless it lies inside a quoted
//! field, and a field can only be quoted after a `"`: so the cut holds if the first
//! half has no `"`. The first thread's fast scanner checks every line it reads for one
//! anyway ([`super::csv_rows`]); at the first `"` it hands over to the `csv` parser,
//! which then reads on to the end of the file past the cut (the [`Boundary`] is lifted),
//! and the second thread's rows are thrown away (it stops as soon as it sees the lift).
//! So every file reads as it does on one thread: the same samples in the same order,
//! and the same error (the first bad row in the file: an error in the first half wins;
//! one in the second has the first half's lines added to its line number).
//!
//! Each thread reads its part with positioned reads of its own (`pread`) in blocks, so
//! memory stays as on one thread: the parsed columns and a few blocks of input per
//! thread (the two halves' columns are joined by one copy of the second's).
//!
//! Both threads read into columns with room for about as many rows as the file's first
//! 64 KiB promise ([`super::rows_estimate`]), zero-filled storage that is faulted in by
//! huge pages where the system gives them (`tce::storage::zeroed`). Files under
//! [`MIN_SPLIT_BYTES`], stdin and non-Unix systems are read on one thread.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::csv_rows::{self, BinaryColumns, Rows};
use super::{ColumnNames, InputError, Location, Samples};

/// The smallest file read on two threads: below it a thread costs more than it saves
/// (a 1 MiB file parses in about 3 ms).
pub const MIN_SPLIT_BYTES: u64 = 1 << 20;

/// How far past the middle the cut is looked for: no line end there (a line of over
/// 64 KiB) and the file is read on one thread.
const CUT_SEARCH_BYTES: usize = 1 << 16;

/// Where the first thread's reads end: at the cut, and, once lifted, at the end of the
/// file. Lifting also tells the second thread to stop: its rows are not wanted.
#[derive(Debug)]
pub struct Boundary {
    /// The cut, or `u64::MAX`.
    end: AtomicU64,
    lifted: AtomicBool,
}

impl Boundary {
    fn new(cut: u64) -> Self {
        Boundary {
            end: AtomicU64::new(cut),
            lifted: AtomicBool::new(false),
        }
    }

    /// The first thread reads on past the cut (the parser took over), or is done.
    pub fn lift(&self) {
        self.end.store(u64::MAX, Ordering::Relaxed);
        self.lifted.store(true, Ordering::Relaxed);
    }

    pub fn lifted(&self) -> bool {
        self.lifted.load(Ordering::Relaxed)
    }
}

/// Reads `path`'s rows, on two threads if it is a large regular file.
pub fn read_file(file: File, names: ColumnNames<'_>) -> Result<Samples, InputError> {
    #[cfg(unix)]
    {
        let len = file
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        if let Some(len) = len.filter(|&len| len >= MIN_SPLIT_BYTES) {
            // (The estimate moves the file's cursor; the halves read by position.)
            let rows = super::rows_estimate(&file, len);
            return split::read(&file, len, names, rows);
        }
    }
    csv_rows::read_binary(file, names, false).map(|t| t.samples)
}

#[cfg(test)]
thread_local! {
    /// How many files this thread has read in two halves (that the tests take the path).
    static HALVES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(unix)]
mod split {
    use std::fs::File;
    use std::io::{self, Read};
    use std::os::unix::fs::FileExt;
    use std::sync::Arc;

    use super::*;

    /// A part of a file read by positioned reads, so that two threads can read one
    /// file at once: from `pos` up to the boundary's end, if it has one, else to the
    /// end of the file.
    struct Part<'f> {
        file: &'f File,
        pos: u64,
        boundary: Option<Arc<Boundary>>,
    }

    impl Read for Part<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let mut want = buf.len();
            if let Some(boundary) = &self.boundary {
                let left = boundary
                    .end
                    .load(Ordering::Relaxed)
                    .saturating_sub(self.pos);
                want = want.min(usize::try_from(left).unwrap_or(usize::MAX));
            }
            if want == 0 {
                return Ok(0);
            }
            let n = self.file.read_at(&mut buf[..want], self.pos)?;
            self.pos += n as u64;
            Ok(n)
        }
    }

    /// The byte after the first line end at or after `from`, if it is within
    /// [`CUT_SEARCH_BYTES`] and before the end of the file.
    fn find_cut(file: &File, from: u64, len: u64) -> Option<u64> {
        let mut block = vec![0; CUT_SEARCH_BYTES];
        let mut filled = 0;
        while filled < block.len() {
            match file.read_at(&mut block[filled..], from + filled as u64) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return None,
            }
        }
        let cut = from + memchr::memchr(b'\n', &block[..filled])? as u64 + 1;
        (cut < len).then_some(cut)
    }

    /// Adds `lines` to the line of `error`, made by rows numbered from 1 at the cut.
    fn shifted(mut error: InputError, lines: u64) -> InputError {
        if let Some(Location::Line(line)) = error.location {
            error.location = Some(Location::Line(line + lines));
        }
        error
    }

    /// Reads `file` (`len` bytes) in two halves, each into columns with room for about
    /// `rows` rows (the first's takes the second's after it).
    pub(super) fn read(
        file: &File,
        len: u64,
        names: ColumnNames<'_>,
        rows: Option<usize>,
    ) -> Result<Samples, InputError> {
        let samples = || rows.map_or_else(Samples::default, Samples::reserving);
        let Some(cut) = find_cut(file, len / 2, len) else {
            return one_thread(file, names, samples());
        };
        let boundary = Arc::new(Boundary::new(cut));
        let first = Part {
            file,
            pos: 0,
            boundary: Some(Arc::clone(&boundary)),
        };
        let mut rows = match Rows::with_boundary(
            first,
            || csv_rows::binary_expected(names),
            Some(Arc::clone(&boundary)),
        ) {
            Ok(rows) => rows,
            // No header before the cut (blank lines up to it), or a bad one: reading on
            // one thread words the verdict.
            Err(_) => return one_thread(file, names, samples()),
        };
        let mut first_samples = samples();
        let columns = BinaryColumns::find(&rows, names, &mut first_samples)?;
        if boundary.lifted() {
            // A quoted header: the parser reads the whole file.
            csv_rows::read_binary_rows(&mut rows, &columns, &mut first_samples, None, || false)?;
            return finish(first_samples, &rows);
        }
        let header = rows.header.clone();
        let (first, second) = std::thread::scope(|scope| {
            let second = scope.spawn(|| {
                let part = Part {
                    file,
                    pos: cut,
                    boundary: None,
                };
                let mut rows = Rows::continuing(part, header);
                let mut samples = samples();
                csv_rows::read_binary_rows(&mut rows, &columns, &mut samples, None, || {
                    boundary.lifted()
                })
                .map(|()| samples)
            });
            let first =
                csv_rows::read_binary_rows(&mut rows, &columns, &mut first_samples, None, || false);
            // The second thread need not go on if its rows are not wanted: an error
            // here, or the parser read on past the cut (then lifted already).
            let reached_cut = first.is_ok() && !boundary.lifted();
            if !reached_cut {
                boundary.lift();
            }
            let second = second
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (first.map(|()| reached_cut), second)
        });
        let reached_cut = first?;
        #[cfg(test)]
        HALVES.with(|h| h.set(h.get() + usize::from(reached_cut)));
        if reached_cut {
            let lines_before = rows
                .fast_line()
                .expect("the fast scanner reads up to the cut")
                - 1;
            let second = second.map_err(|e| shifted(e, lines_before))?;
            first_samples.scores.extend_from_slice(&second.scores);
            first_samples.labels.extend_from_slice(&second.labels);
        }
        finish(first_samples, &rows)
    }

    /// The whole file on this thread, into `samples`.
    fn one_thread(
        file: &File,
        names: ColumnNames<'_>,
        samples: Samples,
    ) -> Result<Samples, InputError> {
        let whole = Part {
            file,
            pos: 0,
            boundary: None,
        };
        csv_rows::read_binary_into(whole, names, false, samples).map(|t| t.samples)
    }

    fn finish<R: Read>(samples: Samples, rows: &Rows<R>) -> Result<Samples, InputError> {
        if samples.scores.is_empty() {
            return Err(csv_rows::no_rows(rows.header_line));
        }
        Ok(samples)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::Write;
    use std::sync::atomic::AtomicUsize;

    use proptest::prelude::*;

    use super::*;

    const NAMES: ColumnNames<'static> = ColumnNames {
        score: "confidence",
        label: "correct",
    };

    /// `bytes` in a scratch file of their own.
    fn file_of(bytes: &[u8]) -> (File, std::path::PathBuf) {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "tce-halves-{}-{}.csv",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(bytes))
            .unwrap();
        (File::open(&path).unwrap(), path)
    }

    /// What reading gives, in a comparable form: the samples' bits, or the error's text
    /// and exit code.
    type Outcome = Result<(Vec<u64>, Vec<u8>), String>;

    fn outcome(result: Result<Samples, InputError>) -> Outcome {
        result
            .map(|s| (s.scores.iter().map(|x| x.to_bits()).collect(), s.labels))
            .map_err(|e| format!("{e} (exit {})", e.exit_code()))
    }

    /// How many files this thread read in two halves so far.
    fn halves() -> usize {
        HALVES.with(|h| h.get())
    }

    /// `bytes` read in two halves (cut in the middle, whatever their size) and on one
    /// thread from memory. The halves read the same into columns with room for too few
    /// rows, for about as many as there are, and for none reserved.
    fn both(bytes: &[u8]) -> (Outcome, Outcome) {
        let (file, path) = file_of(bytes);
        let lines = memchr::memchr_iter(b'\n', bytes).count();
        let read = |rows| outcome(split::read(&file, bytes.len() as u64, NAMES, rows));
        let halves = read(None);
        let counted = HALVES.with(|h| h.get());
        assert_eq!(read(Some(3)), halves, "room for too few rows");
        assert_eq!(read(Some(lines + 64)), halves, "room for them all");
        // (The tests count files read in halves, not reads.)
        HALVES.with(|h| h.set(counted));
        let _ = std::fs::remove_file(path);
        let whole = outcome(csv_rows::read_binary(bytes, NAMES, false).map(|t| t.samples));
        (halves, whole)
    }

    fn rows(n: usize, eol: &str) -> String {
        let mut text = format!("confidence,correct,note{eol}");
        for i in 0..n {
            text += &format!("0.{:04},{},r{i}{eol}", (i * 7919) % 10_000, i % 2);
        }
        text
    }

    #[test]
    fn an_error_in_the_second_half_has_its_line_in_the_file() {
        let mut text = rows(1000, "\n");
        text += "0.5,2,bad\n0.5,1,x\n";
        let before = halves();
        let (halves_read, whole) = both(text.as_bytes());
        assert_eq!(halves(), before + 1, "read in two halves");
        let halves = halves_read;
        assert_eq!(halves, whole);
        assert_eq!(
            halves.unwrap_err(),
            "line 1002: `correct` 2 is not a label; labels must be 0 or 1 (exit 2)"
        );
        // One bad row in each half: the first half's wins.
        let mut text = rows(1000, "\n");
        text.insert_str(text.find("\n0.").unwrap() + 1, "1.5,1,early\n");
        text += "x,1,late\n";
        let (halves, whole) = both(text.as_bytes());
        assert_eq!(halves, whole);
        assert!(halves
            .unwrap_err()
            .starts_with("line 2: `confidence` 1.5 is out of range"));
    }

    #[test]
    fn quoted_fields_over_the_middle_read_on_one_parser() {
        // The only quoted field holds the middle of the file, newlines and all: the cut
        // falls inside it, the first half's parser reads on past it.
        let head = rows(500, "\n");
        let tail = rows(500, "\n");
        let tail = tail.split_once('\n').unwrap().1;
        let note: String = (0..200)
            .map(|i| format!("line {i}, of the note\n"))
            .collect();
        let text = format!("{head}0.5,1,\"{note}\"\n{tail}");
        let middle = text.len() / 2;
        let (open, close) = (text.find('"').unwrap(), text.rfind('"').unwrap());
        assert!(open < middle && middle < close);
        let before = halves();
        let (halves_read, whole) = both(text.as_bytes());
        assert_eq!(halves(), before, "read on the first half's parser");
        let halves = halves_read;
        assert_eq!(halves, whole);
        assert_eq!(halves.unwrap().0.len(), 1001);
        // And an error after it keeps its line.
        let bad = format!("{text}0.5,5,x\n");
        let (halves, whole) = both(bad.as_bytes());
        assert_eq!(halves, whole);
        let lines = bad.matches('\n').count();
        assert!(halves.unwrap_err().starts_with(&format!("line {lines}: ")));
    }

    #[test]
    fn crlf_headers_and_no_final_line_end() {
        for eol in ["\n", "\r\n"] {
            let text = rows(1000, eol);
            let before = halves();
            let (halves_read, whole) = both(text.as_bytes());
            assert_eq!(halves(), before + 1, "read in two halves");
            let halves = halves_read;
            assert_eq!(halves, whole);
            assert_eq!(halves.unwrap().0.len(), 1000);
            let cut = text.trim_end();
            let (halves, whole) = both(cut.as_bytes());
            assert_eq!(halves, whole);
            assert_eq!(halves.unwrap().0.len(), 1000);
        }
        // Blank lines up to past the middle, then the header: read on one thread.
        let text = format!("{}{}", "\n".repeat(5000), rows(10, "\n"));
        let (halves, whole) = both(text.as_bytes());
        assert_eq!(halves, whole);
        assert_eq!(halves.unwrap().0.len(), 10);
        // A header and blank lines only.
        let text = format!("confidence,correct\n{}", "\r\n".repeat(1000));
        let (halves, whole) = both(text.as_bytes());
        assert_eq!(halves, whole);
        assert!(halves.unwrap_err().contains("no data rows"));
        // A quoted header.
        let text = rows(1000, "\n").replacen("note", "\"note\"", 1);
        let (halves, whole) = both(text.as_bytes());
        assert_eq!(halves, whole);
    }

    #[test]
    fn two_column_files_read_in_halves_as_on_one_thread() {
        // The layouts the simple path reads in straight-line code, either column first,
        // with an error after the cut: the same samples and error as one thread's, and
        // as the general path's alone.
        for (header, score_first) in [("confidence,correct", true), ("correct,confidence", false)] {
            for eol in ["\n", "\r\n"] {
                let mut text = format!("{header}{eol}");
                for i in 0..2000 {
                    let score = format!("0.{:013}", (i * 7_919_993_917u64) % 10u64.pow(13));
                    let label = ["0", "1", "1.0"][i as usize % 3];
                    text += &if score_first {
                        format!("{score},{label}{eol}")
                    } else {
                        format!("{label},{score}{eol}")
                    };
                }
                let before = halves();
                let (halves_read, whole) = both(text.as_bytes());
                assert_eq!(halves(), before + 1, "read in two halves");
                assert_eq!(halves_read, whole);
                let general = csv_rows::read_binary(text.as_bytes(), NAMES, true);
                assert_eq!(whole, outcome(general.map(|t| t.samples)));
                assert_eq!(whole.unwrap().0.len(), 2000);
                let bad = if score_first { "0.5,2" } else { "2,0.5" };
                text += &format!("{bad}{eol}");
                let (halves_read, whole) = both(text.as_bytes());
                assert_eq!(halves_read, whole);
                assert_eq!(
                    whole.unwrap_err(),
                    "line 2002: `correct` 2 is not a label; labels must be 0 or 1 (exit 2)"
                );
            }
        }
    }

    #[test]
    fn large_files_read_in_halves() {
        // Plain rows, as the bench file's: read in two halves too, into reserved columns.
        let mut text = String::from("confidence,correct\n");
        let mut i = 0u64;
        while text.len() < MIN_SPLIT_BYTES as usize + 1000 {
            text += &format!("0.{:013},{}\n", (i * 7_919_993_917) % 10u64.pow(13), i % 2);
            i += 1;
        }
        let (file, path) = file_of(text.as_bytes());
        let before = halves();
        let read = outcome(read_file(file, NAMES));
        let _ = std::fs::remove_file(path);
        assert_eq!(halves(), before + 1, "read in two halves");
        let whole =
            outcome(csv_rows::read_binary(text.as_bytes(), NAMES, false).map(|t| t.samples));
        assert_eq!(read, whole);
        assert_eq!(read.unwrap().0.len() as u64, i);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Any file reads in two halves exactly as on one thread: the same samples, bit
        /// for bit, or the same error with the same line.
        #[test]
        fn halves_read_as_one(
            clean in prop::collection::vec((0..10_000u32, 0..2u8), 0..60),
            lines in prop::collection::vec(csv_rows::tests::line(), 0..40),
            crlf in any::<bool>(),
            last_eol in any::<bool>(),
            invalid_byte in prop::option::of(0..60usize),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut text = format!("confidence,correct,note{eol}").into_bytes();
            // Good rows first (a cut among them reads in two halves), then any lines.
            for (s, y) in clean {
                text.extend_from_slice(format!("0.{s:04},{y},n{eol}").as_bytes());
            }
            csv_rows::tests::append_lines(&mut text, &lines, eol, last_eol, invalid_byte);
            // (About four cases in five are cut, most of them with an error after
            // the cut: measured.)
            let (halves, whole) = both(&text);
            prop_assert_eq!(halves, whole);
        }
    }
}
