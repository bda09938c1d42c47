package raftwal

import (
	"io"
	"sync"
)

// chunkSize is the unit the direct mode's caches read and keep: raft-wal
// reads a frame with a 64 KiB buffer (more when the entry is larger), so a
// chunk serves several of its reads, and a follower catching up reads
// whole chunks in order.
const chunkSize = 256 << 10

// readerChunks is how many chunks a direct reader (a sealed segment) keeps.
const readerChunks = 2

// chunkCache keeps recent chunks of one file for the direct mode, shared
// by the VFS's open files of its path: raft
// reads back the entries it just appended (the leader to replicate them,
// followers to apply them), each through a 64 KiB read at the entry's
// offset that runs past the end of what was written, and in direct mode
// every such read would go to the disk. A writer's cache learns its own
// writes; for a file Create made, whose bytes past what was written are
// the zeros of its preallocation, it builds chunks from its writes alone
// and never reads them from the disk. A reader's cache (raft-wal opens
// readers on sealed segments, which no one writes) reads whole chunks.
//
// A write updates the cache after the file write succeeded, so a read
// that starts after a WriteAt returned sees its bytes, as with the file.
// Writes through the VFS's files are all seen; writes through other
// descriptors or processes are not (raft-wal's directory is its process's
// alone).
type chunkCache struct {
	mu     sync.Mutex
	max    int              // chunks kept
	refs   int              // open files sharing the cache
	noLoad bool             // never read chunks (page-cache mode: the page cache serves them)
	chunks map[int64]*chunk // by index (offset / chunkSize)
	tick   uint64           // for least-recently-used eviction
	gen    uint64           // writes so far
	fresh  bool             // every byte in [hi, size) reads as zero
	hi     int64            // end of the highest write (fresh files)
	size   int64            // the file's size (fresh files)
}

type chunk struct {
	data []byte // the chunk's bytes that the file holds, from its start
	used uint64
}

func (c *chunkCache) drop() {
	c.mu.Lock()
	c.chunks = nil
	c.fresh = false
	c.gen++
	c.mu.Unlock()
}

// get returns chunk i if the cache has it, or can make it from zeros
// (a fresh file's chunk no write reached). Called with c.mu held.
func (c *chunkCache) get(i int64) *chunk {
	c.tick++
	if ch := c.chunks[i]; ch != nil {
		ch.used = c.tick
		return ch
	}
	start := i * chunkSize
	if !c.fresh || start < c.hi || start >= c.size {
		return nil
	}
	return c.put(i, make([]byte, min(chunkSize, c.size-start)))
}

func (c *chunkCache) put(i int64, data []byte) *chunk {
	if c.chunks == nil {
		c.chunks = make(map[int64]*chunk)
	}
	for len(c.chunks) >= c.max {
		oldest, used := int64(-1), uint64(0)
		for j, ch := range c.chunks {
			if oldest < 0 || ch.used < used {
				oldest, used = j, ch.used
			}
		}
		delete(c.chunks, oldest)
	}
	ch := &chunk{data: data, used: c.tick}
	c.chunks[i] = ch
	return ch
}

// wrote records that p was written at off (the write succeeded).
func (c *chunkCache) wrote(p []byte, off int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	end := off + int64(len(p))
	for i := off / chunkSize; i*chunkSize < end; i++ {
		start := i * chunkSize
		ch := c.get(i) // before hi moves: a chunk no write reached is zeros
		if ch == nil {
			continue
		}
		from := max(off, start) - start // the part of p in chunk i, in the chunk
		to := min(end, start+chunkSize) - start
		if int64(len(ch.data)) < from {
			// A gap the cache knows nothing of (past the end of a file
			// that was not fresh).
			delete(c.chunks, i)
			continue
		}
		if int64(len(ch.data)) < to {
			grown := make([]byte, to)
			copy(grown, ch.data)
			ch.data = grown
		}
		copy(ch.data[from:to], p[start+from-off:start+to-off])
	}
	if c.fresh {
		c.hi = max(c.hi, end)
		c.size = max(c.size, end)
	}
}

// read fills p from off as the file's ReadAt would, from the cache, and
// reports false if it cannot (then the caller reads the file). load reads
// the file, for the chunks the cache lacks.
func (c *chunkCache) read(p []byte, off int64, load func([]byte, int64) (int, error)) (int, error, bool) {
	n := 0
	for n < len(p) {
		at := off + int64(n)
		i := at / chunkSize
		within := at - i*chunkSize
		c.mu.Lock()
		ch := c.get(i)
		gen := c.gen
		c.mu.Unlock()
		if ch == nil && c.noLoad {
			return 0, nil, false
		}
		if ch == nil {
			buf := make([]byte, chunkSize)
			m, err := load(buf, i*chunkSize)
			if err != nil && err != io.EOF {
				return 0, nil, false
			}
			c.mu.Lock()
			if c.gen != gen {
				// A write went by while reading: what was read may be
				// older than it.
				c.mu.Unlock()
				return 0, nil, false
			}
			ch = c.put(i, buf[:m])
			c.mu.Unlock()
		}
		c.mu.Lock() // a writer may grow ch.data
		data := ch.data
		k := copy(p[n:], data[min(int64(len(data)), within):])
		c.mu.Unlock()
		n += k
		if n < len(p) && len(data) < chunkSize {
			return n, io.EOF, true // the file ends in this chunk
		}
	}
	return n, nil, true
}
