//! The CSV reader under every CSV form: a header, then rows handed out one at a time
//! with their line numbers, as bounds into one reused buffer. Nothing is allocated per
//! row or per field (fields are trimmed and parsed in place, [`super::number`]), so
//! memory is the parsed columns plus a few blocks of input. Unquoted input (all model
//! outputs we know of) is split by a scanner of its own; from the first `"` on, the
//! `csv` crate's parser reads the rest with the same rules.
//!
//! (confidence, correct) rows of the common shape (plain decimals, no spaces, `\n` or
//! `\r\n`) are read on a simpler path still, straight from the scanner's buffer into the
//! columns ([`Fast::simple_rows`]); it reads only rows the general path would read to the
//! same sample, and leaves every other row, and so every error, to that path.
//!
//! Rows must have the header's number of fields (a ragged row is an error naming its
//! line); blank lines are skipped, and so is a UTF-8 byte-order mark before the header.
//! Columns are matched by name: exactly if the header has the name, else without regard
//! to case (reported as a note); a name the header has twice is ambiguous either way,
//! and when nothing matches, the error lists the header's columns and the option that
//! picks another.

use std::fmt;
use std::io::{self, Read};
use std::sync::Arc;

use super::halves::Boundary;

use super::{excerpt, number, ColumnNames, Columns, InputError, Samples, Table, MAX_LINE_BYTES};

/// The most columns an error lists from a header.
const LISTED_COLUMNS: usize = 20;

/// The block the CSV parser reads at a time.
const BLOCK_BYTES: usize = 1 << 16;

/// The error a [`LineLimit`] reader returns for a line, or a record of lines joined by
/// a quoted field, over the limit.
#[derive(Debug)]
struct LineTooLong {
    /// The line, or the record's first line.
    line: u64,
    /// A record of several lines (else one line).
    record: bool,
}

impl LineTooLong {
    /// What the error says, after its line number.
    fn message(&self) -> String {
        if self.record {
            format!(
                "the record starting on this line (a quoted field spans lines) is longer than \
                 the limit of {MAX_LINE_BYTES} bytes (1 MiB)"
            )
        } else {
            format!("the line is longer than the limit of {MAX_LINE_BYTES} bytes (1 MiB)")
        }
    }
}

impl fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message())
    }
}

impl std::error::Error for LineTooLong {}

/// A reader that fails, naming the line, as soon as a line grows past
/// [`MAX_LINE_BYTES`]: the CSV parser above it buffers a whole record, so without the
/// bound one newline-free gigabyte would be held (several times over) in memory.
struct LineLimit<R> {
    inner: R,
    /// The 1-based number of the line being read.
    line: u64,
    /// Bytes of that line seen so far.
    length: usize,
    /// The offsets (in the bytes read through) of the line ends that no record has
    /// passed yet ([`Parser::next`] counts and drops them): the csv parser's own line
    /// count leaves out blank lines. Only the last two blocks' are kept (see `read`).
    line_ends: std::collections::VecDeque<u64>,
    /// Line ends dropped from `line_ends` unpassed, as certainly before the next
    /// record's end.
    behind: u64,
    /// The bytes read through so far.
    read: u64,
    /// Where those bytes stand in the CSV's quoting: the bound on records.
    quoting: Quoting,
}

impl<R: Read> LineLimit<R> {
    /// Reads `inner`, which starts at the start of line `line` (a record's start: no
    /// quote before it).
    fn new(inner: R, line: u64) -> Self {
        LineLimit {
            inner,
            line,
            length: 0,
            line_ends: Default::default(),
            behind: 0,
            read: 0,
            quoting: Quoting::new(line, MAX_LINE_BYTES),
        }
    }

    /// Accounts for `block`, one read's bytes; `Err` names a line over the limit.
    fn account(&mut self, block: &[u8]) -> Result<(), u64> {
        let Some(first) = memchr::memchr(b'\n', block) else {
            self.length += block.len();
            return if self.length > MAX_LINE_BYTES {
                Err(self.line)
            } else {
                Ok(())
            };
        };
        // The first piece ends the current line.
        if self.length + first > MAX_LINE_BYTES {
            return Err(self.line);
        }
        self.line += 1;
        // Whole lines inside the block: only a block longer than the limit can hold one
        // over it, and only then are they measured one by one.
        let last = memchr::memrchr(b'\n', block).unwrap_or(first);
        let mut start = first + 1;
        if last - first > MAX_LINE_BYTES {
            for end in memchr::memchr_iter(b'\n', &block[start..=last]).map(|p| p + first + 1) {
                if end - start > MAX_LINE_BYTES {
                    return Err(self.line);
                }
                self.line += 1;
                start = end + 1;
            }
        } else {
            self.line += memchr::memchr_iter(b'\n', &block[start..=last]).count() as u64;
        }
        self.length = block.len() - last - 1;
        if self.length > MAX_LINE_BYTES {
            return Err(self.line);
        }
        Ok(())
    }
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let first_line = self.line;
        self.account(&buf[..n]).map_err(|line| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                LineTooLong {
                    line,
                    record: false,
                },
            )
        })?;
        self.quoting
            .account(&buf[..n], first_line)
            .map_err(|line| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    LineTooLong { line, record: true },
                )
            })?;
        // The parser above holds at most one block unread, so the next record ends
        // after every line end two blocks back: those are counted, not kept, and
        // memory stays bounded inside a record of many lines.
        let read = self.read;
        let kept = 2 * BLOCK_BYTES as u64;
        while self.line_ends.front().is_some_and(|&at| at + kept < read) {
            self.line_ends.pop_front();
            self.behind += 1;
        }
        self.line_ends
            .extend(memchr::memchr_iter(b'\n', &buf[..n]).map(|i| read + i as u64));
        self.read += n as u64;
        Ok(n)
    }
}

/// The record bound of [`LineLimit`]: a quoted field may hold line ends, so one record
/// of many short lines could otherwise be buffered whole by the parser above, however
/// long. This follows the quoting as the `csv` parser reads it (csv-core, configured in
/// [`Parser::new`]: `,` between fields, `"` quoting, `""` a quote inside one, records
/// ending at `\n`): a `"` opens a quoted field only at a field's start, and inside one a
/// `"` ends it unless another follows. It only measures; what the parser reads does not
/// depend on it. A record is measured from the line end outside quotes before it (blank
/// lines are records of no bytes), so without quoted fields it is a line, which the line
/// bound already holds. A record over the limit is refused at its end or at the end of
/// the block that takes it over, so at most a block more is read.
struct Quoting {
    /// Where the last byte left the quoting: [`FIELD_START`], [`IN_FIELD`], [`QUOTED`]
    /// or [`QUOTE_AHEAD`].
    state: u8,
    /// The bytes of the record being read, so far.
    record: usize,
    /// The line that record starts on.
    record_line: u64,
    /// The most bytes a record may have ([`MAX_LINE_BYTES`]; smaller in tests).
    limit: usize,
}

/// At a field's start, outside quotes: a `"` here opens a quoted field.
const FIELD_START: u8 = 0;
/// Inside a field, outside quotes: a `"` here is a character like another.
const IN_FIELD: u8 = 1;
/// Inside a quoted field: line ends here do not end the record.
const QUOTED: u8 = 2;
/// Inside a quoted field, just after a `"`: the field's end, or the first of `""`.
const QUOTE_AHEAD: u8 = 3;

/// The next state: a row a state, a column a byte's class (other, `"`, `,`, `\n`).
const NEXT: [[u8; 4]; 4] = [
    [IN_FIELD, QUOTED, FIELD_START, FIELD_START], // after FIELD_START
    [IN_FIELD, IN_FIELD, FIELD_START, FIELD_START], // after IN_FIELD
    [QUOTED, QUOTE_AHEAD, QUOTED, QUOTED],        // after QUOTED
    [IN_FIELD, QUOTED, FIELD_START, FIELD_START], // after QUOTE_AHEAD
];

