// Package aio is a thin, typed wrapper of Linux native asynchronous I/O
// (io_setup, io_submit, io_getevents, io_cancel, io_destroy), written in pure
// Go over golang.org/x/sys/unix in the style of that package: the kernel's
// structures (struct iocb, struct io_event, struct aio_ring) are laid out
// exactly as the kernel declares them and the constants keep their kernel
// names (IOCB_CMD_PREAD, IOCB_FLAG_RESFD, RWF_DSYNC).
//
// # When AIO is asynchronous
//
// Linux AIO is only asynchronous for files opened with O_DIRECT (and block
// devices). On a buffered file io_submit performs the I/O itself and returns
// only when it is done, which is exactly the cost this library exists to
// avoid. O_DIRECT requires the file offset, the length and the buffer
// address to be multiples of the device's logical block size (see DIOAlign);
// a misaligned request fails with EINVAL, which ExplainEINVAL turns into an
// error that says so.
//
// # Memory
//
// A request keeps using its buffer after io_submit returns, until its
// completion event has been reaped. The Go runtime must not move or free that
// memory meanwhile, so buffers must live outside the Go heap (mapped with
// unix.Mmap, which also gives page alignment for O_DIRECT) or be pinned with
// runtime.Pinner for the whole time the request is in flight. The kernel
// copies the IOCB itself, and for vectored requests the iovec array, during
// io_submit; only the data buffers must outlive the call. Addresses are stored
// in the IOCB as uint64, as the kernel stores them, so the garbage collector
// does not see them: keeping the memory alive is the caller's job.
//
// # Submitting
//
// Context.Submit returns how many IOCBs the kernel accepted. That can be fewer
// than were passed (the context ran out of request slots, or a later IOCB was
// invalid): the caller resubmits the rest, after reaping completions if the
// context is full. An error is returned only when not even the first IOCB was
// accepted; EAGAIN then means "reap completions and try again".
//
// # Completions
//
// The context handle returned by io_setup is the address of the completion
// ring the kernel maps into the process (struct aio_ring). When its magic
// number and feature flags are the ones this package understands,
// Context.Reap and Context.Wait take completed events straight from that ring
// in user space, without a system call, as libaio and Seastar do; otherwise
// they fall back to io_getevents. Context.GetEvents always calls
// io_getevents. IOEvent.Result turns an event's res into a byte count or a
// syscall.Errno.
//
// Only one goroutine may consume completions (Reap, Wait, GetEvents) at a
// time: the ring's head is advanced without a lock. Submit and Cancel may be
// called from any goroutine, concurrently with a reaper.
//
// The package is Linux only; on other systems it contains only this comment.
package aio
