package diskio

// Advice is a hint to the kernel about how a range of a file will be
// used: posix_fadvise(2)'s POSIX_FADV_* values. See File.Advise.
type Advice int

const (
	AdviceNormal     Advice = iota // no particular pattern: the default read-ahead
	AdviceRandom                   // random access: no read-ahead
	AdviceSequential               // sequential access: a larger read-ahead window
	AdviceWillNeed                 // read the range into the page cache now (File.Prefetch)
	AdviceDontNeed                 // drop the range's clean pages from the page cache
	AdviceNoReuse                  // the data will be accessed once
)
