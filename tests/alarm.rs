#![cfg(feature = "std")]
//! Issue 39, part 1: the calibration alarm (`tce::alarm`). Its state (bad input, counts
//! at their bounds, the portable round trip, failed calls), and its stated false-alarm
//! rate checked by construction: on calibrated streams of the paper's models and of a
//! bundled file's fitted score density, the mean run length to a false alarm (ARL0) is
//! within Monte-Carlo error of the stated approximation and above the guaranteed bound;
//! on streams that turn miscalibrated it detects, and faster than a rolling ECE rule
//! tuned to the same false-alarm rate.
//!
//! The full table of docs/monitoring.md is made by the ignored test:
//!
//!     cargo test --release --test alarm -- --ignored --nocapture --test-threads 1 alarm_table

mod common;

use proptest::prelude::*;
use rand_xoshiro::Xoshiro256PlusPlus;
use tce::alarm::{
    approximate_arl0, guaranteed_arl0, information, threshold_for_arl0, CalibrationAlarm,
};
use tce::decision::construction::calibrated;
use tce::portable::{crc32, frame_shape, DecodeError, FrameShape};
use tce::sim::{repetition_rng, Beta, CalibrationCurve, Curve, FlexibleModel, Model};
use tce::{AlarmBin, Closure, InlineAlarm};
use tce::{ConfigError, PushError, MAX_COUNT};

/// θ = ln 2: the alternatives double or halve the odds (Steiner et al.'s choice).
const SHIFT: f64 = core::f64::consts::LN_2;
/// Bins of the alarms checked here.
const BINS: usize = 10;
type Alarm = InlineAlarm<BINS>;

/// An endless stream of one model's pairs, drawn in chunks.
struct Stream {
    model: FlexibleModel,
    rng: Xoshiro256PlusPlus,
    scores: Vec<f64>,
    labels: Vec<u8>,
    next: usize,
}

impl Stream {
    fn new(model: FlexibleModel, seed: u64, rep: u64) -> Stream {
        Stream {
            model,
            rng: repetition_rng(seed, rep),
            scores: Vec::new(),
            labels: Vec::new(),
            next: 0,
        }
    }

    fn pair(&mut self) -> (f64, u8) {
        if self.next == self.scores.len() {
            let (scores, labels) = self.model.try_sample(4096, &mut self.rng).unwrap();
            (self.scores, self.labels, self.next) = (scores, labels, 0);
        }
        let i = self.next;
        self.next += 1;
        (self.scores[i], self.labels[i])
    }
}

fn beta_model(alpha: f64, beta: f64, d: f64) -> FlexibleModel {
    FlexibleModel::from(Model::new(
        Beta::new(alpha, beta).unwrap(),
        Curve::polynomial(d).unwrap(),
    ))
}

/// ResNet-110 CIFAR-10's fitted score density with the identity curve (and its atoms
/// calibrated).
fn fitted_twin() -> FlexibleModel {
    let (scores, labels) = common::read_bundled("resnet110_c10_test.csv");
    let fit = tce::fit::flexible::fit_flexible(&scores, &labels, &Default::default()).unwrap();
    calibrated(&fit.model)
}

/// The model with the same scores (density and atoms) and T(c) = c^d.
fn with_exponent(model: &FlexibleModel, d: f64) -> FlexibleModel {
    FlexibleModel {
        curve: CalibrationCurve::Paper(Curve::polynomial(d).unwrap()),
        ..model.clone()
    }
}

/// The exponent d of T(c) = c^d whose TCE_2 on `model`'s scores is `tce` (bisection;
/// TCE grows with d > 1).
fn exponent_for_tce(model: &FlexibleModel, tce: f64) -> f64 {
    let (mut low, mut high) = (1.0f64, 2.0f64);
    while with_exponent(model, high).tce(2.0).unwrap() < tce {
        high *= 2.0;
    }
    for _ in 0..50 {
        let middle = 0.5 * (low + high);
        if with_exponent(model, middle).tce(2.0).unwrap() < tce {
            low = middle;
        } else {
            high = middle;
        }
    }
    0.5 * (low + high)
}

/// Run lengths to `alarms` false alarms of an alarm reset after each, on a calibrated
/// stream, and the mean information per sample seen.
fn run_lengths(alarm: &mut Alarm, stream: &mut Stream, alarms: usize) -> (Vec<u64>, f64) {
    let (mut lengths, mut information, mut samples) = (Vec::new(), 0.0, 0u64);
    alarm.reset();
    while lengths.len() < alarms {
        let (score, label) = stream.pair();
        alarm.push(score, label).unwrap();
        if alarm.alarm() {
            lengths.push(alarm.samples());
            information += alarm.mean_information() * alarm.samples() as f64;
            samples += alarm.samples();
            alarm.reset();
        }
    }
    (lengths, information / samples as f64)
}

