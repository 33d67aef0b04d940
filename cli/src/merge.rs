//! `tce merge`: the single-machine collector. Decodes state files in the portable format
//! (docs/monitoring.md, as `tce_*_encode` in C and `to_bytes()` in Python write them),
//! merges them with the core's exact merges and prints the estimates of the merged state.
//!
//! Kinds merge with their own kind only: histograms with histograms of the same bins and
//! closure (exact), reservoirs with reservoirs of the same capacity (a uniform sample of
//! every stream), sorted buffers by appending their samples, sliding windows as if each
//! later file's held samples were pushed, oldest first, after the earlier ones (the window
//! keeps the first file's size; the order of the files matters), decaying histograms of
//! the same bins, closure and half-life as if every stream ended at the same moment.
//!
//! A file that cannot be read or decoded is bad input (exit 2, naming it), or with
//! `--skip-bad` left out and listed; files that decode but do not fit together (another
//! kind, other bins or capacity) are always an error naming the file: skipping them would
//! hide a mistake in what was collected, not a corrupted transfer.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use tce::estimate::BinSummary;
use tce::portable::{frame_shape, DecodeError, FrameShape};
use tce::{
    BinStats, BoxedDecayingHistogram, BoxedHistogram, BoxedReservoir, BoxedWindow, Closure,
    DecayedBin, DecayingHistogram, Histogram, Norm, Reservoir, SlidingWindow, Slot, SortedBuffer,
    SortedSamples, Ties,
};

use crate::estimate::{self, BinningKind, Estimator, Report, Row};
use crate::{json_line, parse_bins, parse_norm, write_stdout, ClosureArg, Failure, TiesArg};

#[derive(Args)]
pub struct MergeArgs {
    /// Encoded state files (tce's portable format), all of one kind.
    #[arg(required = true, value_name = "STATE_FILES")]
    pub files: Vec<PathBuf>,
    /// Leave out files that cannot be read or decoded (each is reported, on stderr and in
    /// the JSON's `skipped`) instead of failing on the first.
    #[arg(long)]
    pub skip_bad: bool,
    /// Bins of the estimates of sample states (buffers, reservoirs, windows); a
    /// histogram's bins are its own.
    #[arg(long, default_value_t = 15, value_parser = parse_bins)]
    pub bins: usize,
    /// Exponent p of the l_p calibration error (p >= 1).
    #[arg(long, value_name = "P", default_value = "2", value_parser = parse_norm)]
    pub norm: Norm,
    /// Closure of the equal-width bins of sample states (a histogram's is its own).
    #[arg(long, value_enum, default_value_t = ClosureArg::Left)]
    pub closure: ClosureArg,
    /// Equal-mass tie handling for sample states.
    #[arg(long, value_enum, default_value_t = TiesArg::Split)]
    pub ties: TiesArg,
    /// Cap on the sweep's number of bins b* (sample states).
    #[arg(long, value_name = "N", value_parser = parse_bins)]
    pub max_bins: Option<usize>,
    /// Let the sweep try at most n - 1 bins, as the paper's released code does.
    #[arg(long)]
    pub paper_limit: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One decoded state file.
enum State {
    Histogram(BoxedHistogram),
    /// A sorted buffer's samples (buffers merge by appending, so the samples are all
    /// that is kept).
    Buffer(Vec<f64>, Vec<u8>),
    Reservoir(BoxedReservoir),
    Window(BoxedWindow),
    Decaying(BoxedDecayingHistogram),
}

impl State {
    fn kind(&self) -> &'static str {
        match self {
            State::Histogram(_) => "histogram",
            State::Buffer(..) => "buffer",
            State::Reservoir(_) => "reservoir",
            State::Window(_) => "window",
            State::Decaying(_) => "decaying_histogram",
        }
    }
}

/// `vec![value; len]` boxed, with a failed allocation (a crafted frame claiming 2^31
/// samples of capacity) as an error rather than an abort.
fn storage<T: Clone>(value: T, len: usize) -> Result<Box<[T]>, String> {
    tce::storage::filled(value, len).map_err(|e| e.to_string())
}

/// Storage the operating system commits only as samples are written: a window or
/// reservoir frame of a few bytes may claim a large size (one not yet full).
fn zeroed<T: tce::storage::ZeroIsEmpty>(len: usize) -> Result<Box<[T]>, String> {
    tce::storage::zeroed(len).map_err(|e| e.to_string())
}

fn samples_of(sorted: SortedSamples<'_>) -> (Vec<f64>, Vec<u8>) {
    sorted.iter().unzip()
}

