//go:build linux

package diskio

import (
	"io/fs"

	"github.com/diskio-go/diskio/sched"
)

// withClass gives the requests on f's descriptors class c (WithClass). It
// closes f and fails when the scheduler refuses the class.
func withClass(f *File, err error, c sched.Class) (*File, error) {
	if err != nil || c == sched.Unclassified {
		return f, err
	}
	for _, fd := range []int{f.fd, f.bfd} {
		if err := f.s.SetClass(fd, c); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "open", Path: f.name, Err: err}
		}
	}
	f.class = c
	return f, nil
}

// clearClass takes f's class off its descriptors before they are closed:
// their numbers may be reused by files of another class.
func (f *File) clearClass() {
	if f.class != sched.Unclassified {
		f.s.SetClass(f.fd, sched.Unclassified)
		f.s.SetClass(f.bfd, sched.Unclassified)
	}
}
