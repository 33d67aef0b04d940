#![no_std] #![no_main] use cortex_m_rt::entry; use tce_firmware::*; #[entry] fn main() -> ! { let mut out = Out::new(); data_line(&mut out); exit_success() }
