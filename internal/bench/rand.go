package bench

// Rand is a xorshift64 generator: three shifts per number, no locks, no
// allocation, so one per goroutine picks random offsets without the
// generator showing up next to a 4 KiB read. It is not for anything that
// needs good statistical quality beyond spreading offsets.
type Rand uint64

// NewRand returns a generator for stream i (a goroutine number, say);
// distinct streams start far apart. A zero state would stay zero, so it is
// never produced.
func NewRand(i uint64) Rand {
	x := (i+1)*0x9e3779b97f4a7c15 + 1
	if x == 0 {
		x = 1
	}
	return Rand(x)
}

// Next returns the next number.
func (r *Rand) Next() uint64 {
	x := uint64(*r)
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*r = Rand(x)
	return x
}

// Offset returns a random multiple of block in [0, size-block].
// It returns 0 when fewer than one block fits.
func (r *Rand) Offset(size, block int64) int64 {
	n := size / block
	if n <= 0 {
		return 0
	}
	return int64(r.Next()%uint64(n)) * block
}
