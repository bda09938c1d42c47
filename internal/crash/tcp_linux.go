package crash

import (
	"fmt"
	"net/netip"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The diskchecker's TCP is x/sys/unix sockets on the runtime's poller
// (os.NewFile of a non-blocking socket), not package net. Wherever a C
// compiler is installed, net links its cgo resolver, and a binary with cgo
// starts the runtime's template thread at init: one OS thread more in
// every testbench run, where the thread count is a result. So addresses
// are numeric (ip:port, or :port to listen on every address); host names
// other than localhost are not resolved.

// Listener accepts diskchecker clients.
type Listener struct {
	f    *os.File
	addr netip.AddrPort
}

// Listen listens on addr, "ip:port" or ":port" (every IPv4 address);
// port 0 picks a free one (see Addr).
func Listen(addr string) (*Listener, error) {
	ap, err := parseAddr(addr, true)
	if err != nil {
		return nil, err
	}
	fd, err := socket(ap)
	if err != nil {
		return nil, err
	}
	if err := listen(fd, ap); err != nil {
		unix.Close(fd)
		return nil, &os.SyscallError{Syscall: "listen " + addr, Err: err}
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("getsockname", err)
	}
	l := &Listener{f: os.NewFile(uintptr(fd), "tcp "+addr), addr: addrPort(sa)}
	return l, nil
}

func listen(fd int, ap netip.AddrPort) error {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return err
	}
	if err := unix.Bind(fd, sockaddr(ap)); err != nil {
		return err
	}
	return unix.Listen(fd, unix.SOMAXCONN)
}

// Addr is the address the listener is bound to.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// Accept waits for the next client, in the poller (holding no thread).
func (l *Listener) Accept() (*os.File, error) {
	rc, err := l.f.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd, aerr := -1, error(nil)
	err = rc.Read(func(fd uintptr) bool {
		for {
			nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			if aerr != unix.EINTR && aerr != unix.ECONNABORTED {
				return aerr != unix.EAGAIN
			}
		}
	})
	if err == nil {
		err = aerr
	}
	if err != nil {
		return nil, &os.SyscallError{Syscall: "accept", Err: err}
	}
	return os.NewFile(uintptr(nfd), "tcp "+l.addr.String()), nil
}

// Close stops the listener; a blocked Accept returns an error.
func (l *Listener) Close() error { return l.f.Close() }

// dial connects to addr ("ip:port").
func dial(addr string) (*os.File, error) {
	ap, err := parseAddr(addr, false)
	if err != nil {
		return nil, err
	}
	fd, err := socket(ap)
	if err != nil {
		return nil, err
	}
	// In the poller before connect, which runs inside RawWrite: its
	// readiness reset comes first, so the connection's EPOLLOUT cannot
	// be lost between connect and the wait.
	f := os.NewFile(uintptr(fd), "tcp "+addr)
	if err := connect(f, sockaddr(ap)); err != nil {
		f.Close()
		return nil, &os.SyscallError{Syscall: "connect " + addr, Err: err}
	}
	return f, nil
}

// connect connects f's socket to sa without blocking a thread: connect
// says EINPROGRESS, the poller waits for the socket to become writable,
// and SO_ERROR says how it went (as package net does).
func connect(f *os.File, sa unix.Sockaddr) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	started := false
	var cerr error
	err = rc.Write(func(fd uintptr) bool {
		if !started {
			started = true
			cerr = unix.Connect(int(fd), sa)
			return cerr != unix.EINPROGRESS && cerr != unix.EINTR
		}
		n, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		switch {
		case err != nil:
			cerr = err
		case n == int(unix.EINPROGRESS) || n == int(unix.EALREADY) || n == int(unix.EINTR):
			return false
		case n != 0:
			cerr = unix.Errno(n)
		default:
			cerr = nil
		}
		return true
	})
	if err != nil {
		return err
	}
	return cerr
}

func socket(ap netip.AddrPort) (int, error) {
	family := unix.AF_INET
	if ap.Addr().Is6() {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	return fd, nil
}

// parseAddr parses "ip:port", "localhost:port", and, to listen, ":port".
func parseAddr(addr string, listening bool) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(addr, ":")
	if ok && !strings.Contains(port, ":") {
		switch {
		case host == "" && listening:
			addr = "0.0.0.0:" + port
		case host == "localhost":
			addr = "127.0.0.1:" + port
		}
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return ap, fmt.Errorf("crash: address %q: want ip:port (host names are not resolved): %v", addr, err)
	}
	return ap, nil
}

func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

func addrPort(sa unix.Sockaddr) netip.AddrPort {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), uint16(sa.Port))
	}
	return netip.AddrPort{}
}
