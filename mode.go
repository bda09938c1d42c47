package diskio

import (
	"errors"
	"strconv"
	"strings"
)

// String returns the mode's name: "pagecache", "direct" or
// "direct-required"; a value that is none of the three is
// "DirectMode(n)".
func (m DirectMode) String() string {
	switch m {
	case PageCache:
		return "pagecache"
	case Direct:
		return "direct"
	case DirectRequired:
		return "direct-required"
	}
	return "DirectMode(" + strconv.Itoa(int(m)) + ")"
}

// MarshalText returns the mode's name, as String does, for flags,
// environment variables and configuration files. It fails for a value
// that is none of the three modes.
func (m DirectMode) MarshalText() ([]byte, error) {
	if m < PageCache || m > DirectRequired {
		return nil, errors.New("diskio: no such mode: " + m.String())
	}
	return []byte(m.String()), nil
}

// UnmarshalText sets m to the mode text names: "pagecache" (also
// "page-cache" and "buffered"), "direct" or "direct-required", in any
// case. It fails for any other text and leaves m as it was.
func (m *DirectMode) UnmarshalText(text []byte) error {
	switch strings.ToLower(string(text)) {
	case "pagecache", "page-cache", "buffered":
		*m = PageCache
	case "direct":
		*m = Direct
	case "direct-required":
		*m = DirectRequired
	default:
		return errors.New("diskio: unknown mode " + strconv.Quote(string(text)) + " (have pagecache, direct, direct-required)")
	}
	return nil
}
