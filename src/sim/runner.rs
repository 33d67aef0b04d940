//! The simulation runner: a grid of (n, bins, estimator) cells over m repetitions of one
//! model, each cell summarised as mean, bias, standard deviation and RMSE against the TCE.
//!
//! Common random numbers (SPEC §7): repetition j draws one data set of the largest size,
//! `model.dataset(seed, j, max_n)`, and every n of the grid takes its prefix, so every
//! cell sees the same m data sets and differences between cells are not sampling noise.
//!
//! Repetitions run in parallel (rayon); their results are collected in repetition order
//! and summarised sequentially, so the output is bit-identical whatever the thread count.
//! Per repetition and n, the prefix is sorted once into a [`SortedBuffer`] and every
//! (estimator, bins) cell of that n reads it.

use core::fmt;

use rayon::prelude::*;

use super::estimator::{DataView, EstimatorSpec, EvaluateError, Evaluation, EvaluationSettings};
use super::model::Synthetic;
use super::percent;
use super::tce::TceError;
use crate::buffer::{Slot, SortedBuffer};

/// What to simulate: the grid of cells and the protocol.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// Sample sizes n, in the order the cells list them.
    pub sizes: Vec<usize>,
    /// Bin counts of the estimators that take one (ignored by the sweep and KDE).
    pub bins: Vec<usize>,
    /// The estimators.
    pub estimators: Vec<EstimatorSpec>,
    /// The number of repetitions m (data sets per cell).
    pub repetitions: usize,
    /// The seed of every repetition's data set.
    pub seed: u64,
    /// The norm and sweep settings shared by all estimators.
    pub settings: EvaluationSettings,
}

/// Where a cell sits in the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellKey {
    /// The sample size.
    pub n: usize,
    /// The number of bins; `None` for the bin-free estimators (sweep, KDE).
    pub bins: Option<usize>,
    /// The estimator.
    pub estimator: EstimatorSpec,
}

/// Summary statistics of one cell's m estimates against the truth, in the estimates' unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Mean estimate.
    pub mean: f64,
    /// Mean estimate minus the truth.
    pub bias: f64,
    /// Standard deviation of the estimates (divisor m − 1; 0 when m = 1).
    pub sd: f64,
    /// Root mean squared error against the truth (divisor m).
    pub rmse: f64,
    /// Monte-Carlo standard error of the bias (and of the mean): sd / √m.
    pub se: f64,
}

impl Summary {
    /// The summary of `values` (at least one) against `truth`.
    pub fn of(values: &[f64], truth: f64) -> Summary {
        let m = values.len() as f64;
        let mean = values.iter().sum::<f64>() / m;
        let squares_about = |centre: f64| values.iter().map(|x| (x - centre).powi(2)).sum::<f64>();
        let sd = if values.len() > 1 {
            (squares_about(mean) / (m - 1.0)).sqrt()
        } else {
            0.0
        };
        Summary {
            mean,
            bias: mean - truth,
            sd,
            rmse: (squares_about(truth) / m).sqrt(),
            se: sd / m.sqrt(),
        }
    }
}

/// One cell's results, in percent.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Where the cell sits in the grid.
    pub key: CellKey,
    /// Mean, bias, sd, RMSE and standard error, in percent.
    pub summary: Summary,
    /// The mean b* over the repetitions, for the sweep.
    pub mean_sweep_bins: Option<f64>,
    /// Every repetition's estimate in percent, in repetition order.
    pub estimates: Vec<f64>,
}

/// The results of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Simulation {
    /// The model's TCE_p, in percent.
    pub tce: f64,
    /// The number of repetitions m.
    pub repetitions: usize,
    /// The cells: n-major, then estimator, then bins, in the grid's orders.
    pub cells: Vec<Cell>,
}

impl Simulation {
    /// The cell at (n, bins, estimator), if the grid has it.
    pub fn cell(&self, n: usize, bins: Option<usize>, estimator: EstimatorSpec) -> Option<&Cell> {
        let key = CellKey { n, bins, estimator };
        self.cells.iter().find(|c| c.key == key)
    }
}

/// The most repetitions a [`Grid`] takes: every repetition's evaluation of every cell is
/// kept until the cells are summarised (about 50 bytes a repetition and cell), so a
/// count of 2^64 − 1 is refused at once rather than met by an allocation that cannot
/// succeed. A hundred times the default 1000.
pub const MAX_REPETITIONS: usize = 100_000;

