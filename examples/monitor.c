/*
 * monitor.c: calibration monitoring inside an inference server.
 *
 * Several worker threads each record (confidence, correct) pairs into their own
 * equal-width histogram and sorted buffer, laid over static memory (no allocation).
 * A reporter merges the workers' states into totals (also in static memory) every
 * REPORT_MS and prints ECE_bin (histogram: every sample so far), ECE_sweep and ECE_debias
 * (buffers: the recent window; a full buffer is cleared and starts a new window). This is the threading pattern
 * of the C API: one state per worker, merged; each worker's state is guarded by its own
 * mutex, held by the worker while pushing and by the reporter while merging.
 *
 * Build: cc -std=c11 -Iinclude examples/monitor.c target/release/libtce.a -lpthread -ldl -lm
 * Runs REPORTS reports (about half a second) and exits 0.
 */
#define _POSIX_C_SOURCE 200809L
#include "tce.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { WORKERS = 4, BINS = 15, CAPACITY = 4096, REPORTS = 5, REPORT_MS = 100, BATCH = 32 };

/* Upper bounds of the sizes tce_*_layout reports (checked at start-up). */
#define HISTOGRAM_BYTES 1024
#define BUFFER_BYTES (CAPACITY * 16 + 256)
#define TOTAL_BUFFER_BYTES (WORKERS * CAPACITY * 16 + 256)

struct worker {
    pthread_t thread;
    pthread_mutex_t lock;
    unsigned id;
    tce_ew_histogram *histogram;
    tce_sorted_buffer *buffer;
    unsigned long rotations; /* times the full buffer was cleared to start a new window */
    _Alignas(16) unsigned char histogram_memory[HISTOGRAM_BYTES];
    _Alignas(16) unsigned char buffer_memory[BUFFER_BYTES];
};

static struct worker workers[WORKERS];
static _Alignas(16) unsigned char total_histogram_memory[HISTOGRAM_BYTES];
static _Alignas(16) unsigned char total_buffer_memory[TOTAL_BUFFER_BYTES];
static atomic_int stop;

static void die(const char *what, tce_status s) {
    fprintf(stderr, "monitor: %s: %s\n", what, tce_status_str(s));
    exit(1);
}

/* A small deterministic generator (xorshift64*), one per worker. */
static double uniform(uint64_t *state) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (double)((*state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static void *work(void *arg) {
    struct worker *w = (struct worker *)arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (w->id + 1);
    double scores[BATCH];
    uint8_t labels[BATCH];
    struct timespec pause = {0, 1000000}; /* 1 ms between batches: a server's traffic */
    while (!atomic_load(&stop)) {
        /* An overconfident model: right with probability confidence^2. */
        for (int i = 0; i < BATCH; i++) {
            scores[i] = 0.5 + 0.5 * uniform(&rng);
            labels[i] = uniform(&rng) < scores[i] * scores[i];
        }
        pthread_mutex_lock(&w->lock);
        tce_status s = tce_ew_histogram_push_batch(w->histogram, scores, BATCH, labels, BATCH);
        if (s != TCE_STATUS_OK) die("histogram push", s);
        s = tce_sorted_buffer_push_batch(w->buffer, scores, BATCH, labels, BATCH);
        if (s == TCE_STATUS_BUFFER_FULL) {
            /* The batch was refused whole: start a new window of samples. */
            w->rotations++;
            if ((s = tce_sorted_buffer_clear(w->buffer))) die("clear", s);
            s = tce_sorted_buffer_push_batch(w->buffer, scores, BATCH, labels, BATCH);
        }
        if (s != TCE_STATUS_OK) die("buffer push", s);
        pthread_mutex_unlock(&w->lock);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

int main(void) {
    size_t size, align, total_size;
    tce_status s;
    if ((s = tce_ew_histogram_layout(BINS, &size, &align))) die("layout", s);
    if (size > HISTOGRAM_BYTES || align > 16) die("histogram memory too small", TCE_STATUS_BUFFER_TOO_SMALL);
    if ((s = tce_sorted_buffer_layout(CAPACITY, &size, &align))) die("layout", s);
    if ((s = tce_sorted_buffer_layout(WORKERS * CAPACITY, &total_size, &align))) die("layout", s);
    if (size > BUFFER_BYTES || total_size > TOTAL_BUFFER_BYTES || align > 16)
        die("buffer memory too small", TCE_STATUS_BUFFER_TOO_SMALL);

    tce_ew_histogram *total_histogram;
    tce_sorted_buffer *total_buffer;
    if ((s = tce_ew_histogram_init(total_histogram_memory, sizeof total_histogram_memory, BINS, TCE_CLOSURE_LEFT,
                                   &total_histogram)))
        die("init", s);
    if ((s = tce_sorted_buffer_init(total_buffer_memory, sizeof total_buffer_memory, WORKERS * CAPACITY,
                                    &total_buffer)))
        die("init", s);
    for (unsigned i = 0; i < WORKERS; i++) {
        struct worker *w = &workers[i];
        w->id = i;
        pthread_mutex_init(&w->lock, NULL);
        if ((s = tce_ew_histogram_init(w->histogram_memory, sizeof w->histogram_memory, BINS, TCE_CLOSURE_LEFT,
                                       &w->histogram)))
            die("init", s);
        if ((s = tce_sorted_buffer_init(w->buffer_memory, sizeof w->buffer_memory, CAPACITY, &w->buffer)))
            die("init", s);
    }
    for (unsigned i = 0; i < WORKERS; i++) {
        if (pthread_create(&workers[i].thread, NULL, work, &workers[i]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }

    tce_options options = tce_options_default(); /* p = 2, 15 equal-mass bins */
    struct timespec period = {0, REPORT_MS * 1000000L};
    for (int report = 1; report <= REPORTS; report++) {
        nanosleep(&period, NULL);
        if ((s = tce_ew_histogram_reset(total_histogram))) die("reset", s);
        if ((s = tce_sorted_buffer_clear(total_buffer))) die("clear", s);
        unsigned long rotations = 0;
        for (unsigned i = 0; i < WORKERS; i++) {
            pthread_mutex_lock(&workers[i].lock);
            if ((s = tce_ew_histogram_merge(total_histogram, workers[i].histogram))) die("merge", s);
            if ((s = tce_sorted_buffer_merge(total_buffer, workers[i].buffer))) die("merge", s);
            rotations += workers[i].rotations;
            pthread_mutex_unlock(&workers[i].lock);
        }
        tce_estimate ece, sweep, debias;
        s = tce_ew_histogram_ece_bin(total_histogram, 2.0, &ece);
        if (s == TCE_STATUS_NO_SAMPLES) {
            printf("report %d: no samples yet\n", report);
            continue;
        }
        if (s) die("ece_bin", s);
        if ((s = tce_sorted_buffer_ece_sweep(total_buffer, &options, &sweep))) die("ece_sweep", s);
        if ((s = tce_sorted_buffer_ece_debias(total_buffer, &options, &debias))) die("ece_debias", s);
        printf("report %d: n=%llu ECE_bin(EW,15)=%.4f ECE_sweep(EM,b*=%zu)=%.4f ECE_debias(EM,15)=%.4f "
               "(window n=%llu, rotations %lu)\n",
               report, (unsigned long long)ece.samples, ece.value, sweep.bins, sweep.value, debias.value,
               (unsigned long long)sweep.samples, rotations);
        fflush(stdout);
    }
    atomic_store(&stop, 1);
    for (unsigned i = 0; i < WORKERS; i++) {
        pthread_join(workers[i].thread, NULL);
        pthread_mutex_destroy(&workers[i].lock);
    }
    return 0;
}
