/*
 * Every exported function and every status of include/tce.h.
 *
 * Written in the common subset of C11 and C++17: tests/ffi.rs compiles this one file
 * both as C11 (gcc -std=c11) and as C++17 (g++ -std=c++17 -x c++), each with
 * -Wall -Wextra -Wpedantic -Werror, and runs both under ASan + UBSan and under valgrind.
 *
 * TCE_STATUS_PANIC cannot be provoked through the API (no known panicking path); the
 * boundary that produces it is tested in Rust (src/ffi/boundary.rs).
 */
#include "tce.h"
#include "tce.h" /* twice: the include guard */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
#define ALIGNED(n) alignas(n)
#else
#define ALIGNED(n) _Alignas(n)
#endif

static int passed = 0;
static int failed = 0;
/* Which statuses the test has seen returned, to check that it saw them all. */
static int seen[64];

static void check(int ok, const char *what, int line) {
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "FAILED line %d: %s\n", line, what);
    }
}
#define CHECK(cond) check((cond) ? 1 : 0, #cond, __LINE__)

static void status_is(tce_status got, tce_status want, const char *what, int line) {
    if (got < 64) {
        seen[got] = 1;
    }
    if (got != want) {
        fprintf(stderr, "line %d: %s returned %u (%s), expected %u (%s)\n", line, what, (unsigned)got,
                tce_status_str(got), (unsigned)want, tce_status_str(want));
    }
    check(got == want, what, line);
}
#define EXPECT(call, want) status_is((call), (want), #call, __LINE__)
#define OK(call) EXPECT(call, TCE_STATUS_OK)

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12; }

/* SPEC §9, the worked example. */
static const double F[20] = {0.955, 0.943, 0.892, 0.998, 0.78,  0.995, 0.227, 1.0,   0.916, 0.908,
                             0.997, 0.936, 0.965, 0.986, 0.906, 0.734, 0.864, 0.976, 0.738, 0.851};
static const uint8_t Y[20] = {1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0};

ALIGNED(16) static unsigned char hist_memory[4096];
ALIGNED(16) static unsigned char hist_memory2[4096];
ALIGNED(16) static unsigned char buffer_memory[4096];
ALIGNED(16) static unsigned char buffer_memory2[4096];
ALIGNED(16) static unsigned char garbage[4096];
ALIGNED(16) static unsigned char scratch[4096];

static void test_version_and_status(void) {
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d", TCE_VERSION_MAJOR, TCE_VERSION_MINOR, TCE_VERSION_PATCH);
    CHECK(strcmp(tce_version(), expected) == 0);
    CHECK(strcmp(tce_version(), TCE_VERSION_STRING) == 0);
    for (uint32_t s = 0; s <= TCE_STATUS_INCONSISTENT; s++) {
        const char *m = tce_status_str(s);
        CHECK(m != NULL && strlen(m) > 0 && strcmp(m, "unknown status") != 0);
    }
    CHECK(strcmp(tce_status_str(TCE_STATUS_OK), "ok") == 0);
    CHECK(strcmp(tce_status_str(TCE_STATUS_INCONSISTENT + 1), "unknown status") == 0);
    CHECK(strcmp(tce_status_str(0xffffffffu), "unknown status") == 0);
    seen[TCE_STATUS_PANIC] = 1; /* see the file comment */
}

static void test_options(void) {
    tce_options o = tce_options_default();
    CHECK(o.p == 2.0 && o.binning == TCE_BINNING_EQUAL_MASS && o.closure == TCE_CLOSURE_LEFT);
    CHECK(o.ties == TCE_TIES_SPLIT && o.sweep_limit == TCE_SWEEP_LIMIT_SAMPLES && o.bins == 15 && o.max_bins == 0);
    OK(tce_options_validate(&o));
    EXPECT(tce_options_validate(NULL), TCE_STATUS_NULL_POINTER);
    tce_options bad = o;
    bad.binning = 2;
    EXPECT(tce_options_validate(&bad), TCE_STATUS_INVALID_ENUM);
    bad = o;
    bad.closure = 2;
    EXPECT(tce_options_validate(&bad), TCE_STATUS_INVALID_ENUM);
    bad = o;
    bad.ties = 0x80000000u;
    EXPECT(tce_options_validate(&bad), TCE_STATUS_INVALID_ENUM);
    bad = o;
    bad.sweep_limit = 7;
    EXPECT(tce_options_validate(&bad), TCE_STATUS_INVALID_ENUM);
    double ps[4] = {0.5, NAN, INFINITY, -1.0};
    for (int i = 0; i < 4; i++) {
        bad = o;
        bad.p = ps[i];
        EXPECT(tce_options_validate(&bad), TCE_STATUS_INVALID_NORM);
    }
    ALIGNED(16) unsigned char raw[sizeof(tce_options) + 16];
    memcpy(raw + 1, &o, sizeof o);
    EXPECT(tce_options_validate((const tce_options *)(const void *)(raw + 1)), TCE_STATUS_MISALIGNED);
}

