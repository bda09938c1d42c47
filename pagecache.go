package diskio

// nowaitStatus says whether a File's reads and writes try the page cache
// on the caller's goroutine first (RWF_NOWAIT), and if not, why.
type nowaitStatus struct {
	Reads        bool
	ReadsReason  string
	Writes       bool
	WritesReason string
}

func (s nowaitStatus) String() string {
	str := func(ok bool, reason string) string {
		if ok {
			return "yes"
		}
		return "no (" + reason + ")"
	}
	return "page-cache reads inline: " + str(s.Reads, s.ReadsReason) + "; writes inline: " + str(s.Writes, s.WritesReason)
}
