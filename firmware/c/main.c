/* The C firmware of tests/firmware.rs: what firmware/rust/src/bin/firmware.rs does,
 * through the C ABI (include/tce.h) of the bare-metal libtce.a, as a device vendor would
 * call it. It pushes the bundled data set through every state the bare-metal library has
 * (histogram, decaying histogram, sorted buffer, window, reservoir, calibration
 * alarm), in caller memory, computes every estimator, encodes each state, and prints
 * the same lines as the Rust firmware over semihosting (newlib's printf, librdimon): estimates as the bits of the
 * double in hex, frames as hex bytes. firmware_data.h (the data set's rows) is generated
 * by the test from data/resnet50_birds_test.csv. Any failed call prints its status and
 * exits with status 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firmware_data.h"
#include "tce.h"

enum { BINS = 15, WINDOW = 1000, RESERVOIR = 500 };
static const double HALF_LIFE = 1000.0;
static const uint64_t SEED = 42;
/* The calibration alarms: the exporter's bins and shift (ln 2, as a literal: the double
 * nearest it, as Rust's LN_2); their thresholds are those of guaranteed ARL0s. */
enum { ALARM_BINS = 10 };
static const double ALARM_SHIFT = 0.69314718055994530942;

/* Caller memory for every state, checked against the layout functions at run time. */
static _Alignas(16) unsigned char histogram_memory[2048];
static _Alignas(16) unsigned char decaying_memory[2048];
static _Alignas(16) unsigned char buffer_memory[128 * 1024];
static _Alignas(16) unsigned char window_memory[64 * 1024];
static _Alignas(16) unsigned char reservoir_memory[16 * 1024];
static _Alignas(16) unsigned char alarm_memory[1024];
static double scratch[TCE_SMOOTH_ECE_SCRATCH_LEN];
static uint8_t frame[32 * 1024];
static double scores[TCE_FW_ROWS];

static void check(tce_status status, const char *what) {
    if (status != TCE_STATUS_OK) {
        printf("error %s: %s\n", what, tce_status_str(status));
        exit(1);
    }
}

static void check_layout(tce_status status, size_t size, size_t align, size_t have,
                         const char *what) {
    check(status, what);
    if (size > have || align > 16) {
        printf("error %s: needs %lu bytes aligned to %lu\n", what, (unsigned long)size,
               (unsigned long)align);
        exit(1);
    }
}

