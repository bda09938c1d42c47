package bench_test

import (
	"fmt"
	"time"

	"github.com/diskio-go/diskio/internal/bench"
)

func ExampleHistogram() {
	var h bench.Histogram
	for i := 1; i <= 100; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	fmt.Println(h.Count(), h.Quantile(0.5).Round(time.Microsecond), h.Max())
	// Output: 100 50µs 100µs
}

func ExampleRand() {
	r := bench.NewRand(0)
	off := r.Offset(1<<30, 4096) // a random 4 KiB block of a 1 GiB file
	fmt.Println(off%4096 == 0, off < 1<<30)
	// Output: true true
}
