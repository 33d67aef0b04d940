/*
 * The thread-safety contract of the C API, under ThreadSanitizer (tests/ffi.rs compiles
 * this with -fsanitize=thread and fails on any report).
 *
 * THREADS workers each push their own deterministic stream into one shared
 * tce_concurrent_histogram (the one thread-safe state) and, the usual pattern, into
 * states of their own (an equal-width histogram, a sliding window, a reservoir), while
 * the main thread takes snapshots of the shared histogram. After the workers are
 * joined:
 *   - the snapshot equals, byte for byte (portable encoding), a histogram fed all the
 *     streams sequentially, and so does the merge of the workers' histograms;
 *   - each window equals a sorted buffer of the last WINDOW samples of its stream;
 *   - each reservoir equals (same bytes) one fed the same stream in one thread, and
 *     their merge has seen every sample.
 *
 * Note: TSan instruments this C code, not the Rust library (built without
 * -Zsanitizer); it checks the C side of the contract (no state shared without
 * synchronisation outside the concurrent histogram), while the library's own atomics are
 * verified by the exact equality checks below.
 */
#define _POSIX_C_SOURCE 200809L
#include "tce.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, SAMPLES = 20000, BINS = 15, WINDOW = 512, RESERVOIR = 256, BATCH = 16 };

#define HISTOGRAM_BYTES 1024
/* The bins, and the header with the count budget's per-shard leases (about 1.2 KiB). */
#define SHARED_BYTES (THREADS * BINS * 32 + 2048)
#define WINDOW_BYTES (WINDOW * 24 + 256)
#define RESERVOIR_BYTES (RESERVOIR * 16 + 256)
#define FRAME_BYTES 8192

struct worker {
    pthread_t thread;
    unsigned id;
    tce_ew_histogram *histogram;
    tce_window *window;
    tce_reservoir *reservoir;
    _Alignas(16) unsigned char histogram_memory[HISTOGRAM_BYTES];
    _Alignas(16) unsigned char window_memory[WINDOW_BYTES];
    _Alignas(16) unsigned char reservoir_memory[RESERVOIR_BYTES];
};

static struct worker workers[THREADS];
static _Alignas(16) unsigned char shared_memory[SHARED_BYTES];
static tce_concurrent_histogram *shared;
static atomic_int running;
static atomic_int failures;
#ifdef RACE_SELF_TEST
/* A deliberate data race, to check that ThreadSanitizer is really watching. */
static unsigned long racy;
#endif

static void check(int ok, const char *what, int line) {
    if (!ok) {
        fprintf(stderr, "FAILED line %d: %s\n", line, what);
        atomic_fetch_add(&failures, 1);
    }
}
#define CHECK(cond) check((cond) ? 1 : 0, #cond, __LINE__)
#define OK(call) CHECK((call) == TCE_STATUS_OK)

/* Sample i of stream `id`: a deterministic (score, label). */
static void sample(unsigned id, unsigned i, double *score, uint8_t *label) {
    uint64_t x = (uint64_t)(id + 1) * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    *score = (double)(x >> 11) / 9007199254740992.0;
    *label = (uint8_t)(((x >> 3) & 1023) < (uint64_t)(*score * 1024.0 * 0.9));
}

static void *work(void *arg) {
    struct worker *w = (struct worker *)arg;
    double scores[BATCH];
    uint8_t labels[BATCH];
    unsigned i = 0;
    while (i < SAMPLES) {
        if ((i / BATCH) % 2 == 0 && i + BATCH <= SAMPLES) {
            for (unsigned k = 0; k < BATCH; k++) {
                sample(w->id, i + k, &scores[k], &labels[k]);
            }
            /* Into the worker's own shard: no contention with the other workers. */
            OK(tce_concurrent_histogram_push_batch_to(shared, w->id, scores, BATCH, labels, BATCH));
            OK(tce_ew_histogram_push_batch(w->histogram, scores, BATCH, labels, BATCH));
            OK(tce_window_push_batch(w->window, scores, BATCH, labels, BATCH));
            OK(tce_reservoir_push_batch(w->reservoir, scores, BATCH, labels, BATCH));
            i += BATCH;
        } else {
            double score;
            uint8_t label;
            sample(w->id, i, &score, &label);
            /* Mostly the own shard; now and then the shared shard 0, still race-free. */
            if (i % 8 == 0) {
                OK(tce_concurrent_histogram_push(shared, score, label));
            } else {
                OK(tce_concurrent_histogram_push_to(shared, w->id, score, label));
            }
            OK(tce_ew_histogram_push(w->histogram, score, label));
            OK(tce_window_push(w->window, score, label));
            OK(tce_reservoir_push(w->reservoir, score, label));
            i++;
        }
    }
#ifdef RACE_SELF_TEST
    racy++;
#endif
    atomic_fetch_sub(&running, 1);
    return NULL;
}

static size_t encode_histogram(const tce_ew_histogram *h, unsigned char *out) {
    size_t written = 0;
    OK(tce_ew_histogram_encode(h, out, FRAME_BYTES, &written));
    return written;
}

static int same_estimate(const tce_estimate *a, const tce_estimate *b) {
    return memcmp(&a->value, &b->value, sizeof(double)) == 0 && a->samples == b->samples && a->bins == b->bins;
}

