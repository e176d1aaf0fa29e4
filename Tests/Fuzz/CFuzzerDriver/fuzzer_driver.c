/* The declaration in include/fuzzer_driver.h is libFuzzer's; this target only carries it. */
