/* The C side of the Python package's portable-bytes tests (python/tests/test_portable.py).
 *
 *   states encode DIR < SAMPLES   builds five states from "score label" lines and writes
 *                                 each one's frame to DIR/<kind>.bin
 *   states decode DIR             decodes DIR/<kind>.bin (written by Python, say) into
 *                                 states of the same shape and prints one estimate each
 *                                 ("<kind> <value %.17g> <samples> <bins>")
 *
 * Shapes (the Python test uses the same): histogram 15 bins left-closed, sorted buffer of
 * capacity n, window of 1000, reservoir of 500 with seed 7, decaying histogram of 15
 * bins with half-life 300. Exit status 1 on any failure, with the tce_status on stderr. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tce.h"

#define CHECK(call)                                                                \
    do {                                                                           \
        tce_status status_ = (call);                                               \
        if (status_ != TCE_STATUS_OK) {                                            \
            fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #call,        \
                    (int)status_);                                                 \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static void write_file(const char *dir, const char *kind, const uint8_t *bytes, size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, kind);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

static uint8_t *read_file(const char *dir, const char *kind, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, kind);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc(size > 0 ? (size_t)size : 1);
    if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) exit(1);
    fclose(f);
    *len = (size_t)size;
    return bytes;
}

#define ENCODE(kind, prefix, handle)                                               \
    do {                                                                           \
        size_t len_ = 0, written_ = 0;                                             \
        CHECK(prefix##_encoded_len(handle, &len_));                                \
        uint8_t *out_ = malloc(len_);                                              \
        CHECK(prefix##_encode(handle, out_, len_, &written_));                     \
        write_file(dir, kind, out_, written_);                                     \
        free(out_);                                                                \
    } while (0)

static void print_estimate(const char *kind, tce_estimate e) {
    printf("%s %.17g %llu %zu\n", kind, e.value, (unsigned long long)e.samples, e.bins);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: states encode|decode DIR\n");
        return 2;
    }
    const char *dir = argv[2];
    tce_options sweep = tce_options_default();

    if (strcmp(argv[1], "encode") == 0) {
        size_t n = 0, room = 1024;
        double *scores = malloc(room * sizeof *scores);
        uint8_t *labels = malloc(room);
        double s;
        unsigned l;
        while (scanf("%lf %u", &s, &l) == 2) {
            if (n == room) {
                room *= 2;
                scores = realloc(scores, room * sizeof *scores);
                labels = realloc(labels, room);
            }
            scores[n] = s;
            labels[n] = (uint8_t)l;
            n++;
        }
        struct tce_ew_histogram *h;
        struct tce_sorted_buffer *b;
        struct tce_window *w;
        struct tce_reservoir *r;
        struct tce_decaying_histogram *d;
        CHECK(tce_ew_histogram_new(15, TCE_CLOSURE_LEFT, &h));
        CHECK(tce_sorted_buffer_new(n, &b));
        CHECK(tce_window_new(1000, &w));
        CHECK(tce_reservoir_new(500, 7, &r));
        CHECK(tce_decaying_histogram_new(15, TCE_CLOSURE_LEFT, 300.0, &d));
        CHECK(tce_ew_histogram_push_batch(h, scores, n, labels, n));
        CHECK(tce_sorted_buffer_push_batch(b, scores, n, labels, n));
        CHECK(tce_window_push_batch(w, scores, n, labels, n));
        CHECK(tce_reservoir_push_batch(r, scores, n, labels, n));
        CHECK(tce_decaying_histogram_push_batch(d, scores, n, labels, n));
        ENCODE("histogram", tce_ew_histogram, h);
        ENCODE("buffer", tce_sorted_buffer, b);
        ENCODE("window", tce_window, w);
        ENCODE("reservoir", tce_reservoir, r);
        ENCODE("decaying", tce_decaying_histogram, d);
        tce_ew_histogram_free(h);
        tce_sorted_buffer_free(b);
        tce_window_free(w);
        tce_reservoir_free(r);
        tce_decaying_histogram_free(d);
        free(scores);
        free(labels);
        return 0;
    }
    if (strcmp(argv[1], "decode") == 0) {
        size_t len;
        uint8_t *bytes;
        tce_estimate e;

        struct tce_ew_histogram *h;
        CHECK(tce_ew_histogram_new(15, TCE_CLOSURE_LEFT, &h));
        bytes = read_file(dir, "histogram", &len);
        CHECK(tce_ew_histogram_decode(h, bytes, len));
        CHECK(tce_ew_histogram_ece_bin(h, 2.0, &e));
        print_estimate("histogram", e);
        free(bytes);
        tce_ew_histogram_free(h);

        struct tce_sorted_buffer *b;
        bytes = read_file(dir, "buffer", &len);
        /* The buffer frame holds n samples in 4 + 9n payload bytes after 12 of header. */
        CHECK(tce_sorted_buffer_new((len - 20) / 9 > 0 ? (len - 20) / 9 : 1, &b));
        CHECK(tce_sorted_buffer_decode(b, bytes, len));
        CHECK(tce_sorted_buffer_ece_sweep(b, &sweep, &e));
        print_estimate("buffer", e);
        free(bytes);
        tce_sorted_buffer_free(b);

        struct tce_window *w;
        CHECK(tce_window_new(1000, &w));
        bytes = read_file(dir, "window", &len);
        CHECK(tce_window_decode(w, bytes, len));
        CHECK(tce_window_ece_sweep(w, &sweep, &e));
        print_estimate("window", e);
        free(bytes);
        tce_window_free(w);

        struct tce_reservoir *r;
        CHECK(tce_reservoir_new(500, 7, &r));
        bytes = read_file(dir, "reservoir", &len);
        CHECK(tce_reservoir_decode(r, bytes, len));
        CHECK(tce_reservoir_ece_sweep(r, &sweep, &e));
        print_estimate("reservoir", e);
        free(bytes);
        tce_reservoir_free(r);

        struct tce_decaying_histogram *d;
        CHECK(tce_decaying_histogram_new(15, TCE_CLOSURE_LEFT, 300.0, &d));
        bytes = read_file(dir, "decaying", &len);
        CHECK(tce_decaying_histogram_decode(d, bytes, len));
        CHECK(tce_decaying_histogram_ece_bin(d, 2.0, &e));
        print_estimate("decaying", e);
        free(bytes);
        tce_decaying_histogram_free(d);
        return 0;
    }
    fprintf(stderr, "usage: states encode|decode DIR\n");
    return 2;
}