int main(void) {
    static unsigned char frame[FRAME_BYTES], frame2[FRAME_BYTES];
    size_t shared_size = 0, shared_align = 0;
    OK(tce_concurrent_histogram_layout(BINS, THREADS, &shared_size, &shared_align));
    CHECK(shared_size <= sizeof shared_memory && shared_align <= 16);
    OK(tce_concurrent_histogram_init(shared_memory, sizeof shared_memory, BINS, THREADS, TCE_CLOSURE_LEFT, &shared));
    for (unsigned t = 0; t < THREADS; t++) {
        struct worker *w = &workers[t];
        w->id = t;
        OK(tce_ew_histogram_init(w->histogram_memory, HISTOGRAM_BYTES, BINS, TCE_CLOSURE_LEFT, &w->histogram));
        OK(tce_window_init(w->window_memory, WINDOW_BYTES, WINDOW, &w->window));
        OK(tce_reservoir_init(w->reservoir_memory, RESERVOIR_BYTES, RESERVOIR, 100 + t, &w->reservoir));
    }
    if (atomic_load(&failures)) {
        return 1;
    }
    atomic_store(&running, THREADS);
    for (unsigned t = 0; t < THREADS; t++) {
        if (pthread_create(&workers[t].thread, NULL, work, &workers[t]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    /* Snapshots while the workers push: never more than was pushed, never going back. */
    tce_ew_histogram *live = NULL;
    OK(tce_ew_histogram_new(BINS, TCE_CLOSURE_LEFT, &live));
    uint64_t previous = 0, snapshots = 0;
    while (atomic_load(&running) > 0) {
        uint64_t n = 0;
        OK(tce_concurrent_histogram_snapshot(shared, live));
        OK(tce_ew_histogram_samples(live, &n));
        CHECK(n >= previous && n <= (uint64_t)THREADS * SAMPLES);
        previous = n;
        snapshots++;
    }
    for (unsigned t = 0; t < THREADS; t++) {
        pthread_join(workers[t].thread, NULL);
    }

    /* The shared histogram equals the sequential one exactly; so does the merge. */
    tce_ew_histogram *sequential = NULL, *merged = NULL;
    OK(tce_ew_histogram_new(BINS, TCE_CLOSURE_LEFT, &sequential));
    OK(tce_ew_histogram_new(BINS, TCE_CLOSURE_LEFT, &merged));
    for (unsigned t = 0; t < THREADS; t++) {
        for (unsigned i = 0; i < SAMPLES; i++) {
            double score;
            uint8_t label;
            sample(t, i, &score, &label);
            OK(tce_ew_histogram_push(sequential, score, label));
        }
        OK(tce_ew_histogram_merge(merged, workers[t].histogram));
    }
    OK(tce_concurrent_histogram_snapshot(shared, live));
    size_t a = encode_histogram(live, frame), b = encode_histogram(sequential, frame2);
    CHECK(a == b && a > 0 && memcmp(frame, frame2, a) == 0);
    b = encode_histogram(merged, frame2);
    CHECK(a == b && memcmp(frame, frame2, a) == 0);
    tce_estimate e1, e2;
    OK(tce_ew_histogram_ece_bin(live, 2.0, &e1));
    OK(tce_ew_histogram_ece_bin(sequential, 2.0, &e2));
    CHECK(same_estimate(&e1, &e2) && e1.samples == (uint64_t)THREADS * SAMPLES);

    /* Windows: the last WINDOW samples of each stream. Reservoirs: as if single-threaded. */
    tce_options o = tce_options_default();
    tce_reservoir *total = NULL;
    OK(tce_reservoir_new(RESERVOIR, 7, &total));
    for (unsigned t = 0; t < THREADS; t++) {
        tce_sorted_buffer *last = NULL;
        OK(tce_sorted_buffer_new(WINDOW, &last));
        tce_reservoir *alone = NULL;
        OK(tce_reservoir_new(RESERVOIR, 100 + t, &alone));
        for (unsigned i = 0; i < SAMPLES; i++) {
            double score;
            uint8_t label;
            sample(t, i, &score, &label);
            if (i >= SAMPLES - WINDOW) {
                OK(tce_sorted_buffer_push(last, score, label));
            }
            OK(tce_reservoir_push(alone, score, label));
        }
        OK(tce_window_ece_sweep(workers[t].window, &o, &e1));
        OK(tce_sorted_buffer_ece_sweep(last, &o, &e2));
        CHECK(same_estimate(&e1, &e2) && e1.samples == WINDOW);
        OK(tce_window_ece_debias(workers[t].window, &o, &e1));
        OK(tce_sorted_buffer_ece_debias(last, &o, &e2));
        CHECK(same_estimate(&e1, &e2));
        size_t ra = 0, rb = 0;
        OK(tce_reservoir_encode(workers[t].reservoir, frame, FRAME_BYTES, &ra));
        OK(tce_reservoir_encode(alone, frame2, FRAME_BYTES, &rb));
        CHECK(ra == rb && memcmp(frame, frame2, ra) == 0);
        OK(tce_reservoir_merge(total, workers[t].reservoir));
        tce_sorted_buffer_free(last);
        tce_reservoir_free(alone);
    }
    uint64_t seen = 0;
    size_t held = 0;
    OK(tce_reservoir_seen(total, &seen));
    OK(tce_reservoir_len(total, &held));
    CHECK(seen == (uint64_t)THREADS * SAMPLES && held == RESERVOIR);
    OK(tce_reservoir_ece_sweep(total, &o, &e1));
    CHECK(e1.samples == RESERVOIR && e1.value >= 0.0 && e1.value <= 1.0);

    tce_ew_histogram_free(live);
    tce_ew_histogram_free(sequential);
    tce_ew_histogram_free(merged);
    tce_reservoir_free(total);
    printf("%u threads x %u samples, %llu live snapshots: %s\n", (unsigned)THREADS, (unsigned)SAMPLES,
           (unsigned long long)snapshots, atomic_load(&failures) == 0 ? "ok" : "FAILED");
    return atomic_load(&failures) == 0 ? 0 : 1;
}