/// What a simulation keeps per cell and repetition until the cells are summarised, in
/// bytes: the repetition's [`Evaluation`] of the cell and the cell's estimate in percent.
const BYTES_PER_RESULT: usize = core::mem::size_of::<Evaluation>() + core::mem::size_of::<f64>();

/// Why a simulation could not run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SimulationError {
    /// The grid has no sample size.
    NoSizes,
    /// A sample size is 0.
    ZeroSize,
    /// A sample size is above the most samples the simulator sorts
    /// ([`crate::buffer::MAX_CAPACITY`]); refused before any work.
    SizeTooLarge {
        /// The size.
        n: usize,
        /// The largest size.
        max: usize,
    },
    /// The allocator could not provide a repetition's data set of `n` samples or its
    /// sort storage; nothing is reported for the grid.
    OutOfMemory {
        /// The largest size of the grid.
        n: usize,
    },
    /// An estimator takes a number of bins but the grid lists none.
    NoBins,
    /// A bin count is 0.
    ZeroBins,
    /// The grid has no estimator.
    NoEstimators,
    /// The number of repetitions is 0.
    ZeroRepetitions,
    /// More repetitions than [`MAX_REPETITIONS`]; refused before any work.
    TooManyRepetitions {
        /// The repetitions asked for.
        repetitions: usize,
    },
    /// The allocator refused the memory the results of the grid's cells over its
    /// repetitions need ([`Grid::results_bytes`]), asked for before any work: too many
    /// sizes, bin counts or estimators for the repetitions.
    ResultsTooLarge {
        /// The grid's cells (`usize::MAX` past the address space).
        cells: usize,
        /// The repetitions.
        repetitions: usize,
        /// The bytes asked for (`usize::MAX` past the address space).
        bytes: usize,
    },
    /// Smooth ECE is in the grid but p ≠ 1 (it estimates an L1 distance).
    SmoothEceNeedsL1,
    /// The model's TCE could not be computed.
    Tce(TceError),
    /// An estimator failed on one data set (the first failure in repetition order).
    Evaluate {
        /// The cell.
        cell: CellKey,
        /// The repetition (0-based).
        repetition: usize,
        /// Why.
        cause: EvaluateError,
    },
}

impl fmt::Display for SimulationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSizes => f.write_str("no sample size given"),
            Self::ZeroSize => f.write_str("sample sizes must be at least 1"),
            Self::SizeTooLarge { n, max } => {
                write!(
                    f,
                    "sample size {n} is above the largest the simulator takes, {max}"
                )
            }
            Self::OutOfMemory { n } => write!(
                f,
                "cannot allocate a data set of {n} samples with its sort storage"
            ),
            Self::NoBins => f.write_str("an estimator takes a number of bins but none is given"),
            Self::ZeroBins => f.write_str("the number of bins must be at least 1"),
            Self::NoEstimators => f.write_str("no estimator given"),
            Self::ZeroRepetitions => f.write_str("the number of repetitions must be at least 1"),
            Self::TooManyRepetitions { repetitions } => write!(
                f,
                "{repetitions} repetitions: a simulation takes at most {MAX_REPETITIONS} (tce::sim::runner::MAX_REPETITIONS)"
            ),
            Self::ResultsTooLarge {
                cells,
                repetitions,
                bytes,
            } => write!(
                f,
                "cannot allocate {bytes} bytes for the results of {cells} cells over \
                 {repetitions} repetitions (fewer sizes, bin counts, estimators or \
                 repetitions need less)"
            ),
            Self::SmoothEceNeedsL1 => f.write_str(
                "smece estimates an L1 calibration error (compare it with TCE_1): use --norm 1",
            ),
            Self::Tce(e) => write!(f, "{e}"),
            Self::Evaluate {
                cell,
                repetition,
                cause,
            } => {
                write!(f, "{} with n = {}", cell.estimator, cell.n)?;
                if let Some(bins) = cell.bins {
                    write!(f, ", {bins} bins")?;
                }
                write!(f, ", repetition {repetition}: {cause}")
            }
        }
    }
}

impl std::error::Error for SimulationError {}