/// A byte's class in [`NEXT`]; 3 is the line end.
const CLASS: [u8; 256] = {
    let mut class = [0; 256];
    class[b'"' as usize] = 1;
    class[b',' as usize] = 2;
    class[b'\n' as usize] = 3;
    class
};

impl Quoting {
    /// At the start of line `line`, a record's start.
    fn new(line: u64, limit: usize) -> Self {
        Quoting {
            state: FIELD_START,
            record: 0,
            record_line: line,
            limit,
        }
    }

    /// Accounts for `block`, which starts on line `line`; `Err` names the first line of
    /// a record over the limit. A block outside quotes and without a `"` is taken whole
    /// (`memchr`); others byte by byte, through [`NEXT`].
    fn account(&mut self, block: &[u8], mut line: u64) -> Result<(), u64> {
        if self.state < QUOTED && memchr::memchr(b'"', block).is_none() {
            return self.unquoted(block, line);
        }
        // (Locals, and table indices masked in range: a tight loop, no checks.)
        let (mut state, mut record) = (usize::from(self.state), self.record);
        // `byte`, or `width` bytes of its class other than the line end.
        let mut step = |byte: u8, width: usize| {
            let class = usize::from(CLASS[usize::from(byte)]);
            let quoted = state == usize::from(QUOTED);
            state = usize::from(NEXT[state & 3][class & 3]);
            if class == 3 {
                line += 1;
                if !quoted {
                    // The record's end.
                    if record > self.limit {
                        return Err(self.record_line);
                    }
                    (record, self.record_line) = (0, line);
                    return Ok(());
                }
            }
            record += width;
            Ok(())
        };
        // Eight bytes at a time where none of them is a `"`, `,` or line end (most of
        // a field's bytes): they only move the state as one other byte does.
        let mut words = block.chunks_exact(8);
        for word in &mut words {
            let bits = u64::from_le_bytes(word.try_into().unwrap_or_default());
            let special = zero_bytes(bits ^ 0x2222_2222_2222_2222)
                | zero_bytes(bits ^ 0x2c2c_2c2c_2c2c_2c2c)
                | zero_bytes(bits ^ 0x0a0a_0a0a_0a0a_0a0a);
            if special == 0 {
                step(b'a', 8)?;
            } else {
                for &byte in word {
                    step(byte, 1)?;
                }
            }
        }
        for &byte in words.remainder() {
            step(byte, 1)?;
        }
        (self.state, self.record) = (state as u8, record);
        self.check()
    }

    /// Accounts for `block`, outside quotes and without a `"`: every line end ends a
    /// record. `line`: the block's first line.
    fn unquoted(&mut self, block: &[u8], line: u64) -> Result<(), u64> {
        let Some(first) = memchr::memchr(b'\n', block) else {
            self.record += block.len();
            if let Some(&last) = block.last() {
                self.state = if last == b',' { FIELD_START } else { IN_FIELD };
            }
            return self.check();
        };
        self.record += first;
        self.check()?;
        let last = memchr::memrchr(b'\n', block).unwrap_or(first);
        // The whole lines between are records too: only a stretch longer than the limit
        // can hold one over it (never with the line bound's limit, which `LineLimit`
        // checked already), and only then are they measured.
        if last - first > self.limit {
            let (mut start, mut number) = (first + 1, line + 1);
            let between = block.get(first + 1..=last).unwrap_or_default();
            for end in memchr::memchr_iter(b'\n', between) {
                let end = end + first + 1;
                if end - start > self.limit {
                    return Err(number);
                }
                (start, number) = (end + 1, number + 1);
            }
        }
        self.record = block.len() - last - 1;
        self.record_line = line + memchr::memchr_iter(b'\n', block).count() as u64;
        self.state = match block.last() {
            Some(b',' | b'\n') | None => FIELD_START,
            Some(_) => IN_FIELD,
        };
        self.check()
    }

    fn check(&self) -> Result<(), u64> {
        if self.record > self.limit {
            Err(self.record_line)
        } else {
            Ok(())
        }
    }
}

impl From<csv::Error> for InputError {
    fn from(err: csv::Error) -> Self {
        let line = err.position().map(|p| p.line());
        match err.kind() {
            csv::ErrorKind::Io(e) => {
                if let Some(long) = e.get_ref().and_then(|r| r.downcast_ref::<LineTooLong>()) {
                    return InputError::at(long.line, long.message());
                }
                InputError::io(line, format!("read error: {e}"))
            }
            csv::ErrorKind::Utf8 { err, .. } => InputError {
                location: line.map(super::Location::Line),
                ..InputError::general(format!("invalid UTF-8 in field {}", err.field() + 1))
            },
            _ => InputError {
                location: line.map(super::Location::Line),
                ..InputError::general(excerpt(&err.to_string()))
            },
        }
    }
}

/// One row: its bytes and the bounds of its fields (untrimmed).
#[derive(Clone, Copy)]
pub struct Row<'a> {
    data: &'a [u8],
    bounds: &'a [(usize, usize)],
}

impl<'a> Row<'a> {
    pub fn len(&self) -> usize {
        self.bounds.len()
    }

    #[inline]
    pub fn field(&self, i: usize) -> &'a [u8] {
        let (start, end) = self.bounds[i];
        &self.data[start..end]
    }

    pub fn fields(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let data = self.data;
        self.bounds.iter().map(move |&(s, e)| &data[s..e])
    }
}

impl std::ops::Index<usize> for Row<'_> {
    type Output = [u8];
    fn index(&self, i: usize) -> &[u8] {
        self.field(i)
    }
}

/// Why the fast scanner stopped.
enum Stop {
    /// A line over [`MAX_LINE_BYTES`], by number.
    TooLong(u64),
    Io(io::Error),
    /// The line ahead has a quote: the CSV parser takes over from its start.
    Quote,
}

/// The scanner of unquoted CSV: lines found with `memchr`, fields split at commas, in
/// one buffer refilled in blocks. It hands over to the `csv` parser at the first line
/// with a `"` (quoted fields may hold commas and newlines), which then reads the rest.
struct Fast<R> {
    inner: R,
    buf: Vec<u8>,
    /// The unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
    /// The number of the line starting at `start`.
    line: u64,
    /// The first `"` in `buf[..end]` at or after `start`, if any.
    quote: Option<usize>,
    /// Whether `buf[..end]` is all ASCII (then no row needs a UTF-8 check), a skipped
    /// byte-order mark aside.
    ascii: bool,
}

/// The UTF-8 byte-order mark that Excel and other Windows tools write before a CSV's
/// header. It is not part of the first column's name (pandas reads past it too).
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

impl<R: Read> Fast<R> {
    fn new(inner: R) -> Self {
        Fast {
            inner,
            buf: vec![0; 4 * BLOCK_BYTES],
            start: 0,
            end: 0,
            eof: false,
            line: 1,
            quote: None,
            ascii: true,
        }
    }

    /// Skips a [`UTF8_BOM`] at the start of the input: called before the first line.
    fn skip_bom(&mut self) -> Result<(), Stop> {
        while self.end - self.start < UTF8_BOM.len() && !self.eof {
            self.refill()?;
        }
        if self.buf[self.start..self.end].starts_with(UTF8_BOM) {
            self.start += UTF8_BOM.len();
            // The mark was the only non-ASCII byte read so far, if the rest are ASCII.
            self.ascii = self.buf[self.start..self.end].is_ascii();
        }
        Ok(())
    }

    /// Moves the unread bytes to the front and reads one more block.
    fn refill(&mut self) -> Result<(), Stop> {
        let unread = self.end - self.start;
        self.buf.copy_within(self.start..self.end, 0);
        self.quote = self.quote.map(|q| q - self.start);
        self.start = 0;
        self.end = unread;
        if self.buf.len() < unread + BLOCK_BYTES {
            self.buf.resize(unread + 4 * BLOCK_BYTES, 0);
        }
        let n = loop {
            match self.inner.read(&mut self.buf[unread..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Stop::Io(e)),
            }
        };
        let new = &self.buf[unread..unread + n];
        if self.quote.is_none() {
            self.quote = memchr::memchr(b'"', new).map(|q| q + unread);
        }
        self.ascii &= new.is_ascii();
        self.end += n;
        self.eof = n == 0;
        Ok(())
    }

