//! Feature `panic-handler` without `std`: a `#[panic_handler]` for bare-metal staticlibs,
//! which need one in the final link and may not have another. It halts the core (spins
//! forever); a watchdog, if the device has one, then resets it. See `boundary.rs` for why
//! no panic is expected to reach it.

#[panic_handler]
fn halt(_info: &core::panic::PanicInfo<'_>) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
