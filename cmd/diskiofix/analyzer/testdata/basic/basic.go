// Package basic opens files whose every use a *diskio.File serves.
package basic

import (
	"bufio"
	"io"
	"io/ioutil"
	"os"
)

func count(name string) (int, error) {
	f, err := os.Open(name) // want `os.Open can be diskio.Open: the file stays within what \*diskio.File serves \(the fix moves the package's 5 opens\)`
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}

func copyTo(dst, src string) error {
	in, err := os.Open(src) // want `os.Open can be diskio.Open \(moved by the fix at basic.go:12:12\)`
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644) // want `os.OpenFile can be diskio.OpenFile \(moved`
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func scratch(dir string) (string, error) {
	f, err := ioutil.TempFile(dir, "scratch") // want `ioutil.TempFile can be diskio.CreateTemp \(moved`
	if err != nil {
		return "", err
	}
	defer f.Close()
	var w io.Writer = f
	_, err = w.Write([]byte("x"))
	g, err2 := os.CreateTemp(dir, "other") // want `os.CreateTemp can be diskio.CreateTemp \(moved`
	if err2 != nil {
		return "", err2
	}
	g.Close()
	return f.Name(), err
}
