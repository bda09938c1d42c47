package diskio

// DirectMode says whether a File uses O_DIRECT.
type DirectMode int

const (
	// DirectAuto uses O_DIRECT where the filesystem supports it and
	// buffered I/O elsewhere (File.Direct says which). For engines that
	// cache their own blocks.
	DirectAuto DirectMode = iota
	// DirectRequired fails OpenFile where O_DIRECT is not supported.
	DirectRequired
	// PageCache opens the file buffered, through the kernel's page cache,
	// for programs that rely on it (re-read files, the kernel's
	// read-ahead). A read first copies from the page cache on the
	// caller's goroutine (preadv2 with RWF_NOWAIT: it never waits for the
	// disk, so it blocks no thread); only what is not cached goes to the
	// scheduler. Writes likewise where the filesystem allows RWF_NOWAIT
	// writes (File.Nowait says). Misses want the uring backend: Linux
	// AIO is synchronous for buffered files, so there they hold up the
	// scheduler's io_submit. See the package doc for when to choose it
	// over DirectAuto.
	PageCache
	// DirectOff is PageCache's former name.
	DirectOff = PageCache
)

// Option configures OpenFile.
type Option func(*options)

type options struct {
	direct DirectMode
	platformOptions
}

// WithDirect sets the direct-I/O mode (default DirectAuto).
func WithDirect(m DirectMode) Option { return func(o *options) { o.direct = m } }
