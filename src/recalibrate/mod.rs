//! Recalibration (placeholder).