    /// The next line (without its `\n`) and its number.
    #[inline(always)]
    fn next_line(&mut self) -> Result<Option<(u64, std::ops::Range<usize>)>, Stop> {
        loop {
            let unread = &self.buf[self.start..self.end];
            let found = memchr::memchr(b'\n', unread);
            if let Some(length) = found.or(if self.eof { Some(unread.len()) } else { None }) {
                if length > MAX_LINE_BYTES {
                    return Err(Stop::TooLong(self.line));
                }
                if self.eof && length == 0 {
                    return Ok(None);
                }
                if self.quote.is_some_and(|q| q < self.start + length) {
                    return Err(Stop::Quote);
                }
                let range = self.start..self.start + length;
                self.start += length + usize::from(found.is_some());
                self.line += 1;
                return Ok(Some((self.line - 1, range)));
            }
            if unread.len() > MAX_LINE_BYTES {
                return Err(Stop::TooLong(self.line));
            }
            self.refill()?;
        }
    }

    /// Like [`Fast::next_line`], with the line split at its commas into `bounds` in
    /// the same pass: line end and commas are found 8 bytes at a time (rows are too
    /// short for a `memchr` call per line to pay for its set-up, measured).
    #[inline(always)]
    fn next_row(
        &mut self,
        bounds: &mut Vec<(usize, usize)>,
    ) -> Result<Option<(u64, std::ops::Range<usize>)>, Stop> {
        loop {
            let start = self.start;
            let unread = &self.buf[start..self.end];
            bounds.clear();
            let mut field = start;
            let mut at = 0;
            let mut found = None;
            while at + 8 <= unread.len() {
                let word = u64::from_le_bytes(unread[at..at + 8].try_into().expect("8 bytes"));
                let ends = zero_bytes(word ^ 0x0a0a_0a0a_0a0a_0a0a);
                let mut commas = zero_bytes(word ^ 0x2c2c_2c2c_2c2c_2c2c);
                if ends != 0 {
                    // Only the commas before the first line end.
                    commas &= (ends & ends.wrapping_neg()) - 1;
                }
                while commas != 0 {
                    let i = start + at + (commas.trailing_zeros() / 8) as usize;
                    bounds.push((field, i));
                    field = i + 1;
                    commas &= commas - 1;
                }
                if ends != 0 {
                    found = Some(at + (ends.trailing_zeros() / 8) as usize);
                    break;
                }
                at += 8;
            }
            if found.is_none() {
                for (i, &byte) in unread[at..].iter().enumerate() {
                    if byte == b'\n' {
                        found = Some(at + i);
                        break;
                    }
                    if byte == b',' {
                        bounds.push((field, start + at + i));
                        field = start + at + i + 1;
                    }
                }
            }
            if let Some(length) = found.or(if self.eof { Some(unread.len()) } else { None }) {
                if length > MAX_LINE_BYTES {
                    return Err(Stop::TooLong(self.line));
                }
                if self.eof && length == 0 {
                    return Ok(None);
                }
                if self.quote.is_some_and(|q| q < start + length) {
                    return Err(Stop::Quote);
                }
                bounds.push((field, start + length));
                self.start += length + usize::from(found.is_some());
                self.line += 1;
                return Ok(Some((self.line - 1, start..start + length)));
            }
            if unread.len() > MAX_LINE_BYTES {
                return Err(Stop::TooLong(self.line));
            }
            self.refill()?;
        }
    }
}

/// What a column of a (confidence, correct) row is read for, by [`Fast::simple_rows`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Take {
    Score,
    Label,
    Skip,
}

impl<R: Read> Fast<R> {
    /// Reads the rows ahead in the buffer into `scores` and `labels` for as long as
    /// they have the common shape ([`simple_row`]), stopping before the first that has
    /// not, or is not whole in the buffer: the general path reads that one, and so
    /// words any error. Nothing here refuses a row, so results and errors are the
    /// general path's. Does nothing once a quote is in the buffer (the parser takes
    /// over at its line).
    fn simple_rows(&mut self, takes: &[Take], scores: &mut Vec<f64>, labels: &mut Vec<u8>) -> u64 {
        if self.quote.is_some() {
            return 0;
        }
        match takes {
            [Take::Score, Take::Label] => {
                self.simple_rows_of(scores, labels, |data, row| pair_row(data, row, true))
            }
            [Take::Label, Take::Score] => {
                self.simple_rows_of(scores, labels, |data, row| pair_row(data, row, false))
            }
            _ => self.simple_rows_of(scores, labels, |data, row| simple_row(data, row, takes)),
        }
    }

    /// [`Fast::simple_rows`] with `read` reading one row as [`simple_row`] does.
    #[inline(always)]
    fn simple_rows_of(
        &mut self,
        scores: &mut Vec<f64>,
        labels: &mut Vec<u8>,
        read: impl Fn(&[u8], usize) -> Option<(f64, u8, usize)>,
    ) -> u64 {
        let data = &self.buf[self.start..self.end];
        let mut at = 0;
        let mut rows = 0;
        while let Some((score, label, length)) = read(data, at) {
            scores.push(score);
            labels.push(label);
            at += length;
            rows += 1;
        }
        self.start += at;
        self.line += rows;
        rows
    }
}

/// [`simple_row`] of a file of two columns, the score first or the label: the same
/// reading, in straight-line code (the compiler kept the loop over the fields of
/// [`simple_row`]: a sixth more instructions, measured).
#[inline(always)]
fn pair_row(data: &[u8], row: usize, score_first: bool) -> Option<(f64, u8, usize)> {
    let first = data.get(row..)?;
    let (score, label, at) = if score_first {
        let (x, length) = number::score_prefix(first)?;
        let at = row + length;
        if data.get(at) != Some(&b',') {
            return None;
        }
        let (y, length) = number::label_prefix(data.get(at + 1..)?)?;
        (x, y, at + 1 + length)
    } else {
        let (y, length) = number::label_prefix(first)?;
        let at = row + length;
        if data.get(at) != Some(&b',') {
            return None;
        }
        let (x, length) = number::score_prefix(data.get(at + 1..)?)?;
        (x, y, at + 1 + length)
    };
    line_end(data, row, at).map(|length| (score, label, length))
}

/// The score, the label and the length (with its line end) of the row at `data[row..]`,
/// if it is a whole line of the common shape: `takes.len()` fields split by commas and
/// ended by `\n` or `\r\n`, the score and the label plain decimals with nothing
/// around them, read by [`number::score_prefix`] and [`number::label_prefix`] (which
/// accept only what the general path accepts, with the same values), the other fields
/// ASCII without a line end (and no quote: the caller has none in its buffer), the line
/// at most [`MAX_LINE_BYTES`]. Such a row is one the general path reads to the same
/// sample: not blank, as many fields as the header, valid UTF-8. Else `None`, with
/// nothing read: blank lines, spaces, exponents, signs, errors and the last line
/// without a line end are the general path's.
///
/// Each field is read where it starts and its reader says where it ends: no separate
/// scan for commas (measured: finding the row's commas and line end first, 8 bytes at
/// a time, then reading the fields ran 1.7 times the instructions, and no faster).
#[inline(always)]
fn simple_row(data: &[u8], row: usize, takes: &[Take]) -> Option<(f64, u8, usize)> {
    let mut at = row;
    let mut score = 0.0;
    let mut label = 0;
    for (i, take) in takes.iter().enumerate() {
        if i > 0 {
            if data.get(at) != Some(&b',') {
                return None;
            }
            at += 1;
        }
        let field = data.get(at..)?;
        at += match take {
            Take::Score => {
                let (x, length) = number::score_prefix(field)?;
                score = x;
                length
            }
            Take::Label => {
                let (y, length) = number::label_prefix(field)?;
                label = y;
                length
            }
            // Up to the comma or line end (a `\r` before the line end stays in it).
            Take::Skip => field
                .iter()
                .position(|&b| b == b',' || b == b'\n' || !b.is_ascii())?,
        };
    }
    line_end(data, row, at).map(|length| (score, label, length))
}

