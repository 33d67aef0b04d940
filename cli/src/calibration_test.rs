//! `tce test`: is the model calibrated? The library's [`tce::decision::calibration_test`]
//! of one input, printed by the library's renderers ([`tce::decision::text::summary`],
//! `--json` [`tce::decision::json::json`]). This module reads the options and the input;
//! nothing else.

use clap::Args;
use tce::decision::{calibration_test, StatisticChoice, TestError, TestSettings};
use tce::report::json::Source;

use crate::{input, parse_bins, parse_norm, Failure, InputArgs};

/// Options of `tce test`.
#[derive(Args)]
pub struct TestArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The statistic that decides: `auto` (the most powerful at your n against the model
    /// fitted to your data) or a name: an estimator (`ece_sweep:equal_mass`,
    /// `ece_debias:equal_mass`, `ece_bin:equal_width`, `smece`, `kde`, ...; p-value by
    /// consistency resampling), `spiegelhalter` or `hosmer_lemeshow`. Every default
    /// statistic's p-value is printed either way.
    #[arg(long, value_name = "NAME|auto", default_value = "auto", value_parser = parse_statistic)]
    pub statistic: StatisticChoice,
    /// Consistency resamples B: p = (1 + #{T* >= T}) / (B + 1) (1 to 100000,
    /// tce::decision::MAX_RESAMPLES).
    #[arg(long, value_name = "B", default_value_t = tce::decision::DEFAULT_RESAMPLES)]
    pub resamples: usize,
    /// The level of the decision: calibration is rejected when p <= alpha.
    #[arg(long, default_value_t = tce::decision::DEFAULT_ALPHA)]
    pub alpha: f64,
    /// Seed of the resamples and the power simulations.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Bins of ECE_bin, ECE_debias and MCE.
    #[arg(long, default_value_t = 15, value_parser = parse_bins)]
    pub bins: usize,
    /// Exponent p of the binned estimators (smooth ECE is at p = 1).
    #[arg(long, value_name = "P", default_value = "2", value_parser = parse_norm)]
    pub norm: tce::Norm,
    /// Cap on the sweep's number of bins b*.
    #[arg(long, value_name = "N", value_parser = parse_bins)]
    pub max_bins: Option<usize>,
    /// Let the sweep try at most n - 1 bins, as the paper's released code does.
    #[arg(long)]
    pub paper_limit: bool,
    /// Equal-mass groups of the Hosmer-Lemeshow test (chi-square with as many degrees of
    /// freedom).
    #[arg(long, value_name = "G", default_value_t = tce::decision::DEFAULT_GROUPS)]
    pub groups: usize,
    /// Label sets simulated from the fitted model to measure each statistic's power
    /// (with `--statistic auto`; 1 to 100000).
    #[arg(long, value_name = "M", default_value_t = tce::decision::DEFAULT_POWER_SIMULATIONS)]
    pub power_simulations: usize,
    /// Print one JSON object (every p-value, the powers, the decision and every setting).
    #[arg(long)]
    pub json: bool,
}

fn parse_statistic(text: &str) -> Result<StatisticChoice, String> {
    text.parse()
        .map_err(|e: tce::decision::ParseStatisticError| e.to_string())
}

fn failure(e: TestError) -> Failure {
    match e {
        TestError::ResamplesOutOfRange(_) => Failure::input(format!("--resamples: {e}")),
        TestError::InvalidAlpha(_) => Failure::input(format!("--alpha: {e}")),
        TestError::PowerSimulationsOutOfRange(_) => {
            Failure::input(format!("--power-simulations: {e}"))
        }
        TestError::BinsOutOfRange(_) => Failure::input(format!("--bins: {e}")),
        TestError::GroupsOutOfRange(_) => Failure::input(format!("--groups: {e}")),
        TestError::NoSamples
        | TestError::Push(_)
        | TestError::TooManySamples(_)
        | TestError::OutOfMemory { .. }
        | TestError::Undefined(_) => Failure::input(e.to_string()),
    }
}

impl TestArgs {
    /// The library's settings, checked by the library before any input is read.
    fn settings(&self) -> Result<TestSettings, Failure> {
        let settings = TestSettings {
            statistic: self.statistic,
            resamples: self.resamples,
            alpha: self.alpha,
            seed: self.seed,
            bins: self.bins,
            norm: self.norm,
            sweep: crate::sweep_options(self.max_bins, self.paper_limit),
            groups: self.groups,
            power_simulations: self.power_simulations,
        };
        settings.check().map_err(failure)?;
        Ok(settings)
    }
}

pub fn run(args: &TestArgs) -> Result<(), Failure> {
    let settings = args.settings()?;
    if args.input.classwise {
        return Err(Failure::input(
            "tce test tests the top-label confidences; --classwise is not supported yet",
        ));
    }
    let loaded = args.input.load()?;
    let file = args.input.file.display().to_string();
    let input::Data::TopLabel { scores, labels } = &loaded.data else {
        unreachable!("a top-label input without --classwise");
    };
    let result = calibration_test(scores, labels, &settings).map_err(failure)?;
    crate::write_stdout(&if args.json {
        let source = Source {
            file,
            input: &loaded.provenance,
        };
        tce::decision::json::json(&source, &result) + "\n"
    } else {
        tce::decision::text::summary(&file, &result)
    })
}
