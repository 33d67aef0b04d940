//! `tce estimate`: every estimator of the paper over one input, and smooth ECE, as a
//! table or JSON.
//!
//! [`compute`] builds the report through the library (the CLI computes no estimate
//! itself); [`Report::table`] and `serde_json` both render that one report.
//! [`compute_classwise`] runs [`compute`] on each class's one-vs-rest samples and
//! combines the classes (docs/estimators.md, classwise calibration).

use std::fmt::Write as _;

use serde::Serialize;

use crate::input::ClassSamples;
use tce::report::ties::TieSummary;
use tce::{
    BinStats, Binning, Closure, Estimate, Histogram, Norm, Slot, SortedBuffer, SweepOptions, Ties,
};

/// What `tce estimate` computes: the options, resolved.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Bins of ECE_bin, ECE_debias and MCE.
    pub bins: usize,
    pub norm: Norm,
    /// Closure of the equal-width bins (the histogram and the EW sweep alike).
    pub closure: Closure,
    /// Tie handling of the equal-mass bins.
    pub ties: Ties,
    pub sweep: SweepOptions,
}

/// Which estimator a row reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Estimator {
    EceBin,
    EceSweep,
    EceDebias,
    Mce,
    /// Smooth ECE (`tce::smece`): no binning, an L1 distance whatever the norm.
    #[serde(rename = "smece")]
    SmoothEce,
}

impl Estimator {
    fn name(self) -> &'static str {
        match self {
            Estimator::EceBin => "ece_bin",
            Estimator::EceSweep => "ece_sweep",
            Estimator::EceDebias => "ece_debias",
            Estimator::Mce => "mce",
            Estimator::SmoothEce => "smece",
        }
    }
}

/// Which binning a row used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BinningKind {
    EqualWidth,
    EqualMass,
}

impl BinningKind {
    fn name(self) -> &'static str {
        match self {
            BinningKind::EqualWidth => "equal_width",
            BinningKind::EqualMass => "equal_mass",
        }
    }
}

/// One estimate: `bins` is the number of bins used (b* for the sweep), `value` a fraction.
/// Smooth ECE has no binning and no bins (both left out of the JSON) but a bandwidth σ*.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub estimator: Estimator,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binning: Option<BinningKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bins: Option<usize>,
    pub value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<f64>,
}

impl Row {
    pub(crate) fn new(estimator: Estimator, binning: BinningKind, estimate: Estimate) -> Self {
        Row {
            estimator,
            binning: Some(binning),
            bins: Some(estimate.bins),
            value: estimate.value,
            bandwidth: None,
        }
    }

    fn smooth_ece(estimate: tce::SmoothEce) -> Self {
        Row {
            estimator: Estimator::SmoothEce,
            binning: None,
            bins: None,
            value: estimate.value,
            bandwidth: Some(estimate.bandwidth),
        }
    }
}

/// Everything `tce estimate` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub n: usize,
    /// hits / n.
    pub accuracy: f64,
    /// The mean of the scores.
    pub mean_confidence: f64,
    /// The exponent p.
    pub norm: f64,
    pub estimates: Vec<Row>,
    /// Distinct scores d (unknown for a histogram's state, which holds bins only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distinct_scores: Option<usize>,
    /// What the scores' ties mean for the binned estimators (`tce::report::ties`), when
    /// they matter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Slot storage for the sort of `rows` samples ([`tce::storage::sorting_slots`]), with
/// every page written once. A fresh page costs its first write a fault, about 3 µs on the
/// VM of docs/performance.md: 32 MB of slots at 10^6 rows took ~23 ms of faults, in the
/// push and the sort's first level. Made on a thread that has nothing else to do while
/// the input is read, they cost no wall time. `None` if the allocator refuses.
pub fn sort_storage_ahead(rows: usize) -> Option<Box<[Slot]>> {
    let mut slots = tce::storage::sorting_slots(rows).ok()?;
    // (Through `black_box`, so that the compiler cannot tell the slots are zero already
    // and drop the writes.)
    for page in std::hint::black_box(&mut slots[..]).chunks_mut(SLOTS_A_PAGE) {
        if let Some(slot) = page.first_mut() {
            *slot = Slot::EMPTY;
        }
    }
    Some(slots)
}

/// Slots in a 4 KiB page.
const SLOTS_A_PAGE: usize = 4096 / std::mem::size_of::<Slot>();

