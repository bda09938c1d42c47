//go:build !linux

package crash

import (
	"errors"
	"net/netip"
	"os"
)

var errNoTCP = errors.New("crash: the diskchecker needs Linux")

// Listener accepts diskchecker clients (Linux only).
type Listener struct{}

// Listen fails: the diskchecker's TCP is written for Linux.
func Listen(addr string) (*Listener, error) { return nil, errNoTCP }

// Addr is the address the listener is bound to.
func (l *Listener) Addr() netip.AddrPort { return netip.AddrPort{} }

// Accept fails.
func (l *Listener) Accept() (*os.File, error) { return nil, errNoTCP }

// Close does nothing.
func (l *Listener) Close() error { return nil }

func dial(addr string) (*os.File, error) { return nil, errNoTCP }
