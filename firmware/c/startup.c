/* The C firmware's start-up code for QEMU's mps2-an386 (Cortex-M4F), as a device vendor
 * writes it: a vector table, a reset handler that enables the FPU (the firmware is built
 * with -mfloat-abi=hard, so the first floating-point instruction would fault without
 * it), copies .data, clears .bss, opens newlib's semihosting stdio (librdimon) and runs
 * main. Built with -nostartfiles: newlib's crt0 would take the stack from the debugger
 * and has no vector table. */
#include <stdint.h>
#include <stdlib.h>

extern uint32_t _stack_top, _data_start, _data_end, _data_load, _bss_start, _bss_end;
extern int main(void);
/* librdimon: sets up stdin/stdout/stderr over semihosting (crt0 would call it). */
extern void initialise_monitor_handles(void);

void reset_handler(void);
void fault_handler(void);

/* Any fault ends the emulation with a failure status (semihosting SYS_EXIT with
 * ADP_Stopped_RunTimeError), so the host test fails at once instead of timing out. */
void fault_handler(void) {
    __asm volatile("mov r0, #0x18\n"
                   "ldr r1, =0x20023\n"
                   "bkpt 0xab\n");
    for (;;) {
    }
}

/* Initial SP, reset, NMI, HardFault, MemManage, BusFault, UsageFault; the rest of the
 * 16 system entries are reserved or unused here (no interrupts are enabled). Addresses
 * as integers: ISO C has no conversion between the stack's object pointer and the
 * handlers' function pointers. */
__attribute__((section(".vectors"), used)) static const uintptr_t vectors[16] = {
    (uintptr_t)&_stack_top,    (uintptr_t)reset_handler, (uintptr_t)fault_handler,
    (uintptr_t)fault_handler, (uintptr_t)fault_handler, (uintptr_t)fault_handler,
    (uintptr_t)fault_handler,
};

void reset_handler(void) {
    /* CPACR: full access to CP10 and CP11, the FPU. */
    volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
    *cpacr |= 0xFu << 20;
    __asm volatile("dsb\n"
                   "isb\n");
    for (uint32_t *src = &_data_load, *dst = &_data_start; dst < &_data_end;) {
        *dst++ = *src++;
    }
    for (uint32_t *dst = &_bss_start; dst < &_bss_end;) {
        *dst++ = 0;
    }
    initialise_monitor_handles();
    exit(main());
}

/* newlib's exit() runs __libc_fini_array, which calls _fini; crti.o would define it
 * (and _init), but -nostartfiles leaves crti.o out. Nothing needs either here. */
void _init(void);
void _fini(void);
void _init(void) {
}
void _fini(void) {
}