/// Computes the report through the library: equal-width ECE_bin, ECE_debias and MCE from the
/// streaming [`Histogram`] (the path production code runs), everything else from the
/// [`SortedBuffer`]. Both live on the heap, sized by `settings.bins` and the row count.
/// The sort's storage is `ahead` ([`sort_storage_ahead`]) if that has room for twice the
/// samples, else allocated here; the report is the same either way.
pub fn compute(
    scores: &[f64],
    labels: &[u8],
    settings: &Settings,
    ahead: Option<Box<[Slot]>>,
) -> Result<Report, String> {
    // Two threads: smooth ECE and the histogram read the rows as given, and nothing
    // else needs them; the sort and the estimators on the sorted samples take the other
    // thread (at n = 10^6 the two sides take about the same time, docs/performance.md).
    // Errors are taken in the order one thread would meet them: the histogram's, then
    // the sorted estimators' (in the report's row order), then smooth ECE's.
    std::thread::scope(|scope| {
        let side = scope.spawn(|| {
            let histogram = histogram_rows(scores, labels, settings);
            let smooth =
                heap_vec(0.0, tce::smece::SCRATCH_LEN, "doubles").and_then(|mut scratch| {
                    tce::smooth_ece(scores, labels, &mut scratch).map_err(context("smooth ECE"))
                });
            (histogram, smooth)
        });
        let sorted = sorted_rows(scores, labels, settings, ahead);
        let (histogram, smooth) = side.join().map_err(|_| {
            "smooth ECE and the histogram: the thread computing them panicked".to_string()
        })?;
        let mut report = report(histogram?, sorted, scores.len(), settings)?;
        report.estimates.push(Row::smooth_ece(smooth?));
        Ok(report)
    })
}

/// What the histogram gives: equal-width ECE_bin, ECE_debias and MCE (the equal-width
/// bins of the sorted samples are these, bit for bit), and the totals.
struct HistogramRows {
    ece_bin: Result<Estimate, String>,
    ece_debias: Result<Estimate, String>,
    mce: Result<Estimate, String>,
    total: BinStats,
}

fn histogram_rows(
    scores: &[f64],
    labels: &[u8],
    settings: &Settings,
) -> Result<HistogramRows, String> {
    let mut bin_storage = heap_vec(BinStats::EMPTY, settings.bins, "bins")?;
    let mut histogram = Histogram::with_storage(&mut bin_storage, settings.closure)
        .map_err(context("histogram"))?;
    histogram
        .push_batch(scores, labels)
        .map_err(context("histogram"))?;
    Ok(HistogramRows {
        ece_bin: histogram
            .ece_bin(settings.norm)
            .map_err(context("estimate")),
        ece_debias: histogram
            .ece_debias(settings.norm)
            .map_err(context("estimate")),
        mce: histogram.mce().map_err(context("estimate")),
        total: histogram.total(),
    })
}

/// What the sorted samples give: every other binned estimate, in the report's order
/// (an error stops the list up to the sweeps).
struct SortedRows {
    em_ece_bin: Estimate,
    ew_sweep: Estimate,
    em_sweep: Estimate,
    /// After the histogram's ECE_debias, whose error comes first.
    em_debias: Result<Estimate, String>,
    /// Last in the report, after the histogram's MCE, whose error comes first.
    em_mce: Result<Estimate, String>,
    ties: TieSummary,
}

