// Package crash tests that what a File acknowledged as durable survives:
// a child process appends checksummed records through diskio, syncing
// and reporting each acknowledged record, and is killed at random
// moments (Run); or, for real power cuts, a client appends and reports
// acknowledgements to a listener on another machine, and Verify checks
// the file after the machine comes back (the diskchecker.pl method: Serve,
// Client, Verify).
//
// The log is a file header (magic and the seed that determines every
// record) followed by records appended back to back:
//
//	magic u32 | length u32 | seq u64 | payload [length]byte | crc32c u32
//
// The CRC covers everything before it. Record seq's length and payload
// are a function of the seed and seq, so verification checks the exact
// bytes, not only the checksum. A log parses as the longest prefix of
// valid records numbered 0, 1, 2...; what follows may only be a torn,
// never acknowledged tail.
package crash

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
)

const (
	fileMagic   = "DIOCRASH"
	fileHeader  = 16         // fileMagic, seed u64
	recMagic    = 0x52434944 // "DICR"
	recOverhead = 4 + 4 + 8 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordLen is the payload length of record seq: 1 to max bytes.
func recordLen(seed, seq uint64, max int) int {
	return 1 + int(rand.New(rand.NewPCG(seed, seq)).Uint64()%uint64(max))
}

// appendRecord appends record seq (payload length n) to dst.
func appendRecord(dst []byte, seed, seq uint64, n int) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, recMagic)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	dst = binary.LittleEndian.AppendUint64(dst, seq)
	r := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, seq))
	for i := 0; i < n; i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		dst = append(dst, w[:min(8, n-i)]...)
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

func header(seed uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte(fileMagic), seed)
}

// parsed is what a log holds.
type parsed struct {
	seed    uint64
	records uint64 // valid records 0..records-1
	valid   int64  // bytes of header and valid records
	torn    bool   // bytes follow the valid prefix
}

var errNoHeader = errors.New("crash: the log has no valid header")

// parse scans a log whose records have payloads of at most max bytes.
// A record that is well-formed (its CRC holds) but is not exactly the
// record expected at its place is corruption, an error; a record that
// does not check out ends the valid prefix.
func parse(data []byte, max int) (parsed, error) {
	if len(data) < fileHeader || string(data[:8]) != fileMagic {
		return parsed{}, errNoHeader
	}
	p := parsed{seed: binary.LittleEndian.Uint64(data[8:16]), valid: fileHeader}
	var want []byte
	for {
		rest := data[p.valid:]
		if len(rest) < recOverhead || binary.LittleEndian.Uint32(rest) != recMagic {
			break
		}
		n := int(binary.LittleEndian.Uint32(rest[4:]))
		if n > max || len(rest) < recOverhead+n {
			break
		}
		rec := rest[:recOverhead+n]
		if crc32.Checksum(rec[:len(rec)-4], castagnoli) != binary.LittleEndian.Uint32(rec[len(rec)-4:]) {
			break
		}
		seq := binary.LittleEndian.Uint64(rest[8:])
		want = appendRecord(want[:0], p.seed, p.records, recordLen(p.seed, p.records, max))
		if seq != p.records || string(rec) != string(want) {
			return p, fmt.Errorf("crash: at offset %d a checksummed record %d where record %d belongs (corruption, or records out of order)", p.valid, seq, p.records)
		}
		p.records++
		p.valid += int64(len(rec))
	}
	p.torn = int64(len(data)) > p.valid
	return p, nil
}