/// Decodes one frame of any kind into a state of its shape.
fn decode(bytes: &[u8]) -> Result<State, String> {
    let text = |e: DecodeError| e.to_string();
    let config = |e: tce::ConfigError| e.to_string();
    Ok(match frame_shape(bytes).map_err(text)? {
        FrameShape::Histogram { closure, bins } => {
            tce::binning::check_bin_count(bins).map_err(config)?;
            let mut h = Histogram::with_boxed_storage(storage(BinStats::EMPTY, bins)?, closure)
                .map_err(config)?;
            h.decode(bytes).map_err(text)?;
            State::Histogram(h)
        }
        FrameShape::Buffer { samples } => {
            tce::buffer::check_capacity(samples.max(1)).map_err(config)?;
            let mut b = SortedBuffer::with_boxed_storage(storage(Slot::EMPTY, samples.max(1))?)
                .map_err(config)?;
            b.decode(bytes).map_err(text)?;
            let (scores, labels) = samples_of(b.sorted());
            State::Buffer(scores, labels)
        }
        FrameShape::Reservoir { capacity } => {
            tce::buffer::check_capacity(capacity).map_err(config)?;
            let mut r =
                Reservoir::with_boxed_storage(zeroed::<Slot>(capacity)?, 0).map_err(config)?;
            r.decode(bytes).map_err(text)?;
            State::Reservoir(r)
        }
        FrameShape::Window { size } => {
            tce::window::check_size(size).map_err(config)?;
            let mut w =
                SlidingWindow::with_boxed_storage(zeroed::<Slot>(size)?, zeroed::<f64>(size)?)
                    .map_err(config)?;
            w.decode(bytes).map_err(text)?;
            State::Window(w)
        }
        FrameShape::Decaying { closure, bins } => {
            tce::binning::check_bin_count(bins).map_err(config)?;
            // Any valid half-life: decoding replaces it with the frame's.
            let mut d = DecayingHistogram::with_boxed_storage(
                storage(DecayedBin::EMPTY, bins)?,
                closure,
                1.0,
            )
            .map_err(config)?;
            d.decode(bytes).map_err(text)?;
            State::Decaying(d)
        }
        // A CUSUM depends on the order of its samples: two streams' alarms do not
        // determine their interleaving's (see tce::alarm).
        FrameShape::Alarm { .. } => {
            return Err(
                "calibration alarms do not merge (a CUSUM depends on the order of \
                        its samples): push the pairs into one alarm"
                    .into(),
            )
        }
    })
}

/// How much of a state file is read at a time: the most read past the end of a frame (or
/// past the start of bytes that cannot be one) before the reading stops.
const READ_CHUNK: u64 = 64 * 1024;

/// The bytes of the state file at `path`, read no further than they can still be a frame:
/// after each chunk the core's [`frame_shape`] looks at what has been read, and only
/// while it answers [`DecodeError::Truncated`] (a frame whose header declares more bytes
/// than have arrived) or accepts the bytes (to see that nothing trails the frame) does
/// the reading go on. So a file that is not a state (`/dev/zero`, a 2 GB file of other
/// data) costs one chunk before its header is refused, and one with a valid header costs
/// the length that header declares (at most 4 GiB, the format's 32-bit length), never
/// the whole file. Checking a prefix that is still short of its declared length takes
/// constant time: the checksum is only computed once every declared byte is there.
/// The format's layout stays in the core; this only reads the decoder's answer.
fn read_frame_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let unreadable = |e: std::io::Error| format!("cannot read it: {e}");
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    loop {
        let read = (&mut file)
            .take(READ_CHUNK)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if read == 0 {
            return Ok(bytes);
        }
        match frame_shape(&bytes) {
            Err(DecodeError::Truncated) | Ok(_) => {}
            // Refused whatever follows: `decode` names why.
            Err(_) => return Ok(bytes),
        }
    }
}

/// Merges `next` (from `file`) into `into` (first read from `first`).
fn merge(into: &mut State, next: State, file: &str, first: &str) -> Result<(), String> {
    let refuse = |why: String| Err(format!("{file}: cannot merge into {first}: {why}"));
    match (into, next) {
        (State::Histogram(a), State::Histogram(b)) => {
            a.merge(&b).or_else(|e| refuse(e.to_string()))
        }
        (State::Buffer(scores, labels), State::Buffer(s, l)) => {
            scores.extend(s);
            labels.extend(l);
            Ok(())
        }
        (State::Reservoir(a), State::Reservoir(b)) => {
            a.merge(&b).or_else(|e| refuse(e.to_string()))
        }
        (State::Window(a), State::Window(b)) => a.merge(&b).or_else(|e| refuse(e.to_string())),
        (State::Decaying(a), State::Decaying(b)) => a.merge(&b).or_else(|e| refuse(e.to_string())),
        (into, next) => refuse(format!(
            "a {} state, and {first} holds a {} state: states of different kinds do not merge",
            next.kind(),
            into.kind()
        )),
    }
}

