//go:build linux

package pebblevfs

import (
	"io"
	"io/fs"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/sys"
)

// freshCache is a direct-mode FS's memory of the data files it wrote
// last: the 256 KiB buffers their bytes were written from, kept after the
// write instead of being reused, up to limit bytes, oldest out first.
//
// Pebble reads a table soon after writing it, and whole: the compaction
// that takes a flushed or compacted table as its input. vfs.Default's
// page cache serves that read; on O_DIRECT it would go to the disk again,
// every table read back once. RocksDB meets the same need with prepopulate_block_cache, which
// puts the blocks a flush writes into the block cache. Pebble's compaction
// reads bypass its block cache, so the bytes are kept here, by file.
//
// What it may hold adapts between freshFloor and limit, as ARC divides a
// cache between two kinds of use: its bytes are charged to the block
// cache, so every byte it holds is a byte less for the blocks of Pebble's
// gets and iterators. A compaction's read that it serves (sequential
// readers, which bypass the block cache) is a disk read the share saved;
// a get's or an iterator's read that goes to the disk is a block-cache
// miss the share may have caused, unless it read a file the cache still
// has an entry for, whose chunk it dropped: that miss says the share was
// too small (ARC's ghost hits), and counts as served. The target moves by
// the difference (bytes for bytes), and what is over it is dropped,
// oldest first. So a
// load, whose compactions read back what was just written, keeps up to
// limit; short scans beside a few writes (YCSB E), whose misses the block
// cache could have kept, give the memory back to the block cache.
//
// A file's entry is made when the FS creates it and is used by readers
// only once the writer has closed it without error and no WriteAt changed
// it: sstables and blob files are immutable from then on. Readers find it
// by device and inode and check the size and modification time the writer
// left; Remove drops it.
type freshCache struct {
	limit int64
	share Reserver // the block cache the bytes held are charged to, or nil

	// Evidence since the target last moved (see above): bytes served to
	// sequential readers or read from dropped chunks, and bytes random
	// readers read from the disk elsewhere.
	served, missed atomic.Int64

	mu     sync.Mutex
	target int64 // in [min(freshFloor, limit), limit]
	used   int64
	live   int // chunks held
	files  map[fileKey]*freshFile
	queue  []*freshChunk // oldest first; chunks already dropped are skipped
}

type fileKey struct{ dev, ino uint64 }

// freshFile is one file's chunks.
type freshFile struct {
	key fileKey

	mu     sync.RWMutex
	chunks []*freshChunk // chunks[i] holds the bytes at i*writeBuffer, or nil
	sealed bool          // closed by its writer: size and mtime are final
	size   int64
	mtime  unix.Timespec
}

type freshChunk struct {
	file    *freshFile
	idx     int
	b       []byte // never written to once added; nil once dropped
	unshare func() // gives the chunk's share of the block cache back, or nil
}

// release drops ch's bytes; freshCache.mu and ch.file.mu are held, so
// no reader is copying from them.
func (c *freshCache) release(ch *freshChunk) {
	c.used -= int64(len(ch.b))
	c.live--
	ch.b = nil
	if ch.unshare != nil {
		ch.unshare()
		ch.unshare = nil
	}
}

func newFreshCache(limit int64, share Reserver) *freshCache {
	if limit <= 0 {
		return nil
	}
	return &freshCache{limit: limit, share: share, target: limit, files: make(map[fileKey]*freshFile)}
}

// freshFloor is the least the fresh cache's target falls to: the tables
// written last stay, so that compactions reading them can show the share
// is worth growing again.
const freshFloor = 32 << 20

// adaptEvery is how many bytes of misses a random reader gathers before
// it moves the target (and drops what is over it) itself: without writes,
// nothing else would.
const adaptEvery = 1 << 20

// servedBytes records n bytes the cache served a sequential reader, or
// would have served any reader had it not dropped them.
func (c *freshCache) servedBytes(n int) {
	if c != nil && n > 0 {
		c.served.Add(int64(n))
	}
}

// missedRandom records n bytes a random reader read from the disk.
func (c *freshCache) missedRandom(n int) {
	if c == nil || n <= 0 {
		return
	}
	if c.missed.Add(int64(n)) >= adaptEvery {
		c.mu.Lock()
		c.adaptLocked()
		c.mu.Unlock()
	}
}

// adaptLocked moves the target by the evidence gathered since it last
// moved and drops what is over it, oldest first; c.mu is held.
func (c *freshCache) adaptLocked() {
	d := c.served.Swap(0) - c.missed.Swap(0)
	c.target = min(max(c.target+d, min(freshFloor, c.limit)), c.limit)
	for c.used > c.target && len(c.queue) > 0 {
		old := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		if old.b == nil {
			continue // dropped already
		}
		old.file.mu.Lock()
		old.file.chunks[old.idx] = nil
		c.release(old)
		old.file.mu.Unlock()
	}
}

// keyOf returns the key of the file fi describes.
func keyOf(fi fs.FileInfo) (fileKey, *syscall.Stat_t, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, nil, false
	}
	return fileKey{st.Dev, st.Ino}, st, true
}

// begin makes the entry of a data file just created empty by the FS (fi
// is its Stat). It returns nil if the cache is off or the file cannot be
// identified.
func (c *freshCache) begin(fi fs.FileInfo) *freshFile {
	if c == nil {
		return nil
	}
	key, _, ok := keyOf(fi)
	if !ok || fi.Size() != 0 {
		return nil
	}
	ff := &freshFile{key: key}
	c.mu.Lock()
	if old := c.files[ff.key]; old != nil { // the inode was reused
		c.dropLocked(old)
	}
	c.files[ff.key] = ff
	c.mu.Unlock()
	return ff
}

