package raftwal

import (
	"fmt"
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"

	"github.com/diskio-go/diskio"
)

// BenchmarkStoreLogs appends batches of 128-byte entries to a WAL, each
// batch one write and one sync, and reads each entry back (as raft's
// replication and followers' FSMs do), on raft-wal's own fs and on the
// adapter in both modes.
func BenchmarkStoreLogs(b *testing.B) {
	for _, batch := range []int{1, 64} {
		for _, layer := range []string{"fs", "pagecache", "direct"} {
			b.Run(fmt.Sprintf("batch=%d/%s", batch, layer), func(b *testing.B) {
				dir := b.TempDir()
				var sf types.SegmentFiler
				if layer != "fs" {
					var m diskio.DirectMode
					if err := m.UnmarshalText([]byte(layer)); err != nil {
						b.Fatal(err)
					}
					sf = segment.NewFiler(dir, New(Options{Mode: m}))
				}
				w, err := wal.Open(dir, wal.WithSegmentFiler(sf))
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				logs := make([]*raft.Log, batch)
				data := make([]byte, 128)
				idx := uint64(1)
				var got raft.Log
				b.SetBytes(int64(batch * len(data)))
				for b.Loop() {
					for i := range logs {
						logs[i] = &raft.Log{Index: idx, Term: 1, Data: data}
						idx++
					}
					if err := w.StoreLogs(logs); err != nil {
						b.Fatal(err)
					}
					for _, l := range logs {
						if err := w.GetLog(l.Index, &got); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
