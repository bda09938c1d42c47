// Package sys holds the system calls that package diskio, package sched,
// internal/dio and the contrib adapters (their own modules, under this
// module's path) make on files, each written once: thin, typed wrappers named as
// the kernel names them, in the style of golang.org/x/sys/unix (which
// they call, or, on the page-cache paths, syscall.Syscall6 directly).
// The io_uring and Linux AIO calls are not here: they are packages uring
// and aio.
//
// Every wrapper states its contract in its doc comment. They share these
// rules:
//
//   - EINTR is retried, as Go's internal/poll retries it (ignoringEINTR):
//     a call interrupted by a signal (the runtime's own preemption
//     signals included) is made again, with the same arguments, until it
//     returns something else. The runtime installs its handlers with
//     SA_RESTART, so the kernel restarts most of these calls itself; EINTR
//     still comes back where it does not (a FUSE or network filesystem, a
//     call the kernel does not restart). A caller never sees EINTR. The
//     one exception is Close: see its comment.
//   - An error is returned bare: nil or a syscall.Errno (the kernel's
//     errno, comparable with ==), never wrapped. Wrapping happens once,
//     at the API edge (package diskio's fs.PathError and IOError; package
//     sched hands its callers the bare errno too).
//   - A count is the kernel's: a read or write may transfer less than
//     asked (end of file, a signal after some bytes, a full disk), and
//     the wrapper reports that n as it is, without continuing. With an
//     error, n is 0. The callers that must continue a short transfer do
//     so themselves.
//   - EAGAIN is returned. On a regular file it means a descriptor in
//     non-blocking mode, a resource the kernel is short of for a moment,
//     or (with RWF_NOWAIT) that the call would have waited; a caller that
//     retries it retries at most AgainLimit times.
//   - A raw call (RawPreadv2, RawWrite) enters the kernel without telling
//     the runtime (syscall.RawSyscall6: no entersyscall, so the runtime
//     never hands the caller's P to another thread while it runs). It is
//     only for a short call that does not wait for a disk or a lock: each
//     raw wrapper says which, and enforces what it can (RawPreadv2 always
//     sets RWF_NOWAIT). Everything else is an ordinary call, which the
//     runtime accounts as a system call.
package sys