fn sorted_rows(
    scores: &[f64],
    labels: &[u8],
    settings: &Settings,
    ahead: Option<Box<[Slot]>>,
) -> Result<SortedRows, String> {
    let (ew, em) = (
        Binning::EqualWidth(settings.closure),
        Binning::EqualMass(settings.ties),
    );
    let (bins, norm) = (settings.bins, settings.norm);
    // Room for the radix sort (2n slots), zero-filled so that no pass writes them
    // before the samples do; the sort takes two threads, as the other side is done by
    // then at n = 10^6 (docs/performance.md).
    let room = scores.len().max(1).saturating_mul(2);
    let mut slot_storage = match ahead {
        Some(storage) if storage.len() >= room => storage,
        _ => tce::storage::sorting_slots(scores.len()).map_err(|e| format!("samples: {e}"))?,
    };
    let mut buffer =
        SortedBuffer::with_storage(&mut slot_storage).map_err(context("sample buffer"))?;
    buffer
        .push_batch(scores, labels)
        .map_err(context("sample buffer"))?;
    let sorted = buffer.sorted_parallel();
    let estimate =
        |result: Result<Estimate, tce::EstimateError>| result.map_err(context("estimate"));
    // The equal-mass bin statistics are computed once (one O(n) pass) and every fixed-B
    // estimator reads them, as `SortedSamples::{ece_bin, mce, ece_debias}` would from a
    // pass of their own: the same statistics, so the same values, bit for bit.
    // The two sweeps, each a few passes over the sorted samples, on two threads (the
    // other side is done by then: docs/performance.md).
    let (em_bins, (ew_sweep, em_sweep)) = rayon::join(
        || sorted.bins(em, bins).collect::<Vec<BinStats>>(),
        || {
            rayon::join(
                || sorted.ece_sweep(ew, norm, settings.sweep),
                || sorted.ece_sweep(em, norm, settings.sweep),
            )
        },
    );
    Ok(SortedRows {
        em_ece_bin: estimate(tce::estimate::ece_bin(em_bins.iter().copied(), norm))?,
        ew_sweep: estimate(ew_sweep)?,
        em_sweep: estimate(em_sweep)?,
        em_debias: estimate(tce::estimate::ece_debias(em_bins.iter().copied(), norm)),
        em_mce: estimate(tce::estimate::mce(em_bins.iter().copied())),
        ties: TieSummary::of(&sorted),
    })
}

/// The report's rows but smooth ECE, in their order; the first error in that order
/// wins, as when one thread computed them one after the other.
fn report(
    histogram: HistogramRows,
    sorted: Result<SortedRows, String>,
    n: usize,
    settings: &Settings,
) -> Result<Report, String> {
    use BinningKind::{EqualMass as EM, EqualWidth as EW};
    use Estimator::*;
    let ew_ece_bin = histogram.ece_bin?;
    let sorted = sorted?;
    let estimates = vec![
        Row::new(EceBin, EW, ew_ece_bin),
        Row::new(EceBin, EM, sorted.em_ece_bin),
        Row::new(EceSweep, EW, sorted.ew_sweep),
        Row::new(EceSweep, EM, sorted.em_sweep),
        Row::new(EceDebias, EW, histogram.ece_debias?),
        Row::new(EceDebias, EM, sorted.em_debias?),
        Row::new(Mce, EW, histogram.mce?),
        Row::new(Mce, EM, sorted.em_mce?),
    ];
    let total = histogram.total;
    Ok(Report {
        n,
        accuracy: total.accuracy().unwrap_or(0.0),
        mean_confidence: total.mean_score().unwrap_or(0.0),
        norm: settings.norm.p(),
        estimates,
        distinct_scores: Some(sorted.ties.distinct),
        notes: sorted.ties.notes(settings.bins, settings.ties),
    })
}

