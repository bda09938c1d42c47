package diskio

import "sync/atomic"

// DirectMode says whether a File uses O_DIRECT.
type DirectMode int

const (
	// PageCache, the default, opens the file buffered, through the
	// kernel's page cache, as os.File does: re-reads are memory copies,
	// the kernel reads ahead, and writes are copies into the cache. What
	// the cache holds is read and written on the caller's goroutine, as
	// os.File would; only what may wait for the disk (a read of pages
	// not cached, a write that must read a page in, a sync) goes to the
	// scheduler, so no OS thread is ever parked on the disk. Misses want
	// the uring backend: Linux AIO is synchronous for buffered files.
	PageCache DirectMode = iota
	// Direct uses O_DIRECT where the filesystem supports it and the page
	// cache elsewhere (File.Direct says which): for engines that cache
	// their own blocks and read at random from many goroutines. See the
	// package doc for when it wins.
	Direct
	// DirectRequired is Direct, but OpenFile fails where O_DIRECT is not
	// supported.
	DirectRequired
)

// Option configures OpenFile.
type Option func(*options)

type options struct {
	direct DirectMode
	platformOptions
}

// WithDirect sets the direct-I/O mode (default PageCache, or what
// SetDefaultOptions set).
func WithDirect(m DirectMode) Option { return func(o *options) { o.direct = m } }

// defaults are the options every OpenFile starts from (SetDefaultOptions).
var defaults atomic.Pointer[[]Option]

// SetDefaultOptions sets the options every later OpenFile, Open, Create,
// NewFile, ReadFile and WriteFile starts from, before its own: a program
// that wants O_DIRECT everywhere says SetDefaultOptions(WithDirect(Direct))
// once, at start-up. Files already open keep theirs. Calling it again
// replaces the previous defaults; with no options it restores the
// package's (PageCache, the default scheduler).
func SetDefaultOptions(opts ...Option) {
	o := append([]Option(nil), opts...)
	defaults.Store(&o)
}

// applyOptions returns the defaults with opts applied over them.
func applyOptions(opts []Option) options {
	var o options
	if d := defaults.Load(); d != nil {
		for _, opt := range *d {
			if opt != nil {
				opt(&o)
			}
		}
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}
