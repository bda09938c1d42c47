//go:build linux

package diskio

import (
	"io/fs"

	"github.com/diskio-go/diskio/sched"
)

// withClass names f's descriptors in its scheduler (for slow-request
// reports) and gives their requests class c (WithClass). It closes f and
// fails when the scheduler refuses the class.
func withOptions(f *File, err error, o options) (*File, error) {
	if err != nil {
		return f, err
	}
	c := o.class
	f.sl.SetName(f.iofd, f.name)
	if f.bfd != f.iofd {
		f.sl.SetName(f.bfd, f.name)
	}
	if c == sched.Unclassified {
		return f, nil
	}
	for _, fd := range []int{f.iofd, f.bfd} {
		if err := f.s.SetClass(fd, c); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "open", Path: f.name, Err: err}
		}
	}
	f.class = c
	return f, nil
}

// clearClass takes f's name and class off its descriptors before they are
// closed: their numbers may be reused by other files.
func (f *File) clearClass() {
	f.sl.SetName(f.iofd, "")
	if f.bfd != f.iofd {
		f.sl.SetName(f.bfd, "")
	}
	if f.class != sched.Unclassified {
		f.s.SetClass(f.iofd, sched.Unclassified)
		f.s.SetClass(f.bfd, sched.Unclassified)
	}
}