/// The report of weighted rows (`--weight-col`), through `tce::weights`: ECE_bin,
/// ECE_sweep, ECE_debias and MCE on equal-width and equal-weight bins, and smooth ECE
/// through `tce::smece::smooth_ece_weighted` (frequency weights: docs/estimators.md,
/// Weights): the rows of the unweighted report. `n` counts the rows read (zero weights
/// included); accuracy and mean confidence are weighted means.
pub fn compute_weighted(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    settings: &Settings,
) -> Result<Report, String> {
    use BinningKind::{EqualMass as EM, EqualWidth as EW};
    use Estimator::*;
    let (ew, em) = (
        Binning::EqualWidth(settings.closure),
        Binning::EqualMass(settings.ties),
    );
    let (bins, norm) = (settings.bins, settings.norm);
    let weighted = |e: Result<Estimate, tce::weights::WeightError>| e.map_err(context("estimate"));
    // One bin holds the weighted totals.
    let (total, _) =
        tce::weights::bins(scores, labels, weights, ew, 1).map_err(context("estimate"))?;
    let mut estimates = vec![
        Row::new(
            EceBin,
            EW,
            weighted(tce::weights::ece_bin(
                scores, labels, weights, ew, bins, norm,
            ))?,
        ),
        Row::new(
            EceBin,
            EM,
            weighted(tce::weights::ece_bin(
                scores, labels, weights, em, bins, norm,
            ))?,
        ),
        Row::new(
            EceSweep,
            EW,
            weighted(tce::weights::ece_sweep(
                scores,
                labels,
                weights,
                ew,
                norm,
                settings.sweep,
            ))?,
        ),
        Row::new(
            EceSweep,
            EM,
            weighted(tce::weights::ece_sweep(
                scores,
                labels,
                weights,
                em,
                norm,
                settings.sweep,
            ))?,
        ),
        Row::new(
            EceDebias,
            EW,
            weighted(tce::weights::ece_debias(
                scores, labels, weights, ew, bins, norm,
            ))?,
        ),
        Row::new(
            EceDebias,
            EM,
            weighted(tce::weights::ece_debias(
                scores, labels, weights, em, bins, norm,
            ))?,
        ),
        Row::new(
            Mce,
            EW,
            weighted(tce::weights::mce(scores, labels, weights, ew, bins))?,
        ),
        Row::new(
            Mce,
            EM,
            weighted(tce::weights::mce(scores, labels, weights, em, bins))?,
        ),
    ];
    let smooth = heap_vec(0.0, tce::smece::SCRATCH_LEN, "doubles").and_then(|mut scratch| {
        tce::smece::smooth_ece_weighted(scores, labels, weights, &mut scratch)
            .map_err(context("smooth ECE"))
    })?;
    estimates.push(Row::smooth_ece(smooth));
    let total = total[0];
    Ok(Report {
        n: scores.len(),
        accuracy: total.weighted_hits / total.weight,
        mean_confidence: total.weighted_scores / total.weight,
        norm: norm.p(),
        estimates,
        distinct_scores: None,
        notes: vec![
            "rows weighted (--weight-col or --weights) as frequency weights (equal-mass bins \
             hold equal weight; the sweeps try up to one bin per unit of weight; smooth ECE \
             smooths Σw·(f − y) and Σw)"
                .to_owned(),
        ],
    })
}

/// One class of a classwise report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassReport {
    /// The class id k.
    pub class: usize,
    /// The CSV column of the class (`class k` for an array).
    pub name: String,
    /// The fraction of rows whose true class is k (the accuracy of its one-vs-rest
    /// samples).
    pub frequency: f64,
    /// The mean of p_k.
    pub mean_score: f64,
    pub estimates: Vec<Row>,
}

/// A combined estimate over the classes: `bins` is absent for the sweep, whose b*
/// differs between classes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MarginalRow {
    pub estimator: Estimator,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binning: Option<BinningKind>,
    pub bins: Option<usize>,
    pub value: f64,
}

/// Everything `tce estimate --classwise` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClasswiseReport {
    /// Rows (each class has n samples).
    pub n: usize,
    /// The exponent p.
    pub norm: f64,
    /// Each estimator over the classes: the l_p mean (Σ_k v_k^p / K)^(1/p) for
    /// ECE_bin, ECE_sweep and ECE_debias (Kumar et al.'s marginal calibration error,
    /// classes weighted equally), the maximum for MCE.
    pub marginal: Vec<MarginalRow>,
    pub classes: Vec<ClassReport>,
    /// Whether the rows were weighted (frequencies and mean scores then weighted means).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub weighted: bool,
}

/// The classwise report: [`compute`] over each class (with `weights`, one per row,
/// [`compute_weighted`]: every class's one-vs-rest samples are the rows, so they carry
/// the rows' weights), then [`ClasswiseReport::marginal`].
pub fn compute_classwise(
    columns: &[ClassSamples],
    weights: Option<&[f64]>,
    settings: &Settings,
) -> Result<ClasswiseReport, String> {
    let mut classes = Vec::with_capacity(columns.len());
    for column in columns {
        let report = match weights {
            Some(weights) => compute_weighted(&column.scores, &column.labels, weights, settings),
            None => compute(&column.scores, &column.labels, settings, None),
        }
        .map_err(|e| format!("class {}: {e}", column.class))?;
        classes.push(ClassReport {
            class: column.class,
            name: column.name.clone(),
            frequency: report.accuracy,
            mean_score: report.mean_confidence,
            estimates: report.estimates,
        });
    }
    let p = settings.norm.p();
    let first = classes.first().ok_or("no classes")?;
    let marginal = (0..first.estimates.len())
        .map(|i| {
            let row = &first.estimates[i];
            // Kumar et al.'s l_p mean (MCE: the maximum), as the classwise report combines.
            let kind = match row.estimator {
                Estimator::Mce => tce::sim::EstimatorKind::Mce,
                Estimator::SmoothEce => tce::sim::EstimatorKind::SmoothEce,
                _ => tce::sim::EstimatorKind::EceBin,
            };
            let values: Vec<f64> = classes.iter().map(|c| c.estimates[i].value).collect();
            let value = tce::report::classwise::combine(kind, &values, settings.norm);
            let same_bins = classes.iter().all(|c| c.estimates[i].bins == row.bins);
            MarginalRow {
                estimator: row.estimator,
                binning: row.binning,
                bins: (row.estimator != Estimator::EceSweep && same_bins)
                    .then_some(row.bins)
                    .flatten(),
                value,
            }
        })
        .collect();
    Ok(ClasswiseReport {
        n: columns[0].scores.len(),
        norm: p,
        marginal,
        classes,
        weighted: weights.is_some(),
    })
}

