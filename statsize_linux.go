//go:build linux

package diskio

import (
	"io/fs"
	"os"
	"reflect"
	"syscall"
	"unsafe"
)

// While an unaligned write's padding is on disk the kernel's size is
// larger than the logical size, and Stat must report the logical one. A
// wrapper FileInfo would do, but os.SameFile only recognises os's own
// FileInfo (*os.fileStat), so Stat rewrites the size in the one os.File
// returned: its Sys() *syscall.Stat_t points into it, and its size field
// is found by name with reflect. If a future os changes that layout,
// withSize falls back to the wrapper.

var statSizeOffset = func() uintptr {
	fi, err := os.Lstat("/")
	if err != nil {
		return 0
	}
	rt := reflect.TypeOf(fi)
	if rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return 0
	}
	sf, ok := rt.Elem().FieldByName("size")
	if !ok || sf.Type.Kind() != reflect.Int64 {
		return 0
	}
	// Check: the field holds what Size reports.
	if *(*int64)(unsafe.Add(reflect.ValueOf(fi).UnsafePointer(), sf.Offset)) != fi.Size() {
		return 0
	}
	return sf.Offset
}()

// withSize returns fi, a FileInfo from os.File.Stat, reporting size.
func withSize(fi fs.FileInfo, size int64) fs.FileInfo {
	v := reflect.ValueOf(fi)
	if statSizeOffset == 0 || v.Kind() != reflect.Pointer || v.IsNil() {
		return fileInfo{fi, size}
	}
	*(*int64)(unsafe.Add(v.UnsafePointer(), statSizeOffset)) = size
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Size = size
	}
	return fi
}