/// A file left out under `--skip-bad`, and why.
#[derive(Serialize)]
struct Skipped {
    file: String,
    error: String,
}

#[derive(Serialize)]
struct MergeSettingsJson {
    files: Vec<String>,
    skip_bad: bool,
    bins: usize,
    norm: f64,
    closure: ClosureArg,
    ties: TiesArg,
    max_bins: Option<usize>,
    paper_limit: bool,
}

/// The JSON of `tce merge`.
#[derive(Serialize)]
struct MergeJson<'a> {
    tce_version: &'static str,
    command: &'static str,
    settings: MergeSettingsJson,
    /// The kind of the merged states.
    kind: &'static str,
    /// How many states were merged.
    states: usize,
    skipped: &'a [Skipped],
    /// Samples the merged stream saw (reservoirs and windows hold fewer than that; the
    /// estimates are over the held ones, `n`).
    seen: u64,
    /// The bins and closure of a merged histogram.
    #[serde(skip_serializing_if = "Option::is_none")]
    histogram_bins: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    histogram_closure: Option<ClosureArg>,
    #[serde(flatten)]
    merged: Merged<'a>,
}

/// Why a merged state without samples has no estimates.
const NO_SAMPLES: &str = "the merged state holds no samples";

/// The estimates of the merged state, or what stands in for them when it holds no sample.
#[derive(Serialize)]
#[serde(untagged)]
enum Merged<'a> {
    /// The fields of `tce estimate --json`.
    Estimated(&'a Report),
    /// The same fields for no samples: n 0, accuracy and mean confidence `null`, no
    /// estimates, and why.
    Empty(Empty),
}

#[derive(Serialize)]
struct Empty {
    n: usize,
    accuracy: Option<f64>,
    mean_confidence: Option<f64>,
    norm: f64,
    estimates: [Row; 0],
    estimates_unavailable: &'static str,
}

fn closure_arg(closure: Closure) -> ClosureArg {
    match closure {
        Closure::Left => ClosureArg::Left,
        Closure::Right => ClosureArg::Right,
    }
}

/// The three equal-width estimators of a histogram-like state, as `tce estimate` rows.
fn binned_rows(
    ece_bin: Result<tce::Estimate, tce::EstimateError>,
    ece_debias: Result<tce::Estimate, tce::EstimateError>,
    mce: Result<tce::Estimate, tce::EstimateError>,
) -> Result<Vec<Row>, Failure> {
    let row = |estimator, result: Result<tce::Estimate, tce::EstimateError>| {
        result
            .map(|e| Row::new(estimator, BinningKind::EqualWidth, e))
            .map_err(|e| Failure::input(format!("the merged state: {e}")))
    };
    Ok(vec![
        row(Estimator::EceBin, ece_bin)?,
        row(Estimator::EceDebias, ece_debias)?,
        row(Estimator::Mce, mce)?,
    ])
}