static void test_histogram(void) {
    size_t size = 0, align = 0;
    OK(tce_ew_histogram_layout(15, &size, &align));
    CHECK(size > 15 * 32 && size <= sizeof hist_memory && align >= 8 && (align & (align - 1)) == 0);
    EXPECT(tce_ew_histogram_layout(0, &size, &align), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_ew_histogram_layout(15, NULL, &align), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_layout(15, &size, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_layout(SIZE_MAX / 2, &size, &align), TCE_STATUS_CAPACITY_TOO_LARGE);
    ALIGNED(16) unsigned char raw[32];
    EXPECT(tce_ew_histogram_layout(15, (size_t *)(void *)(raw + 1), &align), TCE_STATUS_MISALIGNED);

    /* Failed initialisation leaves memory and out-parameter untouched. */
    tce_ew_histogram *h = NULL;
    memset(hist_memory, 0xab, sizeof hist_memory);
    EXPECT(tce_ew_histogram_init(NULL, 4096, 15, TCE_CLOSURE_LEFT, &h), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_init(hist_memory, 4096, 15, TCE_CLOSURE_LEFT, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_init(hist_memory, 4096, 0, TCE_CLOSURE_LEFT, &h), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_ew_histogram_init(hist_memory, 4096, 15, 2, &h), TCE_STATUS_INVALID_ENUM);
    EXPECT(tce_ew_histogram_init(hist_memory + 8, 4000, 15, TCE_CLOSURE_LEFT, &h), TCE_STATUS_MISALIGNED);
    EXPECT(tce_ew_histogram_init(hist_memory, size - 1, 15, TCE_CLOSURE_LEFT, &h), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_ew_histogram_init(hist_memory, 4096, SIZE_MAX / 4, TCE_CLOSURE_LEFT, &h),
           TCE_STATUS_CAPACITY_TOO_LARGE);
    CHECK(h == NULL && hist_memory[0] == 0xab && hist_memory[size - 1] == 0xab);

    OK(tce_ew_histogram_init(hist_memory, size, 15, TCE_CLOSURE_LEFT, &h));
    CHECK(h == (tce_ew_histogram *)(void *)hist_memory);
    size_t bins = 0;
    uint32_t closure = 9;
    uint64_t samples = 9;
    OK(tce_ew_histogram_bin_count(h, &bins));
    OK(tce_ew_histogram_closure(h, &closure));
    OK(tce_ew_histogram_samples(h, &samples));
    CHECK(bins == 15 && closure == TCE_CLOSURE_LEFT && samples == 0);
    EXPECT(tce_ew_histogram_bin_count(NULL, &bins), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_bin_count(h, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_closure(NULL, &closure), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_samples(h, NULL), TCE_STATUS_NULL_POINTER);

    /* Empty: no estimate. */
    tce_estimate e;
    e.value = -1.0;
    EXPECT(tce_ew_histogram_ece_bin(h, 2.0, &e), TCE_STATUS_NO_SAMPLES);
    EXPECT(tce_ew_histogram_mce(h, &e), TCE_STATUS_NO_SAMPLES);
    EXPECT(tce_ew_histogram_ece_debias(h, 2.0, &e), TCE_STATUS_NO_SAMPLES);
    CHECK(e.value == -1.0);

    /* Bad samples are refused and record nothing. */
    EXPECT(tce_ew_histogram_push(h, NAN, 1), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_ew_histogram_push(h, -INFINITY, 1), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_ew_histogram_push(h, 1.5, 1), TCE_STATUS_SCORE_OUT_OF_RANGE);
    EXPECT(tce_ew_histogram_push(h, -0.25, 0), TCE_STATUS_SCORE_OUT_OF_RANGE);
    EXPECT(tce_ew_histogram_push(h, 0.5, 2), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_ew_histogram_push(NULL, 0.5, 1), TCE_STATUS_NULL_POINTER);
    double bad_scores[3] = {0.5, 0.7, NAN};
    uint8_t bad_labels[3] = {1, 0, 1};
    EXPECT(tce_ew_histogram_push_batch(h, bad_scores, 3, bad_labels, 3), TCE_STATUS_NON_FINITE_SCORE);
    bad_labels[2] = 3;
    bad_scores[2] = 0.5;
    EXPECT(tce_ew_histogram_push_batch(h, bad_scores, 3, bad_labels, 3), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_ew_histogram_push_batch(h, F, 20, Y, 19), TCE_STATUS_LENGTH_MISMATCH);
    EXPECT(tce_ew_histogram_push_batch(h, NULL, 3, Y, 3), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_push_batch(h, F, 3, NULL, 3), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_push_batch(h, (const double *)(const void *)((const unsigned char *)F + 1), 3, Y, 3),
           TCE_STATUS_MISALIGNED);
    OK(tce_ew_histogram_push_batch(h, NULL, 0, NULL, 0));
    OK(tce_ew_histogram_samples(h, &samples));
    CHECK(samples == 0);

    /* SPEC §9: EW B = 15. */
    OK(tce_ew_histogram_push_batch(h, F, 10, Y, 10));
    for (int i = 10; i < 20; i++) {
        OK(tce_ew_histogram_push(h, F[i], Y[i]));
    }
    OK(tce_ew_histogram_samples(h, &samples));
    CHECK(samples == 20);
    OK(tce_ew_histogram_ece_bin(h, 2.0, &e));
    CHECK(close_to(e.value, 0.136057083608) && e.samples == 20 && e.bins == 15);
    OK(tce_ew_histogram_ece_bin(h, 1.0, &e));
    CHECK(close_to(e.value, 0.091050000000));
    EXPECT(tce_ew_histogram_ece_bin(h, 0.5, &e), TCE_STATUS_INVALID_NORM);
    EXPECT(tce_ew_histogram_ece_bin(h, NAN, &e), TCE_STATUS_INVALID_NORM);
    EXPECT(tce_ew_histogram_ece_bin(h, 2.0, NULL), TCE_STATUS_NULL_POINTER);
    OK(tce_ew_histogram_ece_debias(h, 2.0, &e));
    CHECK(e.value == 0.0 && e.bins == 15);
    EXPECT(tce_ew_histogram_ece_debias(h, 0.0, &e), TCE_STATUS_INVALID_NORM);
    OK(tce_ew_histogram_mce(h, &e));
    CHECK(e.value > 0.0 && e.value <= 1.0);
    EXPECT(tce_ew_histogram_mce(NULL, &e), TCE_STATUS_NULL_POINTER);

    /* Per-bin statistics. */
    tce_bin_stats stats[16];
    EXPECT(tce_ew_histogram_bin_stats(h, stats, 14), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_ew_histogram_bin_stats(h, NULL, 15), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_bin_stats(h, NULL, 0), TCE_STATUS_NULL_POINTER);
    OK(tce_ew_histogram_bin_stats(h, stats, 16));
    uint64_t total = 0;
    for (int k = 0; k < 15; k++) {
        total += stats[k].count;
        CHECK(stats[k].lower == k / 15.0 && stats[k].upper == (k + 1) / 15.0);
        if (stats[k].count == 0) {
            CHECK(isnan(stats[k].mean_score) && isnan(stats[k].accuracy) && stats[k].hits == 0);
        } else {
            CHECK(stats[k].mean_score >= stats[k].lower && stats[k].mean_score <= stats[k].upper);
            CHECK(stats[k].accuracy == (double)stats[k].hits / (double)stats[k].count);
        }
    }
    CHECK(total == 20 && stats[0].count == 0 && stats[14].count == 10);

    /* Merge: equal to pushing both streams, bit for bit. */
    tce_ew_histogram *a = NULL, *b = NULL, *right = NULL, *other_bins = NULL;
    OK(tce_ew_histogram_new(15, TCE_CLOSURE_LEFT, &a));
    OK(tce_ew_histogram_new(15, TCE_CLOSURE_LEFT, &b));
    OK(tce_ew_histogram_new(15, TCE_CLOSURE_RIGHT, &right));
    OK(tce_ew_histogram_init(hist_memory2, sizeof hist_memory2, 5, TCE_CLOSURE_LEFT, &other_bins));
    OK(tce_ew_histogram_push_batch(a, F + 3, 17, Y + 3, 17));
    OK(tce_ew_histogram_push_batch(b, F, 3, Y, 3));
    OK(tce_ew_histogram_merge(b, a));
    tce_estimate merged, single;
    OK(tce_ew_histogram_ece_bin(b, 2.0, &merged));
    OK(tce_ew_histogram_ece_bin(h, 2.0, &single));
    CHECK(memcmp(&merged.value, &single.value, sizeof(double)) == 0 && merged.samples == 20);
    EXPECT(tce_ew_histogram_merge(b, other_bins), TCE_STATUS_BIN_COUNT_MISMATCH);
    EXPECT(tce_ew_histogram_merge(b, right), TCE_STATUS_CLOSURE_MISMATCH);
    EXPECT(tce_ew_histogram_merge(b, b), TCE_STATUS_SAME_STATE);
    EXPECT(tce_ew_histogram_merge(NULL, b), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_merge(b, NULL), TCE_STATUS_NULL_POINTER);
    OK(tce_ew_histogram_samples(b, &samples));
    CHECK(samples == 20);
    OK(tce_ew_histogram_closure(right, &closure));
    CHECK(closure == TCE_CLOSURE_RIGHT);
    OK(tce_ew_histogram_reset(b));
    OK(tce_ew_histogram_samples(b, &samples));
    OK(tce_ew_histogram_bin_count(b, &bins));
    CHECK(samples == 0 && bins == 15);
    EXPECT(tce_ew_histogram_reset(NULL), TCE_STATUS_NULL_POINTER);

    /* Heap constructor errors; free is NULL-safe and ignores caller memory. */
    tce_ew_histogram *none = NULL;
    EXPECT(tce_ew_histogram_new(0, TCE_CLOSURE_LEFT, &none), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_ew_histogram_new(15, 5, &none), TCE_STATUS_INVALID_ENUM);
    EXPECT(tce_ew_histogram_new(15, TCE_CLOSURE_LEFT, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_new(SIZE_MAX / 2, TCE_CLOSURE_LEFT, &none), TCE_STATUS_CAPACITY_TOO_LARGE);
    /* 2^45 bins = 1 PiB: the allocation fails (tests run ASan with allocator_may_return_null=1). */
    EXPECT(tce_ew_histogram_new((size_t)1 << 45, TCE_CLOSURE_LEFT, &none), TCE_STATUS_ALLOCATION_FAILED);
    CHECK(none == NULL);
    tce_ew_histogram_free(NULL);
    tce_ew_histogram_free(other_bins); /* caller memory: a no-op */
    OK(tce_ew_histogram_bin_count(other_bins, &bins));
    CHECK(bins == 5);
    tce_ew_histogram_free(a);
    tce_ew_histogram_free(b);
    tce_ew_histogram_free(right);

    /* Wrong kinds of handle. */
    tce_sorted_buffer *buf = NULL;
    OK(tce_sorted_buffer_init(buffer_memory, sizeof buffer_memory, 8, &buf));
    EXPECT(tce_ew_histogram_push((tce_ew_histogram *)(void *)buf, 0.5, 1), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_ew_histogram_ece_bin((const tce_ew_histogram *)(const void *)buf, 2.0, &e), TCE_STATUS_WRONG_STATE);
    memset(garbage, 0x5a, sizeof garbage);
    EXPECT(tce_ew_histogram_push((tce_ew_histogram *)(void *)garbage, 0.5, 1), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_ew_histogram_merge(h, (const tce_ew_histogram *)(const void *)garbage), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_ew_histogram_push((tce_ew_histogram *)(void *)(garbage + 8), 0.5, 1), TCE_STATUS_WRONG_STATE);
    tce_ew_histogram_free((tce_ew_histogram *)(void *)garbage); /* wrong magic: a no-op */
}

static void test_buffer(void) {
    size_t size = 0, align = 0;
    OK(tce_sorted_buffer_layout(20, &size, &align));
    CHECK(size >= 20 * 16 && size <= sizeof buffer_memory && align >= 8);
    EXPECT(tce_sorted_buffer_layout(0, &size, &align), TCE_STATUS_ZERO_CAPACITY);
    EXPECT(tce_sorted_buffer_layout((size_t)1 << 31, &size, &align), TCE_STATUS_CAPACITY_TOO_LARGE);
    EXPECT(tce_sorted_buffer_layout(20, NULL, &align), TCE_STATUS_NULL_POINTER);

    tce_sorted_buffer *b = NULL;
    memset(buffer_memory, 0xcd, sizeof buffer_memory);
    EXPECT(tce_sorted_buffer_init(NULL, 4096, 20, &b), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_sorted_buffer_init(buffer_memory, 4096, 20, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_sorted_buffer_init(buffer_memory, 4096, 0, &b), TCE_STATUS_ZERO_CAPACITY);
    EXPECT(tce_sorted_buffer_init(buffer_memory, 4096, (size_t)1 << 31, &b), TCE_STATUS_CAPACITY_TOO_LARGE);
    EXPECT(tce_sorted_buffer_init(buffer_memory + 4, 4000, 20, &b), TCE_STATUS_MISALIGNED);
    EXPECT(tce_sorted_buffer_init(buffer_memory, size - 1, 20, &b), TCE_STATUS_BUFFER_TOO_SMALL);
    CHECK(b == NULL && buffer_memory[0] == 0xcd);
    OK(tce_sorted_buffer_init(buffer_memory, size, 20, &b));

    size_t len = 9, capacity = 0;
    uint64_t hits = 9;
    OK(tce_sorted_buffer_len(b, &len));
    OK(tce_sorted_buffer_capacity(b, &capacity));
    OK(tce_sorted_buffer_hits(b, &hits));
    CHECK(len == 0 && capacity == 20 && hits == 0);
    EXPECT(tce_sorted_buffer_len(NULL, &len), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_sorted_buffer_capacity(b, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_sorted_buffer_hits(NULL, &hits), TCE_STATUS_NULL_POINTER);

    tce_options o = tce_options_default();
    tce_estimate e;
    EXPECT(tce_sorted_buffer_ece_bin(b, &o, &e), TCE_STATUS_NO_SAMPLES);
    EXPECT(tce_sorted_buffer_ece_sweep(b, &o, &e), TCE_STATUS_NO_SAMPLES);

    EXPECT(tce_sorted_buffer_push(b, NAN, 0), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_sorted_buffer_push(b, 1.0000001, 0), TCE_STATUS_SCORE_OUT_OF_RANGE);
    EXPECT(tce_sorted_buffer_push(b, 0.5, 255), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_sorted_buffer_push(NULL, 0.5, 1), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_sorted_buffer_push_batch(b, F, 2, Y, 3), TCE_STATUS_LENGTH_MISMATCH);
    OK(tce_sorted_buffer_push_batch(b, F, 15, Y, 15));
    EXPECT(tce_sorted_buffer_push_batch(b, F + 15, 5, Y, 6), TCE_STATUS_LENGTH_MISMATCH);
    /* 6 more do not fit in 20: refused whole. */
    EXPECT(tce_sorted_buffer_push_batch(b, F, 6, Y, 6), TCE_STATUS_BUFFER_FULL);
    OK(tce_sorted_buffer_len(b, &len));
    CHECK(len == 15);
    OK(tce_sorted_buffer_push_batch(b, F + 15, 5, Y + 15, 5));
    EXPECT(tce_sorted_buffer_push(b, 0.5, 1), TCE_STATUS_BUFFER_FULL);
    OK(tce_sorted_buffer_len(b, &len));
    OK(tce_sorted_buffer_hits(b, &hits));
    CHECK(len == 20 && hits == 17);

    /* SPEC §9. */
    struct row {
        uint32_t binning;
        size_t bins;
        double l1, l2;
    };
    const struct row rows[6] = {
        {TCE_BINNING_EQUAL_WIDTH, 2, 0.028350000000, 0.053671785198},
        {TCE_BINNING_EQUAL_WIDTH, 5, 0.028350000000, 0.060490081832},
        {TCE_BINNING_EQUAL_WIDTH, 15, 0.091050000000, 0.136057083608},
        {TCE_BINNING_EQUAL_MASS, 2, 0.053250000000, 0.060326486720},
        {TCE_BINNING_EQUAL_MASS, 5, 0.070850000000, 0.086229562796},
        {TCE_BINNING_EQUAL_MASS, 15, 0.139250000000, 0.209971188500},
    };
    for (int i = 0; i < 6; i++) {
        o = tce_options_default();
        o.binning = rows[i].binning;
        o.bins = rows[i].bins;
        OK(tce_sorted_buffer_ece_bin(b, &o, &e));
        CHECK(close_to(e.value, rows[i].l2) && e.bins == rows[i].bins && e.samples == 20);
        o.p = 1.0;
        OK(tce_sorted_buffer_ece_bin(b, &o, &e));
        CHECK(close_to(e.value, rows[i].l1));
        OK(tce_sorted_buffer_mce(b, &o, &e));
        CHECK(e.value >= rows[i].l1 - 1e-12);
    }
    o = tce_options_default();
    OK(tce_sorted_buffer_ece_debias(b, &o, &e));
    CHECK(close_to(e.value, 0.108649206164) && e.bins == 15);
    OK(tce_sorted_buffer_ece_sweep(b, &o, &e));
    CHECK(close_to(e.value, 0.146112599274) && e.bins == 9);
    o.p = 1.0;
    OK(tce_sorted_buffer_ece_sweep(b, &o, &e));
    CHECK(close_to(e.value, 0.104650000000) && e.bins == 9);
    o = tce_options_default();
    o.binning = TCE_BINNING_EQUAL_WIDTH;
    OK(tce_sorted_buffer_ece_sweep(b, &o, &e));
    CHECK(close_to(e.value, 0.076884984939) && e.bins == 11);
    o.max_bins = 4;
    OK(tce_sorted_buffer_ece_sweep(b, &o, &e));
    CHECK(e.bins == 4);
    o.max_bins = 0;
    o.sweep_limit = TCE_SWEEP_LIMIT_PAPER_CODE;
    OK(tce_sorted_buffer_ece_sweep(b, &o, &e));
    CHECK(e.bins == 11);
    o = tce_options_default();
    o.binning = TCE_BINNING_EQUAL_MASS;
    o.ties = TCE_TIES_KEEP;
    OK(tce_sorted_buffer_ece_bin(b, &o, &e)); /* no ties in F: same as split */
    CHECK(close_to(e.value, 0.209971188500));
    o = tce_options_default();
    o.bins = 0;
    EXPECT(tce_sorted_buffer_ece_bin(b, &o, &e), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_sorted_buffer_mce(b, &o, &e), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_sorted_buffer_ece_debias(b, &o, &e), TCE_STATUS_ZERO_BINS);
    o = tce_options_default();
    o.p = 0.0;
    EXPECT(tce_sorted_buffer_ece_bin(b, &o, &e), TCE_STATUS_INVALID_NORM);
    o = tce_options_default();
    o.binning = 3;
    EXPECT(tce_sorted_buffer_ece_sweep(b, &o, &e), TCE_STATUS_INVALID_ENUM);
    EXPECT(tce_sorted_buffer_ece_bin(b, NULL, &e), TCE_STATUS_NULL_POINTER);
    o = tce_options_default();
    EXPECT(tce_sorted_buffer_ece_bin(b, &o, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_sorted_buffer_ece_bin(NULL, &o, &e), TCE_STATUS_NULL_POINTER);

    /* Bin statistics, equal mass and equal width. */
    tce_bin_stats stats[16];
    o = tce_options_default();
    o.bins = 5;
    OK(tce_sorted_buffer_bin_stats(b, &o, stats, 16));
    double previous_upper = -1.0;
    for (int k = 0; k < 5; k++) {
        CHECK(stats[k].count == 4 && stats[k].lower <= stats[k].mean_score && stats[k].mean_score <= stats[k].upper);
        CHECK(stats[k].lower > previous_upper);
        previous_upper = stats[k].upper;
    }
    CHECK(stats[0].lower == 0.227 && stats[4].upper == 1.0);
    o.bins = 40; /* more bins than samples: empty ones between */
    EXPECT(tce_sorted_buffer_bin_stats(b, &o, stats, 16), TCE_STATUS_BUFFER_TOO_SMALL);
    o.bins = 16;
    o.binning = TCE_BINNING_EQUAL_WIDTH;
    OK(tce_sorted_buffer_bin_stats(b, &o, stats, 16));
    CHECK(stats[0].count == 0 && isnan(stats[0].accuracy) && stats[0].lower == 0.0 && stats[15].upper == 1.0);
    o.bins = 0;
    EXPECT(tce_sorted_buffer_bin_stats(b, &o, stats, 16), TCE_STATUS_ZERO_BINS);
    o.bins = 4;
    EXPECT(tce_sorted_buffer_bin_stats(b, &o, NULL, 16), TCE_STATUS_NULL_POINTER);
    o.closure = 5;
    EXPECT(tce_sorted_buffer_bin_stats(b, &o, stats, 16), TCE_STATUS_INVALID_ENUM);

    /* Merge, clear, heap states, wrong kinds. */
    tce_sorted_buffer *a = NULL, *c = NULL, *small = NULL;
    OK(tce_sorted_buffer_new(40, &a));
    OK(tce_sorted_buffer_new(10, &c));
    OK(tce_sorted_buffer_init(buffer_memory2, sizeof buffer_memory2, 3, &small));
    OK(tce_sorted_buffer_push_batch(a, F, 5, Y, 5));
    OK(tce_sorted_buffer_push_batch(c, F + 5, 10, Y + 5, 10));
    OK(tce_sorted_buffer_merge(a, c));
    OK(tce_sorted_buffer_push_batch(a, F + 15, 5, Y + 15, 5));
    tce_estimate merged, single;
    o = tce_options_default();
    OK(tce_sorted_buffer_ece_sweep(a, &o, &merged));
    OK(tce_sorted_buffer_ece_sweep(b, &o, &single));
    CHECK(memcmp(&merged.value, &single.value, sizeof(double)) == 0 && merged.bins == single.bins);
    EXPECT(tce_sorted_buffer_merge(small, c), TCE_STATUS_BUFFER_FULL);
    EXPECT(tce_sorted_buffer_merge(a, a), TCE_STATUS_SAME_STATE);
    EXPECT(tce_sorted_buffer_merge(a, NULL), TCE_STATUS_NULL_POINTER);
    OK(tce_sorted_buffer_len(small, &len));
    CHECK(len == 0);
    OK(tce_sorted_buffer_clear(a));
    OK(tce_sorted_buffer_len(a, &len));
    OK(tce_sorted_buffer_capacity(a, &capacity));
    CHECK(len == 0 && capacity == 40);
    EXPECT(tce_sorted_buffer_clear(NULL), TCE_STATUS_NULL_POINTER);
    tce_sorted_buffer *none = NULL;
    EXPECT(tce_sorted_buffer_new(0, &none), TCE_STATUS_ZERO_CAPACITY);
    EXPECT(tce_sorted_buffer_new(10, NULL), TCE_STATUS_NULL_POINTER);
    CHECK(none == NULL);
    tce_sorted_buffer_free(NULL);
    tce_sorted_buffer_free(small); /* caller memory: a no-op */
    tce_sorted_buffer_free(a);
    tce_sorted_buffer_free(c);

    tce_ew_histogram *h = NULL;
    OK(tce_ew_histogram_init(hist_memory2, sizeof hist_memory2, 4, TCE_CLOSURE_LEFT, &h));
    EXPECT(tce_sorted_buffer_push((tce_sorted_buffer *)(void *)h, 0.5, 1), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_sorted_buffer_merge(b, (const tce_sorted_buffer *)(const void *)h), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_sorted_buffer_ece_bin((tce_sorted_buffer *)(void *)garbage, &o, &e), TCE_STATUS_WRONG_STATE);
    tce_sorted_buffer_free((tce_sorted_buffer *)(void *)h); /* another kind: a no-op */
    OK(tce_ew_histogram_push(h, 0.5, 1));
}

static void test_one_call(void) {
    size_t size = 0, align = 0;
    OK(tce_scratch_layout(20, &size, &align));
    CHECK(size <= sizeof scratch);
    EXPECT(tce_scratch_layout(0, &size, &align), TCE_STATUS_ZERO_CAPACITY);
    EXPECT(tce_scratch_layout(20, &size, NULL), TCE_STATUS_NULL_POINTER);

    tce_options o = tce_options_default();
    tce_estimate e;
    OK(tce_ece_bin(F, 20, Y, 20, &o, scratch, size, &e));
    CHECK(close_to(e.value, 0.209971188500) && e.bins == 15 && e.samples == 20);
    OK(tce_mce(F, 20, Y, 20, &o, scratch, size, &e));
    CHECK(e.value >= 0.209971188500);
    OK(tce_ece_debias(F, 20, Y, 20, &o, scratch, size, &e));
    CHECK(close_to(e.value, 0.108649206164));
    OK(tce_ece_sweep(F, 20, Y, 20, &o, scratch, size, &e));
    CHECK(close_to(e.value, 0.146112599274) && e.bins == 9);
    o.binning = TCE_BINNING_EQUAL_WIDTH;
    OK(tce_ece_bin(F, 20, Y, 20, &o, scratch, sizeof scratch, &e));
    CHECK(close_to(e.value, 0.136057083608));
    tce_bin_stats stats[15];
    OK(tce_reliability_bins(F, 20, Y, 20, &o, scratch, size, stats, 15));
    CHECK(stats[14].count == 10 && isnan(stats[0].mean_score));
    EXPECT(tce_reliability_bins(F, 20, Y, 20, &o, scratch, size, stats, 14), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_reliability_bins(F, 20, Y, 20, &o, scratch, size, NULL, 15), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_reliability_bins(F, 20, Y, 20, &o, scratch, size - 1, stats, 15), TCE_STATUS_BUFFER_TOO_SMALL);

    o = tce_options_default();
    EXPECT(tce_ece_bin(F, 20, Y, 20, &o, scratch, size - 1, &e), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_ece_bin(F, 20, Y, 20, &o, scratch + 4, size, &e), TCE_STATUS_MISALIGNED);
    EXPECT(tce_ece_bin(F, 20, Y, 20, &o, NULL, size, &e), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ece_bin(F, 20, Y, 20, &o, scratch, size, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ece_bin(F, 20, Y, 20, NULL, scratch, size, &e), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ece_bin(F, 20, Y, 19, &o, scratch, size, &e), TCE_STATUS_LENGTH_MISMATCH);
    EXPECT(tce_ece_bin(NULL, 0, NULL, 0, &o, scratch, size, &e), TCE_STATUS_NO_SAMPLES);
    EXPECT(tce_mce(F, 0, Y, 0, &o, NULL, 0, &e), TCE_STATUS_NO_SAMPLES);
    double bad[2] = {0.5, INFINITY};
    EXPECT(tce_ece_debias(bad, 2, Y, 2, &o, scratch, size, &e), TCE_STATUS_NON_FINITE_SCORE);
    bad[1] = 2.0;
    EXPECT(tce_ece_sweep(bad, 2, Y, 2, &o, scratch, size, &e), TCE_STATUS_SCORE_OUT_OF_RANGE);
    uint8_t bad_labels[2] = {0, 7};
    EXPECT(tce_ece_bin(F, 2, bad_labels, 2, &o, scratch, size, &e), TCE_STATUS_INVALID_LABEL);
    o.bins = 0;
    EXPECT(tce_ece_bin(F, 20, Y, 20, &o, scratch, size, &e), TCE_STATUS_ZERO_BINS);
    o = tce_options_default();
    o.p = 0.99;
    EXPECT(tce_ece_bin(F, 20, Y, 20, &o, scratch, size, &e), TCE_STATUS_INVALID_NORM);
    o = tce_options_default();
    o.sweep_limit = 2;
    EXPECT(tce_ece_sweep(F, 20, Y, 20, &o, scratch, size, &e), TCE_STATUS_INVALID_ENUM);
}

static void test_top_label(void) {
    const double probs[3] = {0.2, 0.5, 0.3};
    double score = -1.0;
    uint8_t label = 9;
    size_t predicted = 99;
    OK(tce_top_label_reduce_row(probs, 3, 1, TCE_ROW_KIND_PROBABILITIES, &score, &label, &predicted));
    CHECK(score == 0.5 && label == 1 && predicted == 1);
    OK(tce_top_label_reduce_row(probs, 3, 0, TCE_ROW_KIND_PROBABILITIES, &score, &label, NULL));
    CHECK(score == 0.5 && label == 0);
    const double logits[3] = {1.0, 3.0, 2.0};
    OK(tce_top_label_reduce_row(logits, 3, 1, TCE_ROW_KIND_LOGITS, &score, &label, &predicted));
    CHECK(fabs(score - 1.0 / (exp(-2.0) + 1.0 + exp(-1.0))) < 1e-15 && label == 1 && predicted == 1);
    const double huge[2] = {1000.0, 999.0};
    OK(tce_top_label_reduce_row(huge, 2, 0, TCE_ROW_KIND_LOGITS, &score, &label, &predicted));
    CHECK(fabs(score - 1.0 / (1.0 + exp(-1.0))) < 1e-15);

    score = -1.0;
    EXPECT(tce_top_label_reduce_row(probs, 0, 0, TCE_ROW_KIND_PROBABILITIES, &score, &label, NULL), TCE_STATUS_EMPTY_ROW);
    EXPECT(tce_top_label_reduce_row(NULL, 0, 0, TCE_ROW_KIND_LOGITS, &score, &label, NULL), TCE_STATUS_EMPTY_ROW);
    EXPECT(tce_top_label_reduce_row(probs, 3, 3, TCE_ROW_KIND_PROBABILITIES, &score, &label, NULL),
           TCE_STATUS_CLASS_OUT_OF_RANGE);
    const double nan_row[2] = {0.5, NAN};
    EXPECT(tce_top_label_reduce_row(nan_row, 2, 0, TCE_ROW_KIND_LOGITS, &score, &label, NULL), TCE_STATUS_NON_FINITE_VALUE);
    const double out_of_range[2] = {1.5, -0.5};
    EXPECT(tce_top_label_reduce_row(out_of_range, 2, 0, TCE_ROW_KIND_PROBABILITIES, &score, &label, NULL),
           TCE_STATUS_PROBABILITY_OUT_OF_RANGE);
    const double unnormalized[2] = {0.5, 0.6};
    EXPECT(tce_top_label_reduce_row(unnormalized, 2, 0, TCE_ROW_KIND_PROBABILITIES, &score, &label, NULL),
           TCE_STATUS_NOT_NORMALIZED);
    EXPECT(tce_top_label_reduce_row(probs, 3, 0, 2, &score, &label, NULL), TCE_STATUS_INVALID_ENUM);
    EXPECT(tce_top_label_reduce_row(probs, 3, 0, TCE_ROW_KIND_PROBABILITIES, NULL, &label, NULL),
           TCE_STATUS_NULL_POINTER);
    EXPECT(tce_top_label_reduce_row(probs, 3, 0, TCE_ROW_KIND_PROBABILITIES, &score, NULL, NULL),
           TCE_STATUS_NULL_POINTER);
    EXPECT(tce_top_label_reduce_row(NULL, 3, 0, TCE_ROW_KIND_PROBABILITIES, &score, &label, NULL),
           TCE_STATUS_NULL_POINTER);
    CHECK(score == -1.0);

    const double table[6] = {0.1, 0.9, 0.7, 0.3, 0.4, 0.6};
    const size_t classes[3] = {1, 1, 1};
    double scores[3] = {-1.0, -1.0, -1.0};
    uint8_t labels[3] = {9, 9, 9};
    OK(tce_top_label_reduce_table(table, 6, 2, classes, 3, TCE_ROW_KIND_PROBABILITIES, scores, 3, labels, 3));
    CHECK(scores[0] == 0.9 && scores[1] == 0.7 && scores[2] == 0.6);
    CHECK(labels[0] == 1 && labels[1] == 0 && labels[2] == 1);
    OK(tce_top_label_reduce_table(table, 6, 3, classes, 2, TCE_ROW_KIND_LOGITS, scores, 3, labels, 3));
    OK(tce_top_label_reduce_table(NULL, 0, 2, NULL, 0, TCE_ROW_KIND_LOGITS, NULL, 0, NULL, 0));
    double untouched[3] = {-1.0, -1.0, -1.0};
    EXPECT(tce_top_label_reduce_table(table, 6, 2, classes, 2, TCE_ROW_KIND_PROBABILITIES, untouched, 3, labels, 3),
           TCE_STATUS_SHAPE_MISMATCH);
    EXPECT(tce_top_label_reduce_table(table, 6, 0, classes, 3, TCE_ROW_KIND_PROBABILITIES, untouched, 3, labels, 3),
           TCE_STATUS_EMPTY_ROW);
    EXPECT(tce_top_label_reduce_table(table, 6, 2, classes, 3, TCE_ROW_KIND_PROBABILITIES, untouched, 2, labels, 3),
           TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_top_label_reduce_table(table, 6, 2, classes, 3, TCE_ROW_KIND_PROBABILITIES, untouched, 3, labels, 2),
           TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_top_label_reduce_table(table, 6, 2, classes, 3, 9, untouched, 3, labels, 3), TCE_STATUS_INVALID_ENUM);
    EXPECT(tce_top_label_reduce_table(table, 6, 2, NULL, 3, TCE_ROW_KIND_PROBABILITIES, untouched, 3, labels, 3),
           TCE_STATUS_NULL_POINTER);
    const size_t far[3] = {1, 5, 1};
    EXPECT(tce_top_label_reduce_table(table, 6, 2, far, 3, TCE_ROW_KIND_PROBABILITIES, untouched, 3, labels, 3),
           TCE_STATUS_CLASS_OUT_OF_RANGE);
    const double bad_table[4] = {0.5, 0.5, 0.9, 0.9};
    EXPECT(tce_top_label_reduce_table(bad_table, 4, 2, classes, 2, TCE_ROW_KIND_PROBABILITIES, untouched, 3, labels, 3),
           TCE_STATUS_NOT_NORMALIZED);
    /* rows * classes overflows: a shape mismatch, not a wrap-around. */
    EXPECT(tce_top_label_reduce_table(table, 6, SIZE_MAX / 2, classes, 3, TCE_ROW_KIND_LOGITS, untouched, 3, labels, 3),
           TCE_STATUS_SHAPE_MISMATCH);
    EXPECT(tce_top_label_reduce_table(table, SIZE_MAX / 4, 2, classes, 3, TCE_ROW_KIND_LOGITS, untouched, 3, labels, 3),
           TCE_STATUS_CAPACITY_TOO_LARGE);
    CHECK(untouched[0] == -1.0 && untouched[1] == -1.0 && untouched[2] == -1.0);
}

int main(void) {
    test_version_and_status();
    test_options();
    test_histogram();
    test_buffer();
    test_one_call();
    test_top_label();
    for (uint32_t s = 0; s <= TCE_STATUS_PANIC; s++) {
        if (!seen[s]) {
            fprintf(stderr, "status %u (%s) never returned by the test\n", (unsigned)s, tce_status_str(s));
            failed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