/// The length, with its line end, of the row `data[row..]` whose last field ends at
/// `at`, if a `\n` or `\r\n` follows and the line is at most [`MAX_LINE_BYTES`].
#[inline(always)]
fn line_end(data: &[u8], row: usize, at: usize) -> Option<usize> {
    let end = match data.get(at..at + 2) {
        Some([b'\r', b'\n']) => at + 1,
        _ if data.get(at) == Some(&b'\n') => at,
        _ => return None,
    };
    (end - row <= MAX_LINE_BYTES).then_some(end + 1 - row)
}

/// The `csv` parser over the rest of a stream, once a quote was seen.
struct Parser<R: Read> {
    reader: csv::Reader<LineLimit<io::Chain<io::Cursor<Vec<u8>>, R>>>,
    record: csv::ByteRecord,
    /// The number of the parser's line 1.
    offset: u64,
    last_line: u64,
    /// The line ends read past so far, up to the end of the last record.
    lines_passed: u64,
}

impl<R: Read> Parser<R> {
    fn new(fast: Fast<R>, has_headers: bool) -> Self {
        let rest = io::Cursor::new(fast.buf[fast.start..fast.end].to_vec()).chain(fast.inner);
        let reader = csv::ReaderBuilder::new()
            .has_headers(has_headers)
            // Ragged rows are refused by `Rows`, with their line, not by the parser.
            .flexible(true)
            // Fields are trimmed in place by the parsers; only the header is trimmed
            // as text.
            .trim(csv::Trim::Headers)
            // Records end at '\n' only: with the default terminator, the '\n' of a
            // "\r\n" is read as the start of the next record, whose line then comes out
            // one short. The '\r' left at the end of the last field is trimmed like
            // other whitespace.
            .terminator(csv::Terminator::Any(b'\n'))
            .buffer_capacity(BLOCK_BYTES)
            .from_reader(LineLimit::new(rest, fast.line));
        Parser {
            reader,
            record: csv::ByteRecord::new(),
            offset: fast.line,
            last_line: fast.line.saturating_sub(1),
            lines_passed: 0,
        }
    }

    /// A parser error, with its line counted from the start of the file.
    fn error(&self, err: csv::Error) -> InputError {
        // The line and record bounds count lines from the start of the file already.
        let too_long = matches!(
            err.kind(),
            csv::ErrorKind::Io(e) if e.get_ref().is_some_and(|r| r.is::<LineTooLong>())
        );
        let mut error = InputError::from(err);
        if let (Some(super::Location::Line(line)), false) = (error.location, too_long) {
            error.location = Some(super::Location::Line(line + self.offset - 1));
        }
        error
    }

    fn next(&mut self) -> Result<Option<u64>, InputError> {
        match self.reader.read_byte_record(&mut self.record) {
            Ok(true) => {
                // The record's line, counted here: the parser's own count leaves out
                // blank lines, and its record start is where it began skipping them.
                // So: the line ends up to the record's end (the reader's position
                // now), less its own terminator, less the line ends inside its fields.
                let end = self.reader.position().byte();
                let limit = self.reader.get_mut();
                self.lines_passed += std::mem::take(&mut limit.behind);
                let mut terminated = false;
                while let Some(&at) = limit.line_ends.front().filter(|&&at| at < end) {
                    limit.line_ends.pop_front();
                    self.lines_passed += 1;
                    terminated = at + 1 == end;
                }
                let inside = memchr::memchr_iter(b'\n', self.record.as_slice()).count() as u64;
                let last = self.offset + self.lines_passed - u64::from(terminated);
                let line = last - inside;
                self.last_line = line;
                Ok(Some(line))
            }
            Ok(false) => Ok(None),
            Err(e) => Err(self.error(e)),
        }
    }
}

enum Engine<R: Read> {
    Fast(Fast<R>),
    /// (Boxed: made once a file, and much larger than the scanner.)
    Parser(Box<Parser<R>>),
    /// Between the two (never seen outside [`Rows::next`]).
    Switching,
}

/// A CSV being read: its header, then its rows.
pub struct Rows<R: Read> {
    engine: Engine<R>,
    /// The header's names, trimmed.
    pub header: csv::StringRecord,
    /// The line of the header (the first non-empty line).
    pub header_line: u64,
    bounds: Vec<(usize, usize)>,
    /// The end of the part of the file these rows read, when another thread reads the
    /// rest ([`super::halves`]): lifted when the parser takes over, since only the
    /// parser knows where a quoted field ends.
    boundary: Option<Arc<Boundary>>,
}

fn stop_error(stop: Stop, line: u64) -> InputError {
    match stop {
        Stop::TooLong(line) => InputError::at(
            line,
            format!("the line is longer than the limit of {MAX_LINE_BYTES} bytes (1 MiB)"),
        ),
        Stop::Io(e) => InputError::io(Some(line), format!("read error: {e}")),
        Stop::Quote => unreachable!("a quote switches parsers"),
    }
}

/// Splits `line` at its commas into `bounds`.
#[inline(always)]
fn split(line: &[u8], offset: usize, bounds: &mut Vec<(usize, usize)>) {
    bounds.clear();
    let mut start = 0;
    // Eight bytes at a time (SWAR): rows of model outputs are a few dozen bytes, too
    // short for `memchr`'s vector loop to pay for its set-up, and a byte loop's branch
    // per byte cost a third of the scanner's time (measured).
    let mut words = line.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let mut commas = zero_bytes(word ^ 0x2c2c_2c2c_2c2c_2c2c);
        while commas != 0 {
            let i = at + (commas.trailing_zeros() / 8) as usize;
            bounds.push((offset + start, offset + i));
            start = i + 1;
            commas &= commas - 1;
        }
        at += 8;
    }
    for (i, &byte) in words.remainder().iter().enumerate() {
        if byte == b',' {
            bounds.push((offset + start, offset + at + i));
            start = at + i + 1;
        }
    }
    bounds.push((offset + start, offset + line.len()));
}

/// The high bit of each zero byte of `word`, and no other bit (exact, unlike the
/// shorter test for "some byte is zero", whose borrows mark bytes above a zero).
#[inline(always)]
fn zero_bytes(word: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // A byte's low seven bits plus 0x7f reach its high bit unless they are all zero;
    // or-ing the byte itself in covers its own high bit. No carry crosses bytes.
    !(((word & LOW7) + LOW7) | word | LOW7)
}

impl<R: Read> Rows<R> {
    /// Reads the header; `expected` words what an empty file should have held.
    pub fn new(reader: R, expected: impl FnOnce() -> String) -> Result<Self, InputError> {
        Self::with_boundary(reader, expected, None)
    }