pub fn run(args: &MergeArgs) -> Result<(), Failure> {
    let mut merged: Option<(State, String)> = None;
    let mut states = 0usize;
    let mut skipped = Vec::new();
    for path in &args.files {
        let file = path.display().to_string();
        let decoded = read_frame_bytes(path).and_then(|bytes| decode(&bytes));
        let state = match decoded {
            Ok(state) => state,
            Err(error) if args.skip_bad => {
                eprintln!("tce: skipping {file}: {error}");
                skipped.push(Skipped { file, error });
                continue;
            }
            Err(error) => {
                return Err(Failure::input(format!(
                    "{file}: {error} (--skip-bad leaves out such files)"
                )))
            }
        };
        match &mut merged {
            None => merged = Some((state, file)),
            Some((into, first)) => merge(into, state, &file, first).map_err(Failure::input)?,
        }
        states += 1;
    }
    let Some((mut state, _)) = merged else {
        return Err(Failure::input(format!(
            "none of the {} files holds a valid state",
            args.files.len()
        )));
    };
    let settings = estimate::Settings {
        bins: args.bins,
        norm: args.norm,
        closure: match args.closure {
            ClosureArg::Left => Closure::Left,
            ClosureArg::Right => Closure::Right,
        },
        ties: match args.ties {
            TiesArg::Split => Ties::Split,
            TiesArg::Keep => Ties::Keep,
        },
        sweep: crate::sweep_options(args.max_bins, args.paper_limit),
    };
    let norm = args.norm;
    let from_samples = |(scores, labels): (Vec<f64>, Vec<u8>)| {
        if scores.is_empty() {
            return Ok(None);
        }
        estimate::compute(&scores, &labels, &settings, None)
            .map(Some)
            .map_err(Failure::internal)
    };
    let kind = state.kind();
    // `None`: the merged state holds no sample (a fleet just started), which is a valid
    // state with nothing to estimate, not an error.
    let (report, seen, histogram) = match &mut state {
        State::Histogram(h) => {
            let total = h.total();
            let report = (total.count() > 0)
                .then(|| {
                    let estimates = binned_rows(h.ece_bin(norm), h.ece_debias(norm), h.mce())?;
                    Ok::<_, Failure>(Report {
                        n: usize::try_from(total.count()).unwrap_or(usize::MAX),
                        accuracy: total.accuracy().unwrap_or(0.0),
                        mean_confidence: total.mean_score().unwrap_or(0.0),
                        norm: norm.p(),
                        estimates,
                        distinct_scores: None,
                        notes: Vec::new(),
                    })
                })
                .transpose()?;
            (report, total.count(), Some((h.bin_count(), h.closure())))
        }
        State::Decaying(d) => {
            let report = (d.samples() > 0)
                .then(|| {
                    let estimates = binned_rows(d.ece_bin(norm), d.ece_debias(norm), d.mce())?;
                    // Its accuracy and mean confidence are the decayed-weighted ones, as
                    // its estimates weigh the samples.
                    let (mut weight, mut hits, mut scores) = (0.0, 0.0, 0.0);
                    for bin in d.bins().iter().filter(|b| b.count() > 0) {
                        weight += bin.weight();
                        hits += bin.weight() * bin.accuracy();
                        scores += bin.weight() * bin.mean_score();
                    }
                    Ok::<_, Failure>(Report {
                        n: usize::try_from(d.samples()).unwrap_or(usize::MAX),
                        accuracy: hits / weight,
                        mean_confidence: scores / weight,
                        norm: norm.p(),
                        estimates,
                        distinct_scores: None,
                        notes: Vec::new(),
                    })
                })
                .transpose()?;
            (report, d.samples(), Some((d.bin_count(), d.closure())))
        }
        State::Buffer(scores, labels) => {
            let seen = scores.len() as u64;
            let samples = (std::mem::take(scores), std::mem::take(labels));
            (from_samples(samples)?, seen, None)
        }
        State::Reservoir(r) => {
            let seen = r.seen();
            (from_samples(samples_of(r.samples()))?, seen, None)
        }
        State::Window(w) => {
            let seen = w.seen();
            (from_samples(samples_of(w.samples()))?, seen, None)
        }
    };
    let merged = match &report {
        Some(report) => Merged::Estimated(report),
        None => Merged::Empty(Empty {
            n: 0,
            accuracy: None,
            mean_confidence: None,
            norm: norm.p(),
            estimates: [],
            estimates_unavailable: NO_SAMPLES,
        }),
    };
    let text = if args.json {
        json_line(&MergeJson {
            tce_version: crate::VERSION,
            command: "merge",
            settings: MergeSettingsJson {
                files: args.files.iter().map(|p| p.display().to_string()).collect(),
                skip_bad: args.skip_bad,
                bins: args.bins,
                norm: norm.p(),
                closure: args.closure,
                ties: args.ties,
                max_bins: args.max_bins,
                paper_limit: args.paper_limit,
            },
            kind,
            states,
            skipped: &skipped,
            seen,
            histogram_bins: histogram.map(|(b, _)| b),
            histogram_closure: histogram.map(|(_, c)| closure_arg(c)),
            merged,
        })?
    } else {
        let mut out = format!("merged           {states} {kind} states");
        if !skipped.is_empty() {
            out += &format!(" ({} files skipped)", skipped.len());
        }
        out += "\n";
        if let Some((bins, closure)) = histogram {
            let closure = match closure {
                Closure::Left => "left",
                Closure::Right => "right",
            };
            out += &format!("bins             {bins} equal width, {closure}-closed\n");
        }
        let held = report.as_ref().map_or(0, |r| r.n as u64);
        if seen != held {
            out += &format!("seen             {seen} (the estimates are over the n held)\n");
        }
        match &report {
            Some(report) => out + &report.table(),
            None => {
                out + &format!(
                    "n                0\nnorm             {}\n\nno estimates: {NO_SAMPLES}\n",
                    norm.p()
                )
            }
        }
    };
    write_stdout(&text)
}