// add keeps b, the file's bytes at off (a multiple of writeBuffer), and
// evicts the oldest chunks beyond the limit.
func (c *freshCache) add(ff *freshFile, off int64, b []byte) {
	idx := int(off / writeBuffer)
	ch := &freshChunk{file: ff, idx: idx, b: b}
	if c.share != nil {
		ch.unshare = c.share.Reserve(len(b))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files[ff.key] != ff { // dropped meanwhile
		if ch.unshare != nil {
			ch.unshare()
		}
		return
	}
	ff.mu.Lock()
	for len(ff.chunks) <= idx {
		ff.chunks = append(ff.chunks, nil)
	}
	if old := ff.chunks[idx]; old != nil {
		c.release(old)
	}
	ff.chunks[idx] = ch
	ff.mu.Unlock()
	c.queue = append(c.queue, ch)
	c.used += int64(len(b))
	c.live++
	c.adaptLocked()
	// Files removed before their chunks' turn leave dropped entries
	// behind; keep the queue within twice what it holds.
	if len(c.queue) > 2*c.live+64 {
		q := c.queue[:0:0]
		for _, ch := range c.queue {
			if ch.b != nil {
				q = append(q, ch)
			}
		}
		c.queue = q
	}
}

// seal records the size and modification time the writer left, after
// which readers may use the entry.
func (c *freshCache) seal(ff *freshFile, f *diskio.File) {
	var st unix.Stat_t
	if err := sys.Fstat(int(f.Fd()), &st); err != nil {
		c.drop(ff)
		return
	}
	ff.mu.Lock()
	ff.sealed, ff.size, ff.mtime = true, st.Size, st.Mtim
	ff.mu.Unlock()
}

// lookup returns the sealed entry of the file fi describes, if it is
// unchanged since its writer closed it.
func (c *freshCache) lookup(fi fs.FileInfo) *freshFile {
	if c == nil {
		return nil
	}
	key, st, ok := keyOf(fi)
	if !ok {
		return nil
	}
	c.mu.Lock()
	ff := c.files[key]
	c.mu.Unlock()
	if ff == nil {
		return nil
	}
	ff.mu.RLock()
	defer ff.mu.RUnlock()
	if !ff.sealed || ff.size != st.Size || ff.mtime.Sec != st.Mtim.Sec || ff.mtime.Nsec != st.Mtim.Nsec {
		return nil
	}
	return ff
}

// forget drops the entry of the file at name (before it is removed).
func (c *freshCache) forget(name string) {
	if c == nil {
		return
	}
	var st unix.Stat_t
	if sys.Stat(name, &st) != nil {
		return
	}
	c.mu.Lock()
	if ff := c.files[fileKey{st.Dev, st.Ino}]; ff != nil {
		c.dropLocked(ff)
	}
	c.mu.Unlock()
}

func (c *freshCache) drop(ff *freshFile) {
	if c == nil || ff == nil {
		return
	}
	c.mu.Lock()
	if c.files[ff.key] == ff {
		c.dropLocked(ff)
	}
	c.mu.Unlock()
}

func (c *freshCache) dropLocked(ff *freshFile) {
	delete(c.files, ff.key)
	ff.mu.Lock()
	for i, ch := range ff.chunks {
		if ch != nil {
			c.release(ch)
			ff.chunks[i] = nil
		}
	}
	ff.sealed = false
	ff.mu.Unlock()
}

// readAt copies the file's bytes at off into p for as long as the chunks
// hold them, and returns how many it copied, whether it reached the end
// of the file, and whether the cache has an entry for the file (its
// writer's bytes past n were kept, and dropped since).
func (ff *freshFile) readAt(p []byte, off int64) (n int, end, tracked bool) {
	if ff == nil || off < 0 {
		return 0, false, false
	}
	ff.mu.RLock()
	defer ff.mu.RUnlock()
	if !ff.sealed {
		return 0, false, false
	}
	done := 0
	for done < len(p) {
		at := off + int64(done)
		idx := int(at / writeBuffer)
		if at >= ff.size || idx >= len(ff.chunks) || ff.chunks[idx] == nil {
			break
		}
		b := ff.chunks[idx].b
		in := int(at - int64(idx)*writeBuffer)
		if in >= len(b) {
			break
		}
		done += copy(p[done:], b[in:])
	}
	return done, off+int64(done) >= ff.size, true
}

// readFresh reads p at off from ff where it holds the bytes, and the rest
// with read. fromFresh is how many bytes came from ff; ghost says the rest
// was read from a file the cache has an entry for.
func readFresh(ff *freshFile, p []byte, off int64, read func([]byte, int64) (int, error)) (n, fromFresh int, ghost bool, err error) {
	n, end, tracked := ff.readAt(p, off)
	if n == len(p) {
		return n, n, false, nil
	}
	if end {
		return n, n, false, io.EOF
	}
	m, err := read(p[n:], off+int64(n))
	return n + m, n, tracked, err
}

// stats returns the bytes held and the files with an entry.
func (c *freshCache) stats() (used int64, files int) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, len(c.files)
}

// targetBytes returns what the cache may hold now.
func (c *freshCache) targetBytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.target
}
