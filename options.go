package diskio

// DirectMode says whether a File uses O_DIRECT.
type DirectMode int

const (
	// DirectAuto uses O_DIRECT where the filesystem supports it and
	// buffered I/O elsewhere (File.Direct says which).
	DirectAuto DirectMode = iota
	// DirectRequired fails OpenFile where O_DIRECT is not supported.
	DirectRequired
	// DirectOff always uses buffered I/O (still through the scheduler).
	DirectOff
)

// Option configures OpenFile.
type Option func(*options)

type options struct {
	direct DirectMode
	platformOptions
}

// WithDirect sets the direct-I/O mode (default DirectAuto).
func WithDirect(m DirectMode) Option { return func(o *options) { o.direct = m } }
