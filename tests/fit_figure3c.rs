#![cfg(feature = "std")]
//! Fig. 3c of the paper: ECE_bin (15 equal-width bins, p = 2) of data simulated from the
//! fit of each bundled file, at the file's n, against ECE_bin of the real data.
//!
//! Tolerance: the simulated mean (over 50 data sets) within 15% (relative) of the real
//! value. It holds for four of the six files; for ResNet-110/CIFAR-10 (real 6.65%,
//! simulated 9.07%) and the DenseNet-161/ImageNet stand-in (6.46% vs 7.70%) it does not,
//! and this test asserts that too, so a change in either direction is noticed
//! (docs/fit/figure3c.md has the numbers at 200 repetitions).

mod common;

use tce::fit::check::compare_ece;
use tce::fit::{fit_model, EndpointRule};

use common::read_bundled as read;

const RELATIVE_TOLERANCE: f64 = 0.15;

#[test]
fn simulated_ece_matches_the_real_ece() {
    let cases = [
        ("densenet40_c100_test.csv", true),
        ("densenet40_c10_test.csv", true),
        ("resnet110_c100_test.csv", true),
        ("resnet50_birds_test.csv", true),
        ("resnet110_c10_test.csv", false),
        ("torchvision_densenet161_imgnet_test.csv", false),
    ];
    for (file, agrees) in cases {
        let (scores, labels) = read(file);
        let fit = fit_model(&scores, &labels, &EndpointRule::default()).unwrap();
        let check = compare_ece(&fit.model, &scores, &labels, 50, 0).unwrap();
        let relative = (check.simulated_mean - check.real).abs() / check.real;
        assert_eq!(
            relative <= RELATIVE_TOLERANCE,
            agrees,
            "{file}: real {} simulated {} (relative {relative})",
            check.real,
            check.simulated_mean
        );
    }
}
