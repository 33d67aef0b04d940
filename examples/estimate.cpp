// estimate.cpp: estimates of a CSV of (confidence, correct) rows with the C++ wrapper.
//
//   estimate FILE.csv        prints ECE_bin, MCE, ECE_debias (15 bins) and ECE_sweep
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tce.hpp"

int main(int argc, char **argv) {
    if (argc != 2) {
        std::cerr << "usage: " << argv[0] << " FILE.csv\n";
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::cerr << "cannot open " << argv[1] << "\n";
        return 1;
    }
    std::vector<double> scores;
    std::vector<std::uint8_t> labels;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string score, label;
        if (std::getline(fields, score, ',') && std::getline(fields, label, ',')) {
            scores.push_back(std::stod(score));
            labels.push_back(static_cast<std::uint8_t>(std::stoi(label)));
        }
    }

    try {
        std::cout << "tce " << tce::version() << ", n = " << scores.size() << "\n";
        tce::histogram histogram(15);
        histogram.push(scores, labels);
        // Room for twice the samples: the free half is the radix sort's second array.
        tce::sorted_buffer buffer(2 * scores.size());
        buffer.push(scores, labels);
        // Sorted now, on two threads from 2^17 samples (below, on this one).
        buffer.sort_parallel();

        std::printf("%-10s %-12s %5s %10s\n", "estimator", "binning", "bins", "value");
        auto row = [](const char *estimator, const char *binning, const tce_estimate &e) {
            std::printf("%-10s %-12s %5zu %10.6f\n", estimator, binning, e.bins, e.value);
        };
        row("ece_bin", "equal_width", histogram.ece_bin());
        row("mce", "equal_width", histogram.mce());
        row("ece_debias", "equal_width", histogram.ece_debias());
        row("ece_sweep", "equal_width", buffer.ece_sweep(tce::options().equal_width()));
        row("ece_bin", "equal_mass", buffer.ece_bin());
        row("mce", "equal_mass", buffer.mce());
        row("ece_debias", "equal_mass", buffer.ece_debias());
        row("ece_sweep", "equal_mass", buffer.ece_sweep());

        // The one-call form agrees with the histogram, bit for bit.
        tce_estimate oneshot = tce::ece_bin(scores, labels, tce::options().equal_width());
        if (oneshot.value != histogram.ece_bin().value) {
            std::cerr << "one-call and histogram disagree\n";
            return 1;
        }
        // Reliability diagram of the histogram: empty bins have NaN accuracy.
        for (const tce_bin_stats &bin : histogram.bin_stats()) {
            if (bin.count == 0 && !std::isnan(bin.accuracy)) {
                return 1;
            }
        }
        // Errors are exceptions carrying the status.
        try {
            histogram.push(std::nan(""), 1);
            return 1;
        } catch (const tce::error &e) {
            if (e.status() != TCE_STATUS_NON_FINITE_SCORE) return 1;
            std::cout << "refused NaN: " << e.what() << "\n";
        }
        tce::histogram other(15, TCE_CLOSURE_RIGHT);
        try {
            histogram.merge(other);
            return 1;
        } catch (const tce::error &e) {
            std::cout << "refused merge: " << e.what() << "\n";
        }
    } catch (const tce::error &e) {
        std::cerr << "tce: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
