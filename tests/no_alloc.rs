//! The core never allocates: a counting global allocator sees zero allocations across
//! push, merge (of every mergeable state), sorting and every estimate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use tce::{
    toplabel, AtomicBin, Binning, Closure, ConcurrentHistogram, DecayedBin, DecayingHistogram,
    InlineBuffer, InlineHistogram, InlineReservoir, InlineWindow, Norm, SweepLimit, SweepOptions,
    Ties,
};

struct Counting;

thread_local! {
    // Only this test's thread counts, so the harness's own allocations elsewhere do not.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|a| a.set(a.get() + 1));
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|a| a.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

static mut BUFFER_A: InlineBuffer<4096> = InlineBuffer::new();

#[test]
fn the_counter_sees_allocations() {
    // Guards the guard: a test that cannot fail is a defect.
    assert!(allocations_during(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
}

#[test]
fn core_operations_do_not_allocate() {
    let scores: Vec<f64> = (0..2000)
        .map(|i| ((i * 7919) % 1000) as f64 / 999.0)
        .collect();
    let labels: Vec<u8> = scores
        .iter()
        .enumerate()
        .map(|(i, &s)| u8::from((i % 10) as f64 / 10.0 < s))
        .collect();
    let mut other_buffer = Box::new(InlineBuffer::<4096>::new());
    // Enough samples for selection, 40 % of them in one dense digit (selected again).
    let many: Vec<f64> = (0..12_000u32)
        .map(|i| match i % 10 {
            0..=3 => 0.5 + f64::from(i) / f64::from(1 << 30),
            _ => f64::from(i * 7919 % 12_000) / 11_999.0,
        })
        .collect();
    let many_labels: Vec<u8> = (0..12_000u32).map(|i| u8::from(i % 3 == 0)).collect();
    let mut selection_scratch = vec![tce::Slot::EMPTY; many.len()];
    let mut selected = [tce::BinStats::EMPTY; 15];
    let count = allocations_during(|| {
        let mut h = InlineHistogram::<15>::new(Closure::Left);
        let mut g = InlineHistogram::<15>::new(Closure::Left);
        h.push_batch(&scores, &labels).unwrap();
        g.push(0.3, 1).unwrap();
        h.merge(&g).unwrap();
        for norm in [Norm::L1, Norm::L2, Norm::new(3.0).unwrap()] {
            h.ece_bin(norm).unwrap();
            h.ece_debias(norm).unwrap();
        }
        h.mce().unwrap();
        h.reset();

        // SAFETY: only this test touches BUFFER_A.
        let a = unsafe { &mut *std::ptr::addr_of_mut!(BUFFER_A) };
        a.push_batch(&scores[..1000], &labels[..1000]).unwrap();
        a.push(0.5, 1).unwrap();
        other_buffer
            .push_batch(&scores[1000..], &labels[1000..])
            .unwrap();
        a.merge(&*other_buffer).unwrap();
        let sorted = a.sorted();
        for binning in [
            Binning::EQUAL_MASS,
            Binning::EqualMass(Ties::Keep),
            Binning::EQUAL_WIDTH,
            Binning::EqualWidth(Closure::Right),
        ] {
            sorted.ece_bin(binning, 15, Norm::L2).unwrap();
            sorted
                .ece_debias(binning, 15, Norm::new(1.5).unwrap())
                .unwrap();
            sorted.mce(binning, 15).unwrap();
            for limit in [SweepLimit::Samples, SweepLimit::PaperCode] {
                sorted
                    .ece_sweep(
                        binning,
                        Norm::L2,
                        SweepOptions {
                            max_bins: Some(500),
                            limit,
                        },
                    )
                    .unwrap();
            }
        }
        a.clear();

        let mut window = InlineWindow::<256>::new();
        window.push_batch(&scores, &labels).unwrap();
        let mut other_window = InlineWindow::<100>::new();
        other_window.push_batch(&scores, &labels).unwrap();
        window.merge(&other_window).unwrap();
        window
            .samples()
            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
            .unwrap();
        let mut reservoir = InlineReservoir::<256>::new(7);
        reservoir.push_batch(&scores, &labels).unwrap();
        let other = InlineReservoir::<256>::new(8);
        reservoir.merge(&other).unwrap();
        reservoir
            .samples()
            .ece_debias(Binning::EQUAL_MASS, 15, Norm::L2)
            .unwrap();
        let mut decaying =
            DecayingHistogram::<[DecayedBin; 15]>::new(Closure::Left, 500.0).unwrap();
        decaying.push_batch(&scores, &labels).unwrap();
        let mut other_decaying =
            DecayingHistogram::<[DecayedBin; 15]>::new(Closure::Left, 500.0).unwrap();
        other_decaying
            .push_batch(&scores[..50], &labels[..50])
            .unwrap();
        decaying.merge(&other_decaying).unwrap();
        decaying.ece_debias(Norm::L2).unwrap();

        // The calibration alarm: pushes, the statistic, the stated rates, a round trip.
        let mut alarm =
            tce::InlineAlarm::<10>::new(Closure::Left, core::f64::consts::LN_2, 5.0).unwrap();
        alarm.push_batch(&scores, &labels).unwrap();
        alarm.push(0.9, 0).unwrap();
        std::hint::black_box((alarm.statistic(), alarm.alarm(), alarm.approximate_arl0()));
        let threshold = tce::alarm::threshold_for_arl0(1e4, alarm.mean_information()).unwrap();
        std::hint::black_box(threshold);
        let mut alarm_bytes = [0u8; 64 + 24 * 10];
        alarm.encode(&mut alarm_bytes).unwrap();
        let mut decoded = tce::InlineAlarm::<10>::new(Closure::Right, 1.0, 1.0).unwrap();
        decoded.decode(&alarm_bytes).unwrap();
        decoded.reset();
        let shared = ConcurrentHistogram::<[[AtomicBin; 15]; 4]>::new(Closure::Left);
        shared.push_batch_to(3, &scores, &labels).unwrap();
        shared.push_to(6, 0.5, 1).unwrap();
        shared.snapshot_into(&mut h).unwrap();
        let mut bytes = [0u8; 4096];
        let written = h.encode(&mut bytes).unwrap();
        h.decode(&bytes[..written]).unwrap();
        let written = reservoir.encode(&mut bytes).unwrap();
        reservoir.decode(&bytes[..written]).unwrap();
        for ties in [Ties::Split, Ties::Keep] {
            assert!(tce::select::equal_mass_bins(
                &many,
                &many_labels,
                ties,
                &mut selected,
                &mut selection_scratch
            )
            .unwrap());
        }
        toplabel::from_logits(&[0.1, 2.0, -1.0], 1).unwrap();
        toplabel::from_probabilities(&[0.1, 0.9], 1).unwrap();
    });
    assert_eq!(count, 0, "the core allocated {count} times");
}
