package docscheck

import (
	"strings"
	"testing"
)

// The check resolves what the code declares and refuses what it does
// not: each pair below differs by one name.
func TestCheckResolves(t *testing.T) {
	ix := loadIndex(t)
	cases := []struct {
		text string
		ok   bool
	}{
		{"`do`", true},
		{"`prep`", false},
		{"`prepare`", true},
		{"`sched.File.ReadAtNowait`", true},
		{"`sched.File.ReadAtNoWait`", false},
		{"`sched.Latency`", true},
		{"`sched.Latent`", false},
		{"`Options.Spin`", true},
		{"`Options.Spun`", false},
		{"`kernelCaller.call`", true},
		{"`kernelCaller.cal`", false},
		{"`(*os.File).ReadAt`", true},
		{"`(*os.File).ReadAtNowait`", false},
		{"`runtime.ready`", true},
		{"`runtime.readied`", false},
		{"`os/signal.Notify`", true},
		{"`os/signal.Notified`", false},
		{"`WithDirect(Direct)`", true},
		{"`WithDirect(Indirect)`", false},
		{"`preadv2(RWF_NOWAIT)`", true},
		{"`preadv3(RWF_NOWAIT)`", false},
		{"`IORING_OP_READ`", true},
		{"`DISKIO_BACKEND`", true},
		{"`DISKIO_BACKENDS`", false},
		{"`BenchmarkNop`", true},
		{"`BenchmarkNope`", false},
		{"`sched/io_linux.go`", true},
		{"`sched/io_other.go`", false},
		{"`internal/sys/sys_linux.go`", true},
		{"`internal/poll`", true},
		{"`cmd/raftbench`", true},
		{"`github.com/diskio-go/diskio/sched`", true},
		{"`github.com/diskio-go/diskio/schedule`", false},
		{"`golang.org/x/sys`", true},
		{"`advise*.go`", true},
		{"`advice*.go`", false},
		{"`go run ./cmd/testbench -info`", true},
		{"`go run ./cmd/testbench -infos`", false},
		{"`go run ./cmd/testbed -info`", false},
		{"`tb -preset dropin -rounds 5`", true},
		{"`GOMAXPROCS=1`", true},
		{"`fatal error: thread exhaustion`", true},
		{"### `sched`: the scheduler\n\n| `io_linux.go` |", true},
		{"### `sched`: the scheduler\n\n| `read_linux.go` |", false},
		{"### `diskio` (the root)\n\n| `read_linux.go` |", true},
		{"```\n`prep`\n```", true},
		{"`go test ./...`", true},
		{"`\"direct-required\"`", true},
		{"`\"direct-requires\"`", false},
		{"`go test ./sched/...`", true},
		{"`go test ./schedule/...`", false},
	}
	for _, c := range cases {
		ps := ix.CheckText("docs/x.md", c.text)
		if got := len(ps) == 0; got != c.ok {
			t.Errorf("%q: resolved %v, want %v (%v)", c.text, got, c.ok, ps)
		}
	}
}

func TestCheckLinks(t *testing.T) {
	ix := loadIndex(t)
	for text, ok := range map[string]bool{
		"[d](design.md)":                   true,
		"[d](design.md#the-problem)":       true,
		"[d](designs.md)":                  false,
		"[r](../README.md)":                true,
		"[w](https://example.com/x.md)":    true,
		"`[d](designs.md)` is quoted code": true,
	} {
		ps := ix.CheckLinks("docs/x.md", text)
		if got := len(ps) == 0; got != ok {
			t.Errorf("%q: resolved %v, want %v (%v)", text, got, ok, ps)
		}
	}
}

// A problem names its document, line and text.
func TestProblemLine(t *testing.T) {
	ix := loadIndex(t)
	ps := ix.CheckText("docs/x.md", "one\n\ntwo `prep`\n")
	if len(ps) != 1 || ps[0].Line != 3 || !strings.Contains(ps[0].String(), "docs/x.md:3: `prep`") {
		t.Fatalf("got %v", ps)
	}
}

// A section that names one file of its package leaves the others unlisted.
func TestUnlisted(t *testing.T) {
	ix := loadIndex(t)
	ps := ix.Unlisted("docs/x.md", "### `sched`\n\n| `io_linux.go` | `do` |\n")
	var files, pkgs int
	for _, p := range ps {
		switch {
		case p.Text == "sched/io_linux.go":
			t.Errorf("named, yet %v", p)
		case strings.HasPrefix(p.Text, "sched/"):
			files++
		case p.Text == "uring":
			pkgs++
		}
	}
	if files == 0 || pkgs != 1 {
		t.Errorf("%d of sched's files and %d of package uring unlisted, want some and 1: %v", files, pkgs, ps)
	}
}
