// tce.hpp: a small header-only C++17 RAII wrapper over the C API of tce (include/tce.h).
//
// Failures throw tce::error (a std::runtime_error carrying the tce_status). States own
// heap memory (tce_*_new / tce_*_free) through std::unique_ptr; they are movable, not
// copyable. Not thread-safe per object: one state per thread, merged (see docs/C-API.md).
#ifndef TCE_HPP
#define TCE_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tce.h"

namespace tce {

/// A failed call: what() is tce_status_str(status()).
class error : public std::runtime_error {
  public:
    explicit error(tce_status status) : std::runtime_error(tce_status_str(status)), status_(status) {}
    tce_status status() const noexcept { return status_; }

  private:
    tce_status status_;
};

inline void check(tce_status status) {
    if (status != TCE_STATUS_OK) {
        throw error(status);
    }
}

inline std::string version() { return tce_version(); }

/// Estimator options, defaults as tce_options_default() (p = 2, 15 equal-mass bins).
struct options {
    tce_options raw = tce_options_default();
    options &p(double value) { raw.p = value; return *this; }
    options &bins(std::size_t value) { raw.bins = value; return *this; }
    options &equal_width(tce_closure closure = TCE_CLOSURE_LEFT) {
        raw.binning = TCE_BINNING_EQUAL_WIDTH;
        raw.closure = closure;
        return *this;
    }
    options &equal_mass(tce_ties ties = TCE_TIES_SPLIT) {
        raw.binning = TCE_BINNING_EQUAL_MASS;
        raw.ties = ties;
        return *this;
    }
    options &max_bins(std::size_t value) { raw.max_bins = value; return *this; }
    options &paper_code_limit() { raw.sweep_limit = TCE_SWEEP_LIMIT_PAPER_CODE; return *this; }
};

namespace detail {
struct histogram_deleter {
    void operator()(tce_ew_histogram *h) const noexcept { tce_ew_histogram_free(h); }
};
struct buffer_deleter {
    void operator()(tce_sorted_buffer *b) const noexcept { tce_sorted_buffer_free(b); }
};
}  // namespace detail

/// The streaming equal-width histogram.
class histogram {
  public:
    explicit histogram(std::size_t bins, tce_closure closure = TCE_CLOSURE_LEFT) {
        tce_ew_histogram *h = nullptr;
        check(tce_ew_histogram_new(bins, closure, &h));
        state_.reset(h);
    }
    void push(double score, std::uint8_t label) { check(tce_ew_histogram_push(state_.get(), score, label)); }
    void push(const std::vector<double> &scores, const std::vector<std::uint8_t> &labels) {
        check(tce_ew_histogram_push_batch(state_.get(), scores.data(), scores.size(), labels.data(), labels.size()));
    }
    void merge(const histogram &other) { check(tce_ew_histogram_merge(state_.get(), other.state_.get())); }
    void reset() { check(tce_ew_histogram_reset(state_.get())); }
    std::uint64_t samples() const {
        std::uint64_t n = 0;
        check(tce_ew_histogram_samples(state_.get(), &n));
        return n;
    }
    std::size_t bins() const {
        std::size_t n = 0;
        check(tce_ew_histogram_bin_count(state_.get(), &n));
        return n;
    }
    tce_estimate ece_bin(double p = 2.0) const { return get(tce_ew_histogram_ece_bin, p); }
    tce_estimate ece_debias(double p = 2.0) const { return get(tce_ew_histogram_ece_debias, p); }
    tce_estimate mce() const {
        tce_estimate e{};
        check(tce_ew_histogram_mce(state_.get(), &e));
        return e;
    }
    std::vector<tce_bin_stats> bin_stats() const {
        std::vector<tce_bin_stats> out(bins());
        check(tce_ew_histogram_bin_stats(state_.get(), out.data(), out.size()));
        return out;
    }
    tce_ew_histogram *get() noexcept { return state_.get(); }

  private:
    template <typename F>
    tce_estimate get(F f, double p) const {
        tce_estimate e{};
        check(f(state_.get(), p, &e));
        return e;
    }
    std::unique_ptr<tce_ew_histogram, detail::histogram_deleter> state_;
};

/// The sorted buffer (equal-mass bins, the sweep).
class sorted_buffer {
  public:
    explicit sorted_buffer(std::size_t capacity) {
        tce_sorted_buffer *b = nullptr;
        check(tce_sorted_buffer_new(capacity, &b));
        state_.reset(b);
    }
    void push(double score, std::uint8_t label) { check(tce_sorted_buffer_push(state_.get(), score, label)); }
    void push(const std::vector<double> &scores, const std::vector<std::uint8_t> &labels) {
        check(tce_sorted_buffer_push_batch(state_.get(), scores.data(), scores.size(), labels.data(), labels.size()));
    }
    void merge(const sorted_buffer &other) { check(tce_sorted_buffer_merge(state_.get(), other.state_.get())); }
    void clear() { check(tce_sorted_buffer_clear(state_.get())); }
    /* Sorts now, on two threads for 2^17 samples or more (see tce_sorted_buffer_sort_parallel). */
    void sort_parallel() { check(tce_sorted_buffer_sort_parallel(state_.get())); }
    std::size_t size() const {
        std::size_t n = 0;
        check(tce_sorted_buffer_len(state_.get(), &n));
        return n;
    }
    tce_estimate ece_bin(const options &o = options()) { return get(tce_sorted_buffer_ece_bin, o); }
    tce_estimate mce(const options &o = options()) { return get(tce_sorted_buffer_mce, o); }
    tce_estimate ece_debias(const options &o = options()) { return get(tce_sorted_buffer_ece_debias, o); }
    tce_estimate ece_sweep(const options &o = options()) { return get(tce_sorted_buffer_ece_sweep, o); }
    std::vector<tce_bin_stats> bin_stats(const options &o = options()) {
        std::vector<tce_bin_stats> out(o.raw.bins);
        check(tce_sorted_buffer_bin_stats(state_.get(), &o.raw, out.data(), out.size()));
        return out;
    }

  private:
    template <typename F>
    tce_estimate get(F f, const options &o) {
        tce_estimate e{};
        check(f(state_.get(), &o.raw, &e));
        return e;
    }
    std::unique_ptr<tce_sorted_buffer, detail::buffer_deleter> state_;
};

/// One call over arrays: ECE_bin (scratch allocated here with std::vector).
inline tce_estimate ece_bin(const std::vector<double> &scores, const std::vector<std::uint8_t> &labels,
                            const options &o = options()) {
    std::size_t size = 0, align = 0;
    check(tce_scratch_layout(scores.empty() ? 1 : scores.size(), &size, &align));
    // std::vector<max_align_t> storage is aligned for every state.
    std::vector<std::max_align_t> scratch(size / sizeof(std::max_align_t) + 1);
    tce_estimate e{};
    check(tce_ece_bin(scores.data(), scores.size(), labels.data(), labels.size(), &o.raw, scratch.data(),
                      scratch.size() * sizeof(std::max_align_t), &e));
    return e;
}

}  // namespace tce

#endif  // TCE_HPP
