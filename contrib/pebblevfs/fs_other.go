//go:build !linux

package pebblevfs

import (
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/diskio-go/diskio"
)

// New returns vfs.Default: outside Linux a diskio File is an os.File, and
// Pebble's own FS already does with it everything this package would.
func New(opts ...diskio.Option) vfs.FS { return vfs.Default }

// NewMode returns vfs.Default, as New does.
func NewMode(m Mode, opts ...diskio.Option) vfs.FS { return vfs.Default }