/// Mean and its standard error.
fn mean_se(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// Sorted copy's quantile q (nearest rank).
fn quantile(sorted: &[u64], q: f64) -> u64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The mean information per sample of a model's scores, over `n` draws.
fn model_information(model: &FlexibleModel, n: usize, seed: u64) -> f64 {
    let mut stream = Stream::new(model.clone(), seed, 0);
    (0..n)
        .map(|_| information(SHIFT, stream.pair().0))
        .sum::<f64>()
        / n as f64
}

/// The rule people use today: the equal-width (15 bins) L2 ECE of the last `window`
/// pairs, alarming above a threshold once the window is full; cleared after an alarm.
struct RollingEce {
    window: usize,
    ring: Vec<(f64, u8)>,
    next: usize,
    filled: usize,
    counts: [f64; 15],
    hits: [f64; 15],
    scores: [f64; 15],
}

impl RollingEce {
    fn new(window: usize) -> RollingEce {
        RollingEce {
            window,
            ring: vec![(0.0, 0); window],
            next: 0,
            filled: 0,
            counts: [0.0; 15],
            hits: [0.0; 15],
            scores: [0.0; 15],
        }
    }

    fn clear(&mut self) {
        *self = RollingEce::new(self.window);
    }

    fn add(&mut self, (score, label): (f64, u8), sign: f64) {
        let bin = Closure::Left.bin_index(score, 15);
        self.counts[bin] += sign;
        self.hits[bin] += sign * f64::from(label);
        self.scores[bin] += sign * score;
    }

    /// Pushes a pair; the window's ECE once it is full.
    fn push(&mut self, pair: (f64, u8)) -> Option<f64> {
        if self.filled == self.window {
            let old = self.ring[self.next];
            self.add(old, -1.0);
        } else {
            self.filled += 1;
        }
        self.ring[self.next] = pair;
        self.next = (self.next + 1) % self.window;
        self.add(pair, 1.0);
        (self.filled == self.window).then(|| {
            let n = self.window as f64;
            let sum: f64 = (0..15)
                .filter(|&b| self.counts[b] > 0.5)
                .map(|b| (self.hits[b] - self.scores[b]).powi(2) / self.counts[b])
                .sum();
            (sum / n).sqrt()
        })
    }
}

/// Mean and standard deviation of the rolling ECE on a calibrated stream (every
/// `window`-th full window, so that the values are nearly independent).
fn ece_mean_sd(model: &FlexibleModel, window: usize, values: usize, seed: u64) -> (f64, f64) {
    let mut stream = Stream::new(model.clone(), seed, 0);
    let mut rolling = RollingEce::new(window);
    let mut seen = Vec::with_capacity(values);
    let mut i = 0usize;
    while seen.len() < values {
        if let Some(ece) = rolling.push(stream.pair()) {
            i += 1;
            if i % window == 0 {
                seen.push(ece);
            }
        }
    }
    let (mean, _) = mean_se(&seen);
    let sd =
        (seen.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (seen.len() - 1) as f64).sqrt();
    (mean, sd)
}

/// The rolling rule's mean run length to a false alarm at threshold `tau`, over
/// `alarms` alarms (a fixed seed: common random numbers across thresholds). Stops once
/// the runs pass `cap` samples in all: then the mean is at least cap/alarms, and
/// infinity is returned (a threshold far above the noise would never stop).
fn ece_arl0(
    model: &FlexibleModel,
    window: usize,
    tau: f64,
    alarms: usize,
    cap: f64,
    seed: u64,
) -> f64 {
    let mut stream = Stream::new(model.clone(), seed, 1);
    let mut rolling = RollingEce::new(window);
    let (mut run, mut total, mut count) = (0u64, 0u64, 0usize);
    while count < alarms {
        run += 1;
        if (total + run) as f64 > cap {
            return f64::INFINITY;
        }
        if rolling.push(stream.pair()).is_some_and(|ece| ece > tau) {
            total += run;
            count += 1;
            run = 0;
            rolling.clear();
        }
    }
    total as f64 / alarms as f64
}

/// The rolling rule's threshold whose ARL0 is `arl0` (bisection over common random
/// numbers), as mean + k·sd: returns (threshold, k).
fn tune_ece(
    model: &FlexibleModel,
    window: usize,
    (mean, sd): (f64, f64),
    arl0: f64,
    alarms: usize,
    seed: u64,
) -> (f64, f64) {
    let (mut low, mut high) = (0.0f64, 12.0f64);
    for _ in 0..12 {
        let k = 0.5 * (low + high);
        // Capped at the samples that decide the comparison: past alarms·arl0 the mean
        // is at least arl0.
        let cap = alarms as f64 * arl0;
        if ece_arl0(model, window, mean + k * sd, alarms, cap, seed) < arl0 {
            low = k;
        } else {
            high = k;
        }
    }
    let k = 0.5 * (low + high);
    (mean + k * sd, k)
}

/// Detection delays (samples after the change until the alarm; `None` when not within
/// `horizon`) of `reps` streams that are calibrated for `t0` samples, then follow
/// `after`. A run with a false alarm before t0 is drawn again (the usual conditional
/// delay); returns the delays and the number of such runs.
fn delays(
    detector: &mut dyn FnMut(Option<(f64, u8)>) -> bool,
    before: &FlexibleModel,
    after: &FlexibleModel,
    t0: u64,
    reps: usize,
    horizon: u64,
    seed: u64,
) -> (Vec<Option<u64>>, usize) {
    let (mut out, mut early, mut rep) = (Vec::new(), 0, 0u64);
    while out.len() < reps {
        rep += 1;
        detector(None);
        let mut calibrated = Stream::new(before.clone(), seed, 2 * rep);
        let mut changed = Stream::new(after.clone(), seed, 2 * rep + 1);
        if (0..t0).any(|_| detector(Some(calibrated.pair()))) {
            early += 1;
            continue;
        }
        out.push((1..=horizon).find(|_| detector(Some(changed.pair()))));
    }
    (out, early)
}

fn cusum_detector(h: f64) -> impl FnMut(Option<(f64, u8)>) -> bool {
    let mut alarm = Alarm::new(Closure::Left, SHIFT, h).unwrap();
    move |pair| match pair {
        None => {
            alarm.reset();
            false
        }
        Some((score, label)) => {
            alarm.push(score, label).unwrap();
            alarm.alarm()
        }
    }
}

fn ece_detector(window: usize, tau: f64) -> impl FnMut(Option<(f64, u8)>) -> bool {
    let mut rolling = RollingEce::new(window);
    move |pair| match pair {
        None => {
            rolling.clear();
            false
        }
        Some(pair) => rolling.push(pair).is_some_and(|ece| ece > tau),
    }
}

/// "median [q1, q3], p90", with misses counted past the horizon.
fn describe(delays: &[Option<u64>]) -> String {
    let mut d: Vec<u64> = delays.iter().map(|d| d.unwrap_or(u64::MAX)).collect();
    d.sort_unstable();
    let show = |v: u64| {
        if v == u64::MAX {
            "–".to_string()
        } else {
            v.to_string()
        }
    };
    let missed = delays.iter().filter(|d| d.is_none()).count();
    format!(
        "{} [{}, {}] {}{}",
        show(quantile(&d, 0.5)),
        show(quantile(&d, 0.25)),
        show(quantile(&d, 0.75)),
        show(quantile(&d, 0.9)),
        if missed > 0 {
            format!(" ({missed} missed)")
        } else {
            String::new()
        }
    )
}

fn models() -> Vec<(&'static str, FlexibleModel)> {
    vec![
        ("Beta(2.8, 0.05)", beta_model(2.8, 0.05, 1.0)),
        ("Beta(1.1, 0.1)", beta_model(1.1, 0.1, 1.0)),
        ("ResNet-110 CIFAR-10 fit", fitted_twin()),
    ]
}

/// The stated and the measured ARL0 of the alarm at `target` stated ARL0 on a model:
/// (Ī, h, run lengths' mean, its standard error).
fn measured_arl0(
    model: &FlexibleModel,
    target: f64,
    alarms: usize,
    seed: u64,
) -> (f64, f64, f64, f64) {
    let info = model_information(model, 200_000, seed);
    let h = threshold_for_arl0(target, info).unwrap();
    let mut alarm = Alarm::new(Closure::Left, SHIFT, h).unwrap();
    let mut stream = Stream::new(model.clone(), seed, 1);
    let (lengths, _) = run_lengths(&mut alarm, &mut stream, alarms);
    let lengths: Vec<f64> = lengths.iter().map(|&l| l as f64).collect();
    let (mean, se) = mean_se(&lengths);
    (info, h, mean, se)
}

/// The first table of docs/monitoring.md ("Calibration alarm"): stated and measured ARL0.
#[test]
#[ignore]
fn alarm_table_arl0() {
    let models = models();
    println!("| scores | stated ARL0 | Ī | h | guaranteed ARL0 (e^h/2) | measured ARL0 ± se (alarms) | measured / stated |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, model) in &models {
        for target in [1e3, 1e4, 1e5] {
            let alarms = 200;
            let (info, h, mean, se) = measured_arl0(model, target, alarms, 11);
            println!(
                "| {name} | {target:.0} | {info:.5} | {h:.3} | {:.0} | {mean:.0} ± {se:.0} ({alarms}) | {:.2} ± {:.2} |",
                guaranteed_arl0(h),
                mean / target,
                se / target
            );
        }
    }
}

/// The second table of docs/monitoring.md ("Calibration alarm"): detection delays of the
/// alarm and of the rolling ECE rule tuned to the same ARL0.
#[test]
#[ignore]
fn alarm_table_delays() {
    let models = models();
    let (target, window, t0, reps, horizon) = (1e4, 1000usize, 1000u64, 150usize, 100_000u64);
    println!("| scores | TCE_2 | d | alarm: h | alarm delay: median [q1, q3] p90 | rolling ECE: k (mean + k·sd) | rolling ECE delay: median [q1, q3] p90 |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, model) in &models {
        let (_, h, arl0, _) = measured_arl0(model, target, 300, 12);
        let moments = ece_mean_sd(model, window, 2000, 13);
        let (tau, k) = tune_ece(model, window, moments, arl0, 150, 14);
        // The usual 3-sd rule's own ARL0 (100 alarms; "inf" when above 2·10^5).
        let three_sd = ece_arl0(model, window, moments.0 + 3.0 * moments.1, 100, 2e7, 15);
        println!(
            "<!-- {name}: alarm ARL0 {arl0:.0}; ECE mean {:.5} sd {:.5}; mean + 3 sd has ARL0 {three_sd:.0} -->",
            moments.0, moments.1
        );
        for tce in [0.01, 0.02, 0.05] {
            let d = exponent_for_tce(model, tce);
            let after = with_exponent(model, d);
            let (cusum, early_c) =
                delays(&mut cusum_detector(h), model, &after, t0, reps, horizon, 16);
            let (ece, early_e) = delays(
                &mut ece_detector(window, tau),
                model,
                &after,
                t0,
                reps,
                horizon,
                16,
            );
            println!(
                "| {name} | {:.0} % | {d:.4} | {h:.3} | {} | {k:.2} | {} |<!-- early {early_c} {early_e} -->",
                tce * 100.0,
                describe(&cusum),
                describe(&ece)
            );
        }
    }
}

// ---- The suite's reduced version (debug build, each well under 30 s) ----

/// On calibrated streams the measured ARL0 is not below the stated approximation (within
/// 3 Monte-Carlo standard errors) nor below the guaranteed bound, and the approximation
/// is conservative by less than a factor 3 (the full table: 1.2–2.2).
#[test]
fn the_stated_arl0_holds_on_calibrated_streams() {
    for (name, model, seed) in [
        ("Beta(1.1, 0.1)", beta_model(1.1, 0.1, 1.0), 21),
        ("Beta(2.8, 0.05)", beta_model(2.8, 0.05, 1.0), 22),
    ] {
        // 150 alarms: the mean's standard error is about ARL0/√150, 8 %.
        let target = 400.0;
        let (info, h, mean, se) = measured_arl0(&model, target, 150, seed);
        assert!(
            mean + 3.0 * se >= target,
            "{name}: {mean} ± {se} < {target}"
        );
        assert!(mean <= 3.0 * target, "{name}: {mean} ± {se}, {target}");
        assert!(mean >= guaranteed_arl0(h), "{name}: {mean} {h}");
        // Pinned: the information of the paper's models with θ = ln 2.
        assert!(info > 0.001 && info < 0.02, "{name}: {info}");
    }
}

/// A stream that turns miscalibrated (TCE_2 5 %) at t0 is detected, every time, long
/// before a false alarm would come.
#[test]
fn a_miscalibrated_stream_is_detected() {
    let model = beta_model(1.1, 0.1, 1.0);
    let d = exponent_for_tce(&model, 0.05);
    let after = with_exponent(&model, d);
    assert!((after.tce(2.0).unwrap() - 0.05).abs() < 1e-9);
    let info = model_information(&model, 50_000, 31);
    let target = 1e4;
    let h = threshold_for_arl0(target, info).unwrap();
    let (delays, early) = delays(&mut cusum_detector(h), &model, &after, 500, 60, 20_000, 32);
    assert!(early <= 6, "{early}");
    let mut d: Vec<u64> = delays.iter().map(|d| d.unwrap()).collect();
    d.sort_unstable();
    // Measured (seed 32): median about 800 samples; a false alarm comes after 10^4.
    let median = quantile(&d, 0.5);
    assert!(median < 2000, "{median}");
}

/// Miscalibration that cancels across bins (over-confident above 1/2, under-confident
/// below) is found by the per-bin CUSUMs though the residuals sum to zero.
#[test]
fn miscalibration_that_cancels_across_bins_is_detected() {
    let mut alarm = Alarm::new(Closure::Left, SHIFT, 8.0).unwrap();
    let mut global = 0.0;
    let mut rng = repetition_rng(41, 0);
    use rand::Rng;
    let mut n = 0;
    while !alarm.alarm() {
        let score: f64 = if rng.gen::<bool>() { 0.2 } else { 0.8 };
        // Accuracy 0.3 at 0.2 and 0.7 at 0.8: the gaps cancel on average.
        let accuracy = if score < 0.5 { 0.3 } else { 0.7 };
        let label = u8::from(rng.gen::<f64>() < accuracy);
        global += f64::from(label) - score;
        alarm.push(score, label).unwrap();
        n += 1;
        assert!(n < 5000, "not detected");
    }
    assert!(global.abs() < 4.0 * (n as f64 * 0.2).sqrt(), "{global} {n}");
    let at = alarm.alarm_at().unwrap();
    assert_eq!(at, alarm.samples());
    // The bins that saw the miscalibration: over-confident at 0.8, under at 0.2.
    let high = alarm.bins()[8];
    let low = alarm.bins()[2];
    assert!(high.over_confidence() >= 8.0 || low.under_confidence() >= 8.0);
}

#[test]
fn the_statistic_and_the_alarm_follow_the_cusum_recursion() {
    // Two samples by hand: θ = ln 2, score 0.5, label 0 then 1, threshold 0.2.
    let mut alarm = InlineAlarm::<2>::new(Closure::Left, SHIFT, 0.2).unwrap();
    assert_eq!(alarm.statistic(), 0.0);
    assert!(alarm.mean_information().is_nan());
    alarm.push(0.5, 0).unwrap();
    // l₊ = −ln(1.5) < 0 → 0; l₋ = −ln(0.75) = 0.28768… ≥ 0.2: raised at sample 1.
    let bin = alarm.bins()[1];
    assert_eq!(bin.under_confidence(), 0.0);
    assert!((bin.over_confidence() - (4.0f64 / 3.0).ln()).abs() < 1e-15);
    assert_eq!(alarm.alarm_at(), Some(1));
    alarm.push(0.5, 1).unwrap();
    // l₊ = ln 2 − ln 1.5 = ln(4/3); l₋ = −ln 2 − ln 0.75: back to 0.
    let bin = alarm.bins()[1];
    assert!((bin.under_confidence() - (4.0f64 / 3.0).ln()).abs() < 1e-15);
    assert_eq!(bin.over_confidence(), 0.0);
    assert_eq!(bin.samples(), 2);
    // The alarm stays raised; the information is that of two scores 0.5.
    assert_eq!(alarm.alarm_at(), Some(1));
    assert!((alarm.mean_information() - information(SHIFT, 0.5)).abs() < 1e-15);
    assert!(
        (alarm.approximate_arl0() - approximate_arl0(0.2, information(SHIFT, 0.5))).abs() < 1e-9
    );
    alarm.reset();
    assert_eq!(
        (alarm.samples(), alarm.alarm(), alarm.statistic()),
        (0, false, 0.0)
    );
    assert_eq!(alarm.bins(), &[AlarmBin::EMPTY; 2]);
}

#[test]
fn bad_settings_and_bad_input_are_named_and_change_nothing() {
    for shift in [0.0, -1.0, f64::NAN, f64::INFINITY, 10.5] {
        assert_eq!(
            Alarm::new(Closure::Left, shift, 5.0),
            Err(ConfigError::InvalidShift)
        );
    }
    for h in [0.0, -1.0, f64::NAN, f64::INFINITY, 701.0] {
        assert_eq!(
            Alarm::new(Closure::Left, SHIFT, h),
            Err(ConfigError::InvalidThreshold)
        );
    }
    assert_eq!(
        InlineAlarm::<0>::new(Closure::Left, SHIFT, 5.0),
        Err(ConfigError::ZeroBins)
    );
    let mut storage = [AlarmBin::EMPTY; 3];
    assert!(CalibrationAlarm::with_storage(&mut storage, Closure::Right, SHIFT, 5.0).is_ok());
    assert_eq!(
        CalibrationAlarm::with_storage(&mut [], Closure::Left, SHIFT, 5.0).err(),
        Some(ConfigError::ZeroBins)
    );
    let mut alarm = Alarm::new(Closure::Left, SHIFT, 5.0).unwrap();
    alarm.push_batch(&[0.3, 0.9], &[0, 1]).unwrap();
    let before = alarm.clone();
    assert_eq!(
        alarm.push(f64::NAN, 1),
        Err(PushError::NonFiniteScore { index: 0 })
    );
    assert_eq!(
        alarm.push(1.5, 1),
        Err(PushError::ScoreOutOfRange { index: 0 })
    );
    assert_eq!(
        alarm.push(0.5, 2),
        Err(PushError::InvalidLabel { index: 0 })
    );
    assert_eq!(
        alarm.push_batch(&[0.5, 0.5, -0.1], &[1, 0, 1]),
        Err(PushError::ScoreOutOfRange { index: 2 })
    );
    assert_eq!(
        alarm.push_batch(&[0.5], &[1, 0]),
        Err(PushError::LengthMismatch {
            scores: 1,
            labels: 2
        })
    );
    assert_eq!(alarm, before);
}

fn alarm_bytes(alarm: &Alarm) -> Vec<u8> {
    let mut bytes = vec![0; alarm.encoded_len()];
    assert_eq!(alarm.encode(&mut bytes), Ok(bytes.len()));
    bytes
}

/// Rewrites the u64 or f64 field at payload offset `at` (a multiple of 8 from byte 12)
/// and re-signs the frame, so that only the decoder's consistency checks can refuse it.
fn forge(bytes: &[u8], at: usize, value: u64) -> Vec<u8> {
    let mut forged = bytes.to_vec();
    forged[12 + at..12 + at + 8].copy_from_slice(&value.to_le_bytes());
    let end = forged.len() - 4;
    let crc = crc32(&forged[..end]);
    forged[end..].copy_from_slice(&crc.to_le_bytes());
    forged
}

// Payload offsets: shift 8, threshold 16, samples 24, alarm sample 32, information 40,
// then bin k's CUSUMs at 48 + 24k and 56 + 24k, its samples at 64 + 24k.
const SAMPLES_AT: usize = 24;
const ALARM_AT: usize = 32;
const INFORMATION_AT: usize = 40;
fn bin_field(k: usize, field: usize) -> usize {
    48 + 24 * k + 8 * field
}

#[test]
fn counts_at_their_bound_are_refused_and_record_nothing() {
    let mut alarm = Alarm::new(Closure::Left, SHIFT, 700.0).unwrap();
    alarm.push(0.95, 1).unwrap();
    let bytes = alarm_bytes(&alarm);
    // One sample in bin 9: make it MAX_COUNT − 1 samples there and in all.
    let forged = forge(&bytes, SAMPLES_AT, MAX_COUNT - 1);
    let forged = forge(&forged, bin_field(9, 2), MAX_COUNT - 1);
    let mut full = Alarm::new(Closure::Left, SHIFT, 5.0).unwrap();
    full.decode(&forged).unwrap();
    assert_eq!(full.samples(), MAX_COUNT - 1);
    full.push(0.5, 1).unwrap();
    let before = full.clone();
    assert_eq!(full.push(0.5, 1), Err(PushError::CountOverflow));
    assert_eq!(full.push_batch(&[0.5], &[0]), Err(PushError::CountOverflow));
    assert_eq!(full, before);
    assert_eq!(full.samples(), MAX_COUNT);
    // A batch that would pass it by one is refused whole.
    let mut almost = Alarm::new(Closure::Left, SHIFT, 5.0).unwrap();
    almost.decode(&forged).unwrap();
    let before = almost.clone();
    assert_eq!(
        almost.push_batch(&[0.5, 0.5], &[1, 1]),
        Err(PushError::CountOverflow)
    );
    assert_eq!(almost, before);
    // Counts past MAX_COUNT, or bins that do not add up, do not decode.
    for forged in [
        forge(
            &forge(&bytes, SAMPLES_AT, MAX_COUNT + 1),
            bin_field(9, 2),
            MAX_COUNT + 1,
        ),
        forge(&bytes, SAMPLES_AT, 2),
        forge(&bytes, bin_field(3, 2), u64::MAX),
    ] {
        let before = almost.clone();
        assert_eq!(almost.decode(&forged), Err(DecodeError::Inconsistent));
        assert_eq!(almost, before);
    }
}

#[test]
fn impossible_states_do_not_decode() {
    let mut alarm = Alarm::new(Closure::Left, SHIFT, 2.0).unwrap();
    // Bin 9 (score 0.95): misses raise its over-confidence CUSUM towards 2.
    alarm.push_batch(&[0.95, 0.95, 0.5], &[0, 0, 1]).unwrap();
    assert!(!alarm.alarm());
    let bytes = alarm_bytes(&alarm);
    let mut target = Alarm::new(Closure::Right, 1.0, 3.0).unwrap();
    target.push(0.1, 0).unwrap();
    let before = target.clone();
    let bits = |x: f64| x.to_bits();
    for (what, forged) in [
        ("shift 0", forge(&bytes, 8, bits(0.0))),
        ("shift NaN", forge(&bytes, 8, bits(f64::NAN))),
        ("threshold 701", forge(&bytes, 16, bits(701.0))),
        ("alarm after the last sample", forge(&bytes, ALARM_AT, 4)),
        (
            "negative information",
            forge(&bytes, INFORMATION_AT, bits(-1.0)),
        ),
        (
            "information above θ/2 a sample",
            forge(&bytes, INFORMATION_AT, bits(1.1)),
        ),
        (
            "a CUSUM at the threshold without an alarm",
            forge(&bytes, bin_field(9, 1), bits(2.0)),
        ),
        (
            "a CUSUM above θ a sample",
            forge(&forge(&bytes, 16, bits(9.0)), bin_field(9, 1), bits(1.4)),
        ),
        (
            "a negative CUSUM",
            forge(&bytes, bin_field(9, 0), bits(-0.0 - 1e-300)),
        ),
        (
            "an infinite CUSUM",
            forge(&bytes, bin_field(5, 0), bits(f64::INFINITY)),
        ),
    ] {
        assert_eq!(
            target.decode(&forged),
            Err(DecodeError::Inconsistent),
            "{what}"
        );
        assert_eq!(target, before, "{what}");
    }
    // Two misses at 0.95 put bin 9's over-confidence CUSUM at 2·ln(1/0.525) ≈ 1.29: with
    // a threshold of 1 that is an alarm, possible only if it was raised.
    let lowered = forge(&bytes, 16, bits(1.0));
    assert_eq!(target.decode(&lowered), Err(DecodeError::Inconsistent));
    let raised = forge(&lowered, ALARM_AT, 2);
    target.decode(&raised).unwrap();
    assert_eq!(target.alarm_at(), Some(2));
    // Other kinds and shapes are named.
    let mut small = InlineAlarm::<3>::new(Closure::Left, SHIFT, 2.0).unwrap();
    assert_eq!(
        small.decode(&bytes),
        Err(DecodeError::BinCountMismatch {
            expected: 3,
            found: 10
        })
    );
    let mut histogram = tce::InlineHistogram::<10>::new(Closure::Left);
    assert_eq!(
        histogram.decode(&bytes),
        Err(DecodeError::WrongKind { found: 6 })
    );
    assert_eq!(
        frame_shape(&bytes),
        Ok(FrameShape::Alarm {
            closure: Closure::Left,
            bins: 10
        })
    );
    // Every cut and every flipped bit is refused, and changes nothing.
    for cut in 0..bytes.len() {
        assert!(target.decode(&bytes[..cut]).is_err());
    }
    let before = target.clone();
    for bit in 0..bytes.len() * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        assert!(target.decode(&flipped).is_err(), "bit {bit}");
        assert_eq!(target, before);
    }
}

