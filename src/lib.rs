#![cfg_attr(not(feature = "std"), no_std)]

#[cfg(feature = "std")]
pub mod kde;
#[cfg(feature = "std")]
pub mod sim;
