// Package seccomp refuses system calls with a seccomp filter, as a
// container's seccomp profile does, so that tests and the testbench can
// run where io_uring, or io_uring and Linux AIO, are refused for real.
//
// Docker's and containerd's default profiles refuse io_uring_setup,
// io_uring_enter and io_uring_register with EPERM (moby#46762,
// containerd#9320; the profile's defaultErrnoRet is 1) and allow the AIO
// calls. Install with URing makes this process see the same; URing|AIO
// also refuses io_setup and the rest of the AIO family, as a stricter
// profile would. The filter is a classic BPF program (no cgo, no
// libseccomp) installed on every thread of the process
// (SECCOMP_FILTER_FLAG_TSYNC) and inherited by the threads and the child
// processes made after it. It cannot be removed: install it in a process
// that is to run under it from start to end (a test binary's TestMain, a
// child process).
package seccomp
