package powercut

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
)

// A record is what the writers write and the checks look for after a
// cut: a header (magic, stream, sequence number, length, CRC-32C of the
// header's first 20 bytes and the payload) and a payload derived from the
// stream and the sequence number. A record cut short, or with a page of
// an older write in it, fails its checksum: that is a torn record,
// detected.
const (
	recMagic  = 0x54554350 // "PCUT"
	recHeader = 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// record returns the record of stream and seq, n bytes long in all
// (n >= recHeader).
func record(stream uint32, seq uint64, n int) []byte {
	b := make([]byte, n)
	binary.LittleEndian.PutUint32(b[0:], recMagic)
	binary.LittleEndian.PutUint32(b[4:], stream)
	binary.LittleEndian.PutUint64(b[8:], seq)
	binary.LittleEndian.PutUint32(b[16:], uint32(n))
	r := rand.New(rand.NewPCG(uint64(stream), seq))
	for i := recHeader; i < n; i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(b[i:], w[:])
	}
	c := crc32.Update(crc32.Checksum(b[:20], castagnoli), castagnoli, b[recHeader:])
	binary.LittleEndian.PutUint32(b[20:], c)
	return b
}

type recStatus int

const (
	recOK   recStatus = iota
	recNone           // no record starts here: zeros, or the end of the file
	recTorn           // something is here, and it is not a whole record
)

// parsed is a record found.
type parsed struct {
	stream uint32
	seq    uint64
	n      int
}

// parseRecord reads the record at the start of b.
func parseRecord(b []byte) (parsed, recStatus) {
	if len(b) < recHeader {
		if allZero(b) {
			return parsed{}, recNone
		}
		return parsed{}, recTorn
	}
	if allZero(b[:recHeader]) {
		return parsed{}, recNone
	}
	p := parsed{
		stream: binary.LittleEndian.Uint32(b[4:]),
		seq:    binary.LittleEndian.Uint64(b[8:]),
		n:      int(binary.LittleEndian.Uint32(b[16:])),
	}
	if binary.LittleEndian.Uint32(b) != recMagic || p.n < recHeader || p.n > len(b) {
		return parsed{}, recTorn
	}
	c := crc32.Update(crc32.Checksum(b[:20], castagnoli), castagnoli, b[recHeader:p.n])
	if c != binary.LittleEndian.Uint32(b[20:]) {
		return parsed{}, recTorn
	}
	return p, recOK
}

// scanLog reads a log of records written back to back: the records up to
// the first that is not whole, and whether what follows them is torn
// (anything but zeros).
func scanLog(b []byte) (recs []parsed, torn bool) {
	off := 0
	for off < len(b) {
		p, st := parseRecord(b[off:])
		switch st {
		case recOK:
			recs = append(recs, p)
			off += p.n
			continue
		case recNone:
			return recs, !allZero(b[off:])
		default:
			return recs, true
		}
	}
	return recs, false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
