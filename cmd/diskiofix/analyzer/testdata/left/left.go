// Package left opens files that must stay *os.File, each for its reason,
// beside one that moves.
package left

import (
	"os"
	"os/exec"

	"example.com/t/other"
)

func stdio(name string) error {
	f, err := os.Create(name) // want `os.Create stays on \*os.File: it is used as a process's stdout \(exec.Cmd.Stdout\) at left.go:17:46`
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{Path: "/bin/true", Stdout: f}
	return cmd.Run()
}

func stdin(name string) error {
	f, err := os.Open(name) // want `os.Open stays on \*os.File: it is used as a process's stdin \(exec.Cmd.Stdin\)`
	if err != nil {
		return err
	}
	cmd := exec.Command("cat")
	cmd.Stdin = f
	return cmd.Run()
}

func passed(name string) {
	f, _ := os.Open(name) // want `os.Open stays on \*os.File: it is passed to example.com/t/other.Use, which wants \*os.File`
	other.Use(f)
}

func mixed(name string) error {
	var out *os.File
	if name == "-" {
		out = os.Stdout
	} else {
		var err error
		out, err = os.Create(name) // want `os.Create stays on \*os.File: it also holds os.Stdout`
		if err != nil {
			return err
		}
	}
	_, err := out.WriteString("x")
	return err
}

func pipe(name string) {
	_, w, _ := os.Pipe()  // the pipe's files are *os.File, and so is what is compared with them
	f, _ := os.Open(name) // want `os.Open stays on \*os.File: it also holds the result of os.Pipe`
	if f == w {
		return
	}
}

func kept(names []string) []*os.File {
	var files []*os.File
	for _, n := range names {
		f, _ := os.Open(n) // want `os.Open stays on \*os.File: it is passed to append`
		files = append(files, f)
	}
	return files
}

func address(name string) {
	f, _ := os.Open(name) // want `os.Open stays on \*os.File: it is used in &: its address is taken`
	p := &f
	_ = p
}

func value() func(string) (*os.File, error) {
	return os.Open
}

func moves(name string) ([]byte, error) {
	f, err := os.Open(name) // want `os.Open can be diskio.Open: the file stays within`
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 16)
	n, err := f.Read(b)
	return b[:n], err
}

func asserted(v any, name string) {
	f, ok := v.(*os.File)
	if !ok {
		f, _ = os.Open(name) // want `os.Open stays on \*os.File: it also holds v.\(\*os.File\)`
	}
	var m map[string]*os.File
	g, _ := m[name]
	if f == g {
		return
	}
}
