/*
 * prometheus_exporter.c: calibration metrics of a prediction stream, in the Prometheus
 * text exposition format (for node-exporter's textfile collector, or any scraper).
 *
 * Reads `confidence,correct` rows (CSV; a header line and extra columns are ignored)
 * from a file or stdin, records every sample in an equal-width histogram (all history,
 * exact, O(1) memory), in a sliding window of the last WINDOW samples (for equal-mass
 * bins and the sweep) and in a calibration alarm (per-bin CUSUMs with a stated
 * false-alarm rate), all in static memory: nothing is allocated. Then writes the
 * metrics to stdout, or atomically to FILE with `-o FILE` (written to FILE.tmp, synced,
 * then renamed over FILE, so a collector never reads half a file).
 *
 *   prometheus_exporter [-o FILE] [CSV]
 *
 * Build: cc -std=c11 -Iinclude examples/prometheus_exporter.c target/release/libtce.a \
 *            -lpthread -ldl -lm -o prometheus_exporter
 * Exit status: 0, or 1 on an I/O or API error (a message on stderr). Rows that are not
 * a valid sample are counted in tce_rejected_samples_total, not fatal.
 */
#define _POSIX_C_SOURCE 200809L
#include "tce.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BINS = 15, WINDOW = 4096, ALARM_BINS = 10 };

/* The alarm tests for doubled or halved odds (shift ln 2) at threshold 10: at least
 * e^10/2 = 11 013 samples between false alarms on a calibrated stream whatever the
 * scores (tce_alarm_guaranteed_arl0), and about (e^10 - 11)/(2 I) for scores of mean
 * information I (tce_alarm_approximate_arl0: 3.9 million on ResNet-110's scores). */
#define ALARM_SHIFT 0.69314718055994531
#define ALARM_THRESHOLD 10.0

/* Upper bounds of what tce_*_layout reports (checked at start-up). */
#define HISTOGRAM_BYTES 1024
#define WINDOW_BYTES (WINDOW * 24 + 256)
#define ALARM_BYTES 1024

static _Alignas(16) unsigned char histogram_memory[HISTOGRAM_BYTES];
static _Alignas(16) unsigned char window_memory[WINDOW_BYTES];
static _Alignas(16) unsigned char alarm_memory[ALARM_BYTES];

static void die(const char *what, const char *why) {
    fprintf(stderr, "prometheus_exporter: %s: %s\n", what, why);
    exit(1);
}

static void must(tce_status s, const char *what) {
    if (s != TCE_STATUS_OK) {
        die(what, tce_status_str(s));
    }
}

/* Parses "confidence,correct[,...]": 1 on success. */
static int parse_row(char *line, double *score, uint8_t *label) {
    char *end;
    errno = 0;
    double s = strtod(line, &end);
    if (end == line || errno != 0 || *end != ',') {
        return 0;
    }
    char *field = end + 1;
    long l = strtol(field, &end, 10);
    if (end == field || (*end != ',' && *end != '\n' && *end != '\r' && *end != '\0') || (l != 0 && l != 1)) {
        return 0;
    }
    *score = s;
    *label = (uint8_t)l;
    return 1;
}

