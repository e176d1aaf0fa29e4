#ifndef CCRELAY_FUZZER_DRIVER_H
#define CCRELAY_FUZZER_DRIVER_H
/* libFuzzer's entry for programs with a main of their own (SwiftPM gives
   every executable one): runs the fuzzing loop with `callback`. */
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
#endif
