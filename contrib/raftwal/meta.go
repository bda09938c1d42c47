package raftwal

import "os"

// osSyncDir is fsync of dir by the os package, where there is no scheduler.
func osSyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
