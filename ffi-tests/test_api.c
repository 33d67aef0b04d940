/*
 * Every exported function and every status of include/tce.h.
 *
 * Written in the common subset of C11 and C++17: tests/ffi.rs compiles this one file
 * both as C11 (gcc -std=c11) and as C++17 (g++ -std=c++17 -x c++), each with
 * -Wall -Wextra -Wpedantic -Werror, and runs both under ASan + UBSan and under valgrind.
 *
 * TCE_STATUS_PANIC cannot be provoked through the API (no known panicking path); the
 * boundary that produces it is tested in Rust (src/ffi/boundary.rs). Nor can
 * TCE_STATUS_STORAGE_MISMATCH: only the Rust API takes a window's slot and ring storage
 * separately, or a concurrent histogram's storage of whole shards (the C API lays both
 * out itself).
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
    for (uint32_t s = 0; s <= TCE_STATUS_ZERO_TOTAL_WEIGHT; s++) {
        const char *m = tce_status_str(s);
        CHECK(m != NULL && strlen(m) > 0 && strcmp(m, "unknown status") != 0);
    }
    CHECK(strcmp(tce_status_str(TCE_STATUS_OK), "ok") == 0);
    CHECK(strcmp(tce_status_str(TCE_STATUS_ZERO_TOTAL_WEIGHT + 1), "unknown status") == 0);
    CHECK(strcmp(tce_status_str(0xffffffffu), "unknown status") == 0);
    seen[TCE_STATUS_PANIC] = 1;            /* see the file comment */
    seen[TCE_STATUS_STORAGE_MISMATCH] = 1; /* likewise */
    /* Needs a state whose frame is 4 GiB or more (and more bins than TCE_MAX_BINS):
     * tested in Rust (src/portable.rs). */
    seen[TCE_STATUS_FRAME_TOO_LARGE] = 1;
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
    EXPECT(tce_ew_histogram_layout(SIZE_MAX / 2, &size, &align), TCE_STATUS_TOO_MANY_BINS);
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
           TCE_STATUS_TOO_MANY_BINS);
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
    EXPECT(tce_ew_histogram_bin_stats(h, NULL, 0), TCE_STATUS_BUFFER_TOO_SMALL); /* NULL, 0: an empty array */
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
    EXPECT(tce_ew_histogram_new(SIZE_MAX / 2, TCE_CLOSURE_LEFT, &none), TCE_STATUS_TOO_MANY_BINS);
    EXPECT(tce_ew_histogram_new((size_t)1 << 45, TCE_CLOSURE_LEFT, &none), TCE_STATUS_TOO_MANY_BINS);
    /* 2^4 bins × 2^41 shards = 1 PiB: the allocation fails (tests run ASan with
     * allocator_may_return_null=1). */
    tce_concurrent_histogram *no_concurrent = NULL;
    EXPECT(tce_concurrent_histogram_new(16, (size_t)1 << 41, TCE_CLOSURE_LEFT, &no_concurrent),
           TCE_STATUS_ALLOCATION_FAILED);
    CHECK(no_concurrent == NULL);
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
    /* Sorting ahead (on the calling thread below 2^17 samples; csv_estimates.c sorts
       more on two threads): the same estimates, bit for bit, before and after a push. */
    tce_sorted_buffer *ahead = NULL, *twin = NULL;
    OK(tce_sorted_buffer_new(40, &ahead));
    OK(tce_sorted_buffer_new(40, &twin));
    OK(tce_sorted_buffer_push_batch(ahead, F, 20, Y, 20));
    OK(tce_sorted_buffer_push_batch(twin, F, 20, Y, 20));
    OK(tce_sorted_buffer_sort_parallel(ahead));
    OK(tce_sorted_buffer_sort_parallel(ahead)); /* nothing new: nothing to do */
    OK(tce_sorted_buffer_ece_sweep(ahead, &o, &merged));
    CHECK(memcmp(&merged.value, &single.value, sizeof(double)) == 0 && merged.bins == single.bins);
    OK(tce_sorted_buffer_push(ahead, 0.25, 1));
    OK(tce_sorted_buffer_push(twin, 0.25, 1));
    OK(tce_sorted_buffer_sort_parallel(ahead));
    OK(tce_sorted_buffer_ece_bin(ahead, &o, &merged));
    OK(tce_sorted_buffer_ece_bin(twin, &o, &single));
    CHECK(memcmp(&merged.value, &single.value, sizeof(double)) == 0 && merged.samples == 21
          && single.samples == 21);
    EXPECT(tce_sorted_buffer_sort_parallel(NULL), TCE_STATUS_NULL_POINTER);
    tce_sorted_buffer_free(ahead);
    tce_sorted_buffer_free(twin);
    tce_sorted_buffer_free(NULL);
    tce_sorted_buffer_free(small); /* caller memory: a no-op */
    tce_sorted_buffer_free(a);
    tce_sorted_buffer_free(c);

    tce_ew_histogram *h = NULL;
    OK(tce_ew_histogram_init(hist_memory2, sizeof hist_memory2, 4, TCE_CLOSURE_LEFT, &h));
    EXPECT(tce_sorted_buffer_push((tce_sorted_buffer *)(void *)h, 0.5, 1), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_sorted_buffer_merge(b, (const tce_sorted_buffer *)(const void *)h), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_sorted_buffer_ece_bin((tce_sorted_buffer *)(void *)garbage, &o, &e), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_sorted_buffer_sort_parallel((tce_sorted_buffer *)(void *)h), TCE_STATUS_WRONG_STATE);
    tce_sorted_buffer_free((tce_sorted_buffer *)(void *)h); /* another kind: a no-op */
    OK(tce_ew_histogram_push(h, 0.5, 1));
}

ALIGNED(16) static unsigned char window_memory[4096];
ALIGNED(16) static unsigned char reservoir_memory[4096];
ALIGNED(16) static unsigned char reservoir_memory2[4096];
ALIGNED(16) static unsigned char decay_memory[4096];
ALIGNED(16) static unsigned char concurrent_memory[4096];
ALIGNED(16) static unsigned char frame[4096];
ALIGNED(16) static unsigned char frame2[4096];

/* Sorted-sample estimates of two states are bitwise equal (same samples, same code). */
static tce_status window_ece_sweep(void *s, const tce_options *o, tce_estimate *e) {
    return tce_window_ece_sweep((tce_window *)s, o, e);
}
static tce_status buffer_ece_sweep(void *s, const tce_options *o, tce_estimate *e) {
    return tce_sorted_buffer_ece_sweep((tce_sorted_buffer *)s, o, e);
}
static int same_estimate(const tce_estimate *a, const tce_estimate *b) {
    return memcmp(&a->value, &b->value, sizeof(double)) == 0 && a->samples == b->samples && a->bins == b->bins;
}

/* A buffer holding `n` samples of F/Y starting at `first` (cyclically), for comparisons. */
static tce_sorted_buffer *buffer_of(size_t first, size_t n) {
    tce_sorted_buffer *b = NULL;
    if (tce_sorted_buffer_new(64, &b) != TCE_STATUS_OK) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        tce_sorted_buffer_push(b, F[(first + i) % 20], Y[(first + i) % 20]);
    }
    return b;
}

