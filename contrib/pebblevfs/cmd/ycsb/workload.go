package main

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// workload is one of YCSB's core workloads: the mix of operations and how
// keys are chosen (Cooper et al., "Benchmarking Cloud Serving Systems with
// YCSB", SoCC 2010, and YCSB's workloads/workload[a-f] files).
type workload struct {
	name               string
	read, update, scan float64 // fractions; insert is the rest
	maxScan            int     // scan lengths are uniform in [1, maxScan]
	requestDistZipfian bool
}

var workloads = map[string]workload{
	"A": {name: "A", read: 0.5, update: 0.5, requestDistZipfian: true},   // update heavy
	"B": {name: "B", read: 0.95, update: 0.05, requestDistZipfian: true}, // read mostly
	"C": {name: "C", read: 1, requestDistZipfian: true},                  // read only
	"E": {name: "E", scan: 0.95, maxScan: 100, requestDistZipfian: true}, // short ranges, 5% inserts
	"U": {name: "U", read: 0.5, update: 0.5, requestDistZipfian: false},  // A with uniform keys (not YCSB)
}

func parseWorkloads(s string) ([]workload, error) {
	var ws []workload
	for _, n := range strings.Split(s, ",") {
		w, ok := workloads[strings.ToUpper(strings.TrimSpace(n))]
		if !ok {
			return nil, fmt.Errorf("unknown workload %q (have A, B, C, E, U)", n)
		}
		ws = append(ws, w)
	}
	return ws, nil
}

type opKind int

const (
	opRead opKind = iota
	opUpdate
	opScan
	opInsert
)

func (w workload) pick(r *rand.Rand) opKind {
	x := r.Float64()
	switch {
	case x < w.read:
		return opRead
	case x < w.read+w.update:
		return opUpdate
	case x < w.read+w.update+w.scan:
		return opScan
	}
	return opInsert
}

// key is YCSB's key for record number i with insertorder=hashed: "user"
// and a 64-bit FNV-1a hash of i, so consecutive records scatter.
func key(i uint64) []byte {
	return strconv.AppendUint([]byte("user"), fnvHash(i), 10)
}

func fnvHash(i uint64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for j := range b {
		b[j] = byte(i >> (8 * j))
	}
	h.Write(b[:])
	return h.Sum64()
}

// zipfian draws ranks in [0, n) with P(rank k) ∝ 1/(k+1)^theta, by the
// method of Gray et al., "Quickly Generating Billion-Record Synthetic
// Databases" (SIGMOD 1994), which YCSB uses with theta 0.99. Scrambled
// (YCSB's ScrambledZipfianGenerator): the rank is hashed into the key
// space, so the popular records are not neighbours.
type zipfian struct {
	n                        uint64
	theta, alpha, zetan, eta float64
	half                     float64 // 1 + 0.5^theta
}

func newZipfian(n uint64, theta float64) *zipfian {
	zeta := func(n uint64) float64 {
		s := 0.0
		for i := uint64(1); i <= n; i++ {
			s += 1 / math.Pow(float64(i), theta)
		}
		return s
	}
	z := &zipfian{n: n, theta: theta, alpha: 1 / (1 - theta), zetan: zeta(n)}
	z.eta = (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta(2)/z.zetan)
	z.half = 1 + math.Pow(0.5, theta)
	return z
}

func (z *zipfian) rank(r *rand.Rand) uint64 {
	u := r.Float64()
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.half:
		return 1
	}
	return min(z.n-1, uint64(float64(z.n)*math.Pow(z.eta*u-z.eta+1, z.alpha)))
}

// record returns a record number: scrambled zipfian or uniform.
func (z *zipfian) record(r *rand.Rand, zipf bool) uint64 {
	if !zipf {
		return r.Uint64N(z.n)
	}
	return fnvHash(z.rank(r)) % z.n
}