impl ClasswiseReport {
    /// The human-readable form: the combined estimates, then one line per class.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "n                {}", self.n);
        let _ = writeln!(
            out,
            "classes          {} (classwise: each class one-vs-rest)",
            self.classes.len()
        );
        let _ = writeln!(out, "norm             {}", self.norm);
        if self.weighted {
            let _ = writeln!(
                out,
                "weights          frequency weights: each row's one-vs-rest samples carry its weight"
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "over the classes: l_p mean (marginal calibration error), MCE: maximum"
        );
        let _ = writeln!(
            out,
            "{:<10}  {:<11}  {:>5}  {:>8}",
            "estimator", "binning", "bins", "value"
        );
        for row in &self.marginal {
            let bins = match (row.bins, row.estimator) {
                (Some(b), _) => b.to_string(),
                (None, Estimator::SmoothEce) => "-".to_owned(),
                (None, _) => "b*".to_owned(),
            };
            let _ = writeln!(
                out,
                "{:<10}  {:<11}  {:>5}  {:>8.6}",
                row.estimator.name(),
                row.binning.map_or("-", BinningKind::name),
                bins,
                row.value
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "per class (ew: equal width, em: equal mass)");
        let mut head = format!(
            "{:>5}  {:<12}  {:>9}  {:>10}",
            "class", "column", "frequency", "mean score"
        );
        if let Some(first) = self.classes.first() {
            for row in &first.estimates {
                let column = match row.binning {
                    Some(BinningKind::EqualWidth) => format!("{}/ew", row.estimator.name()),
                    Some(BinningKind::EqualMass) => format!("{}/em", row.estimator.name()),
                    None => row.estimator.name().to_owned(),
                };
                let _ = write!(head, "  {column:>13}");
            }
        }
        let _ = writeln!(out, "{head}");
        for class in &self.classes {
            let name: String = class.name.chars().take(12).collect();
            let _ = write!(
                out,
                "{:>5}  {:<12}  {:>9.6}  {:>10.6}",
                class.class, name, class.frequency, class.mean_score
            );
            for row in &class.estimates {
                let _ = write!(out, "  {:>13.6}", row.value);
            }
            let _ = writeln!(out);
        }
        out
    }
}

/// Prefixes a library error with what failed.
fn context<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("{what}: {e}")
}

/// `vec![value; len]`, but a failed allocation (say `--bins 10000000000`) is an error
/// message rather than an abort.
fn heap_vec<T: Clone>(value: T, len: usize, what: &str) -> Result<Vec<T>, String> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| format!("cannot allocate storage for {len} {what}"))?;
    v.resize(len, value);
    Ok(v)
}

