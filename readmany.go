package diskio

// NoMerge as ReadManyOptions.MaxMerge turns merging off.
const NoMerge = -1

// Range is one piece of a file for ReadMany.
type Range struct {
	Off int64
	Len int
}

// ReadManyOptions tune ReadMany's merging.
type ReadManyOptions struct {
	// MaxMerge caps the size of one merged read (default 128 KiB);
	// NoMerge (any negative value) reads every range on its own, even
	// ranges that overlap.
	MaxMerge int
	// MaxGap merges ranges up to this many bytes apart (default 0:
	// only overlapping or adjacent ranges, after block alignment).
	MaxGap int
}
