// Package bench holds the measurement helpers diskio's benchmarks and the
// testbench share: a peak OS-thread sampler, process CPU time, heap
// allocation counts, a cheap per-goroutine offset generator, a latency
// histogram with percentiles, and the data file's fill and page-cache
// eviction. It imports no package testing, so the testbench links none.
//
// Everything here is built to cost far less than the I/O it measures:
// recording a latency is one bucket count under a mutex, the offset
// generator is three shifts, and the thread count is sampled by one
// background goroutine rather than on the I/O path.
package bench