static void test_window(void) {
    size_t size = 0, align = 0;
    OK(tce_window_layout(20, &size, &align));
    CHECK(size >= 20 * 24 && size <= sizeof window_memory && align >= 8 && (align & (align - 1)) == 0);
    EXPECT(tce_window_layout(0, &size, &align), TCE_STATUS_ZERO_CAPACITY);
    EXPECT(tce_window_layout((size_t)1 << 30, &size, &align), TCE_STATUS_CAPACITY_TOO_LARGE);
    EXPECT(tce_window_layout(20, NULL, &align), TCE_STATUS_NULL_POINTER);

    tce_window *w = NULL;
    memset(window_memory, 0xee, sizeof window_memory);
    EXPECT(tce_window_init(NULL, 4096, 20, &w), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_init(window_memory, 4096, 20, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_init(window_memory, 4096, 0, &w), TCE_STATUS_ZERO_CAPACITY);
    EXPECT(tce_window_init(window_memory, 4096, (size_t)1 << 30, &w), TCE_STATUS_CAPACITY_TOO_LARGE);
    EXPECT(tce_window_init(window_memory + 4, 4000, 20, &w), TCE_STATUS_MISALIGNED);
    EXPECT(tce_window_init(window_memory, size - 1, 20, &w), TCE_STATUS_BUFFER_TOO_SMALL);
    CHECK(w == NULL && window_memory[0] == 0xee && window_memory[size - 1] == 0xee);
    OK(tce_window_init(window_memory, size, 20, &w));
    CHECK(w == (tce_window *)(void *)window_memory);

    size_t len = 9, capacity = 0;
    uint64_t seen_count = 9, hits = 9;
    OK(tce_window_len(w, &len));
    OK(tce_window_capacity(w, &capacity));
    OK(tce_window_seen(w, &seen_count));
    OK(tce_window_hits(w, &hits));
    CHECK(len == 0 && capacity == 20 && seen_count == 0 && hits == 0);
    EXPECT(tce_window_len(NULL, &len), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_capacity(w, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_seen(NULL, &seen_count), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_hits(w, NULL), TCE_STATUS_NULL_POINTER);

    tce_options o = tce_options_default();
    tce_estimate e, expected;
    EXPECT(tce_window_ece_bin(w, &o, &e), TCE_STATUS_NO_SAMPLES);
    EXPECT(tce_window_ece_sweep(w, &o, &e), TCE_STATUS_NO_SAMPLES);

    EXPECT(tce_window_push(w, NAN, 0), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_window_push(w, -0.5, 0), TCE_STATUS_SCORE_OUT_OF_RANGE);
    EXPECT(tce_window_push(w, 0.5, 2), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_window_push(NULL, 0.5, 1), TCE_STATUS_NULL_POINTER);
    double bad_scores[3] = {0.5, 0.7, INFINITY};
    EXPECT(tce_window_push_batch(w, bad_scores, 3, Y, 3), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_window_push_batch(w, F, 3, Y, 2), TCE_STATUS_LENGTH_MISMATCH);
    EXPECT(tce_window_push_batch(w, NULL, 3, Y, 3), TCE_STATUS_NULL_POINTER);
    OK(tce_window_push_batch(w, NULL, 0, NULL, 0));
    OK(tce_window_seen(w, &seen_count));
    CHECK(seen_count == 0);

    /* Full with F: the SPEC §9 values. */
    OK(tce_window_push_batch(w, F, 12, Y, 12));
    for (int i = 12; i < 20; i++) {
        OK(tce_window_push(w, F[i], Y[i]));
    }
    OK(tce_window_ece_bin(w, &o, &e));
    CHECK(close_to(e.value, 0.209971188500) && e.bins == 15 && e.samples == 20);
    OK(tce_window_ece_debias(w, &o, &e));
    CHECK(close_to(e.value, 0.108649206164));
    OK(tce_window_ece_sweep(w, &o, &e));
    CHECK(close_to(e.value, 0.146112599274) && e.bins == 9);
    OK(tce_window_mce(w, &o, &e));
    CHECK(e.value >= 0.209971188500);

    /* 7 more: the window holds F[7..20] then F[0..7], as a buffer of the same does. */
    OK(tce_window_push_batch(w, F, 7, Y, 7));
    OK(tce_window_len(w, &len));
    OK(tce_window_seen(w, &seen_count));
    OK(tce_window_hits(w, &hits));
    CHECK(len == 20 && seen_count == 27 && hits == 17);
    tce_sorted_buffer *b = buffer_of(7, 20);
    CHECK(b != NULL);
    for (uint32_t binning = 0; binning < 2; binning++) {
        o = tce_options_default();
        o.binning = binning;
        OK(tce_window_ece_bin(w, &o, &e));
        OK(tce_sorted_buffer_ece_bin(b, &o, &expected));
        CHECK(same_estimate(&e, &expected));
        OK(window_ece_sweep(w, &o, &e));
        OK(buffer_ece_sweep(b, &o, &expected));
        CHECK(same_estimate(&e, &expected));
        tce_bin_stats got[15], want[15];
        OK(tce_window_bin_stats(w, &o, got, 15));
        OK(tce_sorted_buffer_bin_stats(b, &o, want, 15));
        CHECK(memcmp(got, want, sizeof got) == 0);
    }
    OK(tce_sorted_buffer_clear(b));
    tce_sorted_buffer_free(b);
    o = tce_options_default();
    o.bins = 0;
    EXPECT(tce_window_ece_bin(w, &o, &e), TCE_STATUS_ZERO_BINS);
    o = tce_options_default();
    o.p = 0.5;
    EXPECT(tce_window_ece_debias(w, &o, &e), TCE_STATUS_INVALID_NORM);
    o = tce_options_default();
    o.ties = 2;
    EXPECT(tce_window_mce(w, &o, &e), TCE_STATUS_INVALID_ENUM);
    o = tce_options_default();
    EXPECT(tce_window_ece_bin(w, NULL, &e), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_ece_bin(w, &o, NULL), TCE_STATUS_NULL_POINTER);
    tce_bin_stats stats[4];
    o.bins = 5;
    EXPECT(tce_window_bin_stats(w, &o, stats, 4), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_window_bin_stats(w, &o, NULL, 4), TCE_STATUS_NULL_POINTER);

    OK(tce_window_clear(w));
    OK(tce_window_len(w, &len));
    OK(tce_window_seen(w, &seen_count));
    CHECK(len == 0 && seen_count == 0);
    EXPECT(tce_window_clear(NULL), TCE_STATUS_NULL_POINTER);

    /* Heap windows; free is NULL-safe and ignores caller memory and other kinds. */
    tce_window *heap = NULL, *none = NULL;
    OK(tce_window_new(3, &heap));
    OK(tce_window_push_batch(heap, F, 20, Y, 20));
    OK(tce_window_len(heap, &len));
    OK(tce_window_hits(heap, &hits));
    CHECK(len == 3 && hits == 2); /* Y[17..20] = 1, 1, 0 */
    EXPECT(tce_window_new(0, &none), TCE_STATUS_ZERO_CAPACITY);
    EXPECT(tce_window_new(3, NULL), TCE_STATUS_NULL_POINTER);
    CHECK(none == NULL);
    tce_window_free(NULL);
    tce_window_free(w); /* caller memory: a no-op */
    tce_window_free(heap);
    OK(tce_window_len(w, &len));

    tce_ew_histogram *h = NULL;
    OK(tce_ew_histogram_init(hist_memory2, sizeof hist_memory2, 4, TCE_CLOSURE_LEFT, &h));
    EXPECT(tce_window_push((tce_window *)(void *)h, 0.5, 1), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_window_len((const tce_window *)(const void *)h, &len), TCE_STATUS_WRONG_STATE);
    memset(garbage, 0x5a, sizeof garbage);
    EXPECT(tce_window_ece_sweep((tce_window *)(void *)garbage, &o, &e), TCE_STATUS_WRONG_STATE);
    tce_window_free((tce_window *)(void *)h); /* another kind: a no-op */
    OK(tce_ew_histogram_push(h, 0.5, 1));
}

static void test_reservoir(void) {
    size_t size = 0, align = 0;
    OK(tce_reservoir_layout(32, &size, &align));
    CHECK(size >= 32 * 16 && size <= sizeof reservoir_memory && align >= 8);
    EXPECT(tce_reservoir_layout(0, &size, &align), TCE_STATUS_ZERO_CAPACITY);
    EXPECT(tce_reservoir_layout((size_t)1 << 31, &size, &align), TCE_STATUS_CAPACITY_TOO_LARGE);
    EXPECT(tce_reservoir_layout(32, &size, NULL), TCE_STATUS_NULL_POINTER);

    tce_reservoir *r = NULL;
    memset(reservoir_memory, 0x77, sizeof reservoir_memory);
    EXPECT(tce_reservoir_init(NULL, 4096, 32, 1, &r), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_reservoir_init(reservoir_memory, 4096, 32, 1, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_reservoir_init(reservoir_memory, 4096, 0, 1, &r), TCE_STATUS_ZERO_CAPACITY);
    EXPECT(tce_reservoir_init(reservoir_memory + 4, 4000, 32, 1, &r), TCE_STATUS_MISALIGNED);
    EXPECT(tce_reservoir_init(reservoir_memory, size - 1, 32, 1, &r), TCE_STATUS_BUFFER_TOO_SMALL);
    CHECK(r == NULL && reservoir_memory[0] == 0x77);
    OK(tce_reservoir_init(reservoir_memory, size, 32, 1, &r));

    /* Room for all of F: the reservoir holds exactly the stream, as a buffer does. */
    tce_options o = tce_options_default();
    tce_estimate e, expected;
    EXPECT(tce_reservoir_ece_bin(r, &o, &e), TCE_STATUS_NO_SAMPLES);
    EXPECT(tce_reservoir_push(r, NAN, 1), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_reservoir_push(r, 2.0, 1), TCE_STATUS_SCORE_OUT_OF_RANGE);
    EXPECT(tce_reservoir_push(r, 0.5, 9), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_reservoir_push(NULL, 0.5, 1), TCE_STATUS_NULL_POINTER);
    uint8_t bad_labels[2] = {1, 5};
    EXPECT(tce_reservoir_push_batch(r, F, 2, bad_labels, 2), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_reservoir_push_batch(r, F, 2, Y, 1), TCE_STATUS_LENGTH_MISMATCH);
    OK(tce_reservoir_push_batch(r, F, 10, Y, 10));
    for (int i = 10; i < 20; i++) {
        OK(tce_reservoir_push(r, F[i], Y[i]));
    }
    size_t len = 0, capacity = 0;
    uint64_t seen_count = 0;
    OK(tce_reservoir_len(r, &len));
    OK(tce_reservoir_capacity(r, &capacity));
    OK(tce_reservoir_seen(r, &seen_count));
    CHECK(len == 20 && capacity == 32 && seen_count == 20);
    EXPECT(tce_reservoir_len(NULL, &len), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_reservoir_capacity(r, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_reservoir_seen(NULL, &seen_count), TCE_STATUS_NULL_POINTER);
    tce_sorted_buffer *b = buffer_of(0, 20);
    CHECK(b != NULL);
    for (uint32_t binning = 0; binning < 2; binning++) {
        o = tce_options_default();
        o.binning = binning;
        OK(tce_reservoir_ece_bin(r, &o, &e));
        OK(tce_sorted_buffer_ece_bin(b, &o, &expected));
        CHECK(same_estimate(&e, &expected));
        OK(tce_reservoir_ece_sweep(r, &o, &e));
        OK(tce_sorted_buffer_ece_sweep(b, &o, &expected));
        CHECK(same_estimate(&e, &expected));
        OK(tce_reservoir_ece_debias(r, &o, &e));
        OK(tce_sorted_buffer_ece_debias(b, &o, &expected));
        CHECK(same_estimate(&e, &expected));
        OK(tce_reservoir_mce(r, &o, &e));
        OK(tce_sorted_buffer_mce(b, &o, &expected));
        CHECK(same_estimate(&e, &expected));
        tce_bin_stats got[15], want[15];
        OK(tce_reservoir_bin_stats(r, &o, got, 15));
        OK(tce_sorted_buffer_bin_stats(b, &o, want, 15));
        CHECK(memcmp(got, want, sizeof got) == 0);
    }
    tce_sorted_buffer_free(b);
    o = tce_options_default();
    o.bins = 0;
    EXPECT(tce_reservoir_mce(r, &o, &e), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_reservoir_bin_stats(r, &o, NULL, 0), TCE_STATUS_ZERO_BINS);
    o.bins = 15;
    EXPECT(tce_reservoir_ece_bin(r, &o, NULL), TCE_STATUS_NULL_POINTER);

    /* Smaller than the stream: a uniform sample of `capacity`; merges add what was seen. */
    tce_reservoir *a = NULL, *c = NULL, *small = NULL, *same_seed = NULL;
    OK(tce_reservoir_new(8, 7, &a));
    OK(tce_reservoir_new(8, 9, &c));
    OK(tce_reservoir_new(8, 7, &same_seed));
    OK(tce_reservoir_init(reservoir_memory2, sizeof reservoir_memory2, 4, 7, &small));
    for (int round = 0; round < 3; round++) {
        OK(tce_reservoir_push_batch(a, F, 20, Y, 20));
        OK(tce_reservoir_push_batch(same_seed, F, 20, Y, 20));
    }
    OK(tce_reservoir_push_batch(c, F, 20, Y, 20));
    OK(tce_reservoir_len(a, &len));
    OK(tce_reservoir_seen(a, &seen_count));
    CHECK(len == 8 && seen_count == 60);
    tce_estimate e2;
    OK(tce_reservoir_ece_sweep(a, &o, &e));
    OK(tce_reservoir_ece_sweep(same_seed, &o, &e2));
    CHECK(same_estimate(&e, &e2) && e.samples == 8); /* seeded: runs repeat */
    OK(tce_reservoir_merge(a, c));
    OK(tce_reservoir_len(a, &len));
    OK(tce_reservoir_seen(a, &seen_count));
    CHECK(len == 8 && seen_count == 80);
    OK(tce_reservoir_seen(c, &seen_count));
    CHECK(seen_count == 20);
    EXPECT(tce_reservoir_merge(a, small), TCE_STATUS_CAPACITY_MISMATCH);
    EXPECT(tce_reservoir_merge(small, a), TCE_STATUS_CAPACITY_MISMATCH);
    EXPECT(tce_reservoir_merge(a, a), TCE_STATUS_SAME_STATE);
    EXPECT(tce_reservoir_merge(NULL, a), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_reservoir_merge(a, NULL), TCE_STATUS_NULL_POINTER);
    OK(tce_reservoir_seen(a, &seen_count));
    CHECK(seen_count == 80);
    OK(tce_reservoir_clear(a));
    OK(tce_reservoir_len(a, &len));
    OK(tce_reservoir_seen(a, &seen_count));
    CHECK(len == 0 && seen_count == 0);
    EXPECT(tce_reservoir_clear(NULL), TCE_STATUS_NULL_POINTER);

    tce_reservoir *none = NULL;
    EXPECT(tce_reservoir_new(0, 1, &none), TCE_STATUS_ZERO_CAPACITY);
    EXPECT(tce_reservoir_new(8, 1, NULL), TCE_STATUS_NULL_POINTER);
    CHECK(none == NULL);
    tce_reservoir_free(NULL);
    tce_reservoir_free(small); /* caller memory: a no-op */
    tce_reservoir_free(a);
    tce_reservoir_free(c);
    tce_reservoir_free(same_seed);

    tce_sorted_buffer *buf = NULL;
    OK(tce_sorted_buffer_init(buffer_memory2, sizeof buffer_memory2, 4, &buf));
    EXPECT(tce_reservoir_push((tce_reservoir *)(void *)buf, 0.5, 1), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_reservoir_merge(r, (const tce_reservoir *)(const void *)buf), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_reservoir_ece_bin((tce_reservoir *)(void *)garbage, &o, &e), TCE_STATUS_WRONG_STATE);
    tce_reservoir_free((tce_reservoir *)(void *)buf); /* another kind: a no-op */
    OK(tce_sorted_buffer_push(buf, 0.5, 1));
}

static void test_decaying_histogram(void) {
    size_t size = 0, align = 0;
    OK(tce_decaying_histogram_layout(15, &size, &align));
    CHECK(size >= 15 * 40 && size <= sizeof decay_memory && align >= 8);
    EXPECT(tce_decaying_histogram_layout(0, &size, &align), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_decaying_histogram_layout(SIZE_MAX / 2, &size, &align), TCE_STATUS_TOO_MANY_BINS);
    EXPECT(tce_decaying_histogram_layout(15, NULL, &align), TCE_STATUS_NULL_POINTER);

    tce_decaying_histogram *h = NULL;
    memset(decay_memory, 0x33, sizeof decay_memory);
    const double bad_half_lives[5] = {0.0, -1.0, NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 5; i++) {
        EXPECT(tce_decaying_histogram_init(decay_memory, 4096, 15, TCE_CLOSURE_LEFT, bad_half_lives[i], &h),
               TCE_STATUS_INVALID_HALF_LIFE);
    }
    EXPECT(tce_decaying_histogram_init(NULL, 4096, 15, TCE_CLOSURE_LEFT, 100.0, &h), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_init(decay_memory, 4096, 15, TCE_CLOSURE_LEFT, 100.0, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_init(decay_memory, 4096, 0, TCE_CLOSURE_LEFT, 100.0, &h), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_decaying_histogram_init(decay_memory, 4096, 15, 3, 100.0, &h), TCE_STATUS_INVALID_ENUM);
    EXPECT(tce_decaying_histogram_init(decay_memory + 4, 4000, 15, TCE_CLOSURE_LEFT, 100.0, &h), TCE_STATUS_MISALIGNED);
    EXPECT(tce_decaying_histogram_init(decay_memory, size - 1, 15, TCE_CLOSURE_LEFT, 100.0, &h),
           TCE_STATUS_BUFFER_TOO_SMALL);
    CHECK(h == NULL && decay_memory[0] == 0x33 && decay_memory[size - 1] == 0x33);
    /* A half-life far beyond the stream: every weight ~1, so the plain histogram's ECE. */
    OK(tce_decaying_histogram_init(decay_memory, size, 15, TCE_CLOSURE_LEFT, 1e12, &h));

    size_t bins = 0;
    uint32_t closure = 9;
    uint64_t samples = 9;
    double half_life = 0.0;
    OK(tce_decaying_histogram_bin_count(h, &bins));
    OK(tce_decaying_histogram_closure(h, &closure));
    OK(tce_decaying_histogram_samples(h, &samples));
    OK(tce_decaying_histogram_half_life(h, &half_life));
    CHECK(bins == 15 && closure == TCE_CLOSURE_LEFT && samples == 0 && fabs(half_life / 1e12 - 1.0) < 1e-3);
    EXPECT(tce_decaying_histogram_bin_count(NULL, &bins), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_closure(h, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_samples(NULL, &samples), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_half_life(h, NULL), TCE_STATUS_NULL_POINTER);

    tce_estimate e;
    EXPECT(tce_decaying_histogram_ece_bin(h, 2.0, &e), TCE_STATUS_NO_SAMPLES);
    EXPECT(tce_decaying_histogram_mce(h, &e), TCE_STATUS_NO_SAMPLES);
    EXPECT(tce_decaying_histogram_ece_debias(h, 2.0, &e), TCE_STATUS_NO_SAMPLES);
    EXPECT(tce_decaying_histogram_push(h, NAN, 1), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_decaying_histogram_push(h, 1.5, 1), TCE_STATUS_SCORE_OUT_OF_RANGE);
    EXPECT(tce_decaying_histogram_push(h, 0.5, 2), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_decaying_histogram_push(NULL, 0.5, 1), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_push_batch(h, F, 20, Y, 19), TCE_STATUS_LENGTH_MISMATCH);
    EXPECT(tce_decaying_histogram_push_batch(h, (const double *)(const void *)((const unsigned char *)F + 1), 3, Y, 3),
           TCE_STATUS_MISALIGNED);
    OK(tce_decaying_histogram_push_batch(h, F, 10, Y, 10));
    for (int i = 10; i < 20; i++) {
        OK(tce_decaying_histogram_push(h, F[i], Y[i]));
    }
    OK(tce_decaying_histogram_samples(h, &samples));
    CHECK(samples == 20);
    OK(tce_decaying_histogram_ece_bin(h, 2.0, &e));
    CHECK(fabs(e.value - 0.136057083608) < 1e-9 && e.samples == 20 && e.bins == 15);
    EXPECT(tce_decaying_histogram_ece_bin(h, 0.5, &e), TCE_STATUS_INVALID_NORM);
    EXPECT(tce_decaying_histogram_ece_bin(h, 2.0, NULL), TCE_STATUS_NULL_POINTER);
    OK(tce_decaying_histogram_mce(h, &e));
    CHECK(e.value > 0.0 && e.value <= 1.0);
    OK(tce_decaying_histogram_ece_debias(h, 2.0, &e));
    CHECK(e.value >= 0.0 && e.value < 0.136057083608);
    EXPECT(tce_decaying_histogram_ece_debias(h, INFINITY, &e), TCE_STATUS_INVALID_NORM);

    tce_decayed_bin_stats stats[16];
    EXPECT(tce_decaying_histogram_bin_stats(h, stats, 14), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_decaying_histogram_bin_stats(h, NULL, 15), TCE_STATUS_NULL_POINTER);
    OK(tce_decaying_histogram_bin_stats(h, stats, 16));
    uint64_t total = 0;
    for (int k = 0; k < 15; k++) {
        total += stats[k].count;
        CHECK(stats[k].lower == k / 15.0 && stats[k].upper == (k + 1) / 15.0);
        if (stats[k].count == 0) {
            CHECK(isnan(stats[k].mean_score) && isnan(stats[k].accuracy) && stats[k].weight == 0.0);
        } else {
            CHECK(fabs(stats[k].weight - (double)stats[k].count) < 1e-9);
            CHECK(fabs(stats[k].effective_count - (double)stats[k].count) < 1e-9);
        }
    }
    CHECK(total == 20 && stats[14].count == 10);

    /* A short half-life follows the recent samples: 20 misses at 0.9 after 200 hits. */
    tce_decaying_histogram *fast = NULL, *none = NULL;
    OK(tce_decaying_histogram_new(10, TCE_CLOSURE_RIGHT, 10.0, &fast));
    for (int i = 0; i < 200; i++) {
        OK(tce_decaying_histogram_push(fast, 0.9, 1));
    }
    for (int i = 0; i < 20; i++) {
        OK(tce_decaying_histogram_push(fast, 0.9, 0));
    }
    OK(tce_decaying_histogram_ece_bin(fast, 1.0, &e));
    CHECK(e.value > 0.6 && e.samples == 220); /* accuracy ~ 0.25 by weight, not 0.91 */
    OK(tce_decaying_histogram_closure(fast, &closure));
    CHECK(closure == TCE_CLOSURE_RIGHT);
    OK(tce_decaying_histogram_reset(fast));
    OK(tce_decaying_histogram_samples(fast, &samples));
    OK(tce_decaying_histogram_half_life(fast, &half_life));
    CHECK(samples == 0 && fabs(half_life - 10.0) < 1e-9);
    EXPECT(tce_decaying_histogram_reset(NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_new(10, TCE_CLOSURE_LEFT, 0.0, &none), TCE_STATUS_INVALID_HALF_LIFE);
    EXPECT(tce_decaying_histogram_new(0, TCE_CLOSURE_LEFT, 10.0, &none), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_decaying_histogram_new(10, 2, 10.0, &none), TCE_STATUS_INVALID_ENUM);
    EXPECT(tce_decaying_histogram_new(10, TCE_CLOSURE_LEFT, 10.0, NULL), TCE_STATUS_NULL_POINTER);
    CHECK(none == NULL);
    tce_decaying_histogram_free(NULL);
    tce_decaying_histogram_free(h); /* caller memory: a no-op */
    tce_decaying_histogram_free(fast);
    OK(tce_decaying_histogram_samples(h, &samples));

    tce_ew_histogram *plain = NULL;
    OK(tce_ew_histogram_init(hist_memory2, sizeof hist_memory2, 15, TCE_CLOSURE_LEFT, &plain));
    EXPECT(tce_decaying_histogram_push((tce_decaying_histogram *)(void *)plain, 0.5, 1), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_decaying_histogram_ece_bin((const tce_decaying_histogram *)(const void *)garbage, 2.0, &e),
           TCE_STATUS_WRONG_STATE);
    EXPECT(tce_ew_histogram_push((tce_ew_histogram *)(void *)h, 0.5, 1), TCE_STATUS_WRONG_STATE);
}

ALIGNED(16) static unsigned char alarm_memory[1024];
ALIGNED(16) static unsigned char alarm_memory2[1024];

static void test_alarm(void) {
    const double ln2 = 0.69314718055994531;
    size_t size = 0, align = 0;
    OK(tce_alarm_layout(2, &size, &align));
    CHECK(size >= 2 * 24 && size <= sizeof alarm_memory && align >= 8);
    EXPECT(tce_alarm_layout(0, &size, &align), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_alarm_layout(SIZE_MAX / 2, &size, &align), TCE_STATUS_TOO_MANY_BINS);
    EXPECT(tce_alarm_layout(2, NULL, &align), TCE_STATUS_NULL_POINTER);

    tce_alarm *a = NULL;
    memset(alarm_memory, 0x44, sizeof alarm_memory);
    EXPECT(tce_alarm_init(alarm_memory, size, 2, TCE_CLOSURE_LEFT, 0.0, 0.2, &a), TCE_STATUS_INVALID_SHIFT);
    EXPECT(tce_alarm_init(alarm_memory, size, 2, TCE_CLOSURE_LEFT, NAN, 0.2, &a), TCE_STATUS_INVALID_SHIFT);
    EXPECT(tce_alarm_init(alarm_memory, size, 2, TCE_CLOSURE_LEFT, ln2, 0.0, &a), TCE_STATUS_INVALID_THRESHOLD);
    EXPECT(tce_alarm_init(alarm_memory, size, 2, TCE_CLOSURE_LEFT, ln2, 701.0, &a), TCE_STATUS_INVALID_THRESHOLD);
    EXPECT(tce_alarm_init(alarm_memory, size, 2, 7, ln2, 0.2, &a), TCE_STATUS_INVALID_ENUM);
    EXPECT(tce_alarm_init(alarm_memory, size - 1, 2, TCE_CLOSURE_LEFT, ln2, 0.2, &a), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_alarm_init(alarm_memory + 4, size, 2, TCE_CLOSURE_LEFT, ln2, 0.2, &a), TCE_STATUS_MISALIGNED);
    EXPECT(tce_alarm_init(alarm_memory, size, 2, TCE_CLOSURE_LEFT, ln2, 0.2, NULL), TCE_STATUS_NULL_POINTER);
    CHECK(a == NULL && alarm_memory[0] == 0x44 && alarm_memory[size - 1] == 0x44);
    OK(tce_alarm_init(alarm_memory, size, 2, TCE_CLOSURE_LEFT, ln2, 0.2, &a));

    tce_alarm_report r;
    OK(tce_alarm_read(a, &r));
    CHECK(r.statistic == 0.0 && r.alarm == 0 && r.alarm_at == 0 && r.samples == 0 && isnan(r.mean_information));
    CHECK(r.threshold == 0.2 && r.shift == ln2 && isnan(r.approximate_arl0));
    EXPECT(tce_alarm_read(a, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_alarm_read(NULL, &r), TCE_STATUS_NULL_POINTER);
    /* Score 0.5, a miss: the over-confidence CUSUM is ln(4/3) >= 0.2 at sample 1. */
    OK(tce_alarm_push(a, 0.5, 0));
    OK(tce_alarm_read(a, &r));
    CHECK(close_to(r.statistic, log(4.0 / 3.0)) && r.alarm == 1 && r.alarm_at == 1 && r.samples == 1);
    CHECK(close_to(r.mean_information, tce_alarm_information(ln2, 0.5)));
    CHECK(close_to(r.guaranteed_arl0, 0.5 * exp(0.2)) && r.guaranteed_arl0 == tce_alarm_guaranteed_arl0(0.2));
    CHECK(r.approximate_arl0 == tce_alarm_approximate_arl0(0.2, r.mean_information));
    EXPECT(tce_alarm_push(a, NAN, 1), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_alarm_push(a, 1.5, 1), TCE_STATUS_SCORE_OUT_OF_RANGE);
    EXPECT(tce_alarm_push(a, 0.5, 2), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_alarm_push(NULL, 0.5, 1), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_alarm_push_batch(a, F, 20, Y, 19), TCE_STATUS_LENGTH_MISMATCH);
    OK(tce_alarm_push_batch(a, F, 20, Y, 20));
    size_t bins = 0;
    OK(tce_alarm_bin_count(a, &bins));
    CHECK(bins == 2);
    EXPECT(tce_alarm_bin_count(a, NULL), TCE_STATUS_NULL_POINTER);

    /* The portable round trip, into an alarm of other settings. */
    size_t len = 0, written = 0;
    OK(tce_alarm_encoded_len(a, &len));
    CHECK(len == 64 + 24 * 2 && len <= sizeof scratch);
    EXPECT(tce_alarm_encode(a, scratch, len - 1, &written), TCE_STATUS_BUFFER_TOO_SMALL);
    OK(tce_alarm_encode(a, scratch, sizeof scratch, &written));
    CHECK(written == len);
    tce_alarm *b = NULL;
    OK(tce_alarm_init(alarm_memory2, sizeof alarm_memory2, 2, TCE_CLOSURE_RIGHT, 1.0, 5.0, &b));
    EXPECT(tce_alarm_decode(b, scratch, len - 1), TCE_STATUS_TRUNCATED);
    OK(tce_alarm_decode(b, scratch, len));
    tce_alarm_report rb;
    OK(tce_alarm_read(b, &rb));
    OK(tce_alarm_read(a, &r));
    CHECK(rb.statistic == r.statistic && rb.mean_information == r.mean_information);
    CHECK(rb.samples == 21 && rb.alarm_at == 1 && rb.threshold == 0.2);
    OK(tce_alarm_reset(b));
    OK(tce_alarm_read(b, &rb));
    CHECK(rb.samples == 0 && rb.alarm == 0 && rb.statistic == 0.0);
    EXPECT(tce_alarm_reset(NULL), TCE_STATUS_NULL_POINTER);

    /* The rates' inverses. */
    double h = 0.0;
    OK(tce_alarm_threshold_for_arl0(1e4, 0.003, &h));
    CHECK(fabs(expm1(h) - h - 60.0) < 1e-9);
    EXPECT(tce_alarm_threshold_for_arl0(1e4, 0.0, &h), TCE_STATUS_INVALID_THRESHOLD);
    EXPECT(tce_alarm_threshold_for_arl0(1e4, 0.003, NULL), TCE_STATUS_NULL_POINTER);
    OK(tce_alarm_threshold_for_guaranteed_arl0(1e4, &h));
    CHECK(close_to(h, log(2e4)));
    EXPECT(tce_alarm_threshold_for_guaranteed_arl0(0.5, &h), TCE_STATUS_INVALID_THRESHOLD);

    /* The heap, and a handle of another kind. */
    tce_alarm *heap = NULL, *none = NULL;
    OK(tce_alarm_new(10, TCE_CLOSURE_LEFT, ln2, 10.0, &heap));
    OK(tce_alarm_push_batch(heap, F, 20, Y, 20));
    EXPECT(tce_alarm_new(10, TCE_CLOSURE_LEFT, 11.0, 10.0, &none), TCE_STATUS_INVALID_SHIFT);
    EXPECT(tce_alarm_new(0, TCE_CLOSURE_LEFT, ln2, 10.0, &none), TCE_STATUS_ZERO_BINS);
    CHECK(none == NULL);
    tce_alarm_free(NULL);
    tce_alarm_free(a); /* caller memory: a no-op */
    tce_alarm_free(heap);
    OK(tce_alarm_read(a, &r));
    EXPECT(tce_alarm_push((tce_alarm *)(void *)garbage, 0.5, 1), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_alarm_decode(a, garbage, 128), TCE_STATUS_BAD_MAGIC);
}

static void test_concurrent_histogram(void) {
    size_t size = 0, align = 0;
    /* 3 shards of 15 bins. */
    OK(tce_concurrent_histogram_layout(15, 3, &size, &align));
    CHECK(size >= 3 * 15 * 32 && size <= sizeof concurrent_memory && align >= 8);
    size_t one_shard = 0;
    OK(tce_concurrent_histogram_layout(15, 1, &one_shard, &align));
    CHECK(size == one_shard + 2 * 15 * 32);
    EXPECT(tce_concurrent_histogram_layout(0, 3, &size, &align), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_concurrent_histogram_layout(15, 0, &size, &align), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_concurrent_histogram_layout(SIZE_MAX / 2, 1, &size, &align), TCE_STATUS_TOO_MANY_BINS);
    EXPECT(tce_concurrent_histogram_layout(15, SIZE_MAX / 2, &size, &align), TCE_STATUS_CAPACITY_TOO_LARGE);
    EXPECT(tce_concurrent_histogram_layout(15, 3, &size, NULL), TCE_STATUS_NULL_POINTER);

    tce_concurrent_histogram *c = NULL;
    memset(concurrent_memory, 0x11, sizeof concurrent_memory);
    EXPECT(tce_concurrent_histogram_init(NULL, 4096, 15, 3, TCE_CLOSURE_LEFT, &c), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_init(concurrent_memory, 4096, 15, 3, TCE_CLOSURE_LEFT, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_init(concurrent_memory, 4096, 0, 3, TCE_CLOSURE_LEFT, &c), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_concurrent_histogram_init(concurrent_memory, 4096, 15, 0, TCE_CLOSURE_LEFT, &c), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_concurrent_histogram_init(concurrent_memory, 4096, SIZE_MAX / 2, 4, TCE_CLOSURE_LEFT, &c),
           TCE_STATUS_TOO_MANY_BINS);
    EXPECT(tce_concurrent_histogram_init(concurrent_memory, 4096, 4, SIZE_MAX / 2, TCE_CLOSURE_LEFT, &c),
           TCE_STATUS_CAPACITY_TOO_LARGE);
    EXPECT(tce_concurrent_histogram_init(concurrent_memory, 4096, 15, 3, 7, &c), TCE_STATUS_INVALID_ENUM);
    EXPECT(tce_concurrent_histogram_init(concurrent_memory + 4, 4000, 15, 3, TCE_CLOSURE_LEFT, &c),
           TCE_STATUS_MISALIGNED);
    EXPECT(tce_concurrent_histogram_init(concurrent_memory, size - 1, 15, 3, TCE_CLOSURE_LEFT, &c),
           TCE_STATUS_BUFFER_TOO_SMALL);
    CHECK(c == NULL && concurrent_memory[0] == 0x11);
    OK(tce_concurrent_histogram_init(concurrent_memory, size, 15, 3, TCE_CLOSURE_LEFT, &c));
    size_t bins = 0, shards = 0;
    uint32_t closure = 9;
    OK(tce_concurrent_histogram_bin_count(c, &bins));
    OK(tce_concurrent_histogram_shard_count(c, &shards));
    OK(tce_concurrent_histogram_closure(c, &closure));
    CHECK(bins == 15 && shards == 3 && closure == TCE_CLOSURE_LEFT);
    EXPECT(tce_concurrent_histogram_bin_count(NULL, &bins), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_shard_count(NULL, &shards), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_shard_count(c, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_closure(c, NULL), TCE_STATUS_NULL_POINTER);

    EXPECT(tce_concurrent_histogram_push(c, NAN, 1), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_concurrent_histogram_push(c, 3.0, 1), TCE_STATUS_SCORE_OUT_OF_RANGE);
    EXPECT(tce_concurrent_histogram_push(c, 0.5, 4), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_concurrent_histogram_push(NULL, 0.5, 1), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_push_batch(c, F, 20, Y, 21), TCE_STATUS_LENGTH_MISMATCH);
    EXPECT(tce_concurrent_histogram_push_batch(c, F, 20, NULL, 20), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_push_to(c, 1, NAN, 1), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_concurrent_histogram_push_to(c, 1, 0.5, 2), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_concurrent_histogram_push_to(NULL, 1, 0.5, 1), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_push_batch_to(c, 2, F, 20, Y, 19), TCE_STATUS_LENGTH_MISMATCH);
    EXPECT(tce_concurrent_histogram_push_batch_to(c, 2, NULL, 20, Y, 20), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_push_batch_to(NULL, 2, F, 20, Y, 20), TCE_STATUS_NULL_POINTER);
    /* Spread over every shard (shard 4 is shard 1: modulo 3); the snapshot sums them. */
    OK(tce_concurrent_histogram_push_batch(c, F, 5, Y, 5));
    OK(tce_concurrent_histogram_push_batch_to(c, 2, F + 5, 5, Y + 5, 5));
    for (int i = 10; i < 15; i++) {
        OK(tce_concurrent_histogram_push(c, F[i], Y[i]));
    }
    for (int i = 15; i < 20; i++) {
        OK(tce_concurrent_histogram_push_to(c, (size_t)i % 5, F[i], Y[i]));
    }

    /* The snapshot equals the plain histogram of the same samples, bit for bit. */
    tce_ew_histogram *snap = NULL, *plain = NULL, *five = NULL, *right = NULL;
    OK(tce_ew_histogram_new(15, TCE_CLOSURE_LEFT, &snap));
    OK(tce_ew_histogram_new(15, TCE_CLOSURE_LEFT, &plain));
    OK(tce_ew_histogram_new(5, TCE_CLOSURE_LEFT, &five));
    OK(tce_ew_histogram_new(15, TCE_CLOSURE_RIGHT, &right));
    OK(tce_ew_histogram_push(snap, 0.5, 1)); /* replaced by the snapshot */
    OK(tce_ew_histogram_push_batch(plain, F, 20, Y, 20));
    OK(tce_concurrent_histogram_snapshot(c, snap));
    tce_bin_stats got[15], want[15];
    OK(tce_ew_histogram_bin_stats(snap, got, 15));
    OK(tce_ew_histogram_bin_stats(plain, want, 15));
    CHECK(memcmp(got, want, sizeof got) == 0);
    tce_estimate e;
    OK(tce_ew_histogram_ece_bin(snap, 2.0, &e));
    CHECK(close_to(e.value, 0.136057083608) && e.samples == 20);
    EXPECT(tce_concurrent_histogram_snapshot(c, five), TCE_STATUS_BIN_COUNT_MISMATCH);
    EXPECT(tce_concurrent_histogram_snapshot(c, right), TCE_STATUS_CLOSURE_MISMATCH);
    EXPECT(tce_concurrent_histogram_snapshot(c, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_snapshot(NULL, snap), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_concurrent_histogram_snapshot(c, (tce_ew_histogram *)(void *)c), TCE_STATUS_WRONG_STATE);

    OK(tce_concurrent_histogram_reset(c));
    OK(tce_concurrent_histogram_snapshot(c, snap));
    uint64_t samples = 9;
    OK(tce_ew_histogram_samples(snap, &samples));
    CHECK(samples == 0);
    EXPECT(tce_concurrent_histogram_reset(NULL), TCE_STATUS_NULL_POINTER);

    tce_concurrent_histogram *heap = NULL, *none = NULL;
    OK(tce_concurrent_histogram_new(5, 2, TCE_CLOSURE_RIGHT, &heap));
    OK(tce_concurrent_histogram_push_batch(heap, F, 20, Y, 20));
    OK(tce_concurrent_histogram_push_batch_to(heap, 1, F, 20, Y, 20));
    OK(tce_concurrent_histogram_shard_count(heap, &shards));
    CHECK(shards == 2);
    EXPECT(tce_concurrent_histogram_snapshot(heap, right), TCE_STATUS_BIN_COUNT_MISMATCH);
    EXPECT(tce_concurrent_histogram_new(0, 2, TCE_CLOSURE_LEFT, &none), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_concurrent_histogram_new(5, 0, TCE_CLOSURE_LEFT, &none), TCE_STATUS_ZERO_BINS);
    EXPECT(tce_concurrent_histogram_new(SIZE_MAX / 2, 4, TCE_CLOSURE_LEFT, &none), TCE_STATUS_TOO_MANY_BINS);
    EXPECT(tce_concurrent_histogram_new(5, 2, 2, &none), TCE_STATUS_INVALID_ENUM);
    EXPECT(tce_concurrent_histogram_new(5, 2, TCE_CLOSURE_LEFT, NULL), TCE_STATUS_NULL_POINTER);
    CHECK(none == NULL);
    tce_concurrent_histogram_free(NULL);
    tce_concurrent_histogram_free(c); /* caller memory: a no-op */
    tce_concurrent_histogram_free(heap);
    tce_concurrent_histogram_free((tce_concurrent_histogram *)(void *)snap); /* another kind: a no-op */
    OK(tce_concurrent_histogram_bin_count(c, &bins));
    EXPECT(tce_concurrent_histogram_push((tce_concurrent_histogram *)(void *)snap, 0.5, 1), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_concurrent_histogram_push((tce_concurrent_histogram *)(void *)garbage, 0.5, 1), TCE_STATUS_WRONG_STATE);
    EXPECT(tce_concurrent_histogram_push_to((tce_concurrent_histogram *)(void *)snap, 1, 0.5, 1), TCE_STATUS_WRONG_STATE);
    tce_ew_histogram_free(snap);
    tce_ew_histogram_free(plain);
    tce_ew_histogram_free(five);
    tce_ew_histogram_free(right);
}

/* CRC-32 (IEEE 802.3, reflected), to re-sign a frame after editing it. */
static uint32_t crc32(const unsigned char *bytes, size_t len) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < len; i++) {
        c ^= bytes[i];
        for (int k = 0; k < 8; k++) {
            c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        }
    }
    return ~c;
}

static uint32_t read_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void write_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

/* Recomputes the CRC of a frame of `len` bytes (after the payload). */
static void resign(unsigned char *bytes, size_t len) { write_u32(bytes + len - 4, crc32(bytes, len - 4)); }

static void write_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

/* Encodes a state with `encode` into `out` (of sizeof frame bytes); its length. */
#define ENCODE(encode, state, out)                                                                          \
    do {                                                                                                    \
        size_t written_ = 0;                                                                                \
        OK(encode(state, out, sizeof frame, &written_));                                                    \
        encoded = written_;                                                                                 \
    } while (0)

/* Issue 10, the count bound: every count stops at TCE_MAX_COUNT with COUNT_OVERFLOW, and
 * the state stays as it was (compared by its encoded bytes); frames whose counts pass
 * the bound are INCONSISTENT. Offsets: see src/portable.rs (a 12-byte frame header). */
static void test_count_bound(void) {
    size_t encoded = 0, before_len = 0;
    uint64_t count = 0;

    /* Defect 2: a 1-sample histogram merged into a copy of itself 64 times. The 63rd
     * doubling would pass 2^63 - 1: refused, nothing changed. */
    tce_ew_histogram *h = NULL, *copy = NULL;
    OK(tce_ew_histogram_new(4, TCE_CLOSURE_LEFT, &h));
    OK(tce_ew_histogram_new(4, TCE_CLOSURE_LEFT, &copy));
    OK(tce_ew_histogram_push(h, 0.3, 1));
    for (int doubling = 1; doubling <= 62; doubling++) {
        ENCODE(tce_ew_histogram_encode, h, frame);
        OK(tce_ew_histogram_decode(copy, frame, encoded));
        OK(tce_ew_histogram_merge(h, copy));
    }
    OK(tce_ew_histogram_samples(h, &count));
    CHECK(count == (uint64_t)1 << 62);
    ENCODE(tce_ew_histogram_encode, h, frame);
    before_len = encoded;
    OK(tce_ew_histogram_decode(copy, frame, encoded));
    EXPECT(tce_ew_histogram_merge(h, copy), TCE_STATUS_COUNT_OVERFLOW);
    ENCODE(tce_ew_histogram_encode, h, frame2);
    CHECK(encoded == before_len && memcmp(frame, frame2, encoded) == 0);

    /* Up to the bound exactly (empty bin 0 patched to 2^62 - 1 samples, scores of 0 that its
     * zero score sum allows, re-signed), then no further: push, batch and merge refused,
     * the state unchanged. */
    write_u64(frame2 + 12 + 8 + 32 * 0, ((uint64_t)1 << 62) - 1);
    resign(frame2, encoded);
    OK(tce_ew_histogram_decode(h, frame2, encoded));
    OK(tce_ew_histogram_samples(h, &count));
    CHECK(count == TCE_MAX_COUNT);
    const double score = 0.5;
    const uint8_t label = 1;
    EXPECT(tce_ew_histogram_push(h, 0.5, 1), TCE_STATUS_COUNT_OVERFLOW);
    EXPECT(tce_ew_histogram_push_batch(h, &score, 1, &label, 1), TCE_STATUS_COUNT_OVERFLOW);
    EXPECT(tce_ew_histogram_merge(h, copy), TCE_STATUS_COUNT_OVERFLOW);
    ENCODE(tce_ew_histogram_encode, h, frame);
    CHECK(memcmp(frame, frame2, encoded) == 0);

    /* Defect 4, histogram: a bin count of 2^64 - 1, and bins that each fit but whose sum
     * passes the bound. */
    OK(tce_ew_histogram_reset(copy));
    ENCODE(tce_ew_histogram_encode, copy, frame);
    before_len = encoded;
    memcpy(frame2, frame, encoded);
    write_u64(frame2 + 12 + 8, UINT64_MAX);
    resign(frame2, encoded);
    EXPECT(tce_ew_histogram_decode(copy, frame2, encoded), TCE_STATUS_INCONSISTENT);
    write_u64(frame2 + 12 + 8, TCE_MAX_COUNT);
    write_u64(frame2 + 12 + 8 + 32 * 3, 1);
    /* ... a score of 0.75 (2^64 * 0.75 in the sum's low word), possible in bin 3 [0.75, 1]. */
    write_u64(frame2 + 12 + 8 + 32 * 3 + 16, (uint64_t)3 << 62);
    resign(frame2, encoded);
    EXPECT(tce_ew_histogram_decode(copy, frame2, encoded), TCE_STATUS_INCONSISTENT);
    ENCODE(tce_ew_histogram_encode, copy, frame2);
    CHECK(encoded == before_len && memcmp(frame, frame2, encoded) == 0);
    tce_ew_histogram_free(copy);
    tce_ew_histogram_free(h);

    /* Defect 3: reservoir merges doubling `seen` (4 -> 2^62 in 60 doublings; the 61st
     * would pass the bound). */
    const double four[4] = {0.1, 0.4, 0.6, 0.9};
    const uint8_t four_labels[4] = {0, 1, 0, 1};
    tce_reservoir *r = NULL, *other = NULL;
    OK(tce_reservoir_new(4, 7, &r));
    OK(tce_reservoir_new(4, 8, &other));
    OK(tce_reservoir_push_batch(r, four, 4, four_labels, 4));
    for (int doubling = 1; doubling <= 60; doubling++) {
        ENCODE(tce_reservoir_encode, r, frame);
        OK(tce_reservoir_decode(other, frame, encoded));
        OK(tce_reservoir_merge(r, other));
    }
    OK(tce_reservoir_seen(r, &count));
    CHECK(count == (uint64_t)1 << 62);
    ENCODE(tce_reservoir_encode, r, frame);
    before_len = encoded;
    OK(tce_reservoir_decode(other, frame, encoded));
    EXPECT(tce_reservoir_merge(r, other), TCE_STATUS_COUNT_OVERFLOW);
    ENCODE(tce_reservoir_encode, r, frame2);
    CHECK(encoded == before_len && memcmp(frame, frame2, encoded) == 0);
    /* `seen` at the bound (offset 12 + 4): decodes, then refuses the next push. */
    write_u64(frame2 + 12 + 4, TCE_MAX_COUNT);
    resign(frame2, encoded);
    OK(tce_reservoir_decode(r, frame2, encoded));
    EXPECT(tce_reservoir_push(r, 0.5, 1), TCE_STATUS_COUNT_OVERFLOW);
    EXPECT(tce_reservoir_push_batch(r, four, 4, four_labels, 4), TCE_STATUS_COUNT_OVERFLOW);
    ENCODE(tce_reservoir_encode, r, frame);
    CHECK(memcmp(frame, frame2, encoded) == 0);
    /* Defect 4, reservoir: `seen` of 2^64 - 1. */
    write_u64(frame2 + 12 + 4, UINT64_MAX);
    resign(frame2, encoded);
    EXPECT(tce_reservoir_decode(r, frame2, encoded), TCE_STATUS_INCONSISTENT);
    ENCODE(tce_reservoir_encode, r, frame2);
    CHECK(memcmp(frame, frame2, encoded) == 0);
    tce_reservoir_free(other);
    tce_reservoir_free(r);

    /* Defect 5: a window frame with `seen` = 2^64 - 6, then a batch of 100, indexed out
     * of bounds. Such a frame is now INCONSISTENT (defect 4, window); at seen =
     * TCE_MAX_COUNT - 6 the batch of 100 is refused whole and 6 more fit exactly. */
    double hundred[100];
    uint8_t hundred_labels[100];
    for (int i = 0; i < 100; i++) {
        hundred[i] = i / 99.0;
        hundred_labels[i] = (uint8_t)(i % 2);
    }
    tce_window *w = NULL;
    OK(tce_window_new(4, &w));
    OK(tce_window_push_batch(w, four, 4, four_labels, 4));
    ENCODE(tce_window_encode, w, frame);
    memcpy(frame2, frame, encoded);
    write_u64(frame2 + 12 + 4, UINT64_MAX - 5);
    resign(frame2, encoded);
    EXPECT(tce_window_decode(w, frame2, encoded), TCE_STATUS_INCONSISTENT);
    ENCODE(tce_window_encode, w, frame2);
    CHECK(memcmp(frame, frame2, encoded) == 0);
    write_u64(frame2 + 12 + 4, TCE_MAX_COUNT - 6);
    resign(frame2, encoded);
    OK(tce_window_decode(w, frame2, encoded));
    EXPECT(tce_window_push_batch(w, hundred, 100, hundred_labels, 100), TCE_STATUS_COUNT_OVERFLOW);
    ENCODE(tce_window_encode, w, frame);
    CHECK(memcmp(frame, frame2, encoded) == 0);
    OK(tce_window_push_batch(w, hundred + 94, 6, hundred_labels + 94, 6));
    OK(tce_window_seen(w, &count));
    CHECK(count == TCE_MAX_COUNT);
    ENCODE(tce_window_encode, w, frame);
    EXPECT(tce_window_push(w, 0.5, 1), TCE_STATUS_COUNT_OVERFLOW);
    ENCODE(tce_window_encode, w, frame2);
    CHECK(memcmp(frame, frame2, encoded) == 0);
    tce_window_free(w);

    /* Defect 4, decaying histogram: a bin count of 2^64 - 1 (bins at 12 + 24, 40 bytes
     * each, count first); exactly the bound decodes and refuses the next push. */
    tce_decaying_histogram *d = NULL;
    OK(tce_decaying_histogram_new(4, TCE_CLOSURE_LEFT, 100.0, &d));
    OK(tce_decaying_histogram_push_batch(d, four, 4, four_labels, 4));
    ENCODE(tce_decaying_histogram_encode, d, frame);
    memcpy(frame2, frame, encoded);
    write_u64(frame2 + 12 + 24, UINT64_MAX);
    resign(frame2, encoded);
    EXPECT(tce_decaying_histogram_decode(d, frame2, encoded), TCE_STATUS_INCONSISTENT);
    ENCODE(tce_decaying_histogram_encode, d, frame2);
    CHECK(memcmp(frame, frame2, encoded) == 0);
    write_u64(frame2 + 12 + 24, TCE_MAX_COUNT - 3); /* the other three bins hold one each */
    resign(frame2, encoded);
    OK(tce_decaying_histogram_decode(d, frame2, encoded));
    OK(tce_decaying_histogram_samples(d, &count));
    CHECK(count == TCE_MAX_COUNT);
    EXPECT(tce_decaying_histogram_push(d, 0.5, 1), TCE_STATUS_COUNT_OVERFLOW);
    EXPECT(tce_decaying_histogram_push_batch(d, four, 4, four_labels, 4), TCE_STATUS_COUNT_OVERFLOW);
    ENCODE(tce_decaying_histogram_encode, d, frame);
    CHECK(memcmp(frame, frame2, encoded) == 0);
    tce_decaying_histogram_free(d);
}

/* Merges of windows and decaying histograms: a window merge equals pushing the other's
 * held samples oldest first (compared by the encoded bytes, which list the samples in
 * arrival order, and by the estimates); a decaying merge is commutative bit for bit and
 * refuses other bins, closures and half-lives; refused merges change nothing. */
static void test_window_and_decaying_merge(void) {
    size_t encoded = 0, before_len = 0, len = 0;
    uint64_t count = 0;
    tce_window *a = NULL, *b = NULL, *pushed = NULL;
    OK(tce_window_new(8, &a));
    OK(tce_window_new(5, &b));
    OK(tce_window_new(8, &pushed));
    OK(tce_window_push_batch(a, F, 6, Y, 6));
    OK(tce_window_push_batch(b, F + 6, 14, Y + 6, 14)); /* b holds F[15..20] */
    OK(tce_window_merge(a, b));
    OK(tce_window_push_batch(pushed, F, 6, Y, 6));
    OK(tce_window_push_batch(pushed, F + 15, 5, Y + 15, 5));
    OK(tce_window_len(a, &len));
    OK(tce_window_seen(a, &count));
    CHECK(len == 8 && count == 11);
    ENCODE(tce_window_encode, a, frame);
    before_len = encoded;
    ENCODE(tce_window_encode, pushed, frame2);
    CHECK(encoded == before_len && memcmp(frame, frame2, encoded) == 0);
    tce_options o = tce_options_default();
    tce_estimate e, expected;
    for (uint32_t binning = 0; binning < 2; binning++) {
        o.binning = binning;
        OK(tce_window_ece_bin(a, &o, &e));
        OK(tce_window_ece_bin(pushed, &o, &expected));
        CHECK(same_estimate(&e, &expected));
        OK(tce_window_ece_sweep(a, &o, &e));
        OK(tce_window_ece_sweep(pushed, &o, &expected));
        CHECK(same_estimate(&e, &expected));
    }
    OK(tce_window_len(b, &len));
    OK(tce_window_seen(b, &count));
    CHECK(len == 5 && count == 14); /* the other is not changed */
    EXPECT(tce_window_merge(a, a), TCE_STATUS_SAME_STATE);
    EXPECT(tce_window_merge(NULL, b), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_merge(a, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_merge(a, (const tce_window *)(const void *)garbage), TCE_STATUS_WRONG_STATE);
    /* At seen = TCE_MAX_COUNT - 4, b's 5 samples would pass the bound: refused whole. */
    ENCODE(tce_window_encode, a, frame);
    write_u64(frame + 12 + 4, TCE_MAX_COUNT - 4);
    resign(frame, encoded);
    OK(tce_window_decode(a, frame, encoded));
    EXPECT(tce_window_merge(a, b), TCE_STATUS_COUNT_OVERFLOW);
    ENCODE(tce_window_encode, a, frame2);
    CHECK(memcmp(frame, frame2, encoded) == 0);
    tce_window_free(a);
    tce_window_free(b);
    tce_window_free(pushed);

    tce_decaying_histogram *x = NULL, *y = NULL, *x2 = NULL, *other = NULL;
    OK(tce_decaying_histogram_new(10, TCE_CLOSURE_LEFT, 7.0, &x));
    OK(tce_decaying_histogram_new(10, TCE_CLOSURE_LEFT, 7.0, &y));
    OK(tce_decaying_histogram_new(10, TCE_CLOSURE_LEFT, 7.0, &x2));
    OK(tce_decaying_histogram_push_batch(x, F, 20, Y, 20));
    OK(tce_decaying_histogram_push_batch(x2, F, 20, Y, 20));
    OK(tce_decaying_histogram_push_batch(y, F, 5, Y, 5));
    ENCODE(tce_decaying_histogram_encode, y, frame);
    OK(tce_decaying_histogram_merge(x, y)); /* x + y */
    OK(tce_decaying_histogram_merge(y, x2)); /* y + x */
    OK(tce_decaying_histogram_samples(x, &count));
    CHECK(count == 25);
    tce_decayed_bin_stats xs[10], ys[10];
    OK(tce_decaying_histogram_bin_stats(x, xs, 10));
    OK(tce_decaying_histogram_bin_stats(y, ys, 10));
    CHECK(memcmp(xs, ys, sizeof xs) == 0);
    OK(tce_decaying_histogram_ece_bin(x, 2.0, &e));
    CHECK(e.samples == 25 && e.value > 0.0);
    OK(tce_decaying_histogram_decode(y, frame, encoded)); /* y again */
    OK(tce_decaying_histogram_new(11, TCE_CLOSURE_LEFT, 7.0, &other));
    EXPECT(tce_decaying_histogram_merge(x, other), TCE_STATUS_BIN_COUNT_MISMATCH);
    tce_decaying_histogram_free(other);
    OK(tce_decaying_histogram_new(10, TCE_CLOSURE_RIGHT, 7.0, &other));
    EXPECT(tce_decaying_histogram_merge(x, other), TCE_STATUS_CLOSURE_MISMATCH);
    tce_decaying_histogram_free(other);
    OK(tce_decaying_histogram_new(10, TCE_CLOSURE_LEFT, 7.5, &other));
    EXPECT(tce_decaying_histogram_merge(x, other), TCE_STATUS_HALF_LIFE_MISMATCH);
    EXPECT(tce_decaying_histogram_merge(x, x), TCE_STATUS_SAME_STATE);
    EXPECT(tce_decaying_histogram_merge(NULL, y), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_merge(x, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_merge(x, (const tce_decaying_histogram *)(const void *)garbage),
           TCE_STATUS_WRONG_STATE);
    OK(tce_decaying_histogram_bin_stats(x, ys, 10));
    CHECK(memcmp(xs, ys, sizeof xs) == 0); /* the refused merges changed nothing */
    tce_decaying_histogram_free(other);
    tce_decaying_histogram_free(x);
    tce_decaying_histogram_free(y);
    tce_decaying_histogram_free(x2);
}

static void test_portable(void) {
    /* Histogram: encode, decode elsewhere, equal bit for bit. */
    tce_ew_histogram *h = NULL, *copy = NULL, *five = NULL;
    OK(tce_ew_histogram_new(15, TCE_CLOSURE_RIGHT, &h));
    OK(tce_ew_histogram_new(15, TCE_CLOSURE_LEFT, &copy));
    OK(tce_ew_histogram_new(5, TCE_CLOSURE_LEFT, &five));
    OK(tce_ew_histogram_push_batch(h, F, 20, Y, 20));
    size_t len = 0, written = 0;
    OK(tce_ew_histogram_encoded_len(h, &len));
    CHECK(len == 24 + 32 * 15 && len <= sizeof frame);
    EXPECT(tce_ew_histogram_encoded_len(NULL, &len), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_encoded_len(h, NULL), TCE_STATUS_NULL_POINTER);
    memset(frame, 0xaa, sizeof frame);
    EXPECT(tce_ew_histogram_encode(h, frame, len - 1, &written), TCE_STATUS_BUFFER_TOO_SMALL);
    CHECK(frame[0] == 0xaa && written == 0);
    EXPECT(tce_ew_histogram_encode(h, NULL, len, &written), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_encode(h, frame, len, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_encode(h, frame, len, (size_t *)(void *)(frame2 + 1)), TCE_STATUS_MISALIGNED);
    EXPECT(tce_ew_histogram_encode(NULL, frame, len, &written), TCE_STATUS_NULL_POINTER);
    OK(tce_ew_histogram_encode(h, frame, sizeof frame, &written));
    CHECK(written == len && memcmp(frame, "TCE", 4) == 0 && crc32(frame, len - 4) == read_u32(frame + len - 4));
    OK(tce_ew_histogram_decode(copy, frame, len));
    tce_bin_stats got[15], want[15];
    OK(tce_ew_histogram_bin_stats(copy, got, 15));
    OK(tce_ew_histogram_bin_stats(h, want, 15));
    uint32_t closure = 9;
    OK(tce_ew_histogram_closure(copy, &closure));
    CHECK(memcmp(got, want, sizeof got) == 0 && closure == TCE_CLOSURE_RIGHT);
    /* Decoded states merge like any other: a fleet's histograms into one. */
    OK(tce_ew_histogram_merge(copy, h));
    uint64_t samples = 0;
    OK(tce_ew_histogram_samples(copy, &samples));
    CHECK(samples == 40);
    OK(tce_ew_histogram_decode(copy, frame, len)); /* back to 20 */

    /* Every way bytes can be wrong; the destination is unchanged each time. */
    EXPECT(tce_ew_histogram_decode(five, frame, len), TCE_STATUS_BIN_COUNT_MISMATCH);
    EXPECT(tce_ew_histogram_decode(copy, frame, len - 1), TCE_STATUS_TRUNCATED);
    EXPECT(tce_ew_histogram_decode(copy, frame, 10), TCE_STATUS_TRUNCATED);
    EXPECT(tce_ew_histogram_decode(copy, NULL, 0), TCE_STATUS_TRUNCATED);
    EXPECT(tce_ew_histogram_decode(copy, NULL, len), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ew_histogram_decode(NULL, frame, len), TCE_STATUS_NULL_POINTER);
    memcpy(frame2, frame, len);
    frame2[0] = 'X';
    EXPECT(tce_ew_histogram_decode(copy, frame2, len), TCE_STATUS_BAD_MAGIC);
    memcpy(frame2, frame, len);
    frame2[4] = 2; /* format version 2 */
    EXPECT(tce_ew_histogram_decode(copy, frame2, len), TCE_STATUS_UNSUPPORTED_VERSION);
    memcpy(frame2, frame, len);
    frame2[40] ^= 0x01; /* a flipped bit in a bin */
    EXPECT(tce_ew_histogram_decode(copy, frame2, len), TCE_STATUS_CHECKSUM);
    memcpy(frame2, frame, len);
    /* Bin 14 (offset 12 + 8 + 32·14): more hits than samples, re-signed: well formed, impossible. */
    size_t bin14 = 12 + 8 + 32 * 14;
    write_u32(frame2 + bin14 + 8, read_u32(frame2 + bin14) + 1);
    resign(frame2, len);
    EXPECT(tce_ew_histogram_decode(copy, frame2, len), TCE_STATUS_INCONSISTENT);
    memcpy(frame2, frame, len);
    frame2[12] = 2; /* closure 2, re-signed */
    resign(frame2, len);
    EXPECT(tce_ew_histogram_decode(copy, frame2, len), TCE_STATUS_INCONSISTENT);
    memcpy(frame2, frame, len);
    frame2[len] = 0; /* a trailing byte */
    EXPECT(tce_ew_histogram_decode(copy, frame2, len + 1), TCE_STATUS_INCONSISTENT);
    OK(tce_ew_histogram_bin_stats(copy, got, 15));
    CHECK(memcmp(got, want, sizeof got) == 0);

    /* Sorted buffer. */
    tce_sorted_buffer *b = buffer_of(0, 20), *b2 = NULL, *tiny = NULL;
    OK(tce_sorted_buffer_new(20, &b2));
    OK(tce_sorted_buffer_new(10, &tiny));
    tce_options o = tce_options_default();
    tce_estimate before, after;
    OK(tce_sorted_buffer_ece_sweep(b, &o, &before)); /* sorted now; encode writes arrival order */
    OK(tce_sorted_buffer_encoded_len(b, &len));
    CHECK(len == 20 + 9 * 20);
    EXPECT(tce_sorted_buffer_encoded_len(NULL, &len), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_sorted_buffer_encode(b, frame, len - 1, &written), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_sorted_buffer_encode(b, NULL, len, &written), TCE_STATUS_NULL_POINTER);
    OK(tce_sorted_buffer_encode(b, frame, sizeof frame, &written));
    CHECK(written == len);
    OK(tce_sorted_buffer_decode(b2, frame, len));
    OK(tce_sorted_buffer_ece_sweep(b2, &o, &after));
    CHECK(same_estimate(&before, &after));
    OK(tce_sorted_buffer_ece_sweep(b, &o, &after));
    CHECK(same_estimate(&before, &after));
    EXPECT(tce_sorted_buffer_decode(tiny, frame, len), TCE_STATUS_BUFFER_FULL);
    EXPECT(tce_sorted_buffer_decode(b2, frame, len - 3), TCE_STATUS_TRUNCATED);
    EXPECT(tce_sorted_buffer_decode(NULL, frame, len), TCE_STATUS_NULL_POINTER);
    memcpy(frame2, frame, len);
    frame2[12 + 4 + 9 * 3] = 0xff; /* sample 3's score becomes NaN-ish bits; re-signed */
    frame2[12 + 4 + 9 * 3 + 7] = 0xff;
    resign(frame2, len);
    EXPECT(tce_sorted_buffer_decode(b2, frame2, len), TCE_STATUS_INCONSISTENT);
    /* A histogram's bytes are not a buffer. */
    OK(tce_ew_histogram_encode(h, frame2, sizeof frame2, &written));
    EXPECT(tce_sorted_buffer_decode(b2, frame2, written), TCE_STATUS_WRONG_KIND);
    EXPECT(tce_ew_histogram_decode(copy, frame, len), TCE_STATUS_WRONG_KIND);
    size_t held = 0;
    OK(tce_sorted_buffer_len(b2, &held));
    CHECK(held == 20);

    /* Reservoir: the random state travels too, so the copy goes on identically. */
    tce_reservoir *r = NULL, *r2 = NULL, *r4 = NULL, *total = NULL;
    OK(tce_reservoir_new(8, 3, &r));
    OK(tce_reservoir_new(8, 99, &r2));
    OK(tce_reservoir_new(4, 3, &r4));
    OK(tce_reservoir_new(8, 5, &total));
    OK(tce_reservoir_push_batch(r, F, 20, Y, 20));
    OK(tce_reservoir_encoded_len(r, &len));
    CHECK(len == 64 + 9 * 8);
    EXPECT(tce_reservoir_encoded_len(r, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_reservoir_encode(r, frame, len - 1, &written), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_reservoir_encode(NULL, frame, len, &written), TCE_STATUS_NULL_POINTER);
    OK(tce_reservoir_encode(r, frame, sizeof frame, &written));
    CHECK(written == len);
    OK(tce_reservoir_decode(r2, frame, len));
    OK(tce_reservoir_push_batch(r, F, 20, Y, 20));
    OK(tce_reservoir_push_batch(r2, F, 20, Y, 20));
    size_t len2 = 0;
    OK(tce_reservoir_encode(r, frame, sizeof frame, &len));
    OK(tce_reservoir_encode(r2, frame2, sizeof frame2, &len2));
    CHECK(len == len2 && memcmp(frame, frame2, len) == 0);
    EXPECT(tce_reservoir_decode(r4, frame, len), TCE_STATUS_CAPACITY_MISMATCH);
    EXPECT(tce_reservoir_decode(r2, frame, len - 1), TCE_STATUS_TRUNCATED);
    EXPECT(tce_reservoir_decode(NULL, frame, len), TCE_STATUS_NULL_POINTER);
    memcpy(frame2, frame, len);
    frame2[12 + 4] += 1; /* samples seen off by one: fine; then held > seen: inconsistent */
    resign(frame2, len);
    OK(tce_reservoir_decode(r2, frame2, len));
    memset(frame2 + 12 + 4, 0, 8);
    frame2[12 + 4] = 3; /* seen 3, but 8 held */
    resign(frame2, len);
    EXPECT(tce_reservoir_decode(r2, frame2, len), TCE_STATUS_INCONSISTENT);
    EXPECT(tce_reservoir_decode(r2, frame2, len - 1), TCE_STATUS_TRUNCATED);
    uint64_t seen_count = 0;
    OK(tce_reservoir_seen(r2, &seen_count));
    CHECK(seen_count == 41);
    /* A fleet: decode each device's bytes into a scratch reservoir, merge into a total. */
    OK(tce_reservoir_decode(r2, frame, len));
    OK(tce_reservoir_merge(total, r2));
    OK(tce_reservoir_merge(total, r2));
    OK(tce_reservoir_seen(total, &seen_count));
    CHECK(seen_count == 80);
    OK(tce_ew_histogram_encode(h, frame2, sizeof frame2, &written));
    EXPECT(tce_reservoir_decode(r2, frame2, written), TCE_STATUS_WRONG_KIND);

    /* Sliding window: the copy evicts and estimates as the original would. */
    tce_window *w = NULL, *w2 = NULL, *w5 = NULL;
    OK(tce_window_new(8, &w));
    OK(tce_window_new(8, &w2));
    OK(tce_window_new(5, &w5));
    OK(tce_window_push_batch(w, F, 13, Y, 13));
    OK(tce_window_ece_sweep(w, &o, &before)); /* sorted now; encode writes arrival order */
    OK(tce_window_encoded_len(w, &len));
    CHECK(len == 32 + 9 * 8);
    EXPECT(tce_window_encoded_len(NULL, &len), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_encoded_len(w, NULL), TCE_STATUS_NULL_POINTER);
    written = 0;
    EXPECT(tce_window_encode(w, frame, len - 1, &written), TCE_STATUS_BUFFER_TOO_SMALL);
    CHECK(written == 0);
    EXPECT(tce_window_encode(w, NULL, len, &written), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_encode(NULL, frame, len, &written), TCE_STATUS_NULL_POINTER);
    OK(tce_window_encode(w, frame, sizeof frame, &written));
    CHECK(written == len && frame[6] == 4 && read_u32(frame + 12) == 8 && frame[16] == 13);
    OK(tce_window_push(w2, 0.5, 1)); /* replaced whole */
    OK(tce_window_decode(w2, frame, len));
    OK(tce_window_ece_sweep(w2, &o, &after));
    CHECK(same_estimate(&before, &after));
    OK(tce_window_push_batch(w, F + 13, 7, Y + 13, 7));
    OK(tce_window_push_batch(w2, F + 13, 7, Y + 13, 7));
    OK(tce_window_encode(w, frame, sizeof frame, &len));
    OK(tce_window_encode(w2, frame2, sizeof frame2, &len2));
    CHECK(len == len2 && memcmp(frame, frame2, len) == 0);
    OK(tce_window_seen(w2, &seen_count));
    CHECK(seen_count == 20);
    EXPECT(tce_window_decode(w5, frame, len), TCE_STATUS_CAPACITY_MISMATCH);
    EXPECT(tce_window_decode(w2, frame, len - 1), TCE_STATUS_TRUNCATED);
    EXPECT(tce_window_decode(w2, NULL, len), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_window_decode(NULL, frame, len), TCE_STATUS_NULL_POINTER);
    memcpy(frame2, frame, len);
    frame2[16] = 3; /* seen 3, but 8 held; re-signed */
    resign(frame2, len);
    EXPECT(tce_window_decode(w2, frame2, len), TCE_STATUS_INCONSISTENT);
    memcpy(frame2, frame, len);
    frame2[40] ^= 0x10; /* a flipped bit in a sample */
    EXPECT(tce_window_decode(w2, frame2, len), TCE_STATUS_CHECKSUM);
    EXPECT(tce_reservoir_decode(r2, frame, len), TCE_STATUS_WRONG_KIND);
    OK(tce_window_seen(w2, &seen_count));
    CHECK(seen_count == 20);

    /* Decaying histogram: equal bit for bit, and it goes on as the original would. */
    tce_decaying_histogram *d = NULL, *d2 = NULL, *d5 = NULL;
    OK(tce_decaying_histogram_new(15, TCE_CLOSURE_RIGHT, 6.0, &d));
    OK(tce_decaying_histogram_new(15, TCE_CLOSURE_LEFT, 100.0, &d2));
    OK(tce_decaying_histogram_new(5, TCE_CLOSURE_LEFT, 6.0, &d5));
    OK(tce_decaying_histogram_push_batch(d, F, 20, Y, 20));
    OK(tce_decaying_histogram_encoded_len(d, &len));
    CHECK(len == 40 + 40 * 15);
    EXPECT(tce_decaying_histogram_encoded_len(NULL, &len), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_encoded_len(d, NULL), TCE_STATUS_NULL_POINTER);
    written = 0;
    EXPECT(tce_decaying_histogram_encode(d, frame, len - 1, &written), TCE_STATUS_BUFFER_TOO_SMALL);
    CHECK(written == 0);
    EXPECT(tce_decaying_histogram_encode(d, frame, len, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_encode(NULL, frame, len, &written), TCE_STATUS_NULL_POINTER);
    OK(tce_decaying_histogram_encode(d, frame, sizeof frame, &written));
    CHECK(written == len && frame[6] == 5 && frame[12] == 1 && read_u32(frame + 16) == 15);
    OK(tce_decaying_histogram_decode(d2, frame, len));
    tce_decayed_bin_stats dgot[15], dwant[15];
    OK(tce_decaying_histogram_bin_stats(d2, dgot, 15));
    OK(tce_decaying_histogram_bin_stats(d, dwant, 15));
    double half_life = 0.0;
    OK(tce_decaying_histogram_closure(d2, &closure));
    OK(tce_decaying_histogram_half_life(d2, &half_life));
    CHECK(closure == TCE_CLOSURE_RIGHT && fabs(half_life - 6.0) < 1e-9);
    for (int k = 0; k < 15; k++) {
        CHECK(dgot[k].count == dwant[k].count && dgot[k].weight == dwant[k].weight);
    }
    OK(tce_decaying_histogram_push_batch(d, F, 20, Y, 20));
    OK(tce_decaying_histogram_push_batch(d2, F, 20, Y, 20));
    OK(tce_decaying_histogram_encode(d, frame, sizeof frame, &len));
    OK(tce_decaying_histogram_encode(d2, frame2, sizeof frame2, &len2));
    CHECK(len == len2 && memcmp(frame, frame2, len) == 0);
    EXPECT(tce_decaying_histogram_decode(d5, frame, len), TCE_STATUS_BIN_COUNT_MISMATCH);
    EXPECT(tce_decaying_histogram_decode(d2, frame, len - 1), TCE_STATUS_TRUNCATED);
    EXPECT(tce_decaying_histogram_decode(d2, NULL, len), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_decaying_histogram_decode(NULL, frame, len), TCE_STATUS_NULL_POINTER);
    memcpy(frame2, frame, len);
    memset(frame2 + 20, 0, 8); /* lambda 0, re-signed */
    resign(frame2, len);
    EXPECT(tce_decaying_histogram_decode(d2, frame2, len), TCE_STATUS_INCONSISTENT);
    EXPECT(tce_ew_histogram_decode(copy, frame, len), TCE_STATUS_WRONG_KIND);
    OK(tce_ew_histogram_encode(h, frame2, sizeof frame2, &written));
    EXPECT(tce_decaying_histogram_decode(d2, frame2, written), TCE_STATUS_WRONG_KIND);
    OK(tce_decaying_histogram_bin_stats(d2, dgot, 15));
    OK(tce_decaying_histogram_bin_stats(d, dwant, 15));
    CHECK(dgot[14].count == dwant[14].count && dgot[14].weight == dwant[14].weight);

    tce_window_free(w);
    tce_window_free(w2);
    tce_window_free(w5);
    tce_decaying_histogram_free(d);
    tce_decaying_histogram_free(d2);
    tce_decaying_histogram_free(d5);
    tce_ew_histogram_free(h);
    tce_ew_histogram_free(copy);
    tce_ew_histogram_free(five);
    tce_sorted_buffer_free(b);
    tce_sorted_buffer_free(b2);
    tce_sorted_buffer_free(tiny);
    tce_reservoir_free(r);
    tce_reservoir_free(r2);
    tce_reservoir_free(r4);
    tce_reservoir_free(total);
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

/* The weighted one-call functions (std builds): a hand-computed value, integer weights
 * against the repeated samples through the unweighted one-call functions, and the
 * statuses of bad weights. */
static void test_weighted(void) {
    tce_options o = tce_options_default();
    o.binning = TCE_BINNING_EQUAL_WIDTH;
    o.bins = 2;
    tce_estimate e;
    /* Bin [0, 1/2): 0.2 (miss, weight 1); bin [1/2, 1): 0.7 (hit, 2) and 0.9 (miss, 1):
     * weight 3, mean score 2.3/3, accuracy 2/3. ECE_bin = sqrt(1/4 * 0.2^2 + 3/4 * 0.1^2). */
    const double f[3] = {0.2, 0.7, 0.9};
    const uint8_t y[3] = {0, 1, 0};
    const double w[3] = {1.0, 2.0, 1.0};
    OK(tce_ece_bin_weighted(f, 3, y, 3, w, 3, &o, &e));
    CHECK(close_to(e.value, sqrt(0.0175)) && e.bins == 2 && e.samples == 3);
    OK(tce_mce_weighted(f, 3, y, 3, w, 3, &o, &e));
    CHECK(close_to(e.value, 0.2));
    /* Bin 1 has weight 3: (0.1^2 - (2/3)(1/3)/2) * 3/4 < 0; bin 0 (weight 1) adds 0. */
    OK(tce_ece_debias_weighted(f, 3, y, 3, w, 3, &o, &e));
    CHECK(e.value == 0.0);
    /* Weights 2.5 and 1.5 of two misses in bin 1: weight 4, mean score 3.45/4 = 0.8625,
     * accuracy 0 (no variance term): ECE_debias = 0.8625. */
    const double f2[2] = {0.9, 0.8};
    const uint8_t y2[2] = {0, 0};
    const double w2[2] = {2.5, 1.5};
    OK(tce_ece_debias_weighted(f2, 2, y2, 2, w2, 2, &o, &e));
    CHECK(close_to(e.value, 0.8625));

    /* Integer weights i % 3 of the worked example: the repeated samples' estimates. */
    double weights[20], rf[40];
    uint8_t ry[40];
    size_t n = 0;
    for (size_t i = 0; i < 20; i++) {
        weights[i] = (double)(i % 3);
        for (size_t k = 0; k < i % 3; k++) {
            rf[n] = F[i];
            ry[n] = Y[i];
            n++;
        }
    }
    size_t size = 0, align = 0;
    OK(tce_scratch_layout(n, &size, &align));
    CHECK(size <= sizeof scratch);
    for (uint32_t binning = 0; binning < 2; binning++) {
        for (uint32_t ties = 0; ties < 2; ties++) {
            tce_estimate a, b;
            o = tce_options_default();
            o.binning = binning;
            o.ties = ties;
            o.bins = 4;
            OK(tce_ece_bin_weighted(F, 20, Y, 20, weights, 20, &o, &a));
            OK(tce_ece_bin(rf, n, ry, n, &o, scratch, size, &b));
            CHECK(close_to(a.value, b.value) && a.bins == b.bins && a.samples == 13);
            OK(tce_mce_weighted(F, 20, Y, 20, weights, 20, &o, &a));
            OK(tce_mce(rf, n, ry, n, &o, scratch, size, &b));
            CHECK(close_to(a.value, b.value));
            OK(tce_ece_debias_weighted(F, 20, Y, 20, weights, 20, &o, &a));
            OK(tce_ece_debias(rf, n, ry, n, &o, scratch, size, &b));
            CHECK(close_to(a.value, b.value));
            OK(tce_ece_sweep_weighted(F, 20, Y, 20, weights, 20, &o, &a));
            OK(tce_ece_sweep(rf, n, ry, n, &o, scratch, size, &b));
            CHECK(close_to(a.value, b.value) && a.bins == b.bins);
        }
    }

    o = tce_options_default();
    double bad[3] = {1.0, -1.0, 1.0};
    EXPECT(tce_ece_bin_weighted(f, 3, y, 3, bad, 3, &o, &e), TCE_STATUS_INVALID_WEIGHT);
    bad[1] = NAN;
    EXPECT(tce_mce_weighted(f, 3, y, 3, bad, 3, &o, &e), TCE_STATUS_INVALID_WEIGHT);
    bad[1] = INFINITY;
    EXPECT(tce_ece_debias_weighted(f, 3, y, 3, bad, 3, &o, &e), TCE_STATUS_INVALID_WEIGHT);
    const double zero[3] = {0.0, 0.0, 0.0};
    EXPECT(tce_ece_sweep_weighted(f, 3, y, 3, zero, 3, &o, &e), TCE_STATUS_ZERO_TOTAL_WEIGHT);
    EXPECT(tce_ece_bin_weighted(f, 3, y, 3, w, 2, &o, &e), TCE_STATUS_LENGTH_MISMATCH);
    EXPECT(tce_ece_bin_weighted(f, 3, y, 3, NULL, 3, &o, &e), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ece_bin_weighted(f, 3, y, 3, w, 3, NULL, &e), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ece_bin_weighted(f, 3, y, 3, w, 3, &o, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_ece_bin_weighted(NULL, 0, NULL, 0, NULL, 0, &o, &e), TCE_STATUS_NO_SAMPLES);
    const uint8_t bad_labels[3] = {0, 2, 1};
    EXPECT(tce_ece_bin_weighted(f, 3, bad_labels, 3, w, 3, &o, &e), TCE_STATUS_INVALID_LABEL);
    o.bins = 0;
    EXPECT(tce_ece_bin_weighted(f, 3, y, 3, w, 3, &o, &e), TCE_STATUS_ZERO_BINS);
    o = tce_options_default();
    o.p = 0.5;
    EXPECT(tce_ece_bin_weighted(f, 3, y, 3, w, 3, &o, &e), TCE_STATUS_INVALID_NORM);
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

/* Issue 10: every failed init, new, decode or call leaves caller memory byte for byte as
 * it was, and a failed _new leaks nothing (ASan's LeakSanitizer and valgrind check that
 * at exit: the calls below would lose their allocation otherwise). */
ALIGNED(16) static unsigned char limit_memory[4096];
ALIGNED(16) static unsigned char limit_snapshot[4096];
#define SNAPSHOT(mem) memcpy(limit_snapshot, (mem), sizeof limit_snapshot)
#define UNCHANGED(mem) CHECK(memcmp(limit_snapshot, (mem), sizeof limit_snapshot) == 0)

static void test_decay_limits(void) {
    /* Defect 1 and 7: half-lives whose weights underflow, and (defect 8) those whose λ
     * rounds to 1, are refused before anything is written or allocated. */
    const double bad[10] = {1e-4, 1.0 / 1100, 1e-300, 5e-324, 1.0 / 1030, 1.0 / 1074, 1.0 / 511, 1e17, 1e300, 2e16};
    tce_decaying_histogram *h = NULL;
    memset(limit_memory, 0x5a, sizeof limit_memory);
    OK(tce_decaying_histogram_init(limit_memory, sizeof limit_memory, 4, TCE_CLOSURE_LEFT, 10.0, &h));
    OK(tce_decaying_histogram_push(h, 0.3, 1));
    SNAPSHOT(limit_memory);
    for (int i = 0; i < 10; i++) {
        tce_decaying_histogram *other = NULL;
        EXPECT(tce_decaying_histogram_init(limit_memory, sizeof limit_memory, 4, TCE_CLOSURE_LEFT, bad[i], &other),
               TCE_STATUS_INVALID_HALF_LIFE);
        CHECK(other == NULL);
        EXPECT(tce_decaying_histogram_new(4, TCE_CLOSURE_LEFT, bad[i], &other), TCE_STATUS_INVALID_HALF_LIFE);
        CHECK(other == NULL);
    }
    EXPECT(tce_decaying_histogram_new(TCE_MAX_BINS + 1, TCE_CLOSURE_LEFT, 10.0, &h), TCE_STATUS_TOO_MANY_BINS);
    UNCHANGED(limit_memory);
    uint64_t samples = 0;
    OK(tce_decaying_histogram_samples(h, &samples));
    CHECK(samples == 1);

    /* The extremes of the accepted range give finite estimates; the half-life reads back
     * as given (defect 8). */
    const double good[4] = {1.0 / 510, 1.0 / 3, 1e15, 1e16};
    for (int i = 0; i < 4; i++) {
        tce_decaying_histogram *g = NULL;
        OK(tce_decaying_histogram_new(3, TCE_CLOSURE_LEFT, good[i], &g));
        double half_life = 0.0;
        OK(tce_decaying_histogram_half_life(g, &half_life));
        CHECK(half_life == good[i]);
        for (int k = 0; k < 50; k++) {
            OK(tce_decaying_histogram_push(g, 0.1, 0));
        }
        tce_estimate e;
        OK(tce_decaying_histogram_ece_bin(g, 2.0, &e));
        CHECK(close_to(e.value, 0.1) && e.samples == 50);
        OK(tce_decaying_histogram_mce(g, &e));
        CHECK(close_to(e.value, 0.1)); /* defect 7: was 0 */
        OK(tce_decaying_histogram_ece_debias(g, 1.0, &e));
        CHECK(isfinite(e.value));
        tce_decaying_histogram_free(g);
    }

    /* Defect 6: λ = 1, two bins of count 1 and weight 1e308, valid checksum. */
    unsigned char frame[12 + 24 + 2 * 40 + 4];
    tce_decaying_histogram *two = NULL;
    OK(tce_decaying_histogram_new(2, TCE_CLOSURE_LEFT, 5.0, &two));
    OK(tce_decaying_histogram_push(two, 0.2, 0));
    OK(tce_decaying_histogram_push(two, 0.8, 1));
    size_t written = 0;
    OK(tce_decaying_histogram_encode(two, frame, sizeof frame, &written));
    CHECK(written == sizeof frame);
    const double one = 1.0, huge = 1e308;
    memcpy(frame + 12 + 8, &one, 8);
    for (int k = 0; k < 2; k++) {
        for (int field = 8; field < 40; field += 8) {
            memcpy(frame + 12 + 24 + 40 * k + field, &huge, 8);
        }
    }
    resign(frame, sizeof frame);
    tce_decaying_histogram *target = NULL;
    memset(limit_memory, 0x5a, sizeof limit_memory);
    OK(tce_decaying_histogram_init(limit_memory, sizeof limit_memory, 2, TCE_CLOSURE_LEFT, 10.0, &target));
    OK(tce_decaying_histogram_push(target, 0.5, 1));
    SNAPSHOT(limit_memory);
    EXPECT(tce_decaying_histogram_decode(target, frame, sizeof frame), TCE_STATUS_INCONSISTENT);
    /* λ fine but every weight 0 while the bins hold samples (defect 7's state). */
    OK(tce_decaying_histogram_encode(two, frame, sizeof frame, &written));
    const double zero = 0.0;
    for (int k = 0; k < 2; k++) {
        for (int field = 8; field < 40; field += 8) {
            memcpy(frame + 12 + 24 + 40 * k + field, &zero, 8);
        }
    }
    resign(frame, sizeof frame);
    EXPECT(tce_decaying_histogram_decode(target, frame, sizeof frame), TCE_STATUS_INCONSISTENT);
    UNCHANGED(limit_memory);
    /* The encoder's own frame decodes, and a destination with the same λ keeps its
     * half-life. */
    OK(tce_decaying_histogram_encode(two, frame, sizeof frame, &written));
    tce_decaying_histogram *same = NULL;
    OK(tce_decaying_histogram_new(2, TCE_CLOSURE_RIGHT, 5.0, &same));
    OK(tce_decaying_histogram_decode(same, frame, sizeof frame));
    double half_life = 0.0;
    OK(tce_decaying_histogram_half_life(same, &half_life));
    CHECK(half_life == 5.0);
    tce_decaying_histogram_free(same);
    tce_decaying_histogram_free(two);
}

static void test_bin_limits(void) {
    /* Defect 9: a bin count above TCE_MAX_BINS fails at once, before any work. */
    size_t size = 0, align = 0;
    const size_t too_many[3] = {TCE_MAX_BINS + 1, (size_t)1 << 31, SIZE_MAX};
    for (int i = 0; i < 3; i++) {
        EXPECT(tce_ew_histogram_layout(too_many[i], &size, &align), TCE_STATUS_TOO_MANY_BINS);
        EXPECT(tce_decaying_histogram_layout(too_many[i], &size, &align), TCE_STATUS_TOO_MANY_BINS);
        EXPECT(tce_concurrent_histogram_layout(too_many[i], 1, &size, &align), TCE_STATUS_TOO_MANY_BINS);
    }
    OK(tce_ew_histogram_layout(TCE_MAX_BINS, &size, &align));
    tce_ew_histogram *eh = NULL;
    memset(limit_memory, 0x5a, sizeof limit_memory);
    SNAPSHOT(limit_memory);
    EXPECT(tce_ew_histogram_init(limit_memory, sizeof limit_memory, SIZE_MAX, TCE_CLOSURE_LEFT, &eh),
           TCE_STATUS_TOO_MANY_BINS);
    EXPECT(tce_ew_histogram_new(SIZE_MAX, TCE_CLOSURE_LEFT, &eh), TCE_STATUS_TOO_MANY_BINS);
    tce_concurrent_histogram *ch = NULL;
    EXPECT(tce_concurrent_histogram_init(limit_memory, sizeof limit_memory, SIZE_MAX, 1, TCE_CLOSURE_LEFT, &ch),
           TCE_STATUS_TOO_MANY_BINS);
    UNCHANGED(limit_memory);
    CHECK(eh == NULL && ch == NULL);

    /* One-call functions: options.bins = SIZE_MAX used to loop for minutes. The scratch
     * is not even sorted into. */
    tce_options o = tce_options_default();
    tce_estimate e;
    e.value = -1.0;
    for (int i = 0; i < 3; i++) {
        o.bins = too_many[i];
        for (uint32_t binning = 0; binning < 2; binning++) {
            o.binning = binning;
            memset(scratch, 0x5a, sizeof scratch);
            memcpy(limit_snapshot, scratch, sizeof limit_snapshot);
            EXPECT(tce_ece_bin(F, 20, Y, 20, &o, scratch, sizeof scratch, &e), TCE_STATUS_TOO_MANY_BINS);
            EXPECT(tce_mce(F, 20, Y, 20, &o, scratch, sizeof scratch, &e), TCE_STATUS_TOO_MANY_BINS);
            EXPECT(tce_ece_debias(F, 20, Y, 20, &o, scratch, sizeof scratch, &e), TCE_STATUS_TOO_MANY_BINS);
            tce_bin_stats stats[2];
            EXPECT(tce_reliability_bins(F, 20, Y, 20, &o, scratch, sizeof scratch, stats, 2), TCE_STATUS_TOO_MANY_BINS);
            CHECK(memcmp(limit_snapshot, scratch, sizeof scratch) == 0);
        }
    }
    CHECK(e.value == -1.0);
    /* max_bins is a cap: a huge one is no cap (the sweep's b is bounded by n). */
    o = tce_options_default();
    o.max_bins = SIZE_MAX;
    OK(tce_ece_sweep(F, 20, Y, 20, &o, scratch, sizeof scratch, &e));
    tce_estimate uncapped;
    o.max_bins = 0;
    OK(tce_ece_sweep(F, 20, Y, 20, &o, scratch, sizeof scratch, &uncapped));
    CHECK(e.value == uncapped.value && e.bins == uncapped.bins);

    /* A state's estimators: refused before the state is sorted. */
    tce_sorted_buffer *b = NULL;
    memset(limit_memory, 0x5a, sizeof limit_memory);
    OK(tce_sorted_buffer_init(limit_memory, sizeof limit_memory, 32, &b));
    OK(tce_sorted_buffer_push_batch(b, F, 20, Y, 20));
    SNAPSHOT(limit_memory);
    o = tce_options_default();
    o.bins = SIZE_MAX;
    EXPECT(tce_sorted_buffer_ece_bin(b, &o, &e), TCE_STATUS_TOO_MANY_BINS);
    EXPECT(tce_sorted_buffer_mce(b, &o, &e), TCE_STATUS_TOO_MANY_BINS);
    tce_bin_stats stats[2];
    EXPECT(tce_sorted_buffer_bin_stats(b, &o, stats, 2), TCE_STATUS_TOO_MANY_BINS);
    UNCHANGED(limit_memory);
}

/* Fills `memory` with a pattern, lays a window or reservoir over it, pushes, and checks
 * that failed calls leave every byte (padding included) as it was. */
static void test_failed_calls_leave_memory_unchanged(void) {
    tce_options o = tce_options_default();
    tce_estimate e;
    tce_bin_stats stats[2];
    const double bad_scores[2] = {0.5, NAN};
    const uint8_t bad_labels[2] = {1, 7};
    unsigned char junk[64];
    memset(junk, 0xee, sizeof junk);

    tce_window *w = NULL;
    memset(limit_memory, 0xa5, sizeof limit_memory);
    OK(tce_window_init(limit_memory, sizeof limit_memory, 16, &w));
    OK(tce_window_push_batch(w, F, 20, Y, 20));
    OK(tce_window_ece_bin(w, &o, &e)); /* sorted now: a later sort changes nothing */
    SNAPSHOT(limit_memory);
    EXPECT(tce_window_push(w, NAN, 1), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_window_push(w, 0.5, 2), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_window_push_batch(w, bad_scores, 2, Y, 2), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_window_push_batch(w, F, 2, bad_labels, 2), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_window_push_batch(w, F, 2, Y, 1), TCE_STATUS_LENGTH_MISMATCH);
    o.bins = 0;
    EXPECT(tce_window_ece_bin(w, &o, &e), TCE_STATUS_ZERO_BINS);
    o.bins = SIZE_MAX;
    EXPECT(tce_window_ece_debias(w, &o, &e), TCE_STATUS_TOO_MANY_BINS);
    o.bins = 3;
    EXPECT(tce_window_bin_stats(w, &o, stats, 2), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_window_bin_stats(w, &o, NULL, 0), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_window_decode(w, junk, sizeof junk), TCE_STATUS_BAD_MAGIC);
    EXPECT(tce_window_decode(w, NULL, 0), TCE_STATUS_TRUNCATED);
    UNCHANGED(limit_memory);

    tce_reservoir *r = NULL;
    memset(limit_memory, 0xa5, sizeof limit_memory);
    OK(tce_reservoir_init(limit_memory, sizeof limit_memory, 16, 7, &r));
    OK(tce_reservoir_push_batch(r, F, 20, Y, 20));
    o = tce_options_default();
    OK(tce_reservoir_ece_bin(r, &o, &e));
    SNAPSHOT(limit_memory);
    EXPECT(tce_reservoir_push(r, NAN, 1), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_reservoir_push(r, 0.5, 2), TCE_STATUS_INVALID_LABEL);
    EXPECT(tce_reservoir_push_batch(r, bad_scores, 2, Y, 2), TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_reservoir_push_batch(r, F, 2, Y, 1), TCE_STATUS_LENGTH_MISMATCH);
    EXPECT(tce_reservoir_merge(r, r), TCE_STATUS_SAME_STATE);
    o.bins = 0;
    EXPECT(tce_reservoir_mce(r, &o, &e), TCE_STATUS_ZERO_BINS);
    o.bins = SIZE_MAX;
    EXPECT(tce_reservoir_ece_bin(r, &o, &e), TCE_STATUS_TOO_MANY_BINS);
    o.bins = 3;
    EXPECT(tce_reservoir_bin_stats(r, &o, NULL, 0), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_reservoir_decode(r, junk, sizeof junk), TCE_STATUS_BAD_MAGIC);
    UNCHANGED(limit_memory);
}

/* The one array rule: a NULL pointer with length 0 is an empty array, input or output. */
static void test_null_with_length_zero_is_an_empty_array(void) {
    tce_options o = tce_options_default();
    tce_estimate e;
    size_t written = 0;
    tce_ew_histogram *h = NULL;
    OK(tce_ew_histogram_new(4, TCE_CLOSURE_LEFT, &h));
    OK(tce_ew_histogram_push_batch(h, NULL, 0, NULL, 0));
    EXPECT(tce_ew_histogram_bin_stats(h, NULL, 0), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_ew_histogram_encode(h, NULL, 0, &written), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_ew_histogram_decode(h, NULL, 0), TCE_STATUS_TRUNCATED);
    EXPECT(tce_ew_histogram_bin_stats(h, NULL, 4), TCE_STATUS_NULL_POINTER);
    tce_ew_histogram_free(h);
    tce_decaying_histogram *d = NULL;
    OK(tce_decaying_histogram_new(4, TCE_CLOSURE_LEFT, 10.0, &d));
    EXPECT(tce_decaying_histogram_bin_stats(d, NULL, 0), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_decaying_histogram_encode(d, NULL, 0, &written), TCE_STATUS_BUFFER_TOO_SMALL);
    tce_decaying_histogram_free(d);
    tce_sorted_buffer *b = NULL;
    OK(tce_sorted_buffer_new(4, &b));
    OK(tce_sorted_buffer_push(b, 0.5, 1));
    EXPECT(tce_sorted_buffer_bin_stats(b, &o, NULL, 0), TCE_STATUS_BUFFER_TOO_SMALL);
    tce_sorted_buffer_free(b);
    EXPECT(tce_reliability_bins(F, 20, Y, 20, &o, scratch, sizeof scratch, NULL, 0), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_ece_bin(NULL, 0, NULL, 0, &o, scratch, sizeof scratch, &e), TCE_STATUS_NO_SAMPLES);
    tce_sorted_buffer *none = NULL;
    EXPECT(tce_sorted_buffer_init(NULL, 0, 4, &none), TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_sorted_buffer_init(NULL, 4096, 4, &none), TCE_STATUS_NULL_POINTER);
    CHECK(none == NULL);
}

/* Smooth ECE in one call: the value and bandwidth of `tce::smooth_ece` on SPEC section 9,
 * bit for bit (the Rust value, 0.056894088924544846, as a hex literal; tests/smece.rs pins
 * it to relplot 1.0.3's smECE), into caller scratch of any contents. */
static void test_smooth_ece(void) {
    static double scratch[TCE_SMOOTH_ECE_SCRATCH_LEN + 1];
    for (size_t i = 0; i < TCE_SMOOTH_ECE_SCRATCH_LEN + 1; i++) scratch[i] = (double)i - 7.5;
    tce_smooth_ece_result r = {-1.0, -1.0};
    OK(tce_smooth_ece(F, 20, Y, 20, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, &r));
    CHECK(r.value == 0x1.d2138d6888481p-5);
    CHECK(r.bandwidth == 0x1.d8p-5); /* 59/1024 */
    /* Same again on the dirty scratch: no state carried between calls. */
    tce_smooth_ece_result again;
    OK(tce_smooth_ece(F, 20, Y, 20, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, &again));
    CHECK(memcmp(&r, &again, sizeof r) == 0);
    /* Failures leave the result unwritten. */
    tce_smooth_ece_result untouched = {-1.0, -1.0};
    EXPECT(tce_smooth_ece(F, 20, Y, 20, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN - 1, &untouched),
           TCE_STATUS_BUFFER_TOO_SMALL);
    EXPECT(tce_smooth_ece(F, 20, Y, 19, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, &untouched),
           TCE_STATUS_LENGTH_MISMATCH);
    EXPECT(tce_smooth_ece(F, 0, Y, 0, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, &untouched), TCE_STATUS_NO_SAMPLES);
    EXPECT(tce_smooth_ece(NULL, 20, Y, 20, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, &untouched),
           TCE_STATUS_NULL_POINTER);
    EXPECT(tce_smooth_ece(F, 20, Y, 20, NULL, TCE_SMOOTH_ECE_SCRATCH_LEN, &untouched), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_smooth_ece(F, 20, Y, 20, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, NULL), TCE_STATUS_NULL_POINTER);
    EXPECT(tce_smooth_ece(F, 20, Y, 20, (double *)((char *)scratch + 1), TCE_SMOOTH_ECE_SCRATCH_LEN, &untouched),
           TCE_STATUS_MISALIGNED);
    const double bad_scores[2] = {0.5, 1.5};
    const double nan_scores[2] = {0.5, NAN};
    const uint8_t bad_labels[2] = {1, 2};
    EXPECT(tce_smooth_ece(bad_scores, 2, Y, 2, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, &untouched),
           TCE_STATUS_SCORE_OUT_OF_RANGE);
    EXPECT(tce_smooth_ece(nan_scores, 2, Y, 2, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, &untouched),
           TCE_STATUS_NON_FINITE_SCORE);
    EXPECT(tce_smooth_ece(F, 2, bad_labels, 2, scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, &untouched),
           TCE_STATUS_INVALID_LABEL);
    CHECK(untouched.value == -1.0 && untouched.bandwidth == -1.0);
}

int main(void) {
    test_version_and_status();
    test_options();
    test_histogram();
    test_buffer();
    test_one_call();
    test_weighted();
    test_smooth_ece();
    test_top_label();
    test_window();
    test_reservoir();
    test_decaying_histogram();
    test_alarm();
    test_concurrent_histogram();
    test_portable();
    test_decay_limits();
    test_bin_limits();
    test_failed_calls_leave_memory_unchanged();
    test_null_with_length_zero_is_an_empty_array();
    test_count_bound();
    test_window_and_decaying_merge();
    /* Every status up to INCONSISTENT, and those appended after it that C can raise
     * (FRAME_TOO_LARGE needs a 4 GiB state and DEGENERATE_WEIGHTS a state no push or
     * valid frame makes). */
    for (uint32_t s = 0; s <= TCE_STATUS_ZERO_TOTAL_WEIGHT; s++) {
        int raised = s <= TCE_STATUS_INCONSISTENT || s == TCE_STATUS_COUNT_OVERFLOW || s == TCE_STATUS_TOO_MANY_BINS
                     || s == TCE_STATUS_HALF_LIFE_MISMATCH || s == TCE_STATUS_INVALID_SHIFT
                     || s == TCE_STATUS_INVALID_THRESHOLD || s == TCE_STATUS_INVALID_WEIGHT
                     || s == TCE_STATUS_ZERO_TOTAL_WEIGHT;
        if (raised && !seen[s]) {
            fprintf(stderr, "status %u (%s) never returned by the test\n", (unsigned)s, tce_status_str(s));
            failed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
