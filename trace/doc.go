// Package trace will be diskio's in-memory tracer: fixed-size records of
// every system call and request state change, written without locks or
// allocation, exported to pprof, Perfetto and text summaries.
//
// It is not written yet (it is the tracer issue); the scheduler's hooks it
// will attach to come first. This file only reserves the package in the
// module layout.
package trace
