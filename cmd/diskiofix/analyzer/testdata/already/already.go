// Package already uses diskio: what a run of -fix left. A second run
// finds nothing to move and leaves the file as it is.
package already

import (
	"os"

	dio "github.com/diskio-go/diskio"
)

type seg struct{ f *dio.File }

func open(name string) (*seg, error) {
	f, err := dio.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &seg{f: f}, nil
}

func another(name string) (*os.File, error) {
	return os.Open(name) // want `os.Open can be dio.Open`
}