impl Report {
    /// The human-readable form: a few summary lines, then one aligned row per estimate.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "n                {}", self.n);
        let _ = writeln!(out, "accuracy         {:.6}", self.accuracy);
        let _ = writeln!(out, "mean confidence  {:.6}", self.mean_confidence);
        let _ = writeln!(out, "norm             {}", self.norm);
        // Smooth ECE's bandwidth σ*; its value is a row (an L1 distance at any norm).
        for row in &self.estimates {
            if let Some(bandwidth) = row.bandwidth {
                let _ = writeln!(out, "smece bandwidth  {bandwidth:.6} (smece is L1)");
            }
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<10}  {:<11}  {:>5}  {:>8}",
            "estimator", "binning", "bins", "value"
        );
        for row in &self.estimates {
            let _ = writeln!(
                out,
                "{:<10}  {:<11}  {:>5}  {:>8.6}",
                row.estimator.name(),
                row.binning.map_or("-", BinningKind::name),
                row.bins.map_or("-".to_string(), |b| b.to_string()),
                row.value
            );
        }
        for note in &self.notes {
            let _ = writeln!(out, "\nnote: {note}.");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC §9.
    const F: [f64; 20] = [
        0.955, 0.943, 0.892, 0.998, 0.78, 0.995, 0.227, 1.0, 0.916, 0.908, 0.997, 0.936, 0.965,
        0.986, 0.906, 0.734, 0.864, 0.976, 0.738, 0.851,
    ];
    const Y: [u8; 20] = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0];

    fn settings(norm: Norm) -> Settings {
        Settings {
            bins: 15,
            norm,
            closure: Closure::Left,
            ties: Ties::Split,
            sweep: SweepOptions::default(),
        }
    }

    fn value(report: &Report, estimator: Estimator, binning: BinningKind) -> (usize, f64) {
        let row = report
            .estimates
            .iter()
            .find(|r| r.estimator == estimator && r.binning == Some(binning))
            .unwrap();
        (row.bins.unwrap(), row.value)
    }

    /// The sort's storage made ahead, of any length with room, gives the same report,
    /// bit for bit, as storage allocated in `compute`; one without room is passed over.
    #[test]
    fn storage_ahead_gives_the_same_report() {
        let n = 200_000;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let (mut scores, mut labels) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            scores.push(if state % 5 == 0 {
                1.0
            } else {
                1.0 - 0.9 * u * u * u
            });
            labels.push(u8::from(state % 7 < 5));
        }
        let bits = |r: &Report| {
            r.estimates
                .iter()
                .map(|row| (row.bins, row.value.to_bits()))
                .collect::<Vec<_>>()
        };
        let fresh = compute(&scores, &labels, &settings(Norm::L2), None).unwrap();
        for rows in [n, n + 12_345, n - 1] {
            let ahead = sort_storage_ahead(rows).unwrap();
            assert_eq!(ahead.len(), 2 * rows);
            let report = compute(&scores, &labels, &settings(Norm::L2), Some(ahead)).unwrap();
            assert_eq!(bits(&report), bits(&fresh), "ahead for {rows} rows");
            assert_eq!(report.table(), fresh.table());
        }
    }

    #[test]
    fn reproduces_the_worked_example() {
        use BinningKind::*;
        use Estimator::*;
        let close = |(bins, value): (usize, f64), (b, v): (usize, f64)| {
            assert_eq!(bins, b);
            assert!((value - v).abs() < 1e-12, "{value} vs {v}");
        };
        let r = compute(&F, &Y, &settings(Norm::L2), None).unwrap();
        assert_eq!(r.n, 20);
        assert_eq!(r.accuracy, 0.85);
        close(value(&r, EceBin, EqualWidth), (15, 0.136057083608));
        close(value(&r, EceBin, EqualMass), (15, 0.209971188500));
        close(value(&r, EceSweep, EqualMass), (9, 0.146112599274));
        close(value(&r, EceSweep, EqualWidth), (11, 0.076884984939));
        close(value(&r, EceDebias, EqualMass), (15, 0.108649206164));
        close(value(&r, EceDebias, EqualWidth), (15, 0.0));
        let r = compute(&F, &Y, &settings(Norm::L1), None).unwrap();
        close(value(&r, EceBin, EqualWidth), (15, 0.091050000000));
        close(value(&r, EceSweep, EqualMass), (9, 0.104650000000));
        assert_eq!(r.estimates.len(), 9);
        // Smooth ECE: relplot 1.0.3's smECE on SPEC §9, the same at every norm.
        let smooth = r.estimates.last().unwrap();
        assert_eq!(smooth.estimator, SmoothEce);
        assert_eq!((smooth.binning, smooth.bins), (None, None));
        assert!((smooth.value - 0.05689408892454488).abs() < 1e-12);
        assert_eq!(smooth.bandwidth, Some(0.0576171875));
        let table = r.table();
        assert!(table.contains("smece bandwidth  0.057617"), "{table}");
        assert!(
            table.contains("smece       -                -  0.056894"),
            "{table}"
        );
    }
}