    /// Like [`Rows::new`] for the first part of a file read in two, up to `boundary`
    /// unless a quote is met first ([`super::halves`]).
    pub(super) fn with_boundary(
        reader: R,
        expected: impl FnOnce() -> String,
        boundary: Option<Arc<Boundary>>,
    ) -> Result<Self, InputError> {
        let mut fast = Fast::new(reader);
        fast.skip_bom().map_err(|stop| stop_error(stop, 1))?;
        let mut bounds = Vec::new();
        // Empty lines before the header are skipped, as the parser skips them.
        let header = loop {
            match fast.next_line() {
                Ok(Some((_, range))) if range.is_empty() => continue,
                Ok(Some((line, range))) => {
                    let text = &fast.buf[range.clone()];
                    split(text, 0, &mut bounds);
                    let mut header = csv::StringRecord::new();
                    for (i, &(s, e)) in bounds.iter().enumerate() {
                        let name = std::str::from_utf8(&text[s..e]).map_err(|_| {
                            InputError::at(line, format!("invalid UTF-8 in field {}", i + 1))
                        })?;
                        header.push_field(name.trim());
                    }
                    break Some((line, header, Engine::Fast(fast)));
                }
                Ok(None) => break None,
                Err(Stop::Quote) => {
                    if let Some(boundary) = &boundary {
                        boundary.lift();
                    }
                    let mut parser = Parser::new(fast, true);
                    let header = match parser.reader.headers() {
                        Ok(header) => header.clone(),
                        Err(e) => return Err(parser.error(e)),
                    };
                    if header.is_empty() {
                        break None;
                    }
                    let line = parser.reader.position().line().saturating_sub(1).max(1)
                        + parser.offset
                        - 1;
                    break Some((line, header, Engine::Parser(Box::new(parser))));
                }
                Err(stop) => return Err(stop_error(stop, fast.line)),
            }
        };
        let Some((header_line, header, engine)) = header else {
            return Err(InputError::at(
                1,
                format!("empty file: expected {}", expected()),
            ));
        };
        Ok(Rows {
            engine,
            header,
            header_line,
            bounds,
            boundary,
        })
    }

    /// The rows of a file from a record boundary on (the second part of a file read in
    /// two, [`super::halves`]): no header is read, `header` is the file's, and lines
    /// are numbered from 1 at the boundary (the caller adds the lines before it).
    pub(super) fn continuing(reader: R, header: csv::StringRecord) -> Self {
        Rows {
            engine: Engine::Fast(Fast::new(reader)),
            header,
            header_line: 0,
            bounds: Vec::new(),
            boundary: None,
        }
    }

    /// The number of the line the fast scanner reads next, while it reads (`None` once
    /// the parser has taken over).
    pub(super) fn fast_line(&self) -> Option<u64> {
        match &self.engine {
            Engine::Fast(fast) => Some(fast.line),
            _ => None,
        }
    }

    /// Reads the rows of the common shape ahead into `scores` and `labels`
    /// ([`Fast::simple_rows`]), while the fast scanner reads.
    fn simple_rows(&mut self, takes: &[Take], scores: &mut Vec<f64>, labels: &mut Vec<u8>) -> u64 {
        match &mut self.engine {
            Engine::Fast(fast) => fast.simple_rows(takes, scores, labels),
            _ => 0,
        }
    }

    /// The next non-blank row with its line, checked to have the header's number of
    /// fields; `needed` are the columns read, for the message of a short row.
    #[inline(always)]
    pub fn next(&mut self, needed: &[usize]) -> Result<Option<(u64, Row<'_>)>, InputError> {
        let Some(line) = self.advance(needed)? else {
            return Ok(None);
        };
        Ok(Some((line, self.row())))
    }

    /// The row last read.
    #[inline(always)]
    fn row(&self) -> Row<'_> {
        let data = match &self.engine {
            Engine::Fast(fast) => &fast.buf[..],
            Engine::Parser(parser) => parser.record.as_slice(),
            Engine::Switching => unreachable!("the parser is in place"),
        };
        Row {
            data,
            bounds: &self.bounds,
        }
    }

    /// Reads the next row to use (see [`Rows::next`]), returning its line.
    #[inline(always)]
    fn advance(&mut self, needed: &[usize]) -> Result<Option<u64>, InputError> {
        loop {
            let (line, ascii) = match &mut self.engine {
                Engine::Fast(fast) => match fast.next_row(&mut self.bounds) {
                    // Empty lines are skipped, as the parser skips them.
                    Ok(Some((_, range))) if range.is_empty() => continue,
                    Ok(Some((line, _))) => (line, fast.ascii),
                    Ok(None) => return Ok(None),
                    Err(Stop::Quote) => {
                        if let Some(boundary) = &self.boundary {
                            boundary.lift();
                        }
                        let Engine::Fast(fast) =
                            std::mem::replace(&mut self.engine, Engine::Switching)
                        else {
                            unreachable!()
                        };
                        self.engine = Engine::Parser(Box::new(Parser::new(fast, false)));
                        continue;
                    }
                    Err(stop) => return Err(stop_error(stop, fast.line)),
                },
                Engine::Parser(parser) => match parser.next()? {
                    Some(line) => {
                        self.bounds.clear();
                        let record = &parser.record;
                        self.bounds.extend(
                            (0..record.len())
                                .filter_map(|i| record.range(i))
                                .map(|r| (r.start, r.end)),
                        );
                        (line, false)
                    }
                    None => return Ok(None),
                },
                Engine::Switching => unreachable!("the parser is in place"),
            };
            let row = self.row();
            // A blank "\r\n" line, or a row of empty fields.
            if number::is_blank(row.field(0)) && row.fields().all(number::is_blank) {
                continue;
            }
            if row.len() != self.header.len() {
                return Err(ragged(&self.header, line, row.len(), needed));
            }
            if !ascii {
                check_utf8(row, line)?;
            }
            return Ok(Some(line));
        }
    }
}

#[cold]
fn ragged(header: &csv::StringRecord, line: u64, got: usize, needed: &[usize]) -> InputError {
    let want = header.len();
    let problem = match needed.iter().find(|&&i| i >= got) {
        Some(&missing) => format!(
            "missing field `{}` (the row has {got} of {want} fields)",
            excerpt(&header[missing])
        ),
        None => format!("a ragged row: it has {got} fields where the header has {want}"),
    };
    InputError::at(line, problem)
}

/// Refuses a row whose fields are not UTF-8, naming the first such field.
#[cold]
fn check_utf8(row: Row<'_>, line: u64) -> Result<(), InputError> {
    match row.fields().position(|f| std::str::from_utf8(f).is_err()) {
        Some(field) => Err(InputError::at(
            line,
            format!("invalid UTF-8 in field {}", field + 1),
        )),
        None => Ok(()),
    }
}

/// The column named `wanted`: the exact name if the header has it once, else the one
/// column equal to it without regard to case (with a note saying so). A name the header
/// has more than once, exactly or without regard to case, is ambiguous: an error.
pub fn find_column(
    header: &csv::StringRecord,
    wanted: &str,
    option: &str,
    line: u64,
    notes: &mut Vec<String>,
) -> Result<usize, InputError> {
    let exact: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| *h == wanted)
        .map(|(i, _)| i)
        .collect();
    match exact.as_slice() {
        [index] => return Ok(*index),
        [] => {}
        // Taking the first would read one of them without a word about the others.
        several => {
            let fields: Vec<String> = several
                .iter()
                .take(LISTED_COLUMNS)
                .map(|i| (i + 1).to_string())
                .collect();
            return Err(InputError::at(
                line,
                format!(
                    "ambiguous column `{}`: {} columns have that name (fields {}); rename all but one, or name another column with {option} NAME",
                    excerpt(wanted),
                    several.len(),
                    fields.join(", ")
                ),
            ));
        }
    }
    let folded = wanted.to_lowercase();
    let matches: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| h.to_lowercase() == folded)
        .map(|(i, _)| i)
        .collect();
    let quoted = |i: usize| format!("`{}`", excerpt(&header[i]));
    match matches.as_slice() {
        [index] => {
            notes.push(format!(
                "no column is named exactly `{}`; using column {} (matched without regard to case)",
                excerpt(wanted),
                quoted(*index)
            ));
            Ok(*index)
        }
        [] => Err(InputError::at(
            line,
            format!(
                "missing column `{}` (the header has: {}); name the column to read with {option} NAME",
                excerpt(wanted),
                list_header(header)
            ),
        )),
        several => {
            let listed: Vec<String> = several
                .iter()
                .take(LISTED_COLUMNS)
                .map(|&i| quoted(i))
                .collect();
            Err(InputError::at(
                line,
                format!(
                    "no column is named exactly `{}`, and {} columns match it without regard to case ({}); pick one with {option} NAME",
                    excerpt(wanted),
                    several.len(),
                    listed.join(", ")
                ),
            ))
        }
    }
}