fn pairs(max: usize) -> impl Strategy<Value = Vec<(f64, u8)>> {
    prop::collection::vec(
        (
            prop_oneof![0.0..=1.0f64, Just(1.0), Just(0.0), 0.9..1.0f64],
            0u8..=1,
        ),
        0..max,
    )
}

proptest! {
    #[test]
    fn a_decoded_alarm_goes_on_exactly_like_the_original(
        data in pairs(400),
        split in 0usize..400,
        shift in 0.05..3.0f64,
        threshold in 0.5..6.0f64,
        right in any::<bool>(),
    ) {
        let closure = if right { Closure::Right } else { Closure::Left };
        let (scores, labels): (Vec<f64>, Vec<u8>) = data.into_iter().unzip();
        let split = split.min(scores.len());
        let mut alarm = Alarm::new(closure, shift, threshold).unwrap();
        alarm.push_batch(&scores[..split], &labels[..split]).unwrap();
        let bytes = alarm_bytes(&alarm);
        prop_assert_eq!(frame_shape(&bytes), Ok(FrameShape::Alarm { closure, bins: BINS }));
        let mut back = Alarm::new(Closure::Left, 1.0, 1.0).unwrap();
        back.decode(&bytes).unwrap();
        prop_assert_eq!(&back, &alarm);
        prop_assert_eq!(alarm_bytes(&back), bytes);
        // Pushed one by one, the rest gives the same state in both.
        for (&s, &l) in scores[split..].iter().zip(&labels[split..]) {
            alarm.push(s, l).unwrap();
            back.push(s, l).unwrap();
        }
        prop_assert_eq!(&back, &alarm);
        // And a batch equals the pushes one by one.
        let mut batch = Alarm::new(closure, shift, threshold).unwrap();
        batch.push_batch(&scores, &labels).unwrap();
        prop_assert_eq!(&batch, &alarm);
        // The statistic is the largest CUSUM; the alarm came at the first sample whose
        // CUSUM reached h (recomputed from the bins' recursion above: at most samples).
        prop_assert!(alarm.statistic() >= 0.0);
        prop_assert!(alarm.alarm() || alarm.statistic() < threshold);
        prop_assert!(alarm.alarm_at().is_none_or(|at| at <= alarm.samples()));
        prop_assert!(alarm.mean_information() <= 0.5 * shift || alarm.samples() == 0);
    }

    /// Near MAX_COUNT a push or batch is taken whole while it fits and refused whole
    /// (`CountOverflow`, nothing recorded) once it would pass it, whatever the room left
    /// and the batch's length.
    #[test]
    fn counts_near_the_bound_are_taken_or_refused_whole(
        room in 0u64..4,
        batch in pairs(6),
        single in any::<bool>(),
    ) {
        let mut seed = Alarm::new(Closure::Left, SHIFT, 700.0).unwrap();
        seed.push(0.95, 1).unwrap();
        let bytes = alarm_bytes(&seed);
        let held = MAX_COUNT - room;
        let forged = forge(&forge(&bytes, SAMPLES_AT, held), bin_field(9, 2), held);
        let mut alarm = Alarm::new(Closure::Left, SHIFT, 5.0).unwrap();
        alarm.decode(&forged).unwrap();
        let before = alarm.clone();
        let (scores, labels): (Vec<f64>, Vec<u8>) = batch.into_iter().unzip();
        let (result, wanted) = if single && !scores.is_empty() {
            (alarm.push(scores[0], labels[0]), 1u64)
        } else {
            (alarm.push_batch(&scores, &labels), scores.len() as u64)
        };
        if wanted <= room {
            prop_assert_eq!(result, Ok(()));
            prop_assert_eq!(alarm.samples(), held + wanted);
        } else {
            prop_assert_eq!(result, Err(PushError::CountOverflow));
            prop_assert_eq!(&alarm, &before);
        }
    }

    #[test]
    fn a_failed_call_leaves_the_alarm_unchanged(
        data in pairs(100),
        bad in prop_oneof![Just(f64::NAN), Just(-0.5), Just(1.0 + 1e-12), Just(f64::INFINITY)],
        at in 0usize..100,
        label in 2u8..=255,
    ) {
        let (scores, labels): (Vec<f64>, Vec<u8>) = data.into_iter().unzip();
        let mut alarm = Alarm::new(Closure::Left, SHIFT, 3.0).unwrap();
        alarm.push_batch(&scores, &labels).unwrap();
        let before = alarm.clone();
        prop_assert!(alarm.push(bad, 1).is_err());
        prop_assert!(alarm.push(0.5, label).is_err());
        let (mut s, mut l) = (scores.clone(), labels.clone());
        let i = at.min(s.len());
        s.insert(i, bad);
        l.insert(i, 0);
        prop_assert!(alarm.push_batch(&s, &l).is_err());
        let mut out = vec![0u8; alarm.encoded_len() - 1];
        prop_assert!(alarm.encode(&mut out).is_err());
        prop_assert!(out.iter().all(|&b| b == 0));
        prop_assert_eq!(alarm, before);
    }
}

/// The exporter's alarm (examples/prometheus_exporter.c: 10 bins, θ = ln 2, h = 10) on
/// ResNet-110 CIFAR-10's test set, whose model is over-confident (ECE about 6.6 %): the
/// values docs/monitoring.md shows.
#[test]
fn the_exporters_alarm_on_resnet110() {
    let (scores, labels) = common::read_bundled("resnet110_c10_test.csv");
    let mut alarm = Alarm::new(Closure::Left, SHIFT, 10.0).unwrap();
    alarm.push_batch(&scores, &labels).unwrap();
    println!(
        "statistic {:.17} approximate {:.17} at {:?}",
        alarm.statistic(),
        alarm.approximate_arl0(),
        alarm.alarm_at()
    );
    assert!(alarm.alarm());
    assert_eq!(alarm.guaranteed_arl0(), 0.5 * 10f64.exp());
    // About 3.9 million samples between false alarms, were the model calibrated.
    let approximate = alarm.approximate_arl0();
    assert!((3.5e6..4.5e6).contains(&approximate), "{approximate}");
}