impl Grid {
    fn validate(&self) -> Result<(), SimulationError> {
        if self.sizes.is_empty() {
            return Err(SimulationError::NoSizes);
        }
        if self.sizes.contains(&0) {
            return Err(SimulationError::ZeroSize);
        }
        let max = crate::buffer::MAX_CAPACITY;
        if let Some(&n) = self.sizes.iter().find(|&&n| n > max) {
            return Err(SimulationError::SizeTooLarge { n, max });
        }
        if self.estimators.is_empty() {
            return Err(SimulationError::NoEstimators);
        }
        if self.bins.contains(&0) {
            return Err(SimulationError::ZeroBins);
        }
        if self.bins.is_empty() && self.estimators.iter().any(EstimatorSpec::uses_bins) {
            return Err(SimulationError::NoBins);
        }
        if self.repetitions == 0 {
            return Err(SimulationError::ZeroRepetitions);
        }
        if self.repetitions > MAX_REPETITIONS {
            return Err(SimulationError::TooManyRepetitions {
                repetitions: self.repetitions,
            });
        }
        if self.settings.norm != crate::Norm::L1
            && self.estimators.iter().any(|e| e.kind().needs_l1())
        {
            return Err(SimulationError::SmoothEceNeedsL1);
        }
        // Asked for and given back at once: an error here, not an abort part way through.
        let bytes = self.results_bytes().unwrap_or(usize::MAX);
        let mut probe: Vec<u8> = Vec::new();
        probe
            .try_reserve_exact(bytes)
            .map_err(|_| SimulationError::ResultsTooLarge {
                cells: self.cell_count().unwrap_or(usize::MAX),
                repetitions: self.repetitions,
                bytes,
            })
    }

    /// The number of cells, counted without listing them: sizes × (bin counts × the
    /// estimators that take them + the others). `None` past `usize`.
    pub fn cell_count(&self) -> Option<usize> {
        let binned = self.estimators.iter().filter(|e| e.uses_bins()).count();
        let unbinned = self.estimators.len() - binned;
        self.sizes
            .len()
            .checked_mul(binned.checked_mul(self.bins.len())?.checked_add(unbinned)?)
    }

    /// The bytes the results hold at their peak, an estimate: per cell its [`Cell`] and
    /// key, and per cell and repetition the evaluation kept until the cells are
    /// summarised and the estimate in percent (32 bytes). `None` past `usize`.
    /// [`simulate`] asks the allocator for them before any work
    /// ([`SimulationError::ResultsTooLarge`]).
    pub fn results_bytes(&self) -> Option<usize> {
        let cells = self.cell_count()?;
        let per_cell = core::mem::size_of::<Cell>() + core::mem::size_of::<CellKey>();
        cells.checked_mul(per_cell)?.checked_add(
            cells
                .checked_mul(self.repetitions)?
                .checked_mul(BYTES_PER_RESULT)?,
        )
    }

    /// The (bins, estimator) cells of one n, in cell order.
    fn cells_of_size(&self) -> impl Iterator<Item = (Option<usize>, EstimatorSpec)> + '_ {
        self.estimators.iter().flat_map(move |&estimator| {
            let bins: Vec<Option<usize>> = if estimator.uses_bins() {
                self.bins.iter().copied().map(Some).collect()
            } else {
                vec![None]
            };
            bins.into_iter().map(move |b| (b, estimator))
        })
    }

    /// Every cell, in the order of [`Simulation::cells`].
    pub fn cells(&self) -> Vec<CellKey> {
        self.sizes
            .iter()
            .flat_map(|&n| {
                self.cells_of_size()
                    .map(move |(bins, estimator)| CellKey { n, bins, estimator })
            })
            .collect()
    }
}

