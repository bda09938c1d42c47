//go:build linux

package sched

import (
	"debug/elf"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A census says what each OS thread of the process is doing, from
// /proc/self/task/<tid>/{comm,stat,syscall}: io_uring's workers by name,
// threads in a system call by the call's name, and the Go runtime's own
// sleepers by the futex they wait on (sysmon on runtime.sched's
// sysmonnote, the template thread on runtime.newmHandoff, m0 on its park
// note, other idle Ms on theirs).
type census map[string]int

func (c census) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s", c[k], k)
	}
	return b.String()
}

func (c census) total() (n int) {
	for _, v := range c {
		n += v
	}
	return n
}

var sysNames = map[int]string{
	0: "read", 1: "write", 17: "pread64", 18: "pwrite64", 24: "sched_yield",
	35: "sysmon (nanosleep)", 74: "fsync", 75: "fdatasync", 202: "futex",
	208: "the loop (io_getevents)", 209: "io_submit", 230: "clock_nanosleep",
	257: "openat", 281: "epoll_pwait", 285: "fallocate", 426: "the loop (io_uring_enter)",
}

type symRange struct {
	name   string
	lo, hi uint64
}

var runtimeSyms = sync.OnceValue(func() []symRange {
	f, err := elf.Open("/proc/self/exe")
	if err != nil {
		return nil
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil
	}
	// A position-independent binary is loaded at an offset: a
	// function's address against its symbol gives it.
	self := uint64(reflect.ValueOf(census.total).Pointer())
	var slide uint64
	var out []symRange
	for _, s := range syms {
		switch s.Name {
		case "github.com/diskio-go/diskio/sched.census.total":
			slide = self - s.Value
		case "runtime.sched":
			out = append(out, symRange{"sysmon (runtime.sched)", s.Value, s.Value + s.Size})
		case "runtime.newmHandoff":
			out = append(out, symRange{"template thread", s.Value, s.Value + s.Size})
		case "runtime.m0":
			out = append(out, symRange{"m0 idle", s.Value, s.Value + s.Size})
		}
	}
	for i := range out {
		out[i].lo += slide
		out[i].hi += slide
	}
	return out
})

func takeCensus() census {
	c := census{}
	self := strconv.Itoa(unix.Gettid())
	ents, _ := os.ReadDir("/proc/self/task")
	for _, e := range ents {
		dir := "/proc/self/task/" + e.Name() + "/"
		comm, err := os.ReadFile(dir + "comm")
		if err != nil {
			continue // exited
		}
		if strings.HasPrefix(string(comm), "iou-wrk-") {
			c["iou-wrk"]++
			continue
		}
		if strings.HasPrefix(string(comm), "iou-") {
			c[strings.TrimSpace(string(comm))]++
			continue
		}
		if e.Name() == self {
			c["the census"]++
			continue
		}
		sc, _ := os.ReadFile(dir + "syscall")
		f := strings.Fields(string(sc))
		if len(f) == 0 || f[0] == "running" {
			c["running"]++
			continue
		}
		nr, _ := strconv.Atoi(f[0])
		name, ok := sysNames[nr]
		if !ok {
			name = "syscall " + f[0]
		}
		if nr == 202 && len(f) > 1 {
			addr, _ := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
			name = "idle M (futex)"
			for _, s := range runtimeSyms() {
				if addr >= s.lo && addr < s.hi {
					name = s.name
				}
			}
		}
		c[name]++
	}
	return c
}
