module example.com/t

go 1.26.0

require github.com/diskio-go/diskio v0.0.0

require (
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/diskio-go/diskio => ../../../..