/// Every cell's evaluation on repetition `repetition`'s data set, in cell order.
/// `storage` holds at least max n slots (2 max n for the radix sort: see
/// `storage::sorting_slots`); it is reused across calls to spare allocations.
fn run_repetition<M: Synthetic + ?Sized>(
    model: &M,
    grid: &Grid,
    repetition: usize,
    storage: &mut [Slot],
) -> Result<Vec<Evaluation>, SimulationError> {
    let max_n = grid.sizes.iter().copied().max().unwrap_or(0);
    let (scores, labels) = model
        .try_dataset(grid.seed, repetition as u64, max_n)
        .map_err(|e| SimulationError::OutOfMemory { n: e.n })?;
    let mut evaluations = Vec::new();
    for &n in &grid.sizes {
        let (scores, labels) = (&scores[..n], &labels[..n]);
        // 2n slots: the free half is the radix sort's scratch (`storage::sorting_slots`).
        let room = storage.len().min(2 * n);
        let mut buffer =
            SortedBuffer::with_storage(&mut storage[..room]).expect("sizes are validated non-zero");
        buffer
            .push_batch(scores, labels)
            .expect("the model draws valid samples and the storage holds max n");
        let data = DataView {
            sorted: buffer.sorted(),
            scores,
            labels,
        };
        for (bins, estimator) in grid.cells_of_size() {
            let evaluation = estimator
                .evaluate(&data, bins, &grid.settings)
                .map_err(|cause| SimulationError::Evaluate {
                    cell: CellKey { n, bins, estimator },
                    repetition,
                    cause,
                })?;
            evaluations.push(evaluation);
        }
    }
    Ok(evaluations)
}