/* One metric family's header. */
static void family(FILE *out, const char *name, const char *type, const char *help) {
    fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample line; `labels` is "" or `key="value",...` (values here need no escaping). */
static void metric(FILE *out, const char *name, const char *labels, double value) {
    if (labels[0] != '\0') {
        fprintf(out, "%s{%s} ", name, labels);
    } else {
        fprintf(out, "%s ", name);
    }
    if (isnan(value)) {
        fputs("NaN\n", out);
    } else if (isinf(value)) {
        fputs(value > 0 ? "+Inf\n" : "-Inf\n", out);
    } else {
        fprintf(out, "%.17g\n", value); /* round-trips every double */
    }
}

static void write_metrics(FILE *out, tce_ew_histogram *h, tce_window *w, tce_alarm *a, uint64_t rejected) {
    uint64_t samples = 0;
    size_t held = 0;
    must(tce_ew_histogram_samples(h, &samples), "samples");
    must(tce_window_len(w, &held), "window length");
    tce_alarm_report alarm;
    must(tce_alarm_read(a, &alarm), "alarm");

    family(out, "tce_samples_total", "counter", "Samples read from the stream (all recorded in the histogram).");
    metric(out, "tce_samples_total", "", (double)samples);
    family(out, "tce_rejected_samples_total", "counter",
           "Input rows refused: not confidence,correct with a confidence in [0, 1] and correct 0 or 1.");
    metric(out, "tce_rejected_samples_total", "", (double)rejected);
    family(out, "tce_window_samples", "gauge", "Samples in the sliding window (the most recent ones).");
    metric(out, "tce_window_samples", "", (double)held);

    family(out, "tce_alarm_statistic", "gauge",
           "Calibration alarm: the largest per-bin CUSUM of the log-likelihood ratio against odds "
           "times 2 or 1/2 (0 when calibrated evidence dominates).");
    metric(out, "tce_alarm_statistic", "", alarm.statistic);
    family(out, "tce_alarm_threshold", "gauge", "Calibration alarm: the threshold h the statistic is compared with.");
    metric(out, "tce_alarm_threshold", "", alarm.threshold);
    family(out, "tce_alarm_raised", "gauge",
           "Calibration alarm: 1 once the statistic has reached the threshold since the last reset, else 0.");
    metric(out, "tce_alarm_raised", "", (double)alarm.alarm);
    family(out, "tce_alarm_samples", "gauge", "Calibration alarm: samples since its last reset.");
    metric(out, "tce_alarm_samples", "", (double)alarm.samples);
    family(out, "tce_alarm_stated_arl0", "gauge",
           "Calibration alarm: mean samples between false alarms on a calibrated stream; bound guaranteed = "
           "e^h/2 for any scores, bound approximate = (e^h - h - 1)/(2 I) on the scores seen (NaN before any).");
    metric(out, "tce_alarm_stated_arl0", "bound=\"guaranteed\"", alarm.guaranteed_arl0);
    metric(out, "tce_alarm_stated_arl0", "bound=\"approximate\"", alarm.approximate_arl0);
    if (samples == 0) {
        return; /* no estimate without samples */
    }

    char labels[128];
    tce_estimate all_bin, all_debias, all_mce, win_bin, win_debias, win_sweep;
    must(tce_ew_histogram_ece_bin(h, 2.0, &all_bin), "ece_bin");
    must(tce_ew_histogram_ece_debias(h, 2.0, &all_debias), "ece_debias");
    must(tce_ew_histogram_mce(h, &all_mce), "mce");
    tce_options o = tce_options_default(); /* p = 2, 15 equal-mass bins, sweep to n bins */
    o.bins = BINS;
    must(tce_window_ece_bin(w, &o, &win_bin), "window ece_bin");
    must(tce_window_ece_debias(w, &o, &win_debias), "window ece_debias");
    must(tce_window_ece_sweep(w, &o, &win_sweep), "window ece_sweep");

    family(out, "tce_ece_bin", "gauge",
           "Binned expected calibration error (L2), as a fraction: scope all = every sample (equal-width "
           "histogram), scope window = the sliding window.");
    snprintf(labels, sizeof labels, "scope=\"all\",binning=\"equal_width\",bins=\"%d\"", BINS);
    metric(out, "tce_ece_bin", labels, all_bin.value);
    snprintf(labels, sizeof labels, "scope=\"window\",binning=\"equal_mass\",bins=\"%d\"", BINS);
    metric(out, "tce_ece_bin", labels, win_bin.value);

    family(out, "tce_ece_debias", "gauge", "Debiased binned calibration error (L2), as a fraction.");
    snprintf(labels, sizeof labels, "scope=\"all\",binning=\"equal_width\",bins=\"%d\"", BINS);
    metric(out, "tce_ece_debias", labels, all_debias.value);
    snprintf(labels, sizeof labels, "scope=\"window\",binning=\"equal_mass\",bins=\"%d\"", BINS);
    metric(out, "tce_ece_debias", labels, win_debias.value);

    family(out, "tce_ece_sweep", "gauge",
           "ECE_sweep (L2): binned ECE with the most bins that keep accuracies monotone, as a fraction.");
    metric(out, "tce_ece_sweep", "scope=\"window\",binning=\"equal_mass\"", win_sweep.value);
    family(out, "tce_sweep_bins", "gauge", "The number of bins b* ECE_sweep chose.");
    metric(out, "tce_sweep_bins", "scope=\"window\",binning=\"equal_mass\"", (double)win_sweep.bins);

    family(out, "tce_mce", "gauge", "Maximum calibration error over the non-empty bins, as a fraction.");
    snprintf(labels, sizeof labels, "scope=\"all\",binning=\"equal_width\",bins=\"%d\"", BINS);
    metric(out, "tce_mce", labels, all_mce.value);

    /* Per-bin statistics of the histogram (reliability diagram); NaN for empty bins. */
    tce_bin_stats stats[BINS];
    must(tce_ew_histogram_bin_stats(h, stats, BINS), "bin_stats");
    static const char *const names[3] = {"tce_bin_samples", "tce_bin_accuracy", "tce_bin_mean_confidence"};
    static const char *const helps[3] = {
        "Samples in equal-width bin `bin` (upper edge `upper`; per bin, not cumulative).",
        "Accuracy of the samples in the bin (NaN if empty).",
        "Mean confidence of the samples in the bin (NaN if empty).",
    };
    for (int m = 0; m < 3; m++) {
        family(out, names[m], "gauge", helps[m]);
        for (int k = 0; k < BINS; k++) {
            /* `upper`, not `le`: `le` belongs to histogram buckets, which are cumulative (promtool
             * refuses it on a gauge). */
            snprintf(labels, sizeof labels, "bin=\"%d\",upper=\"%g\"", k, stats[k].upper);
            double value = m == 0 ? (double)stats[k].count : m == 1 ? stats[k].accuracy : stats[k].mean_score;
            metric(out, names[m], labels, value);
        }
    }
}

int main(int argc, char **argv) {
    const char *output = NULL, *input = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            output = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "usage: %s [-o FILE] [CSV]\n", argv[0]);
            return 2;
        } else {
            input = argv[i];
        }
    }

    size_t size, align;
    must(tce_ew_histogram_layout(BINS, &size, &align), "histogram layout");
    if (size > sizeof histogram_memory || align > 16) {
        die("histogram", "static memory too small");
    }
    must(tce_window_layout(WINDOW, &size, &align), "window layout");
    if (size > sizeof window_memory || align > 16) {
        die("window", "static memory too small");
    }
    tce_ew_histogram *h;
    tce_window *w;
    must(tce_ew_histogram_init(histogram_memory, sizeof histogram_memory, BINS, TCE_CLOSURE_LEFT, &h), "histogram");
    must(tce_window_init(window_memory, sizeof window_memory, WINDOW, &w), "window");
    must(tce_alarm_layout(ALARM_BINS, &size, &align), "alarm layout");
    if (size > sizeof alarm_memory || align > 16) {
        die("alarm", "static memory too small");
    }
    tce_alarm *a;
    must(tce_alarm_init(alarm_memory, sizeof alarm_memory, ALARM_BINS, TCE_CLOSURE_LEFT, ALARM_SHIFT,
                        ALARM_THRESHOLD, &a),
         "alarm");

    FILE *in = stdin;
    if (input != NULL && strcmp(input, "-") != 0) {
        in = fopen(input, "r");
        if (in == NULL) {
            die(input, strerror(errno));
        }
    }
    char line[4096];
    uint64_t rejected = 0, rows = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        rows++;
        double score;
        uint8_t label;
        if (!parse_row(line, &score, &label)) {
            if (rows > 1 || strchr("0123456789.+-", line[0]) != NULL) {
                rejected++; /* the first row may be a header */
            }
            continue;
        }
        /* The window first: if it refuses the sample (out of range), so would the histogram. */
        if (tce_window_push(w, score, label) != TCE_STATUS_OK) {
            rejected++;
            continue;
        }
        must(tce_ew_histogram_push(h, score, label), "push");
        must(tce_alarm_push(a, score, label), "alarm push");
    }
    if (ferror(in)) {
        die(input ? input : "stdin", "read error");
    }
    if (in != stdin) {
        fclose(in);
    }

    if (output == NULL) {
        write_metrics(stdout, h, w, a, rejected);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            die("stdout", "write error");
        }
        return 0;
    }
    char temporary[4096];
    if (snprintf(temporary, sizeof temporary, "%s.tmp", output) >= (int)sizeof temporary) {
        die(output, "path too long");
    }
    FILE *out = fopen(temporary, "w");
    if (out == NULL) {
        die(temporary, strerror(errno));
    }
    write_metrics(out, h, w, a, rejected);
    if (fflush(out) != 0 || ferror(out) || fsync(fileno(out)) != 0) {
        die(temporary, strerror(errno));
    }
    if (fclose(out) != 0) {
        die(temporary, strerror(errno));
    }
    if (rename(temporary, output) != 0) {
        die(output, strerror(errno));
    }
    return 0;
}