/// The header's first [`LISTED_COLUMNS`] names, quoted, and how many more there are.
pub fn list_header(header: &csv::StringRecord) -> String {
    let mut listed: Vec<String> = (0..header.len().min(LISTED_COLUMNS))
        .map(|i| format!("`{}`", excerpt(&header[i])))
        .collect();
    if header.len() > LISTED_COLUMNS {
        listed.push(format!("… ({} more)", header.len() - LISTED_COLUMNS));
    }
    listed.join(", ")
}

/// The error of a file with a header and no rows.
pub fn no_rows(header_line: u64) -> InputError {
    InputError::at(header_line + 1, "no data rows: the file has only a header")
}

/// The score and label columns of a (confidence, correct) CSV, found in its header.
pub struct BinaryColumns {
    score: usize,
    label: usize,
    /// Their names as errors quote them.
    score_name: String,
    label_name: String,
}

impl BinaryColumns {
    /// Finds `names` in `rows`' header; notes of a match without regard to case go to
    /// `samples.notes`, the names found to `samples.columns`.
    pub fn find<R: Read>(
        rows: &Rows<R>,
        names: ColumnNames<'_>,
        samples: &mut Samples,
    ) -> Result<Self, InputError> {
        let header_line = rows.header_line;
        let score = find_column(
            &rows.header,
            names.score,
            "--score-col",
            header_line,
            &mut samples.notes,
        )?;
        let label = find_column(
            &rows.header,
            names.label,
            "--label-col",
            header_line,
            &mut samples.notes,
        )?;
        samples.columns = Columns {
            score: rows.header[score].to_owned(),
            label: rows.header[label].to_owned(),
        };
        Ok(BinaryColumns {
            score,
            label,
            score_name: excerpt(&rows.header[score]),
            label_name: excerpt(&rows.header[label]),
        })
    }
}

impl BinaryColumns {
    /// The score and label columns' indices in the header.
    pub fn indices(&self) -> (usize, usize) {
        (self.score, self.label)
    }

    /// The score and label columns' names as errors quote them.
    pub fn names(&self) -> (&str, &str) {
        (&self.score_name, &self.label_name)
    }
}

/// What `expected` of [`Rows::new`] says for a (confidence, correct) CSV.
pub fn binary_expected(names: ColumnNames<'_>) -> String {
    format!(
        "a header with columns `{}` and `{}`",
        excerpt(names.score),
        excerpt(names.label)
    )
}

/// Reads the rest of `rows` into `samples` (and every row, trimmed, into `records` if
/// given). Stops early, with `Ok`, as soon as `cancelled()` (the caller then throws the
/// samples away).
pub fn read_binary_rows<R: Read>(
    rows: &mut Rows<R>,
    columns: &BinaryColumns,
    samples: &mut Samples,
    mut records: Option<&mut Vec<csv::StringRecord>>,
    cancelled: impl Fn() -> bool,
) -> Result<(), InputError> {
    let (score_index, label_index) = (columns.score, columns.label);
    let needed = [score_index, label_index];
    // The columns' uses for the simple path, none (no simple path) when the records
    // are kept or one column is read as both.
    let mut takes = Vec::new();
    if records.is_none() && score_index != label_index {
        takes = vec![Take::Skip; rows.header.len()];
        takes[score_index] = Take::Score;
        takes[label_index] = Take::Label;
    }
    // After the simple path took no row, the general rows to read before it is tried
    // again, doubling while it keeps taking none: a file it never reads (spaces, an
    // exponent in every row) then costs a try per 1024 rows, not one per row (10 % more
    // instructions than without the simple path, measured); one row it does not read
    // costs a single general row.
    let mut wait = 0u32;
    let mut backoff = 1u32;
    loop {
        if !takes.is_empty() {
            if wait > 0 {
                wait -= 1;
            } else if rows.simple_rows(&takes, &mut samples.scores, &mut samples.labels) > 0 {
                backoff = 1;
            } else {
                wait = backoff;
                backoff = (backoff * 2).min(1024);
            }
            if cancelled() {
                break;
            }
        }
        let Some((line, record)) = rows.next(&needed)? else {
            break;
        };
        let score = number::score(&record[score_index], &columns.score_name)
            .map_err(|p| InputError::at(line, p))?;
        let label = number::label(&record[label_index], &columns.label_name)
            .map_err(|p| InputError::at(line, p))?;
        samples.scores.push(score);
        samples.labels.push(label);
        if let Some(records) = records.as_deref_mut() {
            // Checked to be UTF-8 by `Rows::next`.
            let fields = record
                .fields()
                .map(|f| String::from_utf8_lossy(f).trim().to_owned());
            records.push(fields.collect());
        }
        if cancelled() {
            break;
        }
    }
    Ok(())
}

/// Reads (confidence, correct) rows, keeping every row (trimmed) if `keep_records`.
pub fn read_binary<R: Read>(
    reader: R,
    names: ColumnNames<'_>,
    keep_records: bool,
) -> Result<Table, InputError> {
    read_binary_into(reader, names, keep_records, Samples::default())
}

