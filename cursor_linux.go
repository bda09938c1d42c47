//go:build linux

package diskio

import (
	"sync"
	"sync/atomic"
)

// cursor is a File's offset for Read, Write and Seek. They change it
// holding mu, which serialises them as the kernel's f_pos_lock does for
// regular files; WriteTo and ReadFrom, which must not hold mu while the
// other side runs (it may be this File), read pos before and set it
// after.
type cursor struct {
	mu  sync.Mutex
	pos atomic.Int64
}