/// Runs the grid on `model`: m repetitions in parallel on the current rayon pool, then
/// one summary per cell. `progress` is called once per finished repetition (from any
/// thread). Values are in percent.
pub fn simulate<M: Synthetic + ?Sized>(
    model: &M,
    grid: &Grid,
    progress: &(dyn Fn() + Sync),
) -> Result<Simulation, SimulationError> {
    grid.validate()?;
    let tce = percent(
        model
            .tce(grid.settings.norm.p())
            .map_err(SimulationError::Tce)?,
    );
    let max_n = grid.sizes.iter().copied().max().unwrap_or(0);
    // Collected in repetition order whatever the scheduling; the first failure in that
    // order is the one reported.
    let per_repetition: Vec<Result<Vec<Evaluation>, SimulationError>> = (0..grid.repetitions)
        .into_par_iter()
        .map_init(
            || crate::storage::sorting_slots(max_n),
            |storage, repetition| {
                let result = match storage {
                    Ok(storage) => run_repetition(model, grid, repetition, storage),
                    Err(_) => Err(SimulationError::OutOfMemory { n: max_n }),
                };
                progress();
                result
            },
        )
        .collect();
    let per_repetition = per_repetition.into_iter().collect::<Result<Vec<_>, _>>()?;

    let cells = grid
        .cells()
        .into_iter()
        .enumerate()
        .map(|(index, key)| {
            let of_cell = || per_repetition.iter().map(move |rep| rep[index]);
            let estimates: Vec<f64> = of_cell().map(|e| percent(e.value)).collect();
            let sweep_bins: Option<usize> = of_cell().map(|e| e.sweep_bins).sum();
            Cell {
                key,
                summary: Summary::of(&estimates, tce),
                mean_sweep_bins: sweep_bins.map(|total| total as f64 / grid.repetitions as f64),
                estimates,
            }
        })
        .collect();
    Ok(Simulation {
        tce,
        repetitions: grid.repetitions,
        cells,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Beta, Curve, Model};

    fn spec(name: &str) -> EstimatorSpec {
        name.parse().unwrap()
    }

    fn calibrated() -> Model {
        Model::new(
            Beta::new(1.1, 0.1).unwrap(),
            Curve::polynomial(1.0).unwrap(),
        )
    }

    fn grid(estimators: &[&str], sizes: &[usize], bins: &[usize], repetitions: usize) -> Grid {
        Grid {
            sizes: sizes.to_vec(),
            bins: bins.to_vec(),
            estimators: estimators.iter().map(|s| spec(s)).collect(),
            repetitions,
            seed: 7,
            settings: EvaluationSettings::default(),
        }
    }

    fn run(model: &Model, grid: &Grid) -> Simulation {
        simulate(model, grid, &|| {}).unwrap()
    }

    #[test]
    fn summary_matches_a_direct_computation() {
        let values = [1.0, 2.0, 4.0, 7.0];
        let s = Summary::of(&values, 3.0);
        // mean 3.5; squares about the mean 6.25 + 2.25 + 0.25 + 12.25 = 21.
        assert!((s.mean - 3.5).abs() < 1e-15);
        assert!((s.bias - 0.5).abs() < 1e-15);
        assert!((s.sd - (21.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!((s.se - (21.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-15);
        // squares about 3: 4 + 1 + 1 + 16 = 22.
        assert!((s.rmse - (22.0f64 / 4.0).sqrt()).abs() < 1e-15);
        let one = Summary::of(&[2.0], 0.0);
        assert_eq!((one.sd, one.se, one.rmse), (0.0, 0.0, 2.0));
    }

    #[test]
    fn cells_summarise_the_per_repetition_estimates_in_percent() {
        let model = calibrated();
        let g = grid(
            &["ece_bin:equal_width", "ece_sweep:equal_mass"],
            &[50, 100],
            &[3, 5],
            6,
        );
        let sim = run(&model, &g);
        assert_eq!(sim.tce, 0.0);
        assert_eq!(sim.cells.len(), 2 * (2 + 1));
        assert_eq!(
            sim.cells.iter().map(|c| c.key).collect::<Vec<_>>(),
            g.cells()
        );
        // Recompute one cell by hand from the data sets: the matrix of 6 repetitions.
        let cell = sim.cell(50, Some(5), spec("ece_bin:equal_width")).unwrap();
        let direct: Vec<f64> = (0..6)
            .map(|rep| {
                let (scores, labels) = model.dataset(7, rep, 100);
                let mut buffer = crate::buffer::InlineBuffer::<50>::new();
                buffer.push_batch(&scores[..50], &labels[..50]).unwrap();
                let e = buffer
                    .sorted()
                    .ece_bin(crate::Binning::EQUAL_WIDTH, 5, crate::Norm::L2)
                    .unwrap();
                100.0 * e.value
            })
            .collect();
        assert_eq!(cell.estimates, direct);
        assert_eq!(cell.summary, Summary::of(&direct, 0.0));
        let sweep = sim.cell(100, None, spec("ece_sweep:equal_mass")).unwrap();
        assert!(sweep.mean_sweep_bins.unwrap() >= 1.0);
        assert!(cell.mean_sweep_bins.is_none());
    }

    #[test]
    fn cells_share_their_data_sets() {
        // One bin is the same binning whether equal-width or equal-mass: the cells agree
        // exactly only if they saw the same data sets. Likewise an estimator listed twice.
        let g = grid(
            &[
                "ece_bin:equal_width",
                "ece_bin:equal_mass",
                "ece_sweep:equal_mass",
                "ece_sweep:equal_mass",
            ],
            &[40, 80],
            &[1],
            20,
        );
        let sim = run(&calibrated(), &g);
        for n in [40, 80] {
            let ew = sim.cell(n, Some(1), spec("ece_bin:equal_width")).unwrap();
            let em = sim.cell(n, Some(1), spec("ece_bin:equal_mass")).unwrap();
            assert_eq!(ew.estimates, em.estimates);
            let sweeps: Vec<_> = sim
                .cells
                .iter()
                .filter(|c| c.key.n == n && c.key.bins.is_none())
                .collect();
            assert_eq!(sweeps.len(), 2);
            assert_eq!(sweeps[0], sweeps[1]);
        }
    }

    #[test]
    fn calibrated_model_shows_the_bias_of_ece_bin_and_not_of_debias() {
        // d = 1: TCE = 0, so every ECE_bin estimate is an overestimate; the debiased
        // estimator removes most of it (its clamp at 0 and square root keep a little).
        let g = grid(
            &["ece_bin:equal_width", "ece_debias:equal_mass"],
            &[200],
            &[15],
            200,
        );
        let sim = run(&calibrated(), &g);
        let bin = sim
            .cell(200, Some(15), spec("ece_bin:equal_width"))
            .unwrap()
            .summary;
        let debias = sim
            .cell(200, Some(15), spec("ece_debias:equal_mass"))
            .unwrap()
            .summary;
        assert!(bin.bias > 10.0 * bin.se, "{bin:?}");
        assert!(debias.bias.abs() < bin.bias / 2.0, "{debias:?} vs {bin:?}");
        assert!(
            (bin.rmse.powi(2) - (bin.bias.powi(2) + bin.sd.powi(2) * 199.0 / 200.0)).abs() < 1e-9
        );
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let g = grid(
            &[
                "ece_bin:equal_mass",
                "ece_sweep:equal_width",
                "ece_debias:equal_mass",
                "kde",
            ],
            &[60, 120],
            &[2, 8],
            12,
        );
        let model = Model::new(
            Beta::new(2.0, 1.0).unwrap(),
            Curve::polynomial(2.0).unwrap(),
        );
        let on = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| run(&model, &g))
        };
        let (one, two) = (on(1), on(2));
        assert_eq!(one, two);
        let bits = |s: &Simulation| -> Vec<u64> {
            s.cells
                .iter()
                .flat_map(|c| c.estimates.iter().map(|x| x.to_bits()))
                .collect()
        };
        assert_eq!(bits(&one), bits(&two));
    }

    #[test]
    fn progress_is_reported_once_per_repetition() {
        let count = std::sync::atomic::AtomicUsize::new(0);
        let g = grid(&["kde"], &[30], &[], 9);
        simulate(&calibrated(), &g, &|| {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(count.into_inner(), 9);
    }

    #[test]
    fn smooth_ece_runs_at_p_1_and_is_biased_upwards_when_calibrated() {
        let mut g = grid(&["smece"], &[200], &[], 20);
        g.settings.norm = crate::Norm::L1;
        let simulation = run(&calibrated(), &g);
        let cell = &simulation.cells[0];
        // TCE = 0 and smECE ≥ 0: the bias is the mean estimate, and above 0.
        assert_eq!(simulation.tce, 0.0);
        assert!(
            cell.summary.bias > 0.0 && cell.summary.bias == cell.summary.mean,
            "{cell:?}"
        );
    }

    #[test]
    fn results_beyond_the_allocator_are_refused_before_any_work() {
        let model = calibrated();
        let mut g = grid(&["ece_bin:equal_width", "kde"], &[5, 7], &[2, 3, 4], 10);
        assert_eq!(g.cell_count(), Some(g.cells().len()));
        assert_eq!(g.cell_count(), Some(2 * (3 + 1)));
        // 10^5 sizes × 10^5 bin counts × 10^5 repetitions: about 32 PB of results. It ran
        // on (and would have aborted when the allocator gave out); refused at once.
        g.sizes = vec![5; 100_000];
        g.bins = vec![2; 100_000];
        g.repetitions = MAX_REPETITIONS;
        let cells = 100_000 * (100_000 + 1);
        let bytes = g.results_bytes().unwrap();
        assert!(bytes > cells * MAX_REPETITIONS * 32, "{bytes}");
        assert_eq!(
            simulate(&model, &g, &|| {}).unwrap_err(),
            SimulationError::ResultsTooLarge {
                cells,
                repetitions: MAX_REPETITIONS,
                bytes
            }
        );
    }

    #[test]
    fn bad_grids_are_named_errors() {
        let model = calibrated();
        let err = |g: &Grid| simulate(&model, g, &|| {}).unwrap_err();
        assert_eq!(err(&grid(&["kde"], &[], &[], 1)), SimulationError::NoSizes);
        assert_eq!(
            err(&grid(&["kde"], &[0, 5], &[], 1)),
            SimulationError::ZeroSize
        );
        assert_eq!(
            err(&grid(&[], &[5], &[2], 1)),
            SimulationError::NoEstimators
        );
        // Refused by the size alone, before the data set of 2^34 samples is drawn.
        let max = crate::buffer::MAX_CAPACITY;
        assert_eq!(
            err(&grid(&["kde"], &[5, max + 1, 1 << 34], &[], 1)),
            SimulationError::SizeTooLarge { n: max + 1, max }
        );
        assert_eq!(
            err(&grid(&["kde"], &[5], &[], MAX_REPETITIONS + 1)),
            SimulationError::TooManyRepetitions {
                repetitions: MAX_REPETITIONS + 1
            }
        );
        assert_eq!(
            err(&grid(&["mce:equal_width"], &[5], &[], 1)),
            SimulationError::NoBins
        );
        assert_eq!(
            err(&grid(&["mce:equal_width"], &[5], &[0], 1)),
            SimulationError::ZeroBins
        );
        assert_eq!(
            err(&grid(&["kde"], &[5], &[], 0)),
            SimulationError::ZeroRepetitions
        );
        assert_eq!(
            err(&grid(&["smece"], &[5], &[], 1)),
            SimulationError::SmoothEceNeedsL1
        );
        // One sample gives KDE no hit or a single one: no bandwidth either way.
        let failure = err(&grid(&["kde"], &[1], &[], 3));
        assert!(
            matches!(failure, SimulationError::Evaluate { repetition: 0, .. }),
            "{failure}"
        );
    }
}
