package main

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
)

// workload is one of YCSB's core workloads: the mix of operations and how
// keys are chosen (Cooper et al., "Benchmarking Cloud Serving Systems with
// YCSB", SoCC 2010, and YCSB's workloads/workload[a-f] files).
type workload struct {
	name                    string
	read, update, scan, rmw float64 // fractions; insert is the rest
	maxScan                 int     // scan lengths are uniform in [1, maxScan]
	requestDistZipfian      bool
	latest                  bool // reads favour the newest records (YCSB's "latest" distribution)
}

var workloads = map[string]workload{
	"A": {name: "A", read: 0.5, update: 0.5, requestDistZipfian: true},   // update heavy
	"B": {name: "B", read: 0.95, update: 0.05, requestDistZipfian: true}, // read mostly
	"C": {name: "C", read: 1, requestDistZipfian: true},                  // read only
	"D": {name: "D", read: 0.95, latest: true},                           // read latest, 5% inserts
	"E": {name: "E", scan: 0.95, maxScan: 100, requestDistZipfian: true}, // short ranges, 5% inserts
	"F": {name: "F", read: 0.5, rmw: 0.5, requestDistZipfian: true},      // read-modify-write
	"U": {name: "U", read: 0.5, update: 0.5, requestDistZipfian: false},  // A with uniform keys (not YCSB)
}

func parseWorkloads(s string) ([]workload, error) {
	var ws []workload
	for _, n := range strings.Split(s, ",") {
		w, ok := workloads[strings.ToUpper(strings.TrimSpace(n))]
		if !ok {
			return nil, fmt.Errorf("unknown workload %q (have A, B, C, D, E, F, U)", n)
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
	opRMW // read a record, then write it back changed
	numOpKinds
)

var opNames = [numOpKinds]string{"read", "update", "scan", "insert", "rmw"}

func (k opKind) String() string { return opNames[k] }

func (w workload) pick(r *rand.Rand) opKind {
	x := r.Float64()
	switch {
	case x < w.read:
		return opRead
	case x < w.read+w.update:
		return opUpdate
	case x < w.read+w.update+w.scan:
		return opScan
	case x < w.read+w.update+w.scan+w.rmw:
		return opRMW
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

// latest is YCSB's "latest" request distribution (workload D): record
// numbers counted back from the newest acknowledged insert by a zipfian
// rank, so the records just inserted are the hottest. YCSB resizes its
// zipfian as records are added; this one keeps the load's record count
// (a phase adds a few percent), so the rank never reaches past record 0.
func (z *zipfian) latest(r *rand.Rand, newest uint64) uint64 {
	k := z.rank(r)
	if k > newest {
		return newest
	}
	return newest - k
}

// inserts hands out the record numbers of inserts (records, records+1, …)
// and tracks the newest one below which every insert has committed: what
// a reader may ask for and be sure to find (YCSB's
// AcknowledgedCounterGenerator). Inserts commit out of order.
type inserts struct {
	mu     sync.Mutex
	next   uint64          // the next record number to hand out
	newest uint64          // every record <= newest is committed
	done   map[uint64]bool // committed records above newest+1
}

func newInserts(records uint64) *inserts {
	return &inserts{next: records, newest: records - 1, done: map[uint64]bool{}}
}

// take returns the record number of a new insert.
func (a *inserts) take() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	return a.next - 1
}

// commit records that the insert of record n has committed.
func (a *inserts) commit(n uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done[n] = true
	for a.done[a.newest+1] {
		delete(a.done, a.newest+1)
		a.newest++
	}
}

// latest returns the newest record every record up to which is committed.
func (a *inserts) latest() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.newest
}
