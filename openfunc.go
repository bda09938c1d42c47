package diskio

import (
	"io/fs"
	"slices"
)

// OpenFileFunc returns a function with exactly os.OpenFile's parameters
// that opens files as OpenFile(name, flag, perm, opts...) does. OpenFile
// itself is variadic, so it cannot be stored where a program keeps
// os.OpenFile as a value (a hook of type func(string, int, os.FileMode)
// (*File, error), as in bbolt's Options.OpenFile); the function returned
// can.
//
// The options are copied: changing the caller's slice later changes
// nothing. As for OpenFile, the defaults that SetDefaultOptions sets at
// the time of each call apply first, then opts.
func OpenFileFunc(opts ...Option) func(name string, flag int, perm fs.FileMode) (*File, error) {
	opts = slices.Clone(opts)
	return func(name string, flag int, perm fs.FileMode) (*File, error) {
		return OpenFile(name, flag, perm, opts...)
	}
}
