//go:build linux

package diskio

import (
	"io/fs"

	"github.com/diskio-go/diskio/sched"
)

// withOptions applies what the options say to a newly opened f: its
// requests' class (WithClass). It closes f and fails when the scheduler
// refuses the class.
func withOptions(f *File, err error, o options) (*File, error) {
	if err != nil {
		return f, err
	}
	c := o.class
	if c == sched.Unclassified {
		return f, nil
	}
	for _, h := range []*sched.File{f.handle, f.bf} {
		if err := h.SetClass(c); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "open", Path: f.name, Err: err}
		}
	}
	return f, nil
}