/// [`read_binary`] into `samples` (empty; with room reserved, as [`Samples::reserving`]).
pub fn read_binary_into<R: Read>(
    reader: R,
    names: ColumnNames<'_>,
    keep_records: bool,
    mut samples: Samples,
) -> Result<Table, InputError> {
    let mut rows = Rows::new(reader, || binary_expected(names))?;
    let columns = BinaryColumns::find(&rows, names, &mut samples)?;
    let header = rows.header.clone();
    let mut records = Vec::new();
    read_binary_rows(
        &mut rows,
        &columns,
        &mut samples,
        keep_records.then_some(&mut records),
        || false,
    )?;
    if samples.scores.is_empty() {
        return Err(no_rows(rows.header_line));
    }
    Ok(Table {
        samples,
        header,
        records,
        score_index: columns.score,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn split_finds_every_comma() {
        // Every line of up to 17 bytes (two words and a remainder) of `,` and `a`:
        // the bounds are those of a byte-by-byte split.
        let mut bounds = Vec::new();
        for len in 0..=17usize {
            for bits in 0..1u32 << len {
                let line: Vec<u8> = (0..len)
                    .map(|i| if bits >> i & 1 == 1 { b',' } else { 0xac })
                    .collect();
                split(&line, 5, &mut bounds);
                let mut expected = Vec::new();
                let mut start = 0;
                for (i, &b) in line.iter().enumerate() {
                    if b == b',' {
                        expected.push((5 + start, 5 + i));
                        start = i + 1;
                    }
                }
                expected.push((5 + start, 5 + len));
                assert_eq!(bounds, expected, "{line:?}");
            }
        }
        for byte in 0..=255u8 {
            let word = u64::from_le_bytes([byte, 1, 0, 0x80, 0xff, byte, 0, 7]);
            let zeros = zero_bytes(word);
            for (i, &b) in word.to_le_bytes().iter().enumerate() {
                assert_eq!(
                    zeros >> (8 * i) & 0xff,
                    if b == 0 { 0x80 } else { 0 },
                    "{byte}"
                );
            }
        }
    }

    /// Appends `lines` to `out`, each but the last followed by `eol` (the last too with
    /// `last_eol`), and a byte 0xff (invalid UTF-8) after line `invalid_byte` if given.
    pub(crate) fn append_lines(
        out: &mut Vec<u8>,
        lines: &[String],
        eol: &str,
        last_eol: bool,
        invalid_byte: Option<usize>,
    ) {
        for (i, line) in lines.iter().enumerate() {
            out.extend_from_slice(line.as_bytes());
            if invalid_byte == Some(i) {
                out.push(0xff);
            }
            if i + 1 < lines.len() || last_eol {
                out.extend_from_slice(eol.as_bytes());
            }
        }
    }

    /// One line of a generated file: good rows of several spellings, blank lines,
    /// quoted fields (some over several lines), and bad rows of each kind (also the
    /// lines of `halves`' tests).
    pub(crate) fn line() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            8 => (0..10_000u32, 0..2u8).prop_map(|(s, y)| format!("0.{s:04},{y},n")),
            1 => Just("0.5,0,\"a, b\"".to_owned()),
            1 => Just("\"0.25\",1,\"two\nlines\"".to_owned()),
            1 => Just("0.75,1,\"x\r\n\ny\"".to_owned()),
            1 => Just(" 1 , 1.0 ,\t".to_owned()),
            1 => Just(String::new()),
            1 => Just("\r".to_owned()),
            1 => Just(",,".to_owned()),
            1 => Just("1.5,1,x".to_owned()),
            1 => Just("0.5,3,x".to_owned()),
            1 => Just("0.5,1".to_owned()),
            1 => Just("0.5,1,x,y".to_owned()),
            1 => Just("nan,1,x".to_owned()),
            1 => Just("0.5,1,\u{e9}".to_owned()),
            1 => Just("0.5,1,\u{a0}".to_owned()),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        /// The fast scanner reads unquoted rows as the `csv` crate's parser does (which
        /// reads everything after a quoted header): the same samples, bit for bit, or
        /// the same error on the same line (blank lines and line ends inside quotes
        /// counted).
        #[test]
        fn the_scanner_reads_as_the_csv_parser(
            lines in proptest::collection::vec(line(), 0..40),
            crlf in proptest::prelude::any::<bool>(),
            last_eol in proptest::prelude::any::<bool>(),
            invalid_byte in proptest::option::of(0..40usize),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut body = Vec::new();
            append_lines(&mut body, &lines, eol, last_eol, invalid_byte);
            let read = |header: &str| {
                let mut text = format!("{header}{eol}").into_bytes();
                text.extend_from_slice(&body);
                let names = ColumnNames { score: "confidence", label: "correct" };
                read_binary(&text[..], names, false)
                    .map(|t| {
                        let bits: Vec<u64> = t.samples.scores.iter().map(|x| x.to_bits()).collect();
                        (bits, t.samples.labels)
                    })
                    .map_err(|e| e.to_string())
            };
            proptest::prop_assert_eq!(
                read("confidence,correct,note"),
                read("\"confidence\",correct,note")
            );
        }
    }

    /// A score field as files spell them, and as they should not: plain decimals of
    /// every length (past 19 bytes and 15 digits too), the spellings only the general
    /// path reads (signs, exponents, spaces, 1.0000…1 that rounds to 1) and bad ones.
    fn score_field() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            6 => "[01]\\.[0-9]{1,18}",
            2 => "[0-9]{0,3}(\\.[0-9]{0,20})?",
            1 => Just("1.0000000000000000001".to_owned()),
            1 => Just("1.0000000000000001".to_owned()),
            1 => Just("0.99999999999999999999".to_owned()),
            1 => prop::sample::select(vec![
                "1", "0", "1.", ".5", "+0.5", "-0", "5e-1", "1E0", " 0.5", "0.5 ", "\t1",
                "", ".", "nan", "inf", "1.5", "2", "0x1", "0.5.5", "0,5", "\u{e9}", "1e400",
                "00000000000000000000.5",
            ]).prop_map(str::to_owned),
        ]
    }

    /// A label field: `0`/`1`, the spellings of them only the general path or the
    /// plain-decimal path reads, and bad ones.
    fn label_field() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            6 => "[01]",
            2 => prop::sample::select(vec![
                "1.0", "0.0", "1.", "0.000", "01", "00", "10", "2", " 1", "1 ", "+1", "1e0",
                "true", "", "-0", ".0", "1.5", "\u{a0}1", "1\r",
            ]).prop_map(str::to_owned),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(600))]

        /// The simple path changes nothing: a file reads to the same samples, bit for
        /// bit, or the same error on the same line, as on the general path alone (which
        /// reads every row when the records are kept), whatever the columns' order,
        /// extra columns, line ends, blank lines and bad rows.
        #[test]
        fn the_simple_path_reads_as_the_general_path(
            layout in 0..4usize,
            rows in proptest::collection::vec(
                (score_field(), label_field(), "[a-z]{0,3}|\u{e9}|\"q\"|a,b|", 0..8u8),
                0..40,
            ),
            last_eol in proptest::prelude::any::<bool>(),
        ) {
            let header = ["confidence,correct", "correct,confidence", "confidence,note,correct", "id,correct,confidence,note"][layout];
            let mut text = format!("{header}\n");
            for (i, (score, label, note, shape)) in rows.iter().enumerate() {
                let fields = match layout {
                    0 => format!("{score},{label}"),
                    1 => format!("{label},{score}"),
                    2 => format!("{score},{note},{label}"),
                    _ => format!("{note},{label},{score},{note}"),
                };
                // Mostly good rows; some blank, ragged or cut.
                let line = match shape {
                    0 => String::new(),
                    1 => format!("{fields},x"),
                    2 => fields.split(',').next().unwrap_or("").to_owned(),
                    _ => fields,
                };
                text += &line;
                if i + 1 < rows.len() || last_eol {
                    text += if shape % 2 == 0 { "\r\n" } else { "\n" };
                }
            }
            let names = ColumnNames { score: "confidence", label: "correct" };
            let read = |keep_records: bool| {
                read_binary(text.as_bytes(), names, keep_records)
                    .map(|t| {
                        let bits: Vec<u64> = t.samples.scores.iter().map(|x| x.to_bits()).collect();
                        (bits, t.samples.labels)
                    })
                    .map_err(|e| e.to_string())
            };
            proptest::prop_assert_eq!(read(false), read(true));
        }
    }

    /// Rows across many refills of the scanner's buffer (the simple path stops at its
    /// end, the general path reads the row cut there): the same samples as the general
    /// path, and an error after them on the file's line.
    #[test]
    fn the_simple_path_reads_across_refills() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut text = "confidence,correct\n".to_owned();
        for i in 0..60_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let digits = (state % 17) as usize + 1;
            let score = format!("{:.digits$}", (state >> 11) as f64 / (1u64 << 53) as f64);
            text += &score;
            text += if state >> 60 == 0 { ",1.0" } else { ",0" };
            text += if i % 3 == 0 { "\r\n" } else { "\n" };
            if i % 9973 == 0 {
                text += "\n 0.5 , 1 \n";
            }
        }
        let names = ColumnNames {
            score: "confidence",
            label: "correct",
        };
        let simple = read_binary(text.as_bytes(), names, false).unwrap();
        let general = read_binary(text.as_bytes(), names, true).unwrap();
        assert!(text.len() > 4 * BLOCK_BYTES * 3);
        assert_eq!(simple.samples.scores.len(), 60_000 + 7);
        let bits = |t: &Table| {
            t.samples
                .scores
                .iter()
                .map(|x| x.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&simple), bits(&general));
        assert_eq!(simple.samples.labels, general.samples.labels);
        let line = text.matches('\n').count() + 1;
        text += "0.5,2\n";
        let error = read_binary(text.as_bytes(), names, false).err().unwrap();
        assert_eq!(
            error.to_string(),
            format!("line {line}: `correct` 2 is not a label; labels must be 0 or 1")
        );
    }

    #[test]
    fn next_row_finds_every_line_and_comma() {
        // Every text of up to 11 bytes of `,`, `a` and `\n`: the rows, their lines and
        // their fields' bounds are those of splitting the bytes by hand.
        let alphabet = [b',', 0xac, b'\n'];
        let mut bounds = Vec::new();
        for len in 0..=11u32 {
            for code in 0..3usize.pow(len) {
                let text: Vec<u8> = (0..len)
                    .map(|i| alphabet[code / 3usize.pow(i) % 3])
                    .collect();
                let mut fast = Fast::new(&text[..]);
                let mut got = Vec::new();
                while let Some((line, range)) = fast.next_row(&mut bounds).ok().flatten() {
                    // Bounds are into the scanner's buffer (refills move its bytes).
                    let fields: Vec<Vec<u8>> = bounds
                        .iter()
                        .map(|&(s, e)| fast.buf[s..e].to_vec())
                        .collect();
                    got.push((line, fast.buf[range].to_vec(), fields));
                }
                let mut pieces: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
                if pieces.last().is_some_and(|p| p.is_empty()) {
                    pieces.pop();
                }
                let expected: Vec<_> = pieces
                    .iter()
                    .enumerate()
                    .map(|(i, piece)| {
                        let fields = piece.split(|&b| b == b',').map(<[u8]>::to_vec);
                        (i as u64 + 1, piece.to_vec(), fields.collect::<Vec<_>>())
                    })
                    .collect();
                assert_eq!(got, expected, "{text:?}");
            }
        }
    }

    #[test]
    fn a_record_of_many_lines_keeps_the_lines_after_it() {
        // A quoted field of 300 000 line ends (blocks of them counted, not kept), then
        // a blank line and a bad row: its line is the file's.
        let mut text = "\"confidence\",correct,note\n0.5,1,\"".to_owned();
        text += &"\n".repeat(300_000);
        text += "\"\n0.25,0,x\n\n";
        let line = text.matches('\n').count() + 1;
        text += "1.5,1,y\n";
        let names = ColumnNames {
            score: "confidence",
            label: "correct",
        };
        let error = read_binary(text.as_bytes(), names, false).err().unwrap();
        assert_eq!(
            error.to_string(),
            format!("line {line}: `confidence` 1.5 is out of range; scores must be in [0, 1]")
        );
    }

    /// The record spans csv-core (as configured in `Parser::new`) reads in `input`:
    /// each record's first line and its bytes (from its first byte to its line end,
    /// outside quotes, or the end of the input).
    fn csv_core_records(input: &[u8]) -> Vec<(u64, usize)> {
        let mut reader = csv_core::ReaderBuilder::new()
            .terminator(csv_core::Terminator::Any(b'\n'))
            .build();
        let (mut output, mut ends) = (vec![0; input.len() + 1], vec![0; input.len() + 1]);
        let (mut at, mut records, mut start) = (0, Vec::new(), None);
        loop {
            // Blank lines before a record are skipped by the parser: not the record's.
            let first = *start.get_or_insert_with(|| {
                at + input[at..].iter().take_while(|&&b| b == b'\n').count()
            });
            // (A record the end of the input ends has no line end of its own.)
            let eof = at == input.len();
            let (result, read, _, _) = reader.read_record(&input[at..], &mut output, &mut ends);
            at += read;
            match result {
                csv_core::ReadRecordResult::Record => {
                    let end = if eof { at } else { at - 1 };
                    let line = 1 + memchr::memchr_iter(b'\n', &input[..first]).count() as u64;
                    records.push((line, end - first));
                    start = None;
                }
                csv_core::ReadRecordResult::End => return records,
                csv_core::ReadRecordResult::InputEmpty => {}
                other => panic!("{other:?}"),
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// The record bound measures the records the parser reads: with a limit of the
        /// longest record's bytes it passes the input, in blocks of any size; with one
        /// byte less it names the first line of the first record over it.
        #[test]
        fn the_record_bound_follows_the_parsers_quoting(
            input in proptest::collection::vec(
                proptest::prop_oneof![
                    3 => proptest::strategy::Just(b'"'),
                    3 => proptest::strategy::Just(b','),
                    3 => proptest::strategy::Just(b'\n'),
                    4 => proptest::strategy::Just(b'a'),
                    1 => proptest::strategy::Just(b'\r'),
                ],
                0..200,
            ),
            block in 1usize..40,
        ) {
            let records = csv_core_records(&input);
            let longest = records.iter().map(|&(_, bytes)| bytes).max().unwrap_or(0);
            let run = |limit: usize| {
                let mut quoting = Quoting::new(1, limit);
                let mut line = 1;
                for chunk in input.chunks(block) {
                    quoting.account(chunk, line)?;
                    line += memchr::memchr_iter(b'\n', chunk).count() as u64;
                }
                Ok::<(), u64>(())
            };
            proptest::prop_assert_eq!(run(longest), Ok(()));
            if longest > 0 {
                let first_over = records.iter().find(|&&(_, bytes)| bytes == longest).unwrap().0;
                proptest::prop_assert_eq!(run(longest - 1), Err(first_over));
            }
        }
    }

    /// A quoted field may span lines, but not past 1 MiB in all: the record is refused
    /// with its first line. Many blank lines, or a record just under the bound, are read.
    #[test]
    fn a_record_of_many_lines_is_bounded() {
        let names = ColumnNames {
            score: "confidence",
            label: "correct",
        };
        let file = |note_lines: usize| {
            let mut text = "confidence,correct,note\n0.5,1,x\n0.25,0,\"".to_owned();
            text += &"note line\n".repeat(note_lines);
            text += "\"\n0.75,1,y\n";
            text
        };
        // 10 bytes a note line: the record (from its `0.25`) is 7 + 1 + 10 k + 1 bytes.
        let under = (MAX_LINE_BYTES - 8) / 10;
        let read = read_binary(file(under).as_bytes(), names, false).unwrap();
        assert_eq!(read.samples.scores, [0.5, 0.25, 0.75]);
        let error = read_binary(file(under + 1).as_bytes(), names, false)
            .err()
            .unwrap();
        assert_eq!(
            error.to_string(),
            "line 3: the record starting on this line (a quoted field spans lines) is longer \
             than the limit of 1048576 bytes (1 MiB)"
        );
        let mut blank = "confidence,correct\n0.5,1\n\"0.25\",0\n".to_owned();
        blank += &"\n".repeat(2 * MAX_LINE_BYTES);
        blank += "0.75,1\n";
        let read = read_binary(blank.as_bytes(), names, false).unwrap();
        assert_eq!(read.samples.scores, [0.5, 0.25, 0.75]);
    }

    #[test]
    fn line_limit_counts_lines_across_blocks() {
        // The same bytes in blocks of every size count the same lines.
        let text: Vec<u8> = b"a\nbb\n\nccc\ndddd\n".repeat(7);
        let lines = 1 + memchr::memchr_iter(b'\n', &text).count() as u64;
        for block in 1..text.len() {
            let mut limit = LineLimit::new(&text[..], 1);
            for chunk in text.chunks(block) {
                limit.account(chunk).unwrap();
            }
            assert_eq!(limit.line, lines, "block {block}");
        }
        // A long line inside one big block is caught with its number.
        let mut long = b"h\nok\n".to_vec();
        long.extend(std::iter::repeat(b'0').take(MAX_LINE_BYTES + 1));
        long.extend(b"\nend\n");
        assert_eq!(LineLimit::new(&b""[..], 1).account(&long), Err(3));
        let mut exact = b"h\n".to_vec();
        exact.extend(std::iter::repeat(b'0').take(MAX_LINE_BYTES));
        exact.extend(b"\nend\n");
        assert_eq!(LineLimit::new(&b""[..], 1).account(&exact), Ok(()));
    }
}

/// Timing of the reader alone, on one thread from memory (not a test of results):
/// `TCE_CSV_BENCH=FILE cargo test --release -p tce-cli --bin tce -- --ignored --nocapture time_reading`.
#[cfg(test)]
mod timing {
    #[test]
    #[ignore]
    fn time_reading() {
        let Ok(path) = std::env::var("TCE_CSV_BENCH") else {
            return;
        };
        let bytes = std::fs::read(path).unwrap();
        let names = super::ColumnNames {
            score: "confidence",
            label: "correct",
        };
        let runs: usize = std::env::var("TCE_CSV_RUNS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(15);
        let mut times = Vec::new();
        for _ in 0..runs {
            let start = std::time::Instant::now();
            let table = super::read_binary(&bytes[..], names, false).unwrap();
            times.push(start.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(table);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "read_binary: median {:.2} ms, fastest {:.2} ms over {runs} runs",
            times[runs / 2],
            times[0]
        );
    }
}
