// Package tracehttp serves diskio traces over HTTP, in the manner of
// net/http/pprof: a GET captures the scheduler's system calls and requests
// for a number of seconds from a running program and returns them in the
// asked format.
//
//	rec, _ := diskio.StartTracing(trace.Config{Paused: true, StackEvery: 16})
//	http.Handle("/debug/diskio/trace", tracehttp.Handler(rec))
//
//	curl -o io.json  'localhost:6060/debug/diskio/trace?seconds=5&format=chrome'
//	curl -o wait.pb.gz 'localhost:6060/debug/diskio/trace?seconds=5&format=wait'
//	go tool pprof -http=: wait.pb.gz
//
// It is a separate package so that programs using diskio do not link
// net/http unless they serve traces.
package tracehttp
