//! Helpers of the fuzz targets: structure-aware frames and the properties every decoder
//! must keep.

pub mod decoders;
pub mod frames;