static uint64_t bits(double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static void print_estimate(const char *key, tce_status status, const tce_estimate *e) {
    check(status, key);
    printf("est %s %016llx %lu %llu\n", key, (unsigned long long)bits(e->value),
           (unsigned long)e->bins, (unsigned long long)e->samples);
}

static void print_frame(const char *kind, size_t len) {
    printf("frame %s ", kind);
    for (size_t i = 0; i < len; i++) {
        printf("%02x", frame[i]);
    }
    printf("\n");
}

static tce_options options(uint32_t binning, uint32_t ties) {
    tce_options o = tce_options_default();
    o.p = 2.0;
    o.bins = BINS;
    o.binning = binning;
    o.closure = TCE_CLOSURE_LEFT;
    o.ties = ties;
    return o;
}

/* A calibration alarm (ALARM_BINS bins, shift ALARM_SHIFT) at the threshold of a
 * guaranteed ARL0 of `arl0` samples, computed by the library, fed the scores one push at
 * a time, read after each for the first sample that raised it; prints its line (as the
 * Rust firmware's `Out::alarm`) and its frame, both under `key`. */
static void run_alarm(const char *key, double arl0, size_t n, const uint8_t *labels) {
    size_t size, align, written;
    double threshold;
    check(tce_alarm_threshold_for_guaranteed_arl0(arl0, &threshold), "alarm threshold");
    tce_alarm *a;
    check_layout(tce_alarm_layout(ALARM_BINS, &size, &align), size, align, sizeof alarm_memory,
                 "alarm layout");
    check(tce_alarm_init(alarm_memory, sizeof alarm_memory, ALARM_BINS, TCE_CLOSURE_LEFT,
                         ALARM_SHIFT, threshold, &a),
          "alarm init");
    tce_alarm_report report;
    uint64_t first_seen = 0;
    for (size_t i = 0; i < n; i++) {
        check(tce_alarm_push(a, scores[i], labels[i]), "alarm push");
        if (first_seen == 0) {
            check(tce_alarm_read(a, &report), "alarm read");
            if (report.alarm) {
                first_seen = (uint64_t)i + 1;
            }
        }
    }
    check(tce_alarm_read(a, &report), "alarm read");
    printf("alarm %s %016llx %016llx %u %llu %llu %llu\n", key,
           (unsigned long long)bits(report.statistic), (unsigned long long)bits(report.threshold),
           (unsigned)report.alarm, (unsigned long long)report.alarm_at,
           (unsigned long long)first_seen, (unsigned long long)report.samples);
    check(tce_alarm_encode(a, frame, sizeof frame, &written), "alarm encode");
    print_frame(key, written);
}

int main(void) {
    const size_t n = TCE_FW_ROWS, half = TCE_FW_ROWS / 2;
    const uint8_t *labels = tce_fw_labels;
    size_t size, align, written;
    tce_estimate e;
    /* The scores as the doubles whose bits firmware_data.h holds. */
    memcpy(scores, tce_fw_score_bits, sizeof scores);
    printf("tce-firmware c begin %lu rows\n", (unsigned long)n);

    /* Equal-width histogram: the first half one push at a time, the rest as one batch. */
    tce_ew_histogram *h;
    check_layout(tce_ew_histogram_layout(BINS, &size, &align), size, align,
                 sizeof histogram_memory, "histogram layout");
    check(tce_ew_histogram_init(histogram_memory, sizeof histogram_memory, BINS,
                                TCE_CLOSURE_LEFT, &h),
          "histogram init");
    for (size_t i = 0; i < half; i++) {
        check(tce_ew_histogram_push(h, scores[i], labels[i]), "histogram push");
    }
    check(tce_ew_histogram_push_batch(h, scores + half, n - half, labels + half, n - half),
          "histogram push_batch");
    print_estimate("histogram.ece_bin.p1", tce_ew_histogram_ece_bin(h, 1.0, &e), &e);
    print_estimate("histogram.ece_bin.p2", tce_ew_histogram_ece_bin(h, 2.0, &e), &e);
    print_estimate("histogram.mce", tce_ew_histogram_mce(h, &e), &e);
    print_estimate("histogram.ece_debias.p2", tce_ew_histogram_ece_debias(h, 2.0, &e), &e);
    check(tce_ew_histogram_encode(h, frame, sizeof frame, &written), "histogram encode");
    print_frame("histogram", written);

    /* Decaying histogram. */
    tce_decaying_histogram *d;
    check_layout(tce_decaying_histogram_layout(BINS, &size, &align), size, align,
                 sizeof decaying_memory, "decaying layout");
    check(tce_decaying_histogram_init(decaying_memory, sizeof decaying_memory, BINS,
                                      TCE_CLOSURE_LEFT, HALF_LIFE, &d),
          "decaying init");
    check(tce_decaying_histogram_push_batch(d, scores, n, labels, n), "decaying push_batch");
    print_estimate("decaying.ece_bin.p2", tce_decaying_histogram_ece_bin(d, 2.0, &e), &e);
    print_estimate("decaying.mce", tce_decaying_histogram_mce(d, &e), &e);
    print_estimate("decaying.ece_debias.p2", tce_decaying_histogram_ece_debias(d, 2.0, &e),
                   &e);
    check(tce_decaying_histogram_encode(d, frame, sizeof frame, &written), "decaying encode");
    print_frame("decaying", written);

    /* Sorted buffer of every sample: every binning, the sweep. */
    tce_sorted_buffer *b;
    check_layout(tce_sorted_buffer_layout(n, &size, &align), size, align,
                 sizeof buffer_memory, "buffer layout");
    check(tce_sorted_buffer_init(buffer_memory, sizeof buffer_memory, n, &b), "buffer init");
    check(tce_sorted_buffer_push_batch(b, scores, n, labels, n), "buffer push_batch");
    static const struct {
        const char *name;
        uint32_t binning, ties;
    } binnings[] = {
        {"ew", TCE_BINNING_EQUAL_WIDTH, TCE_TIES_SPLIT},
        {"em", TCE_BINNING_EQUAL_MASS, TCE_TIES_SPLIT},
        {"em_keep", TCE_BINNING_EQUAL_MASS, TCE_TIES_KEEP},
    };
    for (size_t k = 0; k < sizeof binnings / sizeof binnings[0]; k++) {
        tce_options o = options(binnings[k].binning, binnings[k].ties);
        char key[64];
        snprintf(key, sizeof key, "buffer.%s.ece_bin.p2", binnings[k].name);
        print_estimate(key, tce_sorted_buffer_ece_bin(b, &o, &e), &e);
        snprintf(key, sizeof key, "buffer.%s.ece_debias.p2", binnings[k].name);
        print_estimate(key, tce_sorted_buffer_ece_debias(b, &o, &e), &e);
        snprintf(key, sizeof key, "buffer.%s.mce", binnings[k].name);
        print_estimate(key, tce_sorted_buffer_mce(b, &o, &e), &e);
        snprintf(key, sizeof key, "buffer.%s.ece_sweep.p2", binnings[k].name);
        print_estimate(key, tce_sorted_buffer_ece_sweep(b, &o, &e), &e);
    }
    check(tce_sorted_buffer_encode(b, frame, sizeof frame, &written), "buffer encode");
    print_frame("buffer", written);

    /* Sliding window of the last WINDOW samples, one push at a time (so it evicts). */
    tce_window *w;
    check_layout(tce_window_layout(WINDOW, &size, &align), size, align, sizeof window_memory,
                 "window layout");
    check(tce_window_init(window_memory, sizeof window_memory, WINDOW, &w), "window init");
    for (size_t i = 0; i < n; i++) {
        check(tce_window_push(w, scores[i], labels[i]), "window push");
    }
    tce_options em = options(TCE_BINNING_EQUAL_MASS, TCE_TIES_SPLIT);
    tce_options ew = options(TCE_BINNING_EQUAL_WIDTH, TCE_TIES_SPLIT);
    print_estimate("window.em.ece_bin.p2", tce_window_ece_bin(w, &em, &e), &e);
    print_estimate("window.em.ece_debias.p2", tce_window_ece_debias(w, &em, &e), &e);
    print_estimate("window.em.mce", tce_window_mce(w, &em, &e), &e);
    print_estimate("window.em.ece_sweep.p2", tce_window_ece_sweep(w, &em, &e), &e);
    print_estimate("window.ew.ece_sweep.p2", tce_window_ece_sweep(w, &ew, &e), &e);
    check(tce_window_encode(w, frame, sizeof frame, &written), "window encode");
    print_frame("window", written);

    /* Reservoir: a seeded uniform sample of RESERVOIR of the stream. */
    tce_reservoir *r;
    check_layout(tce_reservoir_layout(RESERVOIR, &size, &align), size, align,
                 sizeof reservoir_memory, "reservoir layout");
    check(tce_reservoir_init(reservoir_memory, sizeof reservoir_memory, RESERVOIR, SEED, &r),
          "reservoir init");
    check(tce_reservoir_push_batch(r, scores, n, labels, n), "reservoir push_batch");
    print_estimate("reservoir.em.ece_bin.p2", tce_reservoir_ece_bin(r, &em, &e), &e);
    print_estimate("reservoir.em.ece_sweep.p2", tce_reservoir_ece_sweep(r, &em, &e), &e);
    check(tce_reservoir_encode(r, frame, sizeof frame, &written), "reservoir encode");
    print_frame("reservoir", written);

    /* Smooth ECE (relplot's), over the raw arrays. */
    tce_smooth_ece_result smooth;
    check(tce_smooth_ece(scores, n, labels, n, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, &smooth),
          "smooth ece");
    printf("smece all %016llx %016llx\n", (unsigned long long)bits(smooth.value),
           (unsigned long long)bits(smooth.bandwidth));

    /* Calibration alarms, as the Rust firmware's ALARMS. */
    run_alarm("alarm.arl0_1e4", 1e4, n, labels);
    run_alarm("alarm.arl0_10", 10.0, n, labels);

    printf("tce-firmware end\n");
    return 0;
}
