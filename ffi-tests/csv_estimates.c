/*
 * Reads a CSV of (confidence, correct) rows (first two columns, one header line) and
 * prints every estimate as `key hex-float bits bins samples`, one a line. tests/ffi.rs
 * computes the same keys with the Rust API and compares the bits: C and Rust must agree
 * to the last bit.
 */
#include "tce.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, tce_status s) {
    fprintf(stderr, "%s: %s\n", what, tce_status_str(s));
    exit(1);
}

static void print(const char *key, tce_estimate e) {
    uint64_t bits;
    memcpy(&bits, &e.value, sizeof bits);
    printf("%s %a 0x%016" PRIx64 " %zu %" PRIu64 "\n", key, e.value, bits, e.bins, e.samples);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.csv\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t cap = 1024, n = 0;
    double *scores = (double *)malloc(cap * sizeof *scores);
    uint8_t *labels = (uint8_t *)malloc(cap);
    char line[4096];
    if (!scores || !labels || !fgets(line, sizeof line, f)) { /* header */
        return 1;
    }
    while (fgets(line, sizeof line, f)) {
        char *end;
        double score = strtod(line, &end);
        if (end == line || *end != ',') {
            continue;
        }
        long label = strtol(end + 1, NULL, 10);
        if (n == cap) {
            cap *= 2;
            double *s2 = (double *)realloc(scores, cap * sizeof *scores);
            uint8_t *l2 = (uint8_t *)realloc(labels, cap);
            if (!s2 || !l2) {
                return 1;
            }
            scores = s2;
            labels = l2;
        }
        scores[n] = score;
        labels[n] = (uint8_t)label;
        n++;
    }
    fclose(f);

    tce_status s;
    tce_estimate e;
    tce_ew_histogram *h = NULL;
    if ((s = tce_ew_histogram_new(15, TCE_CLOSURE_LEFT, &h))) fail("histogram", s);
    if ((s = tce_ew_histogram_push_batch(h, scores, n, labels, n))) fail("push", s);
    if ((s = tce_ew_histogram_ece_bin(h, 2.0, &e))) fail("ece_bin", s);
    print("histogram.ece_bin.p2", e);
    if ((s = tce_ew_histogram_ece_bin(h, 1.0, &e))) fail("ece_bin", s);
    print("histogram.ece_bin.p1", e);
    if ((s = tce_ew_histogram_mce(h, &e))) fail("mce", s);
    print("histogram.mce", e);
    if ((s = tce_ew_histogram_ece_debias(h, 2.0, &e))) fail("debias", s);
    print("histogram.ece_debias.p2", e);
    tce_ew_histogram_free(h);

    tce_sorted_buffer *b = NULL;
    if ((s = tce_sorted_buffer_new(n, &b))) fail("buffer", s);
    for (size_t i = 0; i < n; i++) {
        if ((s = tce_sorted_buffer_push(b, scores[i], labels[i]))) fail("push", s);
    }
    const char *names[3] = {"ew", "em", "em_keep"};
    for (int binning = 0; binning < 3; binning++) {
        tce_options o = tce_options_default();
        o.binning = binning == 0 ? TCE_BINNING_EQUAL_WIDTH : TCE_BINNING_EQUAL_MASS;
        o.ties = binning == 2 ? TCE_TIES_KEEP : TCE_TIES_SPLIT;
        for (int p = 1; p <= 3; p++) {
            char key[64];
            o.p = (double)p;
            if ((s = tce_sorted_buffer_ece_bin(b, &o, &e))) fail("ece_bin", s);
            snprintf(key, sizeof key, "buffer.%s.ece_bin.p%d", names[binning], p);
            print(key, e);
            if ((s = tce_sorted_buffer_ece_debias(b, &o, &e))) fail("debias", s);
            snprintf(key, sizeof key, "buffer.%s.ece_debias.p%d", names[binning], p);
            print(key, e);
            if ((s = tce_sorted_buffer_ece_sweep(b, &o, &e))) fail("sweep", s);
            snprintf(key, sizeof key, "buffer.%s.ece_sweep.p%d", names[binning], p);
            print(key, e);
        }
        char key[64];
        if ((s = tce_sorted_buffer_mce(b, &o, &e))) fail("mce", s);
        snprintf(key, sizeof key, "buffer.%s.mce", names[binning]);
        print(key, e);
    }
    tce_sorted_buffer_free(b);

    /* The file's rows repeated past 2^17 samples, in a buffer with room for twice as many,
       sorted ahead on two threads: tests/ffi.rs sorts the same on one. */
    size_t copies = ((size_t)1 << 17) / n + 1, m = copies * n;
    if ((s = tce_sorted_buffer_new(2 * m, &b))) fail("buffer", s);
    for (size_t c = 0; c < copies; c++) {
        if ((s = tce_sorted_buffer_push_batch(b, scores, n, labels, n))) fail("push_batch", s);
    }
    if ((s = tce_sorted_buffer_sort_parallel(b))) fail("sort_parallel", s);
    for (int binning = 0; binning < 3; binning++) {
        tce_options o = tce_options_default();
        o.binning = binning == 0 ? TCE_BINNING_EQUAL_WIDTH : TCE_BINNING_EQUAL_MASS;
        o.ties = binning == 2 ? TCE_TIES_KEEP : TCE_TIES_SPLIT;
        char key[64];
        if ((s = tce_sorted_buffer_ece_bin(b, &o, &e))) fail("ece_bin", s);
        snprintf(key, sizeof key, "parallel.%s.ece_bin.p2", names[binning]);
        print(key, e);
        if ((s = tce_sorted_buffer_ece_debias(b, &o, &e))) fail("debias", s);
        snprintf(key, sizeof key, "parallel.%s.ece_debias.p2", names[binning]);
        print(key, e);
        if ((s = tce_sorted_buffer_ece_sweep(b, &o, &e))) fail("sweep", s);
        snprintf(key, sizeof key, "parallel.%s.ece_sweep.p2", names[binning]);
        print(key, e);
        if ((s = tce_sorted_buffer_mce(b, &o, &e))) fail("mce", s);
        snprintf(key, sizeof key, "parallel.%s.mce", names[binning]);
        print(key, e);
    }
    tce_sorted_buffer_free(b);

    size_t size, align;
    if ((s = tce_scratch_layout(n, &size, &align))) fail("scratch", s);
    void *scratch = malloc(size); /* malloc's alignment (16) covers `align` here */
    if (!scratch || align > 16) return 1;
    tce_options o = tce_options_default();
    if ((s = tce_ece_sweep(scores, n, labels, n, &o, scratch, size, &e))) fail("one-call sweep", s);
    print("oneshot.em.ece_sweep.p2", e);
    /* The one-call equal-mass estimators select (n >= 4096 here) rather than sort: the
       same values as the buffer's, bit for bit. */
    for (int keep = 0; keep < 2; keep++) {
        o.ties = keep ? TCE_TIES_KEEP : TCE_TIES_SPLIT;
        const char *name = keep ? "em_keep" : "em";
        char key[64];
        for (int p = 1; p <= 3; p++) {
            o.p = (double)p;
            if ((s = tce_ece_bin(scores, n, labels, n, &o, scratch, size, &e))) fail("one-call ece_bin", s);
            snprintf(key, sizeof key, "oneshot.%s.ece_bin.p%d", name, p);
            print(key, e);
            if ((s = tce_ece_debias(scores, n, labels, n, &o, scratch, size, &e))) fail("one-call debias", s);
            snprintf(key, sizeof key, "oneshot.%s.ece_debias.p%d", name, p);
            print(key, e);
        }
        if ((s = tce_mce(scores, n, labels, n, &o, scratch, size, &e))) fail("one-call mce", s);
        snprintf(key, sizeof key, "oneshot.%s.mce", name);
        print(key, e);
    }
    free(scratch);
    free(scores);
    free(labels);
    return 0;
}
