package crash

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The diskchecker's sockets: a line crosses loopback, a refused connect
// reports ECONNREFUSED, names other than localhost are refused with the reason, and Close ends
// a blocked Accept.
func TestTCP(t *testing.T) {
	ln, err := Listen("localhost:0")
	require.NoError(t, err)
	require.NotZero(t, ln.Addr().Port())
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	c, err := dial(ln.Addr().String())
	require.NoError(t, err)
	_, err = c.Write([]byte("ack 7\n"))
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Equal(t, "ack 7\n", <-got)

	port := ln.Addr().Port()
	accepted := make(chan error, 1)
	go func() { _, err := ln.Accept(); accepted <- err }()
	require.NoError(t, ln.Close())
	require.Error(t, <-accepted)

	_, err = dial(ln.Addr().String())
	require.ErrorIs(t, err, unix.ECONNREFUSED, "port %d is closed", port)
	_, err = dial("example.com:80")
	require.ErrorContains(t, err, "host names are not resolved")
	_, err = Listen("nonsense")
	require.ErrorContains(t, err, "want ip:port")
}
